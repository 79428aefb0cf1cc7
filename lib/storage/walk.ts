// Where a request is on its way to the segment that holds its path: the segment, how deep in the path its root
// is, and what moves it on (a stub met, a segment gone, another grant epoch).
import type { BatchOperation } from '../content/batch';
import { ROOT_KEY, chunkStart } from './layout/keys';
import type { ContentOperation } from '../content/model';
import { locate } from './layout/stubs';
import { type Segment, olderThanPartners, tokenIn } from './segment';
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

/**
 * Where a request stands: the grant it proves, and the segment it goes to (its root `depth` segments down the path).
 * `array`: in a chunk (or below one), where the array's segment is; the element is looked for there again when a
 * write in the chunk is refused (an insert or delete may have moved it to another chunk).
 */
export interface Place {
  grant: Grant;
  at: At;
  array?: At;
}

export const ROOT_AT: At = { key: ROOT_KEY, depth: 0 };

/**
 * What stands between a request and the segment it reached, as where it goes next: nothing (undefined), a segment
 * that is gone (walk again from the root, with no array to go back to), or an epoch that is not the grant's (a
 * revocation: verify the credential again, at the same place; an older segment is stamped).
 */
async function reroute(place: Place, segment: Segment | undefined): Promise<Place | undefined> {
  const { grant, at } = place;
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
  // Another epoch keeps the place, and the array an element in a chunk is looked for in again.
  return segment.epoch === grant.epoch ? undefined : { ...place, grant: await verifyOnEpochChange(grant, segment) };
}

/** What the segment a request read says: its write landed already, read at another place, or act on this segment. */
export type Arrival =
  | { kind: 'landed' }
  | { kind: 'next'; place: Place }
  | { kind: 'chunk'; segment: Segment; dir: string; index: number }
  | { kind: 'here'; segment: Segment; path: Path };

/**
 * The segment read at `place`, met: rerouted when it is gone or of another epoch, `landed` when it holds the request's
 * token (its answer was lost, and a cut or split since may have moved the path on), else the step `toward` a path: on
 * to a stub's segment, into a chunk, or here with the path relative to the segment. Toward none (a batch, which plans
 * on the segment its operations lie under), here.
 */
export async function arrive(
  place: Place,
  segment: Segment | undefined,
  request: { slot: number; mark: string },
): Promise<Exclude<Arrival, { kind: 'chunk' }>>;
export async function arrive(
  place: Place,
  segment: Segment | undefined,
  request: { slot: number; mark: string; toward: { path: Path; enterLast: boolean } },
): Promise<Arrival>;
export async function arrive(
  place: Place,
  segment: Segment | undefined,
  request: { slot: number; mark: string; toward?: { path: Path; enterLast: boolean } },
): Promise<Arrival> {
  const moved = await reroute(place, segment);
  if (moved) return { kind: 'next', place: moved };
  const current = segment as Segment;
  if (tokenIn(current, request.slot) === request.mark) return { kind: 'landed' };
  const { toward } = request;
  if (toward === undefined) return { kind: 'here', segment: current, path: [] };
  const next = step(current, toward.path, place.at, { enterLast: toward.enterLast, inc: place.grant.inc });
  if ('to' in next) return { kind: 'next', place: { ...place, at: next.to } };
  if ('chunk' in next) return { kind: 'chunk', segment: current, ...next.chunk };
  return { kind: 'here', segment: current, path: next.here };
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
