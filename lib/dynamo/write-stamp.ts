// Write stamps: the content segments a request writes carry a small attribute saying who wrote them and how, which
// the table's stream shows to the consumer that keeps the history (docs/design/history.md, section 2). Added by
// client middleware, so the write path gets no extra request and no store code has to thread it through.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { requestScope } from './scope';

/** The attribute a stamped segment carries: JSON text (see `WriteStamp`). */
export const STAMP_ATTRIBUTE = 'wb';

/** The current request's stamp (JSON text), one per request (lib/dynamo/scope.ts). */
const stamps = requestScope<string>();

/** Runs `fn` with every content segment it writes stamped with `stamp` (JSON text). */
export const withWriteStamp = <T>(stamp: string, fn: () => Promise<T>): Promise<T> => stamps.run(stamp, fn);

const currentStamp = (): string | undefined => stamps.current();

type Key = Record<string, AttributeValue> | undefined;

/** A content segment's key: partition `C#<inc>`, sort key `/...` (not a subscription, marker or record). */
const isSegmentKey = (key: Key) => key?.pk?.S?.startsWith('C#') === true && key.sk?.S?.startsWith('/') === true;

interface Update {
  Key?: Key;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
}

type Item = Record<string, AttributeValue>;

/** The update with `SET #wb = :wb` added (into its SET clause: a clause may appear only once); others as they are. */
function stampUpdate(update: Update, stamp: string): Update {
  if (!isSegmentKey(update.Key) || update.UpdateExpression === undefined) return update;
  const set = '#wbStamp = :wbStamp';
  return {
    ...update,
    UpdateExpression: /\bSET\b/.test(update.UpdateExpression)
      ? update.UpdateExpression.replace(/\bSET\b/, `SET ${set},`)
      : `${update.UpdateExpression} SET ${set}`,
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#wbStamp': STAMP_ATTRIBUTE },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':wbStamp': { S: stamp } },
  };
}

const stampItem = (item: Item | undefined, stamp: string): Item | undefined =>
  item && isSegmentKey(item) ? { ...item, [STAMP_ATTRIBUTE]: { S: stamp } } : item;

/**
 * One command's input with its segment writes stamped: a new input, sharing everything it does not change (the
 * caller's objects are never changed: the store sends some again, and the SDK retries the same input).
 */
export function stampInput(operation: string, input: Record<string, unknown>, stamp: string): Record<string, unknown> {
  if (operation === 'UpdateItem') return stampUpdate(input as Update, stamp) as Record<string, unknown>;
  if (operation === 'PutItem') return { ...input, Item: stampItem(input.Item as Item, stamp) };
  if (operation === 'TransactWriteItems') {
    const items = (input.TransactItems ?? []) as Array<{ Update?: Update; Put?: { Item?: Item } }>;
    return {
      ...input,
      TransactItems: items.map((item) => {
        if (item.Update) return { ...item, Update: stampUpdate(item.Update, stamp) };
        if (item.Put) return { ...item, Put: { ...item.Put, Item: stampItem(item.Put.Item, stamp) } };
        return item;
      }),
    };
  }
  if (operation === 'BatchWriteItem') {
    const tables = (input.RequestItems ?? {}) as Record<string, Array<{ PutRequest?: { Item?: Item } }>>;
    const stamped = Object.entries(tables).map(([table, requests]) => [
      table,
      requests.map((r) => (r.PutRequest ? { ...r, PutRequest: { Item: stampItem(r.PutRequest.Item, stamp) } } : r)),
    ]);
    return { ...input, RequestItems: Object.fromEntries(stamped) };
  }
  return input;
}

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>;

/** SDK middleware: stamps the content segments a command writes while a stamp is current. */
export const stampWrites = (next: Next, context: { commandName?: string }) => {
  const operation = (context.commandName ?? '').replace(/Command$/, '');
  return async (args: { input: Record<string, unknown> }) => {
    const stamp = currentStamp();
    return next(stamp === undefined ? args : { ...args, input: stampInput(operation, args.input, stamp) });
  };
};

/**
 * Who made a change: never a secret or a hash. An app's end user signed in with a JWT that names no user here is
 * `username: null` with the token's `sub`, the one thing that tells end users apart.
 */
export type Actor =
  | { kind: 'key'; id: string }
  | { kind: 'user'; username: string }
  | { kind: 'user'; username: null; sub: string }
  | { kind: 'anonymous' };

/** What a write's segments carry (`wb`), and what the history entry of its commit says. */
export interface Stamp {
  actor: Actor;
  /** The route: set, insert, push, increment, decrement, delete, update, batch, patch, restore. */
  operation: string;
  idempotencyKey?: string;
  /** When the request began, epoch ms. */
  time: number;
  /** Tells this request's writes from every other's. */
  nonce: string;
}

/** A stamp's text read back; undefined when absent or not one. */
export function parseStamp(text: string | undefined): Stamp | undefined {
  if (text === undefined) return undefined;
  try {
    const stamp = JSON.parse(text) as Stamp;
    return typeof stamp?.nonce === 'string' && typeof stamp.time === 'number' ? stamp : undefined;
  } catch {
    return undefined;
  }
}

/** The stamp a MODIFY record's write set: its new image's, when it differs from the old image's (else none). */
export function stampOfRecord(record: DynamoDBRecord): Stamp | undefined {
  const now = record.dynamodb?.NewImage?.[STAMP_ATTRIBUTE]?.S;
  if (now === undefined || now === record.dynamodb?.OldImage?.[STAMP_ATTRIBUTE]?.S) return undefined;
  return parseStamp(now);
}

/** The stamp a segment item carries (its last stamped write's). */
export const stampOfItem = (raw: Record<string, { S?: string }>): Stamp | undefined =>
  parseStamp(raw[STAMP_ATTRIBUTE]?.S);
