// Stubs: where a path leads in a fragment, which segments a value's stubs reach, and the value assembled from its
// segments (docs/design/storage.md §4). Pure.
import { asIndex, type Path } from '../../paths';
import { type Json, type JsonObject, Stub, hasOwn, isObject, setOwn } from '../../content/json';
import { bucketOf } from './bucketed';
import { chunkStubOf, chunkedIndex } from './chunked';
import {
  byChunkStart,
  chunkCount,
  chunkDir,
  chunkStart,
  isBucketStubKey,
  isChunkKey,
  isChunkStubKey,
  bucketKeys,
} from './keys';

/** A fragment lookup over segments read (for assemble): a chunk stub's value is its chunks' elements, in order. */
export function fragmentsOf(segments: Iterable<{ key: string; fragment: Json }>): (key: string) => Json | undefined {
  const byKey = new Map<string, Json>();
  for (const s of segments) byKey.set(s.key, s.fragment);
  const lookup = (key: string): Json | undefined => {
    if (isBucketStubKey(key)) {
      // A bucketed object: the members of all its buckets (a bucket cut into buckets of its own, theirs).
      const merged: JsonObject = {};
      for (const bucketAt of bucketKeys(key)) {
        let bucket = byKey.get(bucketAt);
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

/** Where a path leads in a fragment; in a chunked array, the first step is taken to its chunk or its position. */
export function locate(fragment: Json, segments: Path, { enterLast }: { enterLast: boolean }): Located {
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

function locateIn(fragment: Json, segments: Path, enterLast: boolean): Located {
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
      for (const bucket of bucketKeys(stub)) visit(bucket);
    } else visit(stub);
  }
  return reached;
}

/** A fragment with every stub's key rewritten (an import's copy: its segments under new keys). */
export function rekeyStubs(fragment: Json, rekey: (key: string) => string): Json {
  if (fragment instanceof Stub) return new Stub(rekey(fragment.key));
  if (Array.isArray(fragment)) return fragment.map((v) => rekeyStubs(v, rekey));
  if (!isObject(fragment)) return fragment;
  const copy: JsonObject = {};
  for (const k of Object.keys(fragment)) setOwn(copy, k, rekeyStubs(fragment[k] as Json, rekey));
  return copy;
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
