// The sweeper (docs/design/storage.md §7.4): finds the pending-commit markers of changes over 100 items that were
// interrupted, through the sparse GSI, and deletes what they left: children never committed, orphans not yet deleted.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { stubsIn } from './layout/stubs';
import { subtreePrefix, incarnationOfPk } from './layout/keys';
import { batchWriteAll } from '../dynamo/batch-write';
import { dynamo } from '../dynamo/client';
import { MARKER, SWEEP_PARTITION, sweepIndexKeys } from './io/markers';
import { IMPORT_PREFIX } from './io/import-session';
import { sweepImportSession } from './import-sweep';
import { getSegment, querySubtree } from './io/read';
import { segmentItemKey } from './segment';

export interface SweepResult {
  /** Markers older than the threshold that were found (and settled). */
  markers: number;
  /** Of those, pending ones: changes that never committed. */
  abandoned: number;
  /** Segments deleted. */
  deleted: number;
}

/**
 * One sweep: every marker created more than `olderThanMs` ago (longer than any request lives, so no commit that
 * could still settle it is in flight) is finished. Idempotent, safe beside writers and other sweeps.
 */
export async function sweep(olderThanMs: number, now = Date.now()): Promise<SweepResult> {
  const result: SweepResult = { markers: 0, abandoned: 0, deleted: 0 };
  for await (const item of sweepIndexKeys(SWEEP_PARTITION, now - olderThanMs)) {
    const sk = item.sk?.S ?? '';
    // An import session (docs/design/backup.md §3): untouched that long, it is abandoned, or its switch unfinished.
    const outcome = sk.startsWith(IMPORT_PREFIX)
      ? await sweepImportSession(
          incarnationOfPk(item.pk?.S) as string,
          sk.slice(IMPORT_PREFIX.length),
          now - olderThanMs,
        )
      : await settle(item.pk as AttributeValue, item.sk as AttributeValue, now - olderThanMs);
    if (!outcome) continue;
    result.markers++;
    if (outcome.abandoned) result.abandoned++;
    result.deleted += outcome.deleted;
  }
  return result;
}

const list = (value: AttributeValue | undefined) => (value?.L ?? []).map((v) => v.S as string);

async function settle(
  pk: AttributeValue,
  sk: AttributeValue,
  before: number,
): Promise<{ abandoned: boolean; deleted: number } | undefined> {
  const key = { pk, sk };
  const { Item } = await dynamo.send(new GetItemCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  if (!Item || Number(Item[MARKER.at]?.N) >= before) return undefined;
  const inc = incarnationOfPk(pk.S) as string;
  // `deletes`: what a commit made unreachable. `pending`: the commit's orphans are still live, only children go.
  let orphans = list(Item[MARKER.orphans]);
  let abandoned = false;
  if (Item[MARKER.kind]?.S === 'pending') {
    // The commit never happened. Claim the marker (its commit's condition fails from now on), its children becoming
    // orphans; any the parent names are left alone (it cannot, while the marker is pending: checked all the same).
    const parent = await getSegment(inc, Item[MARKER.parent]?.S as string);
    const named = parent ? stubsIn(parent.fragment).map(subtreePrefix) : [];
    const children = list(Item[MARKER.children]).filter((k) => !named.some((prefix) => k.startsWith(prefix)));
    try {
      await dynamo.send(
        new UpdateItemCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: 'SET #k = :deletes, #mo = :mo REMOVE #mc',
          ConditionExpression: '#k = :pending AND #at = :at',
          ExpressionAttributeNames: {
            '#k': MARKER.kind,
            '#mo': MARKER.orphans,
            '#mc': MARKER.children,
            '#at': MARKER.at,
          },
          ExpressionAttributeValues: {
            ':deletes': { S: 'deletes' },
            ':pending': { S: 'pending' },
            // The orphans the commit would have made are live content still: only the children go.
            ':mo': { L: children.map((k) => ({ S: k })) },
            ':at': Item[MARKER.at] as AttributeValue,
          },
        }),
      );
    } catch (error) {
      // Settled meanwhile (committed, or claimed by another sweep): read again on the next sweep.
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
    orphans = children;
    abandoned = true;
  }
  // Every segment under each root: unreachable (what a commit orphaned, or children no stub will ever name).
  let deleted = 0;
  for (const root of orphans) {
    const keys = [...(await querySubtree(inc, root, { keysOnly: true })).keys()];
    await batchWriteAll(keys.map((k) => ({ DeleteRequest: { Key: segmentItemKey(inc, k) } })));
    deleted += keys.length;
  }
  // Last: an interrupted sweep leaves the marker, and the next one finishes.
  await batchWriteAll([{ DeleteRequest: { Key: key } }]);
  return { abandoned, deleted };
}
