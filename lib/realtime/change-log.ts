// The change log (docs/design/realtime.md, section 4; docs/design/history.md): each commit's changes by revision,
// for a subscription's replay since a revision, and kept longer, with the old values and the write stamp, as history.
import { type AttributeValue, GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { batchGetConsistent } from '../dynamo/batch-get';
import { dynamo } from '../dynamo/client';
import { type Json, storedSize } from '../content/json';
import { parse, stringify } from 'lossless-json';
import type { Path } from '../paths';
import type { Change } from '../storage';
import { STAMP_ATTRIBUTE, type Stamp, parseStamp } from '../schema/write-stamp';
import { historyDays } from './history';

/** How long the change log keeps a change for `since` (DynamoDB Streams keep records as long). */
export const LOG_TTL_SECONDS = 24 * 3600;

const logPk = (inc: string) => `R#${inc}`;
const now = () => Math.floor(Date.now() / 1000);

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
  touched?: Path[];
  /** Not rewindable yet: the consumer logs it again, whole, once the stream records it waits for come. */
  completing?: boolean;
}

/** What the history keeps of a commit beside its changes. */
export interface CommitRecord {
  stamp?: Stamp;
  /** The paths the commit touched (for an entry whose changes or old values cannot be kept). */
  touched?: Path[];
  /** Logged as far as known, to be logged again whole when the records it waits for come (reads wait for it). */
  completing?: boolean;
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
              ...(commit.completing ? { xw: { BOOL: true } } : {}),
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
    touched: item.xp?.S === undefined ? undefined : (JSON.parse(item.xp.S) as Path[]),
    ...(item.xw?.BOOL === true ? { completing: true } : {}),
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
