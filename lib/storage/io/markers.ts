// Pending-commit markers (docs/design/storage.md §7.4): what a change over one transaction leaves behind it until
// it commits, for the sweeper to finish or undo.
import { contentPk } from '../layout/keys';
import { type AttributeValue, PutItemCommand, QueryCommand, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { tableName } from '../../config/env';
import { batchWriteAll } from '../../dynamo/batch-write';
import { dynamo } from '../../dynamo/client';
import type { Json } from '../../content/json';
import { changeTooLarge } from '../refusals';
import { segmentItemKey } from '../segment';

/**
 * Pending-commit markers (docs/design/storage.md §7.4): what a change over 100 items would leave if interrupted, in
 * the content's partition under sort keys no segment prefix (`/…`) meets, and in the sparse GSI the sweeper queries.
 */
export const MARKER_PREFIX = '~p/';
export const SWEEP_INDEX = 'sweep';
export const SWEEP_PARTITION = 'm';
export const MARKER = {
  /** `pending`: the commit has not happened; `deletes`: it happened (or never will), `orphans` remain to delete. */
  kind: 'k',
  /** The segment whose subtree the change rewrites. */
  parent: 'mp',
  /** Roots of the new children, and of the orphans left to delete (everything under each key prefix). */
  children: 'mc',
  orphans: 'mo',
  /** Epoch ms of the marker's creation. */
  at: 'at',
  /**
   * The sweep GSI's keys: a constant partition, the creation time. Markers carry them, and a project's head while a
   * change's grant-epoch stamping is pending (partition `g`, the change's time: lib/storage/stamping.ts).
   */
  sweepPk: 'swp',
  sweepSk: 'swt',
} as const;
/** A marker is one item: past this, the change is refused as too large (it lists key roots, so this is far off). */
const MAX_MARKER_BYTES = 350 * 1024;

/** The key of a marker's item, in the content's partition. */
export const markerKey = (inc: string, id: string) => ({ pk: { S: contentPk(inc) }, sk: { S: id } });

/**
 * The commit's settling of its marker, on its still being pending (a sweeper that claimed it makes the commit fail):
 * deleted, or turned into the list of the orphans still to delete (`deletesLeft`).
 */
export function settleMarker(
  table: string,
  marker: Record<string, AttributeValue>,
  { deletesLeft }: { deletesLeft: boolean },
): TransactWriteItem {
  const settle = {
    TableName: table,
    Key: marker,
    ConditionExpression: '#k = :pending',
    ExpressionAttributeNames: { '#k': MARKER.kind },
  };
  return deletesLeft
    ? {
        Update: {
          ...settle,
          UpdateExpression: 'SET #k = :deletes REMOVE #mc',
          ExpressionAttributeNames: { ...settle.ExpressionAttributeNames, '#mc': MARKER.children },
          ExpressionAttributeValues: { ':pending': { S: 'pending' }, ':deletes': { S: 'deletes' } },
        },
      }
    : { Delete: { ...settle, ExpressionAttributeValues: { ':pending': { S: 'pending' } } } };
}

/** Writes a commit's pending marker (its parent, new children and orphans), in the sweep index too. */
export async function putMarker(
  key: Record<string, AttributeValue>,
  parent: string,
  children: string[],
  orphans: string[],
): Promise<void> {
  const at = String(Date.now());
  const item: Record<string, AttributeValue> = {
    ...key,
    [MARKER.kind]: { S: 'pending' },
    [MARKER.parent]: { S: parent },
    [MARKER.children]: { L: children.map((k) => ({ S: k })) },
    [MARKER.orphans]: { L: orphans.map((k) => ({ S: k })) },
    [MARKER.at]: { N: at },
    [MARKER.sweepPk]: { S: SWEEP_PARTITION },
    [MARKER.sweepSk]: { N: at },
  };
  if ([...children, ...orphans].reduce((sum, k) => sum + Buffer.byteLength(k) + 3, 200) > MAX_MARKER_BYTES)
    throw changeTooLarge();
  await dynamo.send(new PutItemCommand({ TableName: tableName(), Item: item }));
}

/** A refused commit's new children and its marker, deleted (children first: the marker stays until they are gone). */
export async function abandon(
  inc: string,
  marker: Record<string, AttributeValue>,
  children: readonly { key: string; fragment: Json }[],
): Promise<void> {
  await batchWriteAll(children.map((c) => ({ DeleteRequest: { Key: segmentItemKey(inc, c.key) } })));
  await batchWriteAll([{ DeleteRequest: { Key: marker } }]);
}

/**
 * The keys in one partition of the sweep index (keys only; the index is eventually consistent, so each is read again
 * from the table before anything is done), page by page; `before`: only those whose sweep time is below it.
 */
export async function* sweepIndexKeys(
  partition: string,
  before?: number,
): AsyncGenerator<Record<string, AttributeValue>> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: SWEEP_INDEX,
        KeyConditionExpression: before === undefined ? '#p = :p' : '#p = :p AND #t < :t',
        ExpressionAttributeNames: { '#p': MARKER.sweepPk, ...(before === undefined ? {} : { '#t': MARKER.sweepSk }) },
        ExpressionAttributeValues: {
          ':p': { S: partition },
          ...(before === undefined ? {} : { ':t': { N: String(before) } }),
        },
        ExclusiveStartKey: start,
      }),
    );
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}
