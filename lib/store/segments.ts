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
import { setBounded } from '../config/bounded';
import { tableName } from '../config/env';
import { PayloadTooLarge } from '../config/errors';
import {
  MissingSegment,
  ROOT_KEY,
  bucketOf,
  chunkDir,
  chunkKey,
  chunkStart,
  isChunkKey,
  isBucketKey,
  isBucketStubKey,
  isChunkStubKey,
  stubsIn,
  stubsUnderOf,
  reachableFrom,
  subtreePrefix,
} from '../content/fragments';
import { type Json, storedSize } from '../content/json';
import { fromAttribute, toAttribute } from '../dynamo/attributes';
import { batchGetConsistent } from '../dynamo/batch-get';
import { batchWriteAll } from '../dynamo/batch-write';
import { dynamo } from '../dynamo/client';
import type { UpdateRequest } from '../expressions';
import type { Segments } from '../paths';
import { A, slotAttribute } from '../schema/attributes';
import { type RequestRecord, recordPut, recordedBefore } from './request-records';

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

/**
 * Segments read by separate items of a Query, or by separate requests, are each as some commit left them, not
 * necessarily the same one: DynamoDB isolates a transaction from a Query only item by item. A commit that changes
 * several segments in place (a batch's top segment and a chunked array's) records in each of them every one's new
 * version (`pv`), so a read that holds one of them older than another names it is half of that commit: a
 * MissingSegment, which every reader answers by reading again. Segments of a commit written under new keys or deleted
 * need no record: a reader finds them missing, or not named, when it mixes states.
 */
export function assertSnapshot(read: readonly Segment[]): void {
  const older = olderThanPartners(read);
  if (older !== undefined) throw new MissingSegment(older);
}

/**
 * A segment read at a version below what another segment read says a commit gave it (see assertSnapshot): below a
 * partner's `pv` entry for it, or, for a chunk, below the version its array's segment's `pc` says the last commit
 * that rewrote it left (the chunk then names less than that in its own `pv`).
 */
export function olderThanPartners(read: readonly Segment[]): string | undefined {
  const versions = new Map(read.map((s) => [s.key, s.version]));
  const named = (segment: Segment, key: string) => Number(segment.raw[A.partners]?.M?.[key]?.N ?? 0);
  for (const segment of read) {
    for (const [key, version] of Object.entries(segment.raw[A.partners]?.M ?? {})) {
      const seen = versions.get(key);
      if (seen !== undefined && seen < Number(version.N)) return key;
    }
    const tail = segment.raw[A.tailChunks]?.M;
    if (!tail) continue;
    const [dir, from, to, generation] = [tail.d?.S ?? '', Number(tail.f?.N), Number(tail.t?.N), Number(tail.g?.N)];
    for (const chunk of read) {
      if (!chunk.key.startsWith(dir) || !isChunkKey(chunk.key)) continue;
      const start = chunkStart(chunk.key);
      if (start >= from && start <= to && named(chunk, segment.key) < generation) return chunk.key;
    }
  }
  return undefined;
}

export async function getSegment(inc: string, key: string): Promise<Segment | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: segmentItemKey(inc, key), ConsistentRead: true }),
  );
  return Item ? readSegment(Item) : undefined;
}

/**
 * A segment and its subtree (for a chunk stub, its chunks; for a bucket stub, its buckets), read consistently, page by
 * page: every segment whose key starts with the key's prefix and, read with their fragments, every segment a stub
 * among them names and its subtree. A stub's segment is not always under its holder's prefix: a cut that moves a value
 * into a new segment (a bucket, a new child, a batch's re-cut) moves the stubs in it along, their segments keeping
 * their keys. `keysOnly` reads the prefix alone (for what no stub names: a sweep's unreachable children).
 */
export async function querySubtree(
  inc: string,
  key: string,
  keysOnly = false,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<Map<string, Segment>> {
  const found = await queryPrefix(inc, key, keysOnly, maxBytes);
  if (keysOnly) return found;
  let bytes = Number.isFinite(maxBytes) ? reachableBytes(key, found) : 0;
  const elsewhere: string[] = [];
  for (const segment of found.values()) {
    for (const stub of stubsIn(segment.fragment)) {
      // A chunk stub's chunks and a bucket stub's buckets are below the segment that holds it.
      if (!found.has(stub) && !isChunkStubKey(stub) && !isBucketStubKey(stub)) elsewhere.push(stub);
    }
  }
  for (const stub of elsewhere) {
    if (found.has(stub)) continue;
    const subtree = await querySubtree(inc, stub, false, maxBytes - bytes);
    for (const [k, s] of subtree) {
      if (!found.has(k)) bytes += storedSize(s.fragment);
      found.set(k, s);
    }
  }
  return found;
}

/** What one Query page reads at most (DynamoDB's 1 MB). */
const PAGE_BYTES = 1024 * 1024;

/** The bytes of the segments read that stubs lead to from `key` (a read never counts what no stub names). */
const reachableBytes = (key: string, found: ReadonlyMap<string, Segment>) =>
  [...reachableFrom([key], found)].reduce((sum, k) => sum + storedSize((found.get(k) as Segment).fragment), 0);

/**
 * How much more than its limit a reader reads before it gives up on a subtree: room for segments no stub names (an
 * interrupted change's, until the sweeper deletes them), which it does not count, within a bound on its memory.
 */
const UNREACHABLE_ALLOWANCE = 4;

/** Every segment of `key`'s subtree (by its key prefix), read consistently, page by page. */
async function queryPrefix(
  inc: string,
  key: string,
  keysOnly: boolean,
  maxBytes: number,
): Promise<Map<string, Segment>> {
  const prefix = subtreePrefix(key);
  const found = new Map<string, Segment>();
  let start: Record<string, AttributeValue> | undefined;
  let bytes = 0;
  do {
    // A reader that can use only so much stops paging past it (a GET past what a response carries), counting only
    // what stubs lead to (it reads on past segments left by an interrupted change, up to a bound).
    if (bytes > maxBytes && (bytes > UNREACHABLE_ALLOWANCE * maxBytes || reachableBytes(key, found) > maxBytes))
      throw new SubtreeTooLarge();
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: contentPk(inc) }, ':prefix': { S: prefix } },
        ...(keysOnly ? { ProjectionExpression: 'pk, sk, #ver', ExpressionAttributeNames: { '#ver': A.version } } : {}),
        // A small budget (a realtime snapshot's) reads pages of about what it can use, not of 1 MB: as many items
        // as the budget left holds at the items' size so far (a full segment's at first).
        ...(keysOnly || maxBytes - bytes > PAGE_BYTES
          ? {}
          : {
              // At least one item: past its budget a reader still pages on over unreachable leftovers (above).
              Limit:
                Math.max(
                  0,
                  Math.ceil((maxBytes - bytes) / (found.size > 0 ? Math.max(64, bytes / found.size) : 4096)),
                ) + 1,
            }),
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

/**
 * The chunk of a chunked array (chunk directory `dir`) that holds logical index `index`: one Query, one item (chunk
 * keys sort from the last chunk to the first, so the first key from `index`'s on is the largest start not above it).
 */
export async function getChunk(inc: string, dir: string, index: number): Promise<Segment | undefined> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :at AND :first',
      ExpressionAttributeValues: {
        ':pk': { S: contentPk(inc) },
        ':at': { S: chunkKey(dir, index) },
        ':first': { S: chunkKey(dir, 0) },
      },
      Limit: 1,
      ConsistentRead: true,
    }),
  );
  const item = Items?.[0];
  if (!item) return undefined;
  const chunk = readSegment(item);
  learnChunkRange(inc, chunk);
  return chunk;
}

/**
 * Per warm Lambda: the chunks met, per chunk directory, as the ranges of indexes they held. A chunk keeps its key, and
 * so its start, for as long as it exists, and its length except for the last chunk's end (docs/design/storage.md,
 * section 13, step 4); the range is only a guess of where to read, checked on the chunk read.
 */
const chunkRanges = new Map<string, { start: number; end: number }[]>();
const CHUNK_DIRECTORIES_MAX = 1_000;
const CHUNK_RANGES_MAX = 256;

function learnChunkRange(inc: string, chunk: Segment): void {
  const id = `${inc}\u0000${chunkDir(chunk.key)}`;
  const start = chunkStart(chunk.key);
  const end = start + (Array.isArray(chunk.fragment) ? chunk.fragment.length : 0);
  const ranges = (chunkRanges.get(id) ?? []).filter((r) => r.start !== start);
  setBounded(chunkRanges, id, [...ranges.slice(1 - CHUNK_RANGES_MAX), { start, end }], CHUNK_DIRECTORIES_MAX);
}

/** A chunk found gone: its range is no guess any more. */
function forgetChunkRange(inc: string, key: string): void {
  const id = `${inc}\u0000${chunkDir(key)}`;
  const start = chunkStart(key);
  const ranges = chunkRanges.get(id);
  if (ranges)
    chunkRanges.set(
      id,
      ranges.filter((r) => r.start !== start),
    );
}

/** The key of the chunk this Lambda has met holding `index`, as far as it knows. */
export function knownChunkKey(inc: string, dir: string, index: number): string | undefined {
  const range = chunkRanges.get(`${inc}\u0000${dir}`)?.find((r) => r.start <= index && index < r.end);
  return range === undefined ? undefined : chunkKey(dir, range.start);
}

/**
 * A chunked array's segment and one of its chunks in one strongly consistent BatchGetItem (two items read about
 * together, not a snapshot: the reader checks the pair as it checks a segment read before its chunk).
 */
export async function getSegmentAndChunk(
  inc: string,
  key: string,
  chunk: string,
): Promise<{ segment?: Segment; chunk?: Segment }> {
  const items = (await batchGetConsistent([segmentItemKey(inc, key), segmentItemKey(inc, chunk)])).map(readSegment);
  const found = items.find((s) => s.key === chunk);
  if (found) learnChunkRange(inc, found);
  else forgetChunkRange(inc, chunk);
  return { segment: items.find((s) => s.key === key), chunk: found };
}

/** The chunks of a chunked array holding logical indexes `from` to `to` (exclusive), in order: at most two Queries. */
export async function getChunks(inc: string, dir: string, from: number, to: number): Promise<Segment[]> {
  const first = await getChunk(inc, dir, from);
  if (!first) return [];
  const rest: Segment[] = [];
  let start: Record<string, AttributeValue> | undefined;
  while (chunkStart(first.key) < to - 1) {
    // From the chunk holding `to - 1` down to the one after `first` (keys sort from the last chunk to the first).
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :last AND :first',
        ExpressionAttributeValues: {
          ':pk': { S: contentPk(inc) },
          ':last': { S: chunkKey(dir, to - 1) },
          ':first': { S: first.key },
        },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) if (item.sk?.S !== first.key) rest.push(readSegment(item));
    start = page.LastEvaluatedKey;
    if (!start) break;
  }
  return [first, ...rest.reverse()];
}

/**
 * A chunked array's segment and its last chunks in one Query (docs/design/storage.md, section 13, step 4): chunk keys
 * sort from the last chunk to the first right after the segment's own key, nothing else being below it, so the first
 * `limit` items from that key are the segment and its last `limit - 1` chunks, last first. No segment: it is gone.
 */
export async function getWithTail(
  inc: string,
  key: string,
  limit: number,
): Promise<{ segment?: Segment; chunks: Segment[] }> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
      ExpressionAttributeValues: { ':pk': { S: contentPk(inc) }, ':key': { S: key } },
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  const read = (Items ?? []).map(readSegment);
  return { segment: read[0]?.key === key ? read[0] : undefined, chunks: read.filter((s) => isChunkKey(s.key)) };
}

/**
 * The chunks of a chunked array from the one holding logical index `from` to the last below `count`, in order: one
 * Query from the last chunk down, of about as many items as the tail should have at `perChunk` elements a chunk (a
 * guess: another page, twice as long, when it was low). A tail of more than `max` chunks is `'long'` when the whole
 * array has at most `whole` chunks (one commit can still rewrite it whole), else a 413 at once: read no further.
 */
export async function getTail(
  inc: string,
  dir: string,
  from: number,
  count: number,
  perChunk: number,
  max: number,
  whole: number,
  read: readonly Segment[] = [],
): Promise<Segment[] | 'long'> {
  // Chunks already read from the last down (with the array's segment): read on after them.
  const found: Segment[] = [...read];
  const last = found[found.length - 1];
  let start: Record<string, AttributeValue> | undefined = last ? segmentItemKey(inc, last.key) : undefined;
  const left = (last ? chunkStart(last.key) : count) - from;
  let limit =
    found.length > max
      ? whole + 1 - found.length
      : Math.min(max + 1 - found.length, Math.ceil(left / Math.max(1, perChunk)) + 2);
  for (;;) {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        // From the last chunk below `count` down (keys sort from the last chunk to the first).
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :last AND :first',
        ExpressionAttributeValues: {
          ':pk': { S: contentPk(inc) },
          ':last': { S: chunkKey(dir, count - 1) },
          ':first': { S: chunkKey(dir, 0) },
        },
        Limit: limit,
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const chunk = readSegment(item);
      found.push(chunk);
      // Past `max`, read on only to learn whether the whole array is within `whole` chunks.
      if (found.length > whole) throw changeTooLarge();
      if (found.length > max ? chunkStart(chunk.key) === 0 : chunkStart(chunk.key) <= from)
        return found.length > max ? 'long' : found.reverse();
    }
    start = page.LastEvaluatedKey;
    if (!start) return found.length > max ? 'long' : found.reverse();
    // Never more than one past `whole` in all: that one already says the array is too long. Past `max`, the rest of
    // that at once.
    limit = found.length > max ? whole + 1 - found.length : Math.min(whole + 1 - found.length, limit * 2);
  }
}

/** Per warm Lambda: incarnation → project name, from the root segment (an incarnation never changes project). */
const projectNames = new Map<string, string>();

/** The project an incarnation's content belongs to (`<username>/<slug>`), or undefined for a root without it. */
export async function projectOfIncarnation(inc: string): Promise<string | undefined> {
  const known = projectNames.get(inc);
  if (known !== undefined) return known;
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: segmentItemKey(inc, ROOT_KEY),
      ProjectionExpression: '#pj',
      ExpressionAttributeNames: { '#pj': A.project },
      ConsistentRead: true,
    }),
  );
  const name = Item?.[A.project]?.S;
  if (name !== undefined) {
    setBounded(projectNames, inc, name, 10_000);
  }
  return name;
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
 * object keys → segment key, or → the bucket stub of a bucketed object there, whose bucket for a member is computed;
 * a bucket cut into buckets → their stub). A guess the write's own condition checks: a segment deleted since is
 * missing, and the writer walks again from the root (forget). Bounded; the oldest entries go first.
 */
const LOCATIONS_MAX = 10_000;
type Location = { key: string } | { bucket: string };
const locations = new Map<string, Location>();
const locationKey = (inc: string, prefix: Segments) => `${inc}\u0000${prefix.join('\u0000')}`;
const splitKey = (inc: string, bucket: string) => `${inc}\u0001${bucket}`;

/**
 * The deepest segment known for a path: a segment whose root is `depth` steps down it. `maxDepth`: the deepest root
 * wanted (a set or delete acts where its parent is). A bucket's root is its object, with the member next on the path.
 */
export function lookupLocation(
  inc: string,
  segments: Segments,
  maxDepth = segments.length,
): { key: string; depth: number } {
  for (let depth = Math.min(segments.length, maxDepth + 1); depth > 0; depth--) {
    const found = locations.get(locationKey(inc, segments.slice(0, depth)));
    if (found === undefined) continue;
    if ('key' in found) {
      if (depth <= maxDepth) return { key: found.key, depth };
      continue;
    }
    if (depth >= segments.length) continue;
    const member = segments[depth] as string;
    return { key: knownBucket(inc, bucketOf(found.bucket, member), member), depth };
  }
  return { key: ROOT_KEY, depth: 0 };
}

function remember(key: string, location: Location): void {
  setBounded(locations, key, location, LOCATIONS_MAX);
}

export function learnLocation(inc: string, prefix: Segments, key: string): void {
  remember(locationKey(inc, prefix), { key });
}

/**
 * A bucketed object met at `prefix` (its bucket stub `bucket`), or, when the segment `from` met is a bucket itself,
 * that bucket's own buckets.
 */
export function learnBucket(inc: string, prefix: Segments, from: string, bucket: string): void {
  remember(isBucketKey(from) ? splitKey(inc, from) : locationKey(inc, prefix), { bucket });
}

/** The bucket this Lambda knows a bucket was cut into for `member`, deepest first (the bucket itself if none). */
export function knownBucket(inc: string, bucket: string, member: string): string {
  let key = bucket;
  for (let split = locations.get(splitKey(inc, key)); split && 'bucket' in split; ) {
    key = bucketOf(split.bucket, member);
    split = locations.get(splitKey(inc, key));
  }
  return key;
}

/** Forgets where this Lambda knew segment `key` to be (it was folded into its parent). */
export function forgetLocation(inc: string, key: string): void {
  for (const [k, location] of [...locations.entries()]) {
    if (k.startsWith(`${inc}\u0000`) && 'key' in location && location.key === key) locations.delete(k);
  }
}

/**
 * Per warm Lambda: the chunked arrays met (by segment key), with how many elements their chunks held and about how
 * many a chunk holds, so an insert or delete among their chunks reads the segment and the tail in one Query.
 */
const chunkedArrays = new Map<string, { stub: string; perChunk: number }>();

export function learnChunked(inc: string, key: string, stub: string, perChunk: number): void {
  setBounded(chunkedArrays, `${inc}\u0000${key}`, { stub, perChunk }, LOCATIONS_MAX);
}

export const knownChunked = (inc: string, key: string) => chunkedArrays.get(`${inc}\u0000${key}`);

/** A segment that is no chunked array (any more): nothing remembered of it. */
export function forgetChunked(inc: string, key: string): void {
  chunkedArrays.delete(`${inc}\u0000${key}`);
}

export function forgetLocations(inc: string): void {
  for (const k of [...locations.keys()]) {
    if (k.startsWith(`${inc}\u0000`) || k.startsWith(`${inc}\u0001`)) locations.delete(k);
  }
}

/** A new segment's item: written before anything names it, so no reader or writer can meet it half-made. */
export function newSegmentItem(
  inc: string,
  key: string,
  fragment: Json,
  epoch: number,
  token?: { slot: number; value: string },
  tx?: string,
): Record<string, AttributeValue> {
  return {
    // The change that made it: a retry of that request which meets this segment first knows it landed.
    ...(token ? { [slotAttribute(token.slot)]: { S: token.value } } : {}),
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

/**
 * An update that also records its commit's token in `tx` (in the SET clause, or as one); with `tail`, in `rt` too (a
 * chunked array's segment whose chunks the commit rewrites in place); with `partner`, in `pa` (a segment changed in
 * place beside the commit's top segment).
 */
function stampedWithTransaction(update: UpdateRequest, tx: string, as: { tail?: boolean; partner?: boolean } = {}) {
  const part = ['#txn = :txn', ...(as.tail ? ['#rt = :txn'] : []), ...(as.partner ? ['#pa = :txn'] : [])].join(', ');
  return withTransactionClause(update, 'SET', part, { ':txn': { S: tx } });
}

/**
 * A one-item write that also drops the `tx` an earlier commit left on the segment: a token no later stream record
 * needs (the consumer takes a `tx` as a commit's only when the write changed it), and some 40 bytes every later write
 * of the segment would bill (DynamoDB bills the item's size by the KB).
 */
export function clearingTransaction(update: UpdateRequest): UpdateRequest {
  return withTransactionClause(update, 'REMOVE', '#txn, #rt, #pa');
}

/** An update with `part` (about `tx`) added to its `clause` (SET or REMOVE), the clause added if it has none. */
function withTransactionClause(
  update: UpdateRequest,
  clause: 'SET' | 'REMOVE',
  part: string,
  values: Record<string, AttributeValue> = {},
): UpdateRequest {
  const keyword = new RegExp(`\\b${clause}\\b`);
  return {
    ...update,
    UpdateExpression: keyword.test(update.UpdateExpression)
      ? update.UpdateExpression.replace(keyword, `${clause} ${part},`)
      : `${update.UpdateExpression} ${clause} ${part}`,
    ExpressionAttributeNames: {
      ...update.ExpressionAttributeNames,
      '#txn': A.transaction,
      ...(part.includes('#rt') ? { '#rt': A.tailCommit } : {}),
      ...(part.includes('#pa') ? { '#pa': A.partnerCommit } : {}),
    },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ...values },
  };
}

/** A project's root segment, holding `{}`; created with the project, or by the first write if that was lost. */
export async function createRoot(inc: string, epoch: number, project?: string): Promise<void> {
  try {
    await dynamo.send(
      new PutItemCommand({
        TableName: tableName(),
        Item: { ...newSegmentItem(inc, ROOT_KEY, {}, epoch), ...(project ? { [A.project]: { S: project } } : {}) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** A change that would have to rewrite, atomically, more segments than one transaction holds. */
export const changeTooLarge = () =>
  new PayloadTooLarge(
    'CHANGE_TOO_LARGE',
    `the change reads and rewrites more than ${MAX_TRANSACTION_ITEMS - 1} segments at once; change smaller parts, one request each`,
  );

/** A commit's outcome; `earlier`: not applied now because the named request it belongs to applied before. */
export type Committed = { ok: true; earlier?: true } | { ok: false; item?: Record<string, AttributeValue> };

/** DynamoDB's limits on one transaction. */
const MAX_TRANSACTION_ITEMS = 100;
const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
/**
 * The most a batch or patch may write (the new segments' fragments): what one transaction carries with room for its
 * other items. Planning stops past it, so no request grows a value in memory beyond it (a chain of self-copies).
 */
export const MAX_CHANGE_BYTES = MAX_TRANSACTION_BYTES / 2;

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
   * change's grant-epoch stamping is pending (partition `g`, the change's time: lib/store/stamping.ts).
   */
  sweepPk: 'swp',
  sweepSk: 'swt',
} as const;
/** A marker is one item: past this, the change is refused as too large (it lists key roots, so this is far off). */
const MAX_MARKER_BYTES = 350 * 1024;

/** Whether a commit would name one segment twice (rewrite it and delete it, say): one transaction may not. */
export const namesAnItemTwice = (items: readonly { key: string }[]) =>
  new Set(items.map((i) => i.key)).size !== items.length;

/** The keys with no ancestor among them (a key prefixes every key of its subtree, birth ids being fresh). */
export function keyRoots(keys: readonly string[]): string[] {
  const roots: string[] = [];
  for (const key of [...keys].sort()) {
    const last = roots[roots.length - 1];
    if (last === undefined || !key.startsWith(last)) roots.push(key);
  }
  return roots;
}

export const markerKey = (inc: string, id: string) => ({ pk: { S: contentPk(inc) }, sk: { S: id } });

export interface Rewrite {
  inc: string;
  epoch: number;
  /**
   * The change to the segment whose subtree is rewritten (compiled with its conditions). `tail`: it is a chunked
   * array's segment whose chunks this commit rewrites in place (recorded in `rt`).
   */
  parent: { key: string; update: UpdateRequest; tail?: boolean };
  /** Segments below it written in place in the same commit (a chunked array kept under its key, its chunks), each guarded. */
  rewritten?: readonly { key: string; update: UpdateRequest; tail?: boolean; partner?: boolean }[];
  /** New segments, named only by the parent's new fragment. */
  children: readonly { key: string; fragment: Json }[];
  /**
   * Segments the change makes unreachable, each deleted on the version read. `carried`: its content was read into the
   * new fragments, so its delete must be part of the commit (a write to it in between would otherwise be lost).
   */
  orphans: readonly { key: string; version?: number; carried?: boolean }[];
  /** The request's token, recorded in the new segments' slots too (where its written path may now be). */
  token?: { slot: number; value: string };
  /** A named request's record (docs/design/storage.md §8a): put in the commit, which it refuses if already there. */
  record?: RequestRecord;
  /**
   * A batch or patch: every segment it writes (its new ones too) in the one transaction that commits it, or 413
   * `CHANGE_TOO_LARGE` before anything is written. Only the deletes of what it drops may follow the commit. A single
   * write of a large value (`set`, `update`) writes its new segments first, behind a pending-commit marker.
   */
  oneTransaction?: boolean;
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
      ...stampedWithTransaction(rewrite.parent.update, token, { tail: rewrite.parent.tail }),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const rewritten: TransactWriteItem[] = (rewrite.rewritten ?? []).map((r) => ({
    Update: {
      TableName: table,
      Key: segmentItemKey(rewrite.inc, r.key),
      ...stampedWithTransaction(r.update, token, { tail: r.tail, partner: r.partner }),
    },
  }));
  const puts: TransactWriteItem[] = rewrite.children.map((child) => ({
    Put: {
      TableName: table,
      Item: newSegmentItem(rewrite.inc, child.key, child.fragment, rewrite.epoch, rewrite.token, token),
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
  if (namesAnItemTwice([rewrite.parent, ...(rewrite.rewritten ?? []), ...rewrite.children, ...rewrite.orphans])) {
    // Planned on a stale view (this Lambda's memory of where segments are): DynamoDB would refuse the transaction
    // as a whole (a ValidationException). Not applied; the writer reads afresh, from the root.
    forgetLocations(rewrite.inc);
    return { ok: false };
  }
  const bytes = rewrite.children.reduce((sum, c) => sum + storedSize(c.fragment) + 200, 0);
  const recorded = rewrite.record ? [recordPut(rewrite.record)] : [];
  const fits =
    1 + rewritten.length + puts.length + deletes.length + recorded.length <= MAX_TRANSACTION_ITEMS &&
    bytes <= MAX_CHANGE_BYTES;
  const carried = deletes.filter((_, i) => rewrite.orphans[i]?.carried);
  let first: TransactWriteItem[];
  let after: TransactWriteItem[] = [];
  let marker: Record<string, AttributeValue> | undefined;
  if (fits) {
    first = [parent, ...rewritten, ...puts, ...deletes, ...recorded];
  } else if (rewrite.oneTransaction) {
    // Every item it writes counted, its new segments too, the record, and the marker's own when deletes follow.
    const fixed = 2 + rewritten.length + puts.length + carried.length + recorded.length;
    if (fixed > MAX_TRANSACTION_ITEMS || bytes > MAX_CHANGE_BYTES) throw changeTooLarge();
    const dropped = deletes.filter((d) => !carried.includes(d));
    const room = MAX_TRANSACTION_ITEMS - fixed;
    first = [parent, ...rewritten, ...puts, ...carried, ...dropped.slice(0, room), ...recorded];
    after = dropped.slice(room);
    // A marker naming the deletes left for after the commit (no children: none is written before it).
    marker = markerKey(rewrite.inc, `${MARKER_PREFIX}${randomBytes(12).toString('base64url')}`);
    await putMarker(marker, rewrite.parent.key, [], keyRoots(after.map((d) => d.Delete?.Key?.sk?.S as string)));
    first.push(settleMarker(table, marker, after.length > 0));
  } else {
    // The parent, the segments written in place, the carried deletes, the marker's own item and the record.
    const fixed = 2 + rewritten.length + carried.length + recorded.length;
    if (fixed > MAX_TRANSACTION_ITEMS) throw changeTooLarge();
    const dropped = deletes.filter((d) => !carried.includes(d));
    const room = MAX_TRANSACTION_ITEMS - fixed;
    first = [parent, ...rewritten, ...carried, ...dropped.slice(0, room), ...recorded];
    after = dropped.slice(room);
    // First a marker naming what the next steps write and leave: a death between them leaves it to the sweeper.
    marker = markerKey(rewrite.inc, `${MARKER_PREFIX}${randomBytes(12).toString('base64url')}`);
    await putMarker(
      marker,
      rewrite.parent.key,
      keyRoots(rewrite.children.map((c) => c.key)),
      keyRoots(after.map((d) => d.Delete?.Key?.sk?.S as string)),
    );
    // The new children next: no stub names them until the commit.
    await batchWriteAll(puts.map((p) => ({ PutRequest: { Item: p.Put?.Item } })));
    first.push(settleMarker(table, marker, after.length > 0));
  }
  try {
    // The SDK's own retries resend this token: a transaction applied whose answer was lost is not applied again,
    // even when another write has since taken its request-token slot.
    await dynamo.send(new TransactWriteItemsCommand({ TransactItems: first, ClientRequestToken: token }));
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      // Not applied: the children written first are unreachable for good; delete them now (the sweeper would).
      if (marker)
        await abandon(rewrite.inc, marker, rewrite.oneTransaction ? [] : rewrite.children).catch(() => undefined);
      // The named request's record was there: it applied before (its answer was lost); nothing applies twice.
      const at = recorded.length > 0 ? first.indexOf(recorded[0] as TransactWriteItem) : -1;
      if (at >= 0 && recordedBefore(error, at)) return { ok: true, earlier: true };
      const reason = error.CancellationReasons?.[0];
      return { ok: false, item: reason?.Code === 'ConditionalCheckFailed' ? reason.Item : undefined };
    }
    throw error;
  }
  if (after.length > 0) {
    await batchWriteAll(after.map((d) => ({ DeleteRequest: { Key: d.Delete?.Key } })));
    // Only once every orphan is gone: an interruption before leaves the marker, and the sweeper finishes them.
    if (marker) await batchWriteAll([{ DeleteRequest: { Key: marker } }]);
  }
  return { ok: true };
}

/**
 * The commit's settling of its marker, on its still being pending (a sweeper that claimed it makes the commit fail):
 * deleted, or turned into the list of the orphans still to delete (`deletesLeft`).
 */
function settleMarker(table: string, marker: Record<string, AttributeValue>, deletesLeft: boolean): TransactWriteItem {
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

async function putMarker(
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
async function abandon(
  inc: string,
  marker: Record<string, AttributeValue>,
  children: Rewrite['children'],
): Promise<void> {
  await batchWriteAll(children.map((c) => ({ DeleteRequest: { Key: segmentItemKey(inc, c.key) } })));
  await batchWriteAll([{ DeleteRequest: { Key: marker } }]);
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
