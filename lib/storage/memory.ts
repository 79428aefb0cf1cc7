// What a warm Lambda remembers of the layout (locations of paths, buckets, chunk ranges, chunked arrays, project
// names): bounded guesses, each checked by the read or the write that uses it, forgotten when found wrong.
import { setBounded } from '../config/bounded';
import { ROOT_KEY, chunkDir, chunkKey, chunkStart, isBucketKey } from './layout/keys';
import { bucketOf } from './layout/bucketed';
import type { Path } from '../paths';
import type { Segment } from './segment';

/**
 * Per warm Lambda: the chunks met, per chunk directory, as the ranges of indexes they held. A chunk keeps its key, and
 * so its start, for as long as it exists, and its length except for the last chunk's end (docs/design/storage.md,
 * section 13, step 4); the range is only a guess of where to read, checked on the chunk read.
 */
const chunkRanges = new Map<string, { start: number; end: number }[]>();
const CHUNK_DIRECTORIES_MAX = 1_000;
const CHUNK_RANGES_MAX = 256;

/** Remembers the range of indexes a chunk held. */
export function learnChunkRange(inc: string, chunk: Segment): void {
  const id = `${inc}\u0000${chunkDir(chunk.key)}`;
  const start = chunkStart(chunk.key);
  const end = start + (Array.isArray(chunk.fragment) ? chunk.fragment.length : 0);
  const ranges = (chunkRanges.get(id) ?? []).filter((r) => r.start !== start);
  setBounded(chunkRanges, id, [...ranges.slice(1 - CHUNK_RANGES_MAX), { start, end }], CHUNK_DIRECTORIES_MAX);
}

/** A chunk found gone: its range is no guess any more. */
export function forgetChunkRange(inc: string, key: string): void {
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

/** Per warm Lambda: incarnation → project name, from the root segment (an incarnation never changes project). */
export const projectNames = new Map<string, string>();

/**
 * Per warm Lambda: where the content continues in other segments, learnt from stubs met on the way (path prefix of
 * object keys → segment key, or → the bucket stub of a bucketed object there, whose bucket for a member is computed;
 * a bucket cut into buckets → their stub). A guess the write's own condition checks: a segment deleted since is
 * missing, and the writer walks again from the root (forget). Bounded; the oldest entries go first.
 */
const LOCATIONS_MAX = 10_000;
type Location = { key: string } | { bucket: string };
const locations = new Map<string, Location>();
const locationKey = (inc: string, prefix: Path) => `${inc}\u0000${prefix.join('\u0000')}`;
const splitKey = (inc: string, bucket: string) => `${inc}\u0001${bucket}`;

/**
 * The deepest segment known for a path: a segment whose root is `depth` steps down it. `maxDepth`: the deepest root
 * wanted (a set or delete acts where its parent is). A bucket's root is its object, with the member next on the path.
 */
export function lookupLocation(
  inc: string,
  segments: Path,
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
    return { key: knownCuts(inc, bucketOf(found.bucket, member), member).key, depth };
  }
  return { key: ROOT_KEY, depth: 0 };
}

function remember(key: string, location: Location): void {
  setBounded(locations, key, location, LOCATIONS_MAX);
}

/** Remembers which segment holds a path prefix. */
export function learnLocation(inc: string, prefix: Path, key: string): void {
  remember(locationKey(inc, prefix), { key });
}

/**
 * A bucketed object met at `prefix` (its bucket stub `bucket`), or, when the segment `from` met is a bucket itself,
 * that bucket's own buckets.
 */
export function learnBucket(inc: string, prefix: Path, from: string, bucket: string): void {
  remember(isBucketKey(from) ? splitKey(inc, from) : locationKey(inc, prefix), { bucket });
}

/**
 * The bucket this Lambda knows a bucket was cut into for `member`, deepest first (the bucket itself if none), with each
 * cut it followed (a bucket's key → the stub of the buckets it was cut into): what a plan that skipped those buckets
 * relies on, kept with it, since another request may make this Lambda forget them.
 */
export function knownCuts(inc: string, bucket: string, member: string): { key: string; cuts: [string, string][] } {
  let key = bucket;
  const cuts: [string, string][] = [];
  for (let split = locations.get(splitKey(inc, key)); split && 'bucket' in split; ) {
    cuts.push([key, split.bucket]);
    key = bucketOf(split.bucket, member);
    split = locations.get(splitKey(inc, key));
  }
  return { key, cuts };
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

/** Remembers a chunked array: its chunk stub and about how many elements a chunk holds. */
export function learnChunked(inc: string, key: string, stub: string, perChunk: number): void {
  setBounded(chunkedArrays, `${inc}\u0000${key}`, { stub, perChunk }, LOCATIONS_MAX);
}

/** What this Lambda remembers of a chunked array, if anything. */
export const knownChunked = (inc: string, key: string) => chunkedArrays.get(`${inc}\u0000${key}`);

/** A segment that is no chunked array (any more): nothing remembered of it. */
export function forgetChunked(inc: string, key: string): void {
  chunkedArrays.delete(`${inc}\u0000${key}`);
}

/** Forgets every location and bucket cut this Lambda knew of an incarnation. */
export function forgetLocations(inc: string): void {
  for (const k of [...locations.keys()]) {
    if (k.startsWith(`${inc}\u0000`) || k.startsWith(`${inc}\u0001`)) locations.delete(k);
  }
}

/**
 * Segments whose parent was too full to fold them into, when, and how small they would have had to be (not looked at
 * again for a minute unless they are that small now).
 */
const foldRefused = new Map<string, { at: number; room: number }>();
const FOLD_RECHECK_MS = 60_000;
const FOLD_REFUSED_MAX = 1_000;

/** Whether folding segment `key` of `size` bytes was refused in the last minute, and it is no smaller than it had to be. */
export function foldRecentlyRefused(inc: string, key: string, size: number): boolean {
  const known = foldRefused.get(`${inc}\u0000${key}`);
  return known !== undefined && Date.now() - known.at < FOLD_RECHECK_MS && size > known.room;
}

/** Folding segment `key` was refused: it would have had to be at most `room` bytes. */
export function noteFoldRefused(inc: string, key: string, room: number): void {
  setBounded(foldRefused, `${inc}\u0000${key}`, { at: Date.now(), room }, FOLD_REFUSED_MAX);
}
