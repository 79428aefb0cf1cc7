// Fragments: a content tree cut into segment-sized pieces joined by stubs (docs/design/storage.md, section 4). Pure.
import { createHash, randomBytes } from 'node:crypto';
import { asIndex, type Segments } from '../paths';
import { type Json, type JsonObject, Stub, hasOwn, isObject, setOwn, storedSize } from '../content/json';

/** The root segment's key; a child's key is its parent's plus a random birth id and `/`, so a key prefixes its subtree. */
export const ROOT_KEY = '/';

/** A new child key under `parent`: random, so a subtree written again at the same path never reuses an old key. */
export const childKey = (parent: string) => `${parent}${randomBytes(6).toString('base64url')}/`;

/*
 * Chunked arrays (docs/design/storage.md, section 13, step 4). An array too large for its segment is always that
 * segment's root (a cut moves a large array to a child segment first). Its oldest elements move out into *chunks*:
 * items keyed `<dir><start>/` (`dir` = the array segment's key + a random id + `~`, `start` = the index of the chunk's
 * first element, zero-padded so keys sort by index), each a plain array. The array segment keeps the newest elements
 * behind one *chunk stub* at index 0, keyed `<dir><count>`: it stands for the first `count` elements. A push appends to
 * the array segment; when that outgrows its budget its elements (not the stub) move into a new chunk at `start` =
 * count, one item more in the same commit. An element is found without a directory: at index >= count it is in the
 * array segment, below it in the chunk with the largest start not above it (one Query). Chunk keys are below the
 * array segment's key, so the segment's subtree is the whole array.
 */
const CHUNK_START_DIGITS = 10;

/** Whether a stub is a chunk stub (`<dir><count>`: the last key component has `~` and no closing `/`). */
export const isChunkStubKey = (key: string) => !key.endsWith('/') && key.slice(key.lastIndexOf('/')).includes('~');

/** Whether a segment key is a chunk's (`<dir><start>/`): chunks are plain arrays, never cut further. */
export const isChunkKey = (key: string) =>
  key.endsWith('/') && key.slice(key.lastIndexOf('/', key.length - 2)).includes('~');

/** The chunk directory a chunk stub or chunk key belongs to (up to and including its `~`). */
export const chunkDir = (key: string) => key.slice(0, key.lastIndexOf('~') + 1);

/** How many elements a chunk stub stands for. */
export const chunkCount = (key: string) => Number(key.slice(key.lastIndexOf('~') + 1));

/**
 * Chunk keys hold their first element's index subtracted from the largest one, so they sort from the last chunk to
 * the first: right after the array's segment's own key, nothing else being below it, come its last chunks. One
 * `Query` from that key reads the segment and the tail an insert or delete rewrites (docs/design/storage.md, §13).
 */
const LAST_START = 10 ** CHUNK_START_DIGITS - 1;

/** The index of a chunk's first element, from its key. */
export const chunkStart = (key: string) => LAST_START - Number(key.slice(key.lastIndexOf('~') + 1, -1));

export const chunkKey = (dir: string, start: number) =>
  `${dir}${String(LAST_START - start).padStart(CHUNK_START_DIGITS, '0')}/`;

/** Chunk keys in the order of their elements (their keys sort the other way). */
export const byChunkStart = (a: string, b: string) => chunkStart(a) - chunkStart(b);

/*
 * Bucketed objects (docs/design/storage.md, section 13, step 4). An object that cannot be cut small enough (too many
 * members for its segment even with every movable one moved out) is spread over buckets: the segment keeps only a
 * *bucket stub* `<key><random>#<fanout>`, and member `m` lives in bucket `<stub>/<r>/`, `r` = a hash of the stub and
 * `m` modulo the fan-out, so a writer computes its bucket from the path with no directory. Every bucket exists from
 * the start (an empty object at least). A bucket that outgrows its budget is cut like any segment: into a bucket stub
 * of its own (nested buckets, keyed below it), so a split never changes what is above it.
 */
export const isBucketStubKey = (key: string) => !key.endsWith('/') && key.slice(key.lastIndexOf('/')).includes('#');

/** Whether a segment key is a bucket's (`<stub>/<r>/`). */
export const isBucketKey = (key: string) => /#\d+\/\d+\/$/.test(key);

/** The bucket of a bucketed object (bucket stub `stub`) that holds member `member`. */
export function bucketOf(stub: string, member: string): string {
  const fanout = Number(stub.slice(stub.lastIndexOf('#') + 1));
  const r = createHash('sha256').update(`${stub}\u0000${member}`).digest().readUInt32BE(0) % fanout;
  return `${stub}/${r}/`;
}

/** The prefix of every segment a stub's value is stored in: a segment's subtree, a chunk stub's chunks, a bucket stub's buckets. */
export const subtreePrefix = (key: string) =>
  isChunkStubKey(key) ? chunkDir(key) : isBucketStubKey(key) ? `${key}/` : key;

/** The chunk stub at the head of a chunked array, if it is one. */
export function chunkStubOf(value: Json | undefined): Stub | undefined {
  if (!Array.isArray(value)) return undefined;
  const first = value[0];
  return first instanceof Stub && isChunkStubKey(first.key) ? first : undefined;
}

/** An array's length counting the elements its chunk stub stands for. */
export function logicalLength(list: readonly Json[]): number {
  const stub = chunkStubOf(list as Json[]);
  return stub ? chunkCount(stub.key) + list.length - 1 : list.length;
}

/**
 * Where a logical index of a chunked array (a segment's root) is: its position in the segment's own array, or the
 * logical index (non-negative) to look up among the chunks. Out-of-range indexes stay in the segment, where the
 * model answers them; a negative index that stays in the segment keeps its form (the model guards the length).
 */
export function chunkedIndex(list: readonly Json[], index: number): { position: number } | { chunk: number } {
  const count = chunkCount((chunkStubOf(list as Json[]) as Stub).key);
  const total = count + list.length - 1;
  const logical = index < 0 ? total + index : index;
  if (index < 0) return logical >= count || logical < 0 ? { position: index } : { chunk: logical };
  return logical >= count ? { position: logical - count + 1 } : { chunk: logical };
}

/** A fragment lookup over segments read (for assemble): a chunk stub's value is its chunks' elements, in order. */
export function fragmentsOf(segments: Iterable<{ key: string; fragment: Json }>): (key: string) => Json | undefined {
  const byKey = new Map<string, Json>();
  for (const s of segments) byKey.set(s.key, s.fragment);
  const lookup = (key: string): Json | undefined => {
    if (isBucketStubKey(key)) {
      // A bucketed object: the members of all its buckets (a bucket cut into buckets of its own, theirs).
      const fanout = Number(key.slice(key.lastIndexOf('#') + 1));
      const merged: JsonObject = {};
      for (let r = 0; r < fanout; r++) {
        let bucket = byKey.get(`${key}/${r}/`);
        if (bucket instanceof Stub) bucket = lookup(bucket.key);
        if (!isObject(bucket)) return undefined;
        for (const m of Object.keys(bucket)) setOwn(merged, m, bucket[m] as Json);
      }
      return merged;
    }
    if (!isChunkStubKey(key)) return byKey.get(key);
    const dir = chunkDir(key);
    // The chunks below the stub's count: one read later than the array's segment may also see a chunk made since.
    const count = chunkCount(key);
    const chunks = [...byKey.keys()]
      .filter((k) => k.startsWith(dir) && isChunkKey(k) && chunkStart(k) < count)
      .sort(byChunkStart);
    const elements: Json[] = [];
    for (const k of chunks) {
      if (chunkStart(k) !== elements.length) return undefined;
      elements.push(...(byKey.get(k) as Json[]));
    }
    return elements.length === count ? elements : undefined;
  };
  return lookup;
}

/**
 * Where a path leads in a fragment: into it (`here`, the model then decides what the path means there) or onto a
 * stub after `consumed` path segments, to be followed into that segment. `enterLast` says whether a stub found at
 * the very end of the path is followed (reading it, pushing to it, incrementing it: the value lives over there) or
 * stays here (set and delete replace the stub itself).
 *
 * Object members are stubs, and a chunked array's head (always a segment's root), so the path to a segment's root is
 * object keys only and never moves when a list changes. In a chunked array, `position` is where the first path step
 * (a logical index) is in the fragment, and `chunk` says the element is in a chunk (at that logical index).
 */
export type Located =
  | { at: 'here'; position?: number }
  /** `bucket`: the key is the bucket of a bucketed object (`bucket` its stub) for the next path step, a member. */
  | { at: 'stub'; key: string; consumed: number; bucket?: string }
  | { at: 'chunk'; dir: string; index: number };

export function locate(fragment: Json, segments: Segments, enterLast: boolean): Located {
  const stub = chunkStubOf(fragment);
  if (stub && segments.length > 0) {
    const index = asIndex(segments[0] as string);
    if (index === undefined) return { at: 'here' };
    const where = chunkedIndex(fragment as Json[], index);
    if ('chunk' in where) return { at: 'chunk', dir: chunkDir(stub.key), index: where.chunk };
    const rest = locateIn(fragment, [String(where.position), ...segments.slice(1)], enterLast);
    return rest.at === 'here' ? { at: 'here', position: where.position } : rest;
  }
  return locateIn(fragment, segments, enterLast);
}

function locateIn(fragment: Json, segments: Segments, enterLast: boolean): Located {
  let node: Json = fragment;
  for (const [i, segment] of segments.entries()) {
    if (node instanceof Stub) {
      // A bucketed object: the member's bucket, whose root is the object (the member stays on the path).
      if (isBucketStubKey(node.key))
        return { at: 'stub', key: bucketOf(node.key, segment), consumed: i, bucket: node.key };
      return { at: 'stub', key: node.key, consumed: i };
    }
    if (Array.isArray(node)) {
      const index = asIndex(segment);
      if (index === undefined) return { at: 'here' };
      const position = index < 0 ? node.length + index : index;
      if (position < 0 || position >= node.length) return { at: 'here' };
      node = node[position] as Json;
    } else if (isObject(node) && hasOwn(node, segment)) {
      node = node[segment] as Json;
    } else {
      return { at: 'here' };
    }
  }
  // A bucketed object itself is read whole (its stub assembled) and is no number or array to change in place.
  return enterLast && node instanceof Stub && !isBucketStubKey(node.key)
    ? { at: 'stub', key: node.key, consumed: segments.length }
    : { at: 'here' };
}

/** Every stub in a value (a subtree being replaced or removed leaves these segments unreachable). */
export function stubsIn(value: Json | undefined, found: string[] = []): string[] {
  if (value instanceof Stub) found.push(value.key);
  else if (Array.isArray(value)) for (const v of value) stubsIn(v, found);
  else if (isObject(value)) for (const k of Object.keys(value)) stubsIn(value[k] as Json, found);
  return found;
}

/**
 * The keys of the segments read that stubs lead to from `roots` (segment keys, chunk stubs or bucket stubs), through
 * the fragments of those read: what assembling them may use. A Query by key prefix also returns segments no
 * committed stub names (the new segments of a change interrupted before its commit, until the sweeper deletes them):
 * they are no part of any value.
 */
export function reachableFrom(roots: readonly string[], read: ReadonlyMap<string, { fragment: Json }>): Set<string> {
  const chunksByDir = new Map<string, string[]>();
  for (const key of read.keys()) {
    if (!isChunkKey(key)) continue;
    const dir = chunkDir(key);
    const chunks = chunksByDir.get(dir);
    if (chunks) chunks.push(key);
    else chunksByDir.set(dir, [key]);
  }
  const reached = new Set<string>();
  const pending = [...roots];
  const visit = (key: string) => {
    if (reached.has(key) || !read.has(key)) return;
    reached.add(key);
    stubsIn(read.get(key)?.fragment, pending);
  };
  for (let stub = pending.pop(); stub !== undefined; stub = pending.pop()) {
    if (isChunkStubKey(stub)) {
      const count = chunkCount(stub);
      for (const key of chunksByDir.get(chunkDir(stub)) ?? []) if (chunkStart(key) < count) visit(key);
    } else if (isBucketStubKey(stub)) {
      const fanout = Number(stub.slice(stub.lastIndexOf('#') + 1));
      for (let r = 0; r < fanout; r++) visit(`${stub}/${r}/`);
    } else visit(stub);
  }
  return reached;
}

/**
 * Where a fragment's stubs are, by the first key of their path (key → count; what a segment's A.stubsUnder holds):
 * every segment records it when written whole, so a set or delete that does not read first can be conditioned on
 * not replacing a stub.
 */
export function stubsUnderOf(fragment: Json): Record<string, number> {
  const under: Record<string, number> = {};
  // A fragment that is a bucket stub: no write may take the segment for one without stubs.
  if (fragment instanceof Stub) return { '*': 1 };
  if (!isObject(fragment)) return under;
  for (const k of Object.keys(fragment)) {
    const n = stubsIn(fragment[k] as Json).length;
    if (n > 0) setOwn(under as JsonObject, k, n);
  }
  return under;
}

/** A segment to be written: its key and fragment. */
export interface Piece {
  key: string;
  fragment: Json;
}

/**
 * Cuts a value that will be stored at `key` into pieces of at most `limit` bytes (storedSize): while it is over,
 * its largest object-valued or array-valued member moves to a child segment and a stub takes its place, until the
 * value is at most `target` (half the limit, so the next writes have room before splitting again). A member moved
 * out that is itself over the limit is cut the same way. What cannot be cut (an array, or an object whose members are
 * all scalars, over the limit) stays whole: such a segment is larger than `limit`, up to what one item holds.
 *
 * Returns the piece for `key` first, then the new children (parents before children). `value` is not changed:
 * the containers on the way are copied.
 */
export function cut(
  key: string,
  value: Json,
  limit: number,
  target = Math.floor(limit / 2),
  newKey: (parent: string) => string = childKey,
): Piece[] {
  if (Array.isArray(value) && storedSize(value) > limit && !isChunkKey(key)) return cutArray(key, value, limit, target);
  if (!isObject(value) || storedSize(value) <= limit) return [{ key, fragment: value }];
  const members = Object.keys(value);
  // Only a container of at least an eighth of the limit moves to a segment of its own: many small records (a map
  // of builds, of users) are bucketed instead of each becoming an item of a few hundred bytes.
  const stubSize = Buffer.byteLength(newKey(key));
  const minMove = Math.max(stubSize + 1, Math.floor(limit / 8));
  const movableSize = (v: Json) => (Array.isArray(v) || isObject(v) ? storedSize(v) : 0);
  // The least the object can be cut to (every movable member moved out): past the limit, buckets.
  let least = 3;
  for (const k of members) {
    const v = value[k] as Json;
    least += 1 + Buffer.byteLength(k) + (movableSize(v) >= minMove ? stubSize : storedSize(v));
  }
  if (least > limit && members.length > 1) return bucketize(key, value, limit, target, newKey);
  const fragment: JsonObject = {};
  for (const k of members) setOwn(fragment, k, value[k] as Json);
  const movable = members
    .map((k) => ({ k, size: movableSize(fragment[k] as Json) }))
    .filter(({ size }) => size >= minMove)
    .sort((a, b) => b.size - a.size);
  const children: Piece[] = [];
  let size = storedSize(fragment);
  for (const { k, size: memberSize } of movable) {
    if (size <= target) break;
    const child = newKey(key);
    const stub = new Stub(child);
    children.push(...cut(child, fragment[k] as Json, limit, target, newKey));
    setOwn(fragment, k, stub);
    size += storedSize(stub) - memberSize;
  }
  return [{ key, fragment }, ...children];
}

/**
 * An object with too many members for one segment, spread over buckets each about `target` full (a power of two of
 * them), each bucket cut as a segment of its own. Returns the segment's piece (the bucket stub) first.
 */
function bucketize(
  key: string,
  value: JsonObject,
  limit: number,
  target: number,
  newKey: (parent: string) => string,
): Piece[] {
  // About `target` per bucket, and no more buckets than members (a few large ones each get a bucket; two that
  // meet in one are split again below it).
  const members = Object.keys(value).length;
  let fanout = 2;
  while (fanout * target < storedSize(value) && fanout < members) fanout *= 2;
  const stub = `${key}${randomBytes(6).toString('base64url')}#${fanout}`;
  const buckets = new Map<string, JsonObject>();
  for (let r = 0; r < fanout; r++) buckets.set(`${stub}/${r}/`, {});
  for (const m of Object.keys(value)) setOwn(buckets.get(bucketOf(stub, m)) as JsonObject, m, value[m] as Json);
  const pieces: Piece[] = [{ key, fragment: new Stub(stub) }];
  for (const [bucket, members] of buckets) pieces.push(...cut(bucket, members, limit, target, newKey));
  return pieces;
}

/**
 * An array segment over its budget: its oldest elements (after its chunk stub, if it has one) move into new chunks of
 * at most `limit` bytes each, until what stays is at most `target` (the newest elements, behind a chunk stub for all
 * the rest). An element larger than a chunk gets a chunk of its own. Returns the array segment's piece first.
 */
function cutArray(key: string, list: Json[], limit: number, target: number): Piece[] {
  const stub = chunkStubOf(list);
  const start = stub ? chunkCount(stub.key) : 0;
  const dir = stub ? chunkDir(stub.key) : `${key}${randomBytes(6).toString('base64url')}~`;
  const elements = stub ? list.slice(1) : list;
  // The newest elements that fit in `target` with the stub stay; at least one moves, or there is nothing to cut.
  let kept = elements.length;
  let size = 3 + 1 + Buffer.byteLength(`${dir}${start + elements.length}`);
  while (kept > 0 && size + 1 + storedSize(elements[kept - 1] as Json) <= target) {
    kept--;
    size += 1 + storedSize(elements[kept] as Json);
  }
  if (kept === 0) return [{ key, fragment: list }];
  const pieces: Piece[] = [];
  let chunk: Json[] = [];
  let chunkSize = 3;
  let first = start;
  for (const [i, element] of elements.slice(0, kept).entries()) {
    const elementSize = 1 + storedSize(element);
    if (chunk.length > 0 && chunkSize + elementSize > limit) {
      pieces.push({ key: chunkKey(dir, first), fragment: chunk });
      chunk = [];
      chunkSize = 3;
      first = start + i;
    }
    chunk.push(element);
    chunkSize += elementSize;
  }
  pieces.push({ key: chunkKey(dir, first), fragment: chunk });
  return [{ key, fragment: [new Stub(`${dir}${start + kept}`), ...elements.slice(kept)] }, ...pieces];
}

/**
 * A chunked array's tail planned on (docs/design/storage.md, section 13, step 4), laid back into the chunks it was
 * read from: `elements` are the array's from logical index `starts[0]` on, `starts` the tail chunks' first indexes in
 * order, `count` what the array's chunk stub stood for. Every chunk keeps its start and, but the last, its length; the
 * last ends at the array's end if that came below `count` (the stub's new `count`); the rest stays in the array's
 * segment. Undefined when a chunk would be left empty: a chunk is never deleted this way (its key is never reused).
 */
export function layTail(
  elements: readonly Json[],
  starts: readonly number[],
  count: number,
): { chunks: Json[][]; newest: Json[]; count: number } | undefined {
  const s = starts[0] as number;
  const end = Math.min(count, s + elements.length);
  if (end <= (starts[starts.length - 1] as number)) return undefined;
  const chunks = starts.map((start, j) => elements.slice(start - s, (starts[j + 1] ?? end) - s));
  return { chunks, newest: elements.slice(end - s), count: end };
}

/**
 * The value a fragment stands for: every stub replaced by the fragment of the segment it names, recursively.
 * `fragmentOf` returns undefined for a segment it does not have: a MissingSegment (the content changed while it was
 * read), or with `keep`, the stub stays (a partial tree: the segments off the paths a batch works on).
 */
export function assemble(
  fragment: Json,
  fragmentOf: (key: string) => Json | undefined,
  missing: 'throw' | 'keep' = 'throw',
): Json {
  if (fragment instanceof Stub) {
    const child = fragmentOf(fragment.key);
    if (child !== undefined) return assemble(child, fragmentOf, missing);
    if (missing === 'keep') return fragment;
    throw new MissingSegment(fragment.key);
  }
  if (Array.isArray(fragment)) {
    const stub = chunkStubOf(fragment);
    if (stub) {
      // A chunked array: its chunks' elements, then its own.
      const chunks = fragmentOf(stub.key);
      if (chunks === undefined && missing === 'throw') throw new MissingSegment(stub.key);
      if (chunks !== undefined)
        return [...(chunks as Json[]), ...fragment.slice(1).map((v) => assemble(v, fragmentOf, missing))];
    }
    return fragment.map((v) => assemble(v, fragmentOf, missing));
  }
  if (isObject(fragment)) {
    let copy: JsonObject | undefined;
    for (const k of Object.keys(fragment)) {
      const v = fragment[k] as Json;
      if (!(v instanceof Stub) && !Array.isArray(v) && !isObject(v)) continue;
      const assembled = assemble(v, fragmentOf, missing);
      if (assembled === v) continue;
      copy ??= { ...fragment };
      setOwn(copy, k, assembled);
    }
    return copy ?? fragment;
  }
  return fragment;
}

/** A stub named a segment that was not there: the content changed while it was being read. */
export class MissingSegment extends Error {
  constructor(readonly key: string) {
    super(`segment ${key} is missing`);
  }
}
