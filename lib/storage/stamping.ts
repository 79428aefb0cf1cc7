// A change's grant-epoch stamping (docs/design/rules.md, "A change on a large project"): a rules change or a
// revocation advances the head's `ge` and records, in the same transaction, that the segments are behind (the head
// put in the sweeper's index); the request then stamps in parallel until its deadline draws near, settles the
// record when every segment carries the epoch, and otherwise says what is left, which the sweeper finishes.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { GRANT_CACHE_SECONDS } from '../auth/access';
import { tableName } from '../config/env';
import { currentDeadline } from '../dynamo/deadline';
import { dynamo } from '../dynamo/client';
import { A } from '../schema/attributes';
import { HEAD_SK, type ProjectRef, projectPk } from '../schema/items';
import { stampSegment } from './io/commit';
import { MARKER, sweepIndexKeys } from './io/markers';
import { ROOT_KEY, contentPk } from './layout/keys';

/** The sweep index's partition of heads whose stamping is pending (pending-commit markers have one of their own). */
export const STAMPING_PARTITION = 'g';
/** How long before its deadline a request stops stamping: room to settle the record and answer. */
const STAMPING_MARGIN_MS = 1500;

/** Where a change's stamping stands when its request answers. */
export interface Stamping {
  /** Some segments still carry an older epoch (the sweeper finishes them). */
  pending: boolean;
  /** How many are known to remain; null when the request ran out of time before it had listed them all. */
  segmentsLeft: number | null;
  /** When no grant verified before the change can succeed anywhere any more (ISO time), while pending. */
  effectiveBy: string | null;
}

/** A change whose stamping is done (or that needed none). */
export const NOTHING_TO_STAMP: Stamping = { pending: false, segmentsLeft: 0, effectiveBy: null };

/**
 * The head update's clause recording a pending stamping, for the transaction that advances `ge` (in the document
 * client's plain values): the head enters the sweep index, at the change's time, until every segment is stamped.
 */
export function stampingRecord(now = Date.now()) {
  return {
    set: '#swp = :stampingPartition, #swt = :stampingAt',
    names: { '#swp': MARKER.sweepPk, '#swt': MARKER.sweepSk },
    values: { ':stampingPartition': STAMPING_PARTITION, ':stampingAt': now },
  };
}

/** Segments stamped at once (each a conditional UpdateItem of a few bytes): the SDK agent's `maxSockets`. */
const STAMP_CONCURRENCY = 64;

/**
 * Every segment of the content below `epoch` brought up to it, so a grant a Lambda verified before the change fails
 * its next write's condition and its next read's comparison, whatever segment it goes to. The listing (a Query page
 * at a time, only segments still below the epoch) and the stamping overlap; neither starts anything new at `until`
 * (epoch ms). Returns how many are left (0: all done), or null when the listing did not finish.
 */
async function stampSegments(inc: string, epoch: number, until: number): Promise<number | null> {
  const keys: string[] = [];
  let next = 0;
  let listed = false;
  let listingOver = false;
  // Whatever stops the stamping (the deadline reached with requests in flight, an engine refusing) leaves it pending
  // for the sweeper, never undone: the change is committed either way, and stamping is idempotent.
  let stopped = false;
  const listing = (async () => {
    let start: Record<string, AttributeValue> | undefined;
    do {
      if (Date.now() >= until || stopped) return;
      const page = await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          FilterExpression: '#ge < :ge',
          ProjectionExpression: 'sk',
          ExpressionAttributeNames: { '#ge': A.grantEpoch },
          ExpressionAttributeValues: {
            ':pk': { S: contentPk(inc) },
            ':prefix': { S: ROOT_KEY },
            ':ge': { N: String(epoch) },
          },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) keys.push(item.sk?.S as string);
      start = page.LastEvaluatedKey;
    } while (start);
    listed = true;
  })()
    .catch(() => {
      stopped = true;
    })
    .finally(() => {
      listingOver = true;
    });
  let unsure = 0;
  const worker = async () => {
    while (Date.now() < until && !stopped) {
      if (next < keys.length) {
        try {
          await stampSegment(inc, keys[next++] as string, epoch);
        } catch {
          // It may have landed or not: counted as left (the sweeper's condition skips it if it landed).
          unsure++;
          stopped = true;
        }
      } else if (listingOver) return;
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  await Promise.all([listing, ...Array.from({ length: STAMP_CONCURRENCY }, worker)]);
  return listed ? keys.length - next + unsure : null;
}

/** The project's head key as the low-level client names it. */
const headKey = (pk: string): Record<string, AttributeValue> => ({ pk: { S: pk }, sk: { S: HEAD_SK } });

/**
 * Stamps what a pending change left (nothing when none is pending) until `until` (epoch ms), and settles the record
 * when every segment carries the head's epoch. A change made meanwhile keeps its own record.
 */
export async function finishStamping(pk: string, until: number): Promise<Stamping> {
  const { Item: head } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: headKey(pk), ConsistentRead: true }),
  );
  const epoch = Number(head?.[A.grantEpoch]?.N ?? 0);
  const inc = head?.[A.incarnation]?.S;
  if (!head || inc === undefined || head[MARKER.sweepPk]?.S !== STAMPING_PARTITION) return NOTHING_TO_STAMP;
  const segmentsLeft = await stampSegments(inc, epoch, until);
  if (segmentsLeft !== 0) {
    const since = Number(head[MARKER.sweepSk]?.N ?? Date.now());
    return { pending: true, segmentsLeft, effectiveBy: new Date(since + GRANT_CACHE_SECONDS * 1000).toISOString() };
  }
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: headKey(pk),
        UpdateExpression: 'REMOVE #swp, #swt',
        ConditionExpression: '#ge = :ge AND #inc = :inc',
        ExpressionAttributeNames: {
          '#ge': A.grantEpoch,
          '#inc': A.incarnation,
          '#swp': MARKER.sweepPk,
          '#swt': MARKER.sweepSk,
        },
        ExpressionAttributeValues: { ':ge': { N: String(epoch) }, ':inc': { S: inc } },
      }),
    );
  } catch (error) {
    // A newer change advanced the epoch (its own record stays, for its own stamping) or the project is gone.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  return NOTHING_TO_STAMP;
}

/** A change's second half, in the request that made it: stamping until its deadline is STAMPING_MARGIN_MS away. */
export const stampContent = (project: ProjectRef): Promise<Stamping> =>
  finishStamping(projectPk(project), currentDeadline() - STAMPING_MARGIN_MS);

/**
 * The sweeper's part: every head with a pending stamping (the sweep index, keys only) finished until `until`.
 * Returns how many were found and how many are still pending.
 */
export async function finishPendingStampings(until: number): Promise<{ stampings: number; stampingsLeft: number }> {
  const result = { stampings: 0, stampingsLeft: 0 };
  for await (const item of sweepIndexKeys(STAMPING_PARTITION)) {
    result.stampings++;
    if ((await finishStamping(item.pk?.S as string, until)).pending) result.stampingsLeft++;
  }
  return result;
}
