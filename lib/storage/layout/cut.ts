// Cutting a value into segment-sized pieces (docs/design/storage.md §4): members moved out behind stubs, objects
// spread over buckets, an array's oldest elements moved into chunks. Pure: new ids are handed in.
import { type Json, type JsonObject, Stub, isObject, setOwn, storedSize } from '../../content/json';
import { bucketOf } from './bucketed';
import { chunkStubOf } from './chunked';
import {
  bucketKeys,
  bucketStubKey,
  childKey,
  chunkCount,
  chunkDir,
  chunkDirKey,
  chunkKey,
  chunkStubKey,
  isChunkKey,
} from './keys';

/**
 * How a value is cut: pieces of at most `limit` bytes, cut down to `target` (half the limit unless given), new keys
 * made of ids from `newId` (random in the engine, so a key is never reused; counted in tests).
 */
export interface CutOptions {
  limit: number;
  target?: number;
  newId: () => string;
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
export function cut(key: string, value: Json, { limit, target = Math.floor(limit / 2), newId }: CutOptions): Piece[] {
  const options = { limit, target, newId };
  if (Array.isArray(value) && storedSize(value) > limit && !isChunkKey(key)) return cutArray(key, value, options);
  if (!isObject(value) || storedSize(value) <= limit) return [{ key, fragment: value }];
  const members = Object.keys(value);
  // Only a container of at least an eighth of the limit moves to a segment of its own: many small records (a map
  // of builds, of users) are bucketed instead of each becoming an item of a few hundred bytes.
  const stubSize = Buffer.byteLength(childKey(key, newId()));
  const minMove = Math.max(stubSize + 1, Math.floor(limit / 8));
  const movableSize = (v: Json) => (Array.isArray(v) || isObject(v) ? storedSize(v) : 0);
  // The least the object can be cut to (every movable member moved out): past the limit, buckets.
  let least = 3;
  for (const k of members) {
    const v = value[k] as Json;
    least += 1 + Buffer.byteLength(k) + (movableSize(v) >= minMove ? stubSize : storedSize(v));
  }
  if (least > limit && members.length > 1) return bucketize(key, value, options);
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
    const child = childKey(key, newId());
    const stub = new Stub(child);
    children.push(...cut(child, fragment[k] as Json, options));
    setOwn(fragment, k, stub);
    size += storedSize(stub) - memberSize;
  }
  return [{ key, fragment }, ...children];
}

/**
 * An object with too many members for one segment, spread over buckets each about `target` full (a power of two of
 * them), each bucket cut as a segment of its own. Returns the segment's piece (the bucket stub) first.
 */
function bucketize(key: string, value: JsonObject, options: Required<CutOptions>): Piece[] {
  const { target } = options;
  // About `target` per bucket, and no more buckets than members (a few large ones each get a bucket; two that
  // meet in one are split again below it).
  const members = Object.keys(value).length;
  let fanout = 2;
  while (fanout * target < storedSize(value) && fanout < members) fanout *= 2;
  // Members too large to share a segment that all hash into one bucket are cut again below it, a level deeper each
  // time they meet (two of them: half the time). A fresh id reseeds the hash: tried until the members spread, so
  // every level holds fewer of them and the depth is bounded by their count, not by chance.
  let stub = '';
  let buckets = new Map<string, JsonObject>();
  for (let tries = 0; tries < SPREAD_TRIES; tries++) {
    stub = bucketStubKey(key, options.newId(), fanout);
    buckets = spread(stub, value);
    if (![...buckets.values()].some((b) => Object.keys(b).length === members)) break;
  }
  const pieces: Piece[] = [{ key, fragment: new Stub(stub) }];
  for (const [bucket, members] of buckets) pieces.push(...cut(bucket, members, options));
  return pieces;
}

/** Fresh ids tried for a bucket stub whose hash put every member in one bucket (each fails at most half the time). */
const SPREAD_TRIES = 32;

/** An object's members in the buckets of bucket stub `stub`, by their hash (every bucket present, empty or not). */
function spread(stub: string, value: JsonObject): Map<string, JsonObject> {
  const buckets = new Map<string, JsonObject>(bucketKeys(stub).map((k) => [k, {}]));
  for (const m of Object.keys(value)) setOwn(buckets.get(bucketOf(stub, m)) as JsonObject, m, value[m] as Json);
  return buckets;
}

/**
 * An array segment over its budget: its oldest elements (after its chunk stub, if it has one) move into new chunks of
 * at most `limit` bytes each, until what stays is at most `target` (the newest elements, behind a chunk stub for all
 * the rest). An element larger than a chunk gets a chunk of its own. Returns the array segment's piece first.
 */
function cutArray(key: string, list: Json[], { limit, target, newId }: Required<CutOptions>): Piece[] {
  const stub = chunkStubOf(list);
  const start = stub ? chunkCount(stub.key) : 0;
  const dir = stub ? chunkDir(stub.key) : chunkDirKey(key, newId());
  const elements = stub ? list.slice(1) : list;
  // The newest elements that fit in `target` with the stub stay; at least one moves, or there is nothing to cut.
  let kept = elements.length;
  let size = 3 + 1 + Buffer.byteLength(chunkStubKey(dir, start + elements.length));
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
  return [{ key, fragment: [new Stub(chunkStubKey(dir, start + kept)), ...elements.slice(kept)] }, ...pieces];
}
