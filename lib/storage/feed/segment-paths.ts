// Where each content segment sits in its project's value, as the stream consumer learns it (docs/design/realtime.md,
// section 2): a segment item does not store its path, its holder's fragment does (as a stub). A stub is not always in
// the segment its key names as parent (docs/design/storage.md §3a): a fold moves a child's stubs into its parent, a
// cut moves the stubs inside a value into a new segment, and the segments they name keep their keys. So a lookup
// that does not find the stub where its key points reads the holder's subtree and walks it from its fragment.
import {
  ROOT_KEY,
  isBucketKey,
  isChunkKey,
  bucketStubOf,
  chunkArrayKey,
  stubHolderKey,
  parentKey,
} from '../layout/keys';
import type { Json } from '../../content/json';
import { setBounded } from '../../config/bounded';
import type { Path } from '../../paths';
import { getSegment, querySubtree } from '../io/read';
import { stubPaths } from './changes';

/** Paths of segments (by incarnation and key), learnt from the stubs of their holders. */
const PATHS_MAX = 100_000;
const paths = new Map<string, Path>();
const pathKey = (inc: string, key: string) => `${inc} ${key}`;

/** Learns the path of every stub a fragment at `base` holds. */
export function learnStubs(inc: string, base: Path, fragment: Json): void {
  for (const [child, rel] of stubPaths(fragment)) {
    setBounded(paths, pathKey(inc, child), [...base, ...rel], PATHS_MAX);
  }
}

/**
 * Learns the paths of every stub in a fragment at `base` and, through the segments `segments` holds (a commit's new
 * children, a subtree read), of every stub inside them, however deep.
 */
export function learnTree(inc: string, base: Path, fragment: Json, segments: ReadonlyMap<string, Json>): void {
  // The segments that hold each stub's value: the stub's own segment, or a bucketed object's buckets.
  const byStub = new Map<string, Json[]>();
  for (const [key, held] of segments) {
    const named = stubNaming(key);
    if (!('stub' in named)) continue;
    byStub.set(named.stub, [...(byStub.get(named.stub) ?? []), held]);
  }
  const queue: Array<[Path, Json]> = [[base, fragment]];
  const seen = new Set<string>();
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    const [at, held] = next;
    for (const [child, rel] of stubPaths(held)) {
      if (seen.has(child)) continue;
      seen.add(child);
      const path = [...at, ...rel];
      setBounded(paths, pathKey(inc, child), path, PATHS_MAX);
      for (const inner of byStub.get(child) ?? []) queue.push([path, inner]);
    }
  }
}

/** Forgets every path learnt below `key` (its stubs moved, came or went), and with `including`, its own. */
export function forgetBelow(inc: string, key: string, options: { including?: boolean } = {}): void {
  const prefix = pathKey(inc, key);
  for (const k of [...paths.keys()]) if (k.startsWith(prefix) && (options.including || k !== prefix)) paths.delete(k);
}

/**
 * The stub that names a segment: its own key, or for a bucket (`<stub>/<r>/`) its bucketed object's stub; a chunk
 * (`<dir><start>/`) has the path of its array's segment (the key before `<dir>`'s random id), returned as that.
 */
export function stubNaming(key: string): { stub: string } | { array: string } {
  if (isBucketKey(key)) return { stub: bucketStubOf(key) };
  if (isChunkKey(key)) return { array: chunkArrayKey(key) };
  return { stub: key };
}

/**
 * The absolute path of a segment now: cached, else from the nearest segment still there among those its key
 * descends from (read consistently): its fragment, and when the stub is not there, that segment's subtree. Undefined
 * when no segment there holds it (removed by a later commit).
 */
export async function pathOf(inc: string, key: string): Promise<Path | undefined> {
  if (key === ROOT_KEY) return [];
  const named = stubNaming(key);
  if ('array' in named) return pathOf(inc, named.array);
  const cached = paths.get(pathKey(inc, named.stub));
  if (cached) return cached;
  let holder = stubHolderKey(named.stub);
  let segment = holder === undefined ? undefined : await getSegment(inc, holder);
  // A fold or re-cut removed the segment the stub was written in: its stub is now held higher up.
  while (holder !== undefined && segment === undefined) {
    holder = parentKey(holder);
    segment = holder === undefined ? undefined : await getSegment(inc, holder);
  }
  if (holder === undefined || segment === undefined) return undefined;
  const base = await pathOf(inc, holder);
  if (base === undefined) return undefined;
  learnStubs(inc, base, segment.fragment);
  const direct = paths.get(pathKey(inc, named.stub));
  if (direct) return direct;
  // Moved along by a cut into a segment inside the holder's value: walk its subtree (one Query, paged).
  const subtree = await querySubtree(inc, holder);
  learnTree(inc, base, segment.fragment, new Map([...subtree].map(([k, s]) => [k, s.fragment])));
  return paths.get(pathKey(inc, named.stub));
}
