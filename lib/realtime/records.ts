// Realtime records: connections, subscriptions and the change log in the table (docs/design/realtime.md, 3 and 4).
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
import { Conflict } from '../config/errors';
import { batchGetConsistent } from '../dynamo/batch-get';
import { batchWriteAll } from '../dynamo/batch-write';
import { dynamo } from '../dynamo/client';
import { type Json, storedSize } from '../content/json';
import { parse, stringify } from 'lossless-json';
import type { Segments } from '../paths';
import { refusedItems } from '../store/accounts';
import { type Change, contentPk } from '../storage';
import { STAMP_ATTRIBUTE, type Stamp, parseStamp } from '../dynamo/write-stamp';
import { historyDays } from './history';

/** Subscriptions one connection may hold. */
export const MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;
/** API Gateway ends a connection after 2 h; its records live a little longer, then TTL removes them. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
/** How long the change log keeps a change for `since` (DynamoDB Streams keep records as long). */
export const LOG_TTL_SECONDS = 24 * 3600;
/** A subscription's sort key starts with this: after every segment key (`/...`), so no subtree Query meets one. */
export const SUBSCRIPTION_PREFIX = '~s/';

const connectionPk = (connectionId: string) => `W#${connectionId}`;
const logPk = (inc: string) => `R#${inc}`;
export const subscriptionSk = (connectionId: string, id: string) => `${SUBSCRIPTION_PREFIX}${connectionId}/${id}`;
const now = () => Math.floor(Date.now() / 1000);

/** A subscription as stored (pk C#<inc>, so its INSERT reaches the consumer in commit order with the content's). */
export interface Subscription {
  inc: string;
  connectionId: string;
  id: string;
  path: Segments;
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
    throw new Conflict(
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

export function readSubscription(inc: string, item: Record<string, AttributeValue>): Subscription {
  const versions: Record<string, number> = {};
  for (const [k, v] of Object.entries(item.sv?.M ?? {})) versions[k] = Number(v.N);
  return {
    inc,
    connectionId: item.conn?.S ?? '',
    id: item.id?.S ?? '',
    path: JSON.parse(item.path?.S ?? '[]') as string[],
    project: item.project?.S ?? '',
    principal: JSON.parse(item.principal?.S ?? '{}') as Principal,
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

/** Change log entries over this many bytes keep only the fact that something changed (an item holds 400 KB). */
const MAX_LOG_BYTES = 256 * 1024;

export interface LoggedChange {
  revision: string;
  /** The project-wide changes, or undefined when they were too large to keep. */
  changes?: Change[];
}

/** A change log entry read as history (docs/design/history.md): changes with their old values where kept. */
export interface HistoryEntry extends LoggedChange {
  /** When the commit's request began (epoch ms), else when it was logged. */
  time: number;
  /** The commit's stamp: who, which route, which Idempotency-Key. Absent: not made by a stamped request. */
  stamp?: Stamp;
  /** Every change keeps its old value: the entry can be rewound. */
  rewindable: boolean;
  /** When not rewindable: the paths it touched, where known (unknown: any path). */
  touched?: Segments[];
}

/** What the history keeps of a commit beside its changes. */
export interface CommitRecord {
  stamp?: Stamp;
  /** The paths the commit touched (for an entry whose changes or old values cannot be kept). */
  touched?: Segments[];
}

const jsonAttribute = (value: Json): AttributeValue => ({ S: stringify(value) as string });

const changeAttribute = (c: Change, withOld: boolean): AttributeValue => ({
  M: {
    p: { L: c.path.map((s) => ({ S: s })) },
    // As JSON text (exact numbers): a value may nest as deep as content does, past what one item's attribute may.
    ...('value' in c ? { j: jsonAttribute(c.value) } : { d: { BOOL: true } }),
    // The value it replaced (o), or that there was none (n): what a read at an earlier revision puts back.
    ...(withOld && 'was' in c ? (c.was === undefined ? { n: { BOOL: true } } : { o: jsonAttribute(c.was) }) : {}),
  },
});

function readChange(attribute: AttributeValue): Change {
  const m = attribute.M ?? {};
  const path = (m.p?.L ?? []).map((s) => s.S ?? '');
  const old = m.o?.S !== undefined ? { was: parse(m.o.S) as Json } : m.n?.BOOL ? { was: undefined } : {};
  if (m.j?.S !== undefined) return { path, value: parse(m.j.S) as Json, ...old };
  return { path, deleted: true, ...old };
}

const changeBytes = (changes: readonly Change[], side: 'value' | 'was') =>
  changes.reduce(
    (sum, c) =>
      sum +
      16 +
      c.path.join('.').length +
      (side === 'value' ? ('value' in c ? storedSize(c.value) : 0) : c.was === undefined ? 0 : storedSize(c.was)),
    0,
  );

/**
 * Logs a change for `since` and the history (numbers stay exact: the values are stored as lossless JSON text);
 * `changes` undefined: unknown. Kept `HISTORY_DAYS`. An entry too large keeps the new values only, or nothing but
 * the paths it touched: the history cannot be rewound past it there.
 */
export async function logChange(
  inc: string,
  revision: string,
  changes: readonly Change[] | undefined,
  commit: CommitRecord = {},
): Promise<void> {
  const newBytes = changeBytes(changes ?? [], 'value');
  const oldBytes = changeBytes(changes ?? [], 'was');
  const keepsNew = changes !== undefined && newBytes <= MAX_LOG_BYTES;
  const keepsOld = keepsNew && newBytes + oldBytes <= MAX_LOG_BYTES;
  const rewinds = keepsOld && changes.every((c) => 'was' in c);
  const touched = changes?.map((c) => c.path) ?? commit.touched;
  const touchedText = touched === undefined ? undefined : JSON.stringify(touched);
  const time = commit.stamp?.time ?? Date.now();
  const ttl = { N: String(Math.floor(time / 1000) + Math.max(LOG_TTL_SECONDS, historyDays() * 86400)) };
  // Which revision a stamp was logged at (one small item, 1 WCU): a read at a revision looks up the stamps of the
  // segments it read, to know whether their commits are logged (docs/design/history.md, section 3).
  if (commit.stamp) {
    await dynamo.send(
      new PutItemCommand({
        TableName: tableName(),
        Item: { ...stampKey(inc, commit.stamp.nonce), rev: { S: revision }, ttl },
      }),
    );
  }
  await dynamo.send(
    new PutItemCommand({
      TableName: tableName(),
      Item: {
        pk: { S: logPk(inc) },
        sk: { S: revision },
        ...(keepsNew ? { c: { L: changes.map((c) => changeAttribute(c, keepsOld)) } } : { big: { BOOL: true } }),
        ...(commit.stamp ? { [STAMP_ATTRIBUTE]: { S: JSON.stringify(commit.stamp) } } : {}),
        t: { N: String(time) },
        ...(rewinds
          ? {}
          : {
              x: { BOOL: true },
              ...(touchedText !== undefined && touchedText.length <= MAX_LOG_BYTES / 4
                ? { xp: { S: touchedText } }
                : {}),
            }),
        ttl,
      },
    }),
  );
}

/** The item naming the revision a stamp's commit was logged at. */
const stampKey = (inc: string, nonce: string) => ({ pk: { S: `RN#${inc}` }, sk: { S: nonce } });

/** The revisions the commits of these stamps were logged at (consistent), by nonce; a stamp not logged is absent. */
export async function loggedStamps(inc: string, nonces: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const unique = [...new Set(nonces)];
  for (let i = 0; i < unique.length; i += 100) {
    const items = await batchGetConsistent(unique.slice(i, i + 100).map((nonce) => stampKey(inc, nonce)));
    for (const item of items) if (!expired(item)) found.set(item.sk?.S ?? '', item.rev?.S ?? '');
  }
  return found;
}

/** A change log item as history. */
function readEntry(item: Record<string, AttributeValue>): HistoryEntry {
  return {
    revision: item.sk?.S ?? '',
    changes: item.c?.L === undefined ? undefined : item.c.L.map(readChange),
    time: Number(item.t?.N ?? 0),
    stamp: parseStamp(item[STAMP_ATTRIBUTE]?.S),
    rewindable: item.x?.BOOL !== true,
    touched: item.xp?.S === undefined ? undefined : (JSON.parse(item.xp.S) as Segments[]),
  };
}

/** Whether an entry is past its TTL (DynamoDB deletes expired items within days, not at once). */
const expired = (item: Record<string, AttributeValue>) => Number(item.ttl?.N ?? Number.POSITIVE_INFINITY) <= now();

/**
 * One page of history (one consistent Query): entries after `after` and before `before` (revisions, exclusive),
 * newest first or oldest first, at most `limit`. `next`: where the next page starts, when there may be one.
 */
export async function historyPage(
  inc: string,
  options: { before?: string; after?: string; limit?: number; newestFirst: boolean; start?: string },
): Promise<{ entries: HistoryEntry[]; next?: string }> {
  const conditions = ['pk = :pk'];
  const values: Record<string, AttributeValue> = { ':pk': { S: logPk(inc) } };
  if (options.before !== undefined && options.after !== undefined) {
    conditions.push('sk BETWEEN :after AND :before');
    values[':after'] = { S: options.after };
    values[':before'] = { S: options.before };
  } else if (options.before !== undefined) {
    conditions.push('sk < :before');
    values[':before'] = { S: options.before };
  } else if (options.after !== undefined) {
    conditions.push('sk > :after');
    values[':after'] = { S: options.after };
  }
  const page = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: values,
      ScanIndexForward: !options.newestFirst,
      ConsistentRead: true,
      ...(options.limit === undefined ? {} : { Limit: options.limit }),
      ...(options.start === undefined
        ? {}
        : { ExclusiveStartKey: { pk: { S: logPk(inc) }, sk: { S: options.start } } }),
    }),
  );
  const entries = (page.Items ?? [])
    .filter((item) => !expired(item))
    // BETWEEN is inclusive; the bounds are not.
    .filter((item) => item.sk?.S !== options.after && item.sk?.S !== options.before)
    .map(readEntry);
  return { entries, next: page.LastEvaluatedKey?.sk?.S };
}

/** One entry by its revision (a consistent GetItem), unless expired. */
export async function historyEntry(inc: string, revision: string): Promise<HistoryEntry | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: { pk: { S: logPk(inc) }, sk: { S: revision } },
      ConsistentRead: true,
    }),
  );
  return Item === undefined || expired(Item) ? undefined : readEntry(Item);
}

/** The revision of the last change logged (what a snapshot taken now reflects), or '0' when none is kept. */
export async function lastRevision(inc: string): Promise<string> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: logPk(inc) } },
      ScanIndexForward: false,
      Limit: 1,
      ConsistentRead: true,
    }),
  );
  return Items?.[0]?.sk?.S ?? '0';
}

/** Whether the change log holds `revision` (one consistent GetItem of its key). */
export async function isLogged(inc: string, revision: string): Promise<boolean> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: { pk: { S: logPk(inc) }, sk: { S: revision } },
      ConsistentRead: true,
      ProjectionExpression: 'pk',
    }),
  );
  return Item !== undefined;
}

/** The changes after `since`, oldest first, when the log still holds `since` itself; else undefined. */
export async function changesSince(inc: string, since: string): Promise<LoggedChange[] | undefined> {
  const first = await historyEntry(inc, since);
  // Kept longer for the history: a replay reaches back no further than the stream does (a snapshot is cheaper).
  if (first === undefined || (first.time > 0 && first.time < Date.now() - LOG_TTL_SECONDS * 1000)) return undefined;
  const found: LoggedChange[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND sk > :since',
        ExpressionAttributeValues: { ':pk': { S: logPk(inc) }, ':since': { S: since } },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      found.push({
        revision: item.sk?.S ?? '',
        changes: item.c?.L === undefined ? undefined : item.c.L.map(readChange),
      });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}
