// A named request's record (docs/design/storage.md §8a): an item written in the same transaction as the change of a
// request with Idempotency-Key, so its retry is recognised whatever moved in between and whatever else wrote.
import {
  type AttributeValue,
  GetItemCommand,
  type TransactWriteItem,
  type TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { IDEMPOTENCY_TTL_SECONDS } from '../config/limits';
import { dynamo } from '../dynamo/client';
import { itemKeyAttributes } from '../schema/items';

/** Where a named request's record lives: a partition of its own per request (no hot key; no `C#` stream record). */
export interface RequestRecord {
  key: Record<string, AttributeValue>;
}

/**
 * The record of the request whose token this is. The token of a named request is derived from its name (project,
 * incarnation, credential, key, route, body, If-Match), so it names that request and no other.
 */
export const requestRecordOf = (token: string): RequestRecord => ({ key: itemKeyAttributes(`Q#${token}`) });

/**
 * The record's Put, for the transaction that applies the request: refused when the record is there already (the
 * request applied before); one past its lifetime, waiting for TTL's sweep, does not count.
 */
export function recordPut(record: RequestRecord): TransactWriteItem {
  const now = Math.floor(Date.now() / 1000);
  return {
    Put: {
      TableName: tableName(),
      Item: { ...record.key, ttl: { N: String(now + IDEMPOTENCY_TTL_SECONDS) } },
      ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':now': { N: String(now) } },
    },
  };
}

/** Whether a cancelled transaction was refused because the record at `index` among its items was there already. */
export const recordedBefore = (error: TransactionCanceledException, index: number): boolean =>
  error.CancellationReasons?.[index]?.Code === 'ConditionalCheckFailed';

/** Whether the request's record is there (and within its lifetime): the request applied. One strong GetItem. */
export async function isRecorded(record: RequestRecord): Promise<boolean> {
  const { Item } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: record.key, ConsistentRead: true }),
  );
  const ttl = Number(Item?.ttl?.N ?? 0);
  return Item !== undefined && ttl >= Math.floor(Date.now() / 1000);
}
