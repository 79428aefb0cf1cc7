// Realtime records: connections and subscriptions in the table (docs/design/realtime.md, section 3). The change
// log is change-log.ts.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { Principal } from '../auth/access';
import { tableName } from '../config/env';
import { Refusal } from '../config/errors';
import { batchWriteAll } from '../dynamo/batch-write';
import { dynamo } from '../dynamo/client';
import type { Path } from '../paths';
import { refusedItems } from '../store/accounts';
import { contentPk } from '../storage';
import { parseJsonText } from '../content/json';

/** Subscriptions one connection may hold. */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;
/** API Gateway ends a connection after 2 h; its records live a little longer, then TTL removes them. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
/** A subscription's sort key starts with this: after every segment key (`/...`), so no subtree Query meets one. */
export const SUBSCRIPTION_PREFIX = '~s/';

const connectionPk = (connectionId: string) => `W#${connectionId}`;
/** A subscription's sort key: the prefix, its connection's id and its own. */
export const subscriptionSk = (connectionId: string, id: string) => `${SUBSCRIPTION_PREFIX}${connectionId}/${id}`;
const now = () => Math.floor(Date.now() / 1000);

/** A subscription as stored (pk C#<inc>, so its INSERT reaches the consumer in commit order with the content's). */
export interface Subscription {
  inc: string;
  connectionId: string;
  id: string;
  path: Path;
  project: string;
  principal: Principal;
  /** When the credential stops being valid, epoch seconds. */
  expiresAt?: number;
  since?: string;
  /** The client's name for the subscription, echoed in `subscribed` (one connection carries many subscribes). */
  ref?: string;
  /** Set by the consumer once `subscribed` and the snapshot (or replay) are sent. */
  started: boolean;
  /** The segment versions the snapshot read (key → version): commits not above them are in the snapshot. */
  versions: Record<string, number>;
}

/** Records a connection with no subscriptions yet, removed by TTL a little after API Gateway ends it. */
export async function putConnection(connectionId: string): Promise<void> {
  await dynamo.send(
    new PutItemCommand({
      TableName: tableName(),
      Item: {
        pk: { S: connectionPk(connectionId) },
        sk: { S: '#' },
        n: { N: '0' },
        ttl: { N: String(now() + CONNECTION_TTL_SECONDS) },
      },
    }),
  );
}

/**
 * Writes a subscription and counts it on its connection, in one transaction conditioned on the connection still
 * existing and holding fewer than the limit: a connection closed meanwhile (its record deleted by `$disconnect`)
 * gets no subscription record, and one closed after finds it in its list (`removeConnection`).
 */
export async function addSubscription(s: Omit<Subscription, 'started' | 'versions'>): Promise<void> {
  try {
    await dynamo.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: { pk: { S: connectionPk(s.connectionId) }, sk: { S: '#' } },
              UpdateExpression: 'ADD n :one, subs :sub',
              ConditionExpression: 'attribute_exists(pk) AND n < :max',
              ExpressionAttributeValues: {
                ':one': { N: '1' },
                ':sub': { SS: [`${s.inc} ${s.id}`] },
                ':max': { N: String(MAX_SUBSCRIPTIONS_PER_CONNECTION) },
              },
            },
          },
          { Put: { TableName: tableName(), Item: subscriptionItem(s) } },
        ],
      }),
    );
  } catch (error) {
    if (!refusedItems(error).includes(0)) throw error;
    throw new Refusal(
      'LIMIT_REACHED',
      `a connection holds at most ${MAX_SUBSCRIPTIONS_PER_CONNECTION} subscriptions; unsubscribe one first`,
    );
  }
}

const subscriptionItem = (s: Omit<Subscription, 'started' | 'versions'>): Record<string, AttributeValue> => ({
  pk: { S: contentPk(s.inc) },
  sk: { S: subscriptionSk(s.connectionId, s.id) },
  conn: { S: s.connectionId },
  id: { S: s.id },
  path: { S: JSON.stringify(s.path) },
  project: { S: s.project },
  principal: { S: JSON.stringify(s.principal) },
  ...(s.expiresAt === undefined ? {} : { exp: { N: String(s.expiresAt) } }),
  ...(s.since === undefined ? {} : { since: { S: s.since } }),
  ...(s.ref === undefined ? {} : { ref: { S: s.ref } }),
  ttl: { N: String(now() + CONNECTION_TTL_SECONDS) },
});

/** A subscription as its item holds it. */
export function readSubscription(inc: string, item: Record<string, AttributeValue>): Subscription {
  const versions: Record<string, number> = {};
  for (const [k, v] of Object.entries(item.sv?.M ?? {})) versions[k] = Number(v.N);
  return {
    inc,
    connectionId: item.conn?.S ?? '',
    id: item.id?.S ?? '',
    path: parseJsonText(item.path?.S ?? '[]') as string[],
    project: item.project?.S ?? '',
    principal: parseJsonText(item.principal?.S ?? '{}') as Principal,
    expiresAt: item.exp?.N === undefined ? undefined : Number(item.exp.N),
    since: item.since?.S,
    ref: item.ref?.S,
    started: item.st?.BOOL === true,
    versions,
  };
}

/** Every subscription of a project's incarnation: one Query of its content partition (paged past 1 MB). */
export async function querySubscriptions(inc: string): Promise<Subscription[]> {
  const found: Subscription[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: contentPk(inc) }, ':prefix': { S: SUBSCRIPTION_PREFIX } },
        // A subscription just started (st) must be seen by the next commit's delivery.
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) found.push(readSubscription(inc, item));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

/** The consumer has sent `subscribed` and the snapshot (or replay): deliver changes from now on. */
export async function markStarted(s: Subscription, versions: Record<string, number>): Promise<void> {
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: { pk: { S: contentPk(s.inc) }, sk: { S: subscriptionSk(s.connectionId, s.id) } },
        UpdateExpression: 'SET st = :t, sv = :sv',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: {
          ':t': { BOOL: true },
          ':sv': { M: Object.fromEntries(Object.entries(versions).map(([k, v]) => [k, { N: String(v) }])) },
        },
      }),
    );
  } catch (error) {
    // Unsubscribed (or disconnected) meanwhile: nothing to start.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** Ends one subscription: its record and its count on the connection. Unknown ids change nothing. */
export async function removeSubscription(connectionId: string, id: string): Promise<boolean> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: { pk: { S: connectionPk(connectionId) }, sk: { S: '#' } },
      ConsistentRead: true,
    }),
  );
  const entry = (Item?.subs?.SS ?? []).find((s) => s.endsWith(` ${id}`));
  if (!entry) return false;
  const inc = entry.slice(0, entry.indexOf(' '));
  await dynamo.send(
    new DeleteItemCommand({
      TableName: tableName(),
      Key: { pk: { S: contentPk(inc) }, sk: { S: subscriptionSk(connectionId, id) } },
    }),
  );
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: { pk: { S: connectionPk(connectionId) }, sk: { S: '#' } },
        UpdateExpression: 'ADD n :minus DELETE subs :sub',
        ConditionExpression: 'contains(subs, :entry)',
        ExpressionAttributeValues: { ':minus': { N: '-1' }, ':sub': { SS: [entry] }, ':entry': { S: entry } },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  return true;
}

/** A subscription the consumer ends itself (revoked, its connection gone): the record only. */
export async function deleteSubscription(s: Pick<Subscription, 'inc' | 'connectionId' | 'id'>): Promise<void> {
  await dynamo.send(
    new DeleteItemCommand({
      TableName: tableName(),
      Key: { pk: { S: contentPk(s.inc) }, sk: { S: subscriptionSk(s.connectionId, s.id) } },
    }),
  );
}

/**
 * A closed (or gone) connection: its record first, read as it is deleted (so no subscription can be added to it
 * after the list is read: `addSubscription` requires the record), then the subscriptions it listed.
 */
export async function removeConnection(connectionId: string): Promise<void> {
  const key = { pk: { S: connectionPk(connectionId) }, sk: { S: '#' } };
  const { Attributes } = await dynamo.send(
    new DeleteItemCommand({ TableName: tableName(), Key: key, ReturnValues: 'ALL_OLD' }),
  );
  const subs = (Attributes?.subs?.SS ?? []).map((entry) => {
    const [inc, id] = entry.split(' ') as [string, string];
    return { DeleteRequest: { Key: { pk: { S: contentPk(inc) }, sk: { S: subscriptionSk(connectionId, id) } } } };
  });
  if (subs.length > 0) await batchWriteAll(subs);
}
