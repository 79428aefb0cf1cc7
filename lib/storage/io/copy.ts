// Moving an import's content between partitions (docs/design/backup.md §3): the shadow content copied into the
// project's partition under fresh keys, page by page within a time budget; whole partitions and key ranges deleted.
import { type AttributeValue, QueryCommand } from '@aws-sdk/client-dynamodb';
import { tableName } from '../../config/env';
import { batchWriteAll } from '../../dynamo/batch-write';
import { dynamo } from '../../dynamo/client';
import { ROOT_KEY, contentPk, copiedKey } from '../layout/keys';
import { rekeyStubs } from '../layout/stubs';
import { readSegment } from '../segment';
import { newSegmentItem } from './commit';

/** Items one Query of the copy reads at most: a few BatchWriteItems' worth, so the budget is checked often. */
const COPY_PAGE = 50;

export interface CopyProgress {
  /** The last shadow key copied (the next call starts after it). */
  upTo?: string;
  copied: number;
  done: boolean;
}

/**
 * Copies the shadow content's segments (all but its root, which the switch writes) into the project's partition,
 * each under copiedKey(copyId, key) with its stubs rewritten the same way, at the project's grant epoch: unreachable
 * until the switch names them. Goes on after `from`; stops when done or past `until` (epoch ms).
 */
export async function copyShadow(
  shadow: string,
  target: { inc: string; epoch: number; copyId: string },
  progress: Omit<CopyProgress, 'done'>,
  until: number,
): Promise<CopyProgress> {
  let { upTo, copied } = progress;
  const rekey = (key: string) => copiedKey(target.copyId, key);
  while (Date.now() < until) {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :root)',
        ExpressionAttributeValues: { ':pk': { S: contentPk(shadow) }, ':root': { S: ROOT_KEY } },
        ConsistentRead: true,
        Limit: COPY_PAGE,
        ...(upTo === undefined ? {} : { ExclusiveStartKey: { pk: { S: contentPk(shadow) }, sk: { S: upTo } } }),
      }),
    );
    const segments = (page.Items ?? []).map(readSegment).filter((s) => s.key !== ROOT_KEY);
    await batchWriteAll(
      segments.map((s) => ({
        PutRequest: {
          Item: newSegmentItem(target.inc, rekey(s.key), rekeyStubs(s.fragment, rekey), { epoch: target.epoch }),
        },
      })),
    );
    copied += segments.length;
    const last = page.Items?.[page.Items.length - 1]?.sk?.S;
    if (last !== undefined) upTo = last;
    if (!page.LastEvaluatedKey) return { upTo, copied, done: true };
  }
  return { upTo, copied, done: false };
}

/**
 * Deletes every item of partition `C#<inc>` whose sort key starts with `prefix` (all of them: `''`), page by page;
 * stops past `until` (epoch ms). Returns how many it deleted and whether none is left.
 */
export async function deleteRange(
  inc: string,
  prefix: string,
  until = Number.POSITIVE_INFINITY,
): Promise<{ deleted: number; done: boolean }> {
  let deleted = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    if (Date.now() >= until) return { deleted, done: false };
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: prefix === '' ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': { S: contentPk(inc) },
          ...(prefix === '' ? {} : { ':prefix': { S: prefix } }),
        },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    const keys = (page.Items ?? []).map((item) => ({ pk: item.pk as AttributeValue, sk: item.sk as AttributeValue }));
    await batchWriteAll(keys.map((Key) => ({ DeleteRequest: { Key } })));
    deleted += keys.length;
    start = page.LastEvaluatedKey;
  } while (start);
  return { deleted, done: true };
}

/**
 * Every segment key of the project's partition but those under `skip` (an import's copies), keys only: the key ranges
 * before and after the skipped prefix, so listing the content an import replaces never reads the copy beside it.
 */
export async function segmentKeysOutside(inc: string, skip: string): Promise<string[]> {
  const keys: string[] = [];
  // UTF-8 order: U+FFFF sorts after every character a key is made of.
  const ranges: Array<[string, string]> = [
    [ROOT_KEY, skip],
    [`${skip}\uffff`, `${ROOT_KEY}\uffff`],
  ];
  for (const [from, to] of ranges) {
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': { S: contentPk(inc) }, ':from': { S: from }, ':to': { S: to } },
          ProjectionExpression: 'sk',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const key = item.sk?.S as string;
        if (!key.startsWith(skip)) keys.push(key);
      }
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return keys;
}
