// Where a request is on its way to the segment that holds its path: the segment, how deep in the path its root
// is, and what moves it on (a stub met, a segment gone, another grant epoch).
import type { BatchOperation } from '../content/batch';
import { ROOT_KEY, chunkStart } from './layout/keys';
import type { ContentOperation } from '../content/model';
import { locate } from './layout/stubs';
import { type Segment, olderThanPartners } from './segment';
import { createRoot } from './io/commit';
import { getChunk } from './io/read';
import { forgetLocations, learnBucket, learnLocation } from './memory';
import type { Path } from '../paths';

import { trackChunked } from './chunked';

import { type Grant, verifyAgain, verifyOnEpochChange } from './grant';

/** Set and delete replace what is at the path, so they act in the segment holding its parent; the rest follow stubs. */
export const entersTarget = (op: { kind: string }) => op.kind !== 'set' && op.kind !== 'delete';

/** Remembers where a path continues: a stub's segment, or a bucketed object's stub (met in segment `from`). */
function learn(inc: string, prefix: Path, from: string, located: { key: string; bucket?: string }): void {
  if (located.bucket !== undefined) learnBucket(inc, prefix, from, located.bucket);
  else learnLocation(inc, prefix, located.key);
}

/** Where a request is: a segment whose root is `depth` segments down the path; in a chunk, the index there. */
export interface At {
  key: string;
  depth: number;
  /** In a chunked array's chunk or head: the first step (a logical index) as a position in the segment's array. */
  first?: string;
}

/** A path made relative to the segment a request is at: its steps below the segment's root, a chunk's first. */
function pathFrom(path: Path, at: At): Path {
  const rel = path.slice(at.depth);
  if (at.first !== undefined && rel.length > 0) rel[0] = at.first;
  return rel;
}

/** The operation with its path made relative to the segment it is at. */
export function relativeTo<T extends BatchOperation | ContentOperation>(op: T, at: At): T {
  if (!('segments' in op) || (at.depth === 0 && at.first === undefined)) return op;
  return { ...op, segments: pathFrom(op.segments, at), shown: op.shown ?? op.segments };
}

/** Where a request stands: the grant it proves, and the segment it goes to (its root `depth` segments down the path). */
interface Place {
  grant: Grant;
  at: At;
}

export const ROOT_AT: At = { key: ROOT_KEY, depth: 0 };

/**
 * What stands between a request and the segment it reached, as where it goes next: nothing (undefined), a segment
 * that is gone (walk again from the root), or an epoch that is not the grant's (a revocation: verify the credential
 * again; an older segment is stamped).
 */
export async function reroute({ grant, at }: Place, segment: Segment | undefined): Promise<Place | undefined> {
  if (segment === undefined) {
    if (at.key !== ROOT_KEY) {
      forgetLocations(grant.inc);
      return { grant, at: ROOT_AT };
    }
    // No root: the project was deleted (its segments with it), or its creation stopped half-way. The credential is
    // verified afresh (a deleted project's 404), and only then is an empty root made.
    const fresh = await verifyAgain(grant);
    await createRoot(fresh.inc, fresh.epoch);
    return { grant: fresh, at: ROOT_AT };
  }
  return segment.epoch === grant.epoch ? undefined : { grant: await verifyOnEpochChange(grant, segment), at };
}

/**
 * Where a segment in hand sends a request for `path`: on to the segment a stub names (`bucket`: a bucketed object's
 * bucket for the next step, a member), into a chunk of a chunked array (the element's logical index), or here, with
 * the rest of the path relative to the segment (an index into a chunked array as its position there).
 */
export type Step = { to: At; bucket?: string } | { chunk: { dir: string; index: number } } | { here: Path };

/**
 * The one step of every walk from a segment toward the one that holds a path. `enterLast`: whether a stub at the
 * path itself is followed (a read, a write that enters its target) or is where the request acts (set, delete).
 * `inc`: the project this Lambda remembers the way for (the chunked arrays it met, the stubs it followed); a walk
 * that must not trust memory (a snapshot's) leaves it out.
 */
export function step(segment: Segment, path: Path, at: At, options: { enterLast: boolean; inc?: string }): Step {
  const { enterLast, inc } = options;
  if (inc !== undefined && at.first === undefined) trackChunked(inc, segment.key, segment.fragment);
  const rel = pathFrom(path, at);
  const located = locate(segment.fragment, rel, { enterLast });
  if (located.at === 'stub') {
    const to = { key: located.key, depth: at.depth + located.consumed };
    if (inc !== undefined) learn(inc, path.slice(0, to.depth), at.key, located);
    return located.bucket === undefined ? { to } : { to, bucket: located.bucket };
  }
  if (located.at === 'chunk') return { chunk: { dir: located.dir, index: located.index } };
  return { here: located.position === undefined ? rel : [String(located.position), ...rel.slice(1)] };
}

/**
 * Into the chunk that holds an older element of a chunked array (`array` the segment read, at `at`): the chunk and
 * where the request is in it (the element's position there); `moved` when an insert or delete before the element
 * rewrote the chunks since `array` was read (read it again); undefined when no chunk holds the element any more.
 * `held`: the chunk already read with the array, when it is the one.
 */
export async function enterChunk(
  inc: string,
  array: Segment,
  at: At,
  { dir, index, held }: { dir: string; index: number; held?: Segment },
): Promise<{ chunk: Segment; at: At } | 'moved' | undefined> {
  const chunk = held ?? (await getChunk(inc, dir, index));
  if (!chunk) return undefined;
  if (olderThanPartners([array, chunk]) !== undefined) return 'moved';
  return { chunk, at: { key: chunk.key, depth: at.depth, first: String(index - chunkStart(chunk.key)) } };
}
