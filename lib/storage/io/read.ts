// Reading segments: one by key (GetItem), a subtree (Query of a key prefix), a chunked array's chunks and tail.
import { type AttributeValue, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { setBounded } from '../../config/bounded';
import { tableName } from '../../config/env';
import {
  ROOT_KEY,
  chunkKey,
  chunkStart,
  isChunkKey,
  isBucketStubKey,
  isChunkStubKey,
  subtreePrefix,
  contentPk,
} from '../layout/keys';
import { stubsIn, reachableFrom } from '../layout/stubs';
import { storedSize } from '../../content/json';
import { batchGetConsistent } from '../../dynamo/batch-get';
import { dynamo } from '../../dynamo/client';
import { A } from '../../schema/attributes';
import { changeTooLarge } from '../refusals';
import { forgetChunkRange, learnChunkRange, projectNames } from '../memory';
import { type Segment, readSegment, segmentItemKey } from '../segment';

/** One segment, read consistently; undefined when there is none. */
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
  options: { keysOnly?: boolean; maxBytes?: number } = {},
): Promise<Map<string, Segment>> {
  const { keysOnly = false, maxBytes = Number.POSITIVE_INFINITY } = options;
  const found = await queryPrefix(inc, key, { keysOnly, maxBytes });
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
    const subtree = await querySubtree(inc, stub, { maxBytes: maxBytes - bytes });
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
  { keysOnly, maxBytes }: { keysOnly: boolean; maxBytes: number },
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

/** Which tail of a chunked array getTail reads, and how far it may go. */
export interface TailRead {
  /** The chunk directory, the logical index the tail starts at, and the chunk stub's count (chunks are below it). */
  dir: string;
  from: number;
  count: number;
  /** Elements a chunk holds, as far as known: how many items the first Query asks for. */
  perChunk: number;
  /** Most chunks a tail may have; past it, the whole array when it has at most `whole` chunks. */
  max: number;
  whole: number;
  /** Chunks already read from the last down (with the array's segment): read on after them. */
  read?: readonly Segment[];
}

/**
 * The chunks of a chunked array from the one holding logical index `from` to the last below `count`, in order: one
 * Query from the last chunk down, of about as many items as the tail should have at `perChunk` elements a chunk (a
 * guess: another page, twice as long, when it was low). A tail of more than `max` chunks is `'long'` when the whole
 * array has at most `whole` chunks (one commit can still rewrite it whole), else a 413 at once: read no further.
 */
export async function getTail(inc: string, tail: TailRead): Promise<Segment[] | 'long'> {
  const { dir, from, count, perChunk, max, whole, read = [] } = tail;
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
