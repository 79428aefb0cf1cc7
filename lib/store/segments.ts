// Segments: the items a project's content is stored in (docs/design/storage.md), read, located and committed.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  type TransactWriteItem,
  TransactionCanceledException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { tableName } from '../config/env';
import { PayloadTooLarge } from '../config/errors';
import { ROOT_KEY, stubsUnderOf } from '../content/fragments';
import { type Json, storedSize } from '../content/json';
import { fromAttribute, toAttribute } from '../dynamo/attributes';
import { batchWriteAll } from '../dynamo/batch-write';
import { dynamo } from '../dynamo/client';
import type { UpdateRequest } from '../expressions';
import type { Segments } from '../paths';
import { A, slotAttribute } from '../schema/attributes';

/** A segment as read: where it is, its fragment, and what conditions compare. */
export interface Segment {
  key: string;
  fragment: Json;
  version: number;
  etag: string;
  epoch: number;
  raw: Record<string, AttributeValue>;
}

export const contentPk = (inc: string) => `C#${inc}`;
export const segmentItemKey = (inc: string, key: string) => ({ pk: { S: contentPk(inc) }, sk: { S: key } });

export function readSegment(raw: Record<string, AttributeValue>): Segment {
  return {
    key: raw.sk?.S ?? ROOT_KEY,
    fragment: raw[A.content] ? fromAttribute(raw[A.content] as AttributeValue) : {},
    version: Number(raw[A.version]?.N ?? 0),
    etag: raw[A.etag]?.S ?? '',
    epoch: Number(raw[A.grantEpoch]?.N ?? 0),
    raw,
  };
}

export const tokenIn = (segment: Segment, slot: number) => segment.raw[slotAttribute(slot)]?.S;

export async function getSegment(inc: string, key: string): Promise<Segment | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: segmentItemKey(inc, key), ConsistentRead: true }),
  );
  return Item ? readSegment(Item) : undefined;
}

/** Every segment whose key starts with `prefix` (a segment and its subtree), read consistently, page by page. */
export async function querySubtree(
  inc: string,
  prefix: string,
  keysOnly = false,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<Map<string, Segment>> {
  const found = new Map<string, Segment>();
  let start: Record<string, AttributeValue> | undefined;
  let bytes = 0;
  do {
    // A reader that can use only so much stops paging past it (a GET past what a response carries).
    if (bytes > maxBytes) throw new SubtreeTooLarge();
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: contentPk(inc) }, ':prefix': { S: prefix } },
        ...(keysOnly ? { ProjectionExpression: 'pk, sk, #ver', ExpressionAttributeNames: { '#ver': A.version } } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const segment = readSegment(item);
      found.set(segment.key, segment);
      if (!keysOnly) bytes += storedSize(segment.fragment);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

/** A subtree larger than its reader's budget (querySubtree's maxBytes). */
export class SubtreeTooLarge extends Error {}

/** The ETag of a value read from these segments: the one segment's own, or a digest of every segment's. */
export function etagOf(segments: readonly Segment[]): string {
  if (segments.length === 1) return (segments[0] as Segment).etag;
  const hash = createHash('sha256');
  for (const s of [...segments].sort((a, b) => (a.key < b.key ? -1 : 1))) hash.update(`${s.key}\u0000${s.etag}\u0000`);
  return `m.${hash.digest('base64url').slice(0, 22)}`;
}

/**
 * Per warm Lambda: where the content continues in other segments, learnt from stubs met on the way (path prefix of
 * object keys → segment key). A guess the write's own condition checks: a segment deleted since is missing, and the
 * writer walks again from the root (forget). Bounded; the oldest entries go first.
 */
const LOCATIONS_MAX = 10_000;
const locations = new Map<string, string>();
const locationKey = (inc: string, prefix: Segments) => `${inc}\u0000${prefix.join('\u0000')}`;

export function lookupLocation(inc: string, segments: Segments): { key: string; depth: number } {
  for (let depth = segments.length; depth > 0; depth--) {
    const key = locations.get(locationKey(inc, segments.slice(0, depth)));
    if (key !== undefined) return { key, depth };
  }
  return { key: ROOT_KEY, depth: 0 };
}

export function learnLocation(inc: string, prefix: Segments, key: string): void {
  if (locations.size >= LOCATIONS_MAX) locations.delete(locations.keys().next().value as string);
  locations.set(locationKey(inc, prefix), key);
}

export function forgetLocations(inc: string): void {
  for (const k of [...locations.keys()]) if (k.startsWith(`${inc}\u0000`)) locations.delete(k);
}

/** A new segment's item: written before anything names it, so no reader or writer can meet it half-made. */
export function newSegmentItem(
  inc: string,
  key: string,
  fragment: Json,
  epoch: number,
  tx?: string,
): Record<string, AttributeValue> {
  return {
    ...segmentItemKey(inc, key),
    [A.content]: toAttribute(fragment),
    [A.version]: { N: '1' },
    [A.etag]: { S: randomBytes(16).toString('base64url') },
    [A.bytes]: { N: String(storedSize(fragment)) },
    [A.grantEpoch]: { N: String(epoch) },
    // Writes prove the grant by epoch and incarnation (lib/expressions compileAccess), as on the project's head.
    [A.incarnation]: { S: inc },
    // A cut can leave stubs in a new segment too: writes that do not read first must see them.
    [A.stubsUnder]: toAttribute(stubsUnderOf(fragment)),
    // Which commit wrote it: the stream consumer finds a commit's new children by it.
    ...(tx === undefined ? {} : { [A.transaction]: { S: tx } }),
  };
}

/** An update that also records its commit's token in `tx` (in the SET clause, or as one). */
function stampedWithTransaction(update: UpdateRequest, tx: string): UpdateRequest {
  const set = '#txn = :txn';
  const expression = /\bSET\b/.test(update.UpdateExpression)
    ? update.UpdateExpression.replace(/\bSET\b/, `SET ${set},`)
    : `SET ${set} ${update.UpdateExpression}`;
  return {
    ...update,
    UpdateExpression: expression,
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, '#txn': A.transaction },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':txn': { S: tx } },
  };
}

/** A project's root segment, holding `{}`; created with the project, or by the first write if that was lost. */
export async function createRoot(inc: string, epoch: number): Promise<void> {
  try {
    await dynamo.send(
      new PutItemCommand({
        TableName: tableName(),
        Item: newSegmentItem(inc, ROOT_KEY, {}, epoch),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** A change that would have to rewrite, atomically, more segments than one transaction holds. */
const changeTooLarge = () =>
  new PayloadTooLarge(
    'CHANGE_TOO_LARGE',
    `the change reads and rewrites more than ${MAX_TRANSACTION_ITEMS - 1} segments at once; change smaller parts, one request each`,
  );

export type Committed = { ok: true } | { ok: false; item?: Record<string, AttributeValue> };

/** DynamoDB's limits on one transaction. */
const MAX_TRANSACTION_ITEMS = 100;
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

export interface Rewrite {
  inc: string;
  epoch: number;
  /** The change to the segment whose subtree is rewritten (compiled with its conditions). */
  parent: { key: string; update: UpdateRequest };
  /** New segments, named only by the parent's new fragment. */
  children: readonly { key: string; fragment: Json }[];
  /**
   * Segments the change makes unreachable, each deleted on the version read. `carried`: its content was read into the
   * new fragments, so its delete must be part of the commit (a write to it in between would otherwise be lost).
   */
  orphans: readonly { key: string; version?: number; carried?: boolean }[];
}

/**
 * Commits a change over several segments: one TransactWriteItems with the parent's update, the new children and the
 * orphans' deletes, all or nothing. A change too large for one transaction writes its children first (unreachable
 * until the parent names them), then commits the parent with as many deletes as fit, then deletes the rest.
 */
export async function commitRewrite(rewrite: Rewrite): Promise<Committed> {
  const table = tableName();
  // The transaction's token, also written to every item it writes (`tx`): the stream consumer's grouping.
  const token = randomUUID();
  const parent: TransactWriteItem = {
    Update: {
      TableName: table,
      Key: segmentItemKey(rewrite.inc, rewrite.parent.key),
      ...stampedWithTransaction(rewrite.parent.update, token),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const puts: TransactWriteItem[] = rewrite.children.map((child) => ({
    Put: {
      TableName: table,
      Item: newSegmentItem(rewrite.inc, child.key, child.fragment, rewrite.epoch, token),
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  }));
  const deletes: TransactWriteItem[] = rewrite.orphans.map((orphan) => ({
    Delete: {
      TableName: table,
      Key: segmentItemKey(rewrite.inc, orphan.key),
      ...(orphan.version === undefined
        ? {}
        : {
            ConditionExpression: '#ver = :ver',
            ExpressionAttributeNames: { '#ver': A.version },
            ExpressionAttributeValues: { ':ver': { N: String(orphan.version) } },
          }),
    },
  }));
  const bytes = rewrite.children.reduce((sum, c) => sum + storedSize(c.fragment) + 200, 0);
  const fits = 1 + puts.length + deletes.length <= MAX_TRANSACTION_ITEMS && bytes <= MAX_TRANSACTION_BYTES / 2;
  const carried = deletes.filter((_, i) => rewrite.orphans[i]?.carried);
  let first: TransactWriteItem[];
  let after: TransactWriteItem[] = [];
  if (fits) {
    first = [parent, ...puts, ...deletes];
  } else {
    if (1 + carried.length > MAX_TRANSACTION_ITEMS) throw changeTooLarge();
    // The new children first: no stub names them until the commit.
    await batchWriteAll(puts.map((p) => ({ PutRequest: { Item: p.Put?.Item } })));
    const dropped = deletes.filter((d) => !carried.includes(d));
    const room = MAX_TRANSACTION_ITEMS - 1 - carried.length;
    first = [parent, ...carried, ...dropped.slice(0, room)];
    after = dropped.slice(room);
  }
  try {
    // The SDK's own retries resend this token: a transaction applied whose answer was lost is not applied again,
    // even when another write has since taken its request-token slot.
    await dynamo.send(new TransactWriteItemsCommand({ TransactItems: first, ClientRequestToken: token }));
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      const reason = error.CancellationReasons?.[0];
      return { ok: false, item: reason?.Code === 'ConditionalCheckFailed' ? reason.Item : undefined };
    }
    throw error;
  }
  if (after.length > 0) {
    await batchWriteAll(after.map((d) => ({ DeleteRequest: { Key: d.Delete?.Key } })));
  }
  return { ok: true };
}

/** Segments stamped at once by a revocation (each a conditional UpdateItem of a few bytes). */
const STAMP_CONCURRENCY = 16;

/**
 * A revocation's second half (docs/design/storage.md, section 6): every segment of the content is brought up to the
 * project's new grant epoch, so a grant a Lambda verified before the revocation fails its next write's condition
 * and its next read's comparison, whatever segment it goes to. A segment at that epoch or newer is left alone.
 */
export async function stampSegments(inc: string, epoch: number): Promise<void> {
  const keys = [...(await querySubtree(inc, ROOT_KEY, true)).keys()];
  let next = 0;
  const worker = async () => {
    while (next < keys.length) await stampSegment(inc, keys[next++] as string, epoch);
  };
  await Promise.all(Array.from({ length: Math.min(STAMP_CONCURRENCY, keys.length) }, worker));
}

/** One segment brought up to a grant epoch (by a revocation, or by a writer that meets one not yet stamped). */
export async function stampSegment(inc: string, key: string, epoch: number): Promise<void> {
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: segmentItemKey(inc, key),
        UpdateExpression: 'SET #ge = :ge',
        ConditionExpression: 'attribute_exists(pk) AND #ge < :ge',
        ExpressionAttributeNames: { '#ge': A.grantEpoch },
        ExpressionAttributeValues: { ':ge': { N: String(epoch) } },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** A deleted project's content: every segment of its incarnation (no later project reuses it). */
export async function deleteSegments(inc: string): Promise<void> {
  const keys = [...(await querySubtree(inc, ROOT_KEY, true)).keys()];
  await batchWriteAll(keys.map((key) => ({ DeleteRequest: { Key: segmentItemKey(inc, key) } })));
}
