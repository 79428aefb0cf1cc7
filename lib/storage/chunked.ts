// Chunked arrays on the write path (docs/design/storage.md §13, step 4): what this Lambda knows of one, where a
// write by index goes, and how much of its tail a change among its chunks reads.
import { fragmentBytes } from '../config/env';
import { chunkCount, chunkDir, chunkStart } from './layout/keys';
import { chunkStubOf } from './layout/chunked';
import { type Json, storedSize } from '../content/json';
import type { ContentOperation } from '../content/model';
import type { Segment } from './segment';
import { forgetChunked, knownChunkKey, knownChunked, learnChunked } from './memory';
import { asIndex } from '../paths';

/**
 * A chunked array's segment met (not one of its chunks): remembered for inserts and deletes among its chunks. Its
 * chunk size is measured again only when its count moved (a rollover, an insert or delete among its chunks), not on
 * every read of it.
 */
export function trackChunked(inc: string, key: string, fragment: Json | undefined): void {
  const stub = chunkStubOf(fragment);
  if (!stub) {
    forgetChunked(inc, key);
    return;
  }
  if (knownChunked(inc, key)?.stub === stub.key) return;
  learnChunked(inc, key, stub.key, perChunkOf((fragment as Json[]).slice(1)));
}

/**
 * A write at a chunked array's segment this Lambda has met, by the index its path starts with (or a root insert's):
 * `shifts` when it moves the elements after it (an insert into the array, a delete of an element); `count` the
 * elements the array's chunks hold by the chunk stub it knows. Undefined for any other write.
 */
function chunkedWrite(
  inc: string,
  at: { key: string; first?: string },
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
): { stub: string; perChunk: number; count: number; index: number; into: boolean; shifts: boolean } | undefined {
  if (at.first !== undefined) return undefined;
  const known = knownChunked(inc, at.key);
  if (!known) return undefined;
  const into = rel.kind === 'insert' && rel.segments.length === 0;
  const index = into ? rel.index : rel.segments.length > 0 ? asIndex(rel.segments[0] as string) : undefined;
  if (index === undefined || index < 0) return undefined;
  const shifts = into || (rel.kind === 'delete' && rel.segments.length === 1);
  return { ...known, count: chunkCount(known.stub), index, into, shifts };
}

/**
 * An insert or delete among the chunks: how many items to read from the array segment's key (the segment, then its
 * chunks from the last down to the index, with room for some growth; at most one chunk more than a tail may have).
 */
const tailToRead = (w: { count: number; perChunk: number; index: number }) =>
  Math.min(TAIL_CHUNKS_MAX + 2, Math.ceil((w.count - w.index) / w.perChunk) + 3);

/**
 * A write after the chunks (an insert at the end, a change to one of the newest elements): the index as a position
 * after the chunk stub, written in one UpdateItem held by that stub (a rollover or an insert or delete among the
 * chunks since replaces it, and the write reads).
 */
function afterChunkStub(
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
  w: { stub: string; count: number; index: number; into: boolean },
): { op: ContentOperation; stub: string } {
  const position = w.index - w.count + 1;
  const op = w.into ? { ...rel, index: position } : { ...rel, segments: [String(position), ...rel.segments.slice(1)] };
  return { op, stub: w.stub };
}

/**
 * How a write reads the segment it goes to, by what this Lambda knows of a chunked array there: `tail`, an insert or
 * delete among its chunks (the segment and its last `limit` items, one Query); `withChunk`, a write to an old element
 * whose chunk it has met (both, one BatchGetItem, instead of a one-request try the segment would refuse); `try`, one
 * UpdateItem (`after`: a write after the chunks, as a position held by the chunk stub).
 */
export type ReadPlan =
  | { kind: 'tail'; limit: number }
  | { kind: 'withChunk'; chunk: string }
  | { kind: 'try'; after?: { op: ContentOperation; stub: string } };

/**
 * The read plan of a write at `at` (`rel`: its operation relative to that segment). `ifMatch`: the write carries
 * If-Match, so it is tried as written, never as a position after the chunk stub.
 */
export function readPlan(
  inc: string,
  at: { key: string; first?: string },
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
  { ifMatch }: { ifMatch: boolean },
): ReadPlan {
  const chunked = chunkedWrite(inc, at, rel);
  if (chunked === undefined) return { kind: 'try' };
  if (chunked.index >= chunked.count)
    return ifMatch ? { kind: 'try' } : { kind: 'try', after: afterChunkStub(rel, chunked) };
  if (chunked.shifts) return { kind: 'tail', limit: tailToRead(chunked) };
  const chunk = knownChunkKey(inc, chunkDir(chunked.stub), chunked.index);
  return chunk === undefined ? { kind: 'try' } : { kind: 'withChunk', chunk };
}

/** Whether a chunk (of directory `dir`) holds logical index `index`: its range, from its key, and its length. */
export const holdsIndex = (chunk: Segment, dir: string, index: number) =>
  chunkDir(chunk.key) === dir &&
  chunkStart(chunk.key) <= index &&
  index < chunkStart(chunk.key) + (chunk.fragment as Json[]).length;

/** The most chunks a batch rewrites in place (with the top segment, the array's and a rollover's, one transaction). */
export const TAIL_CHUNKS_MAX = 90;
/**
 * The most chunks an array rewritten whole may have: one commit deletes them all with the top segment, the array's
 * and the marker of a change larger than one transaction. Past it, a change below its newest elements is a 413.
 */
export const WHOLE_ARRAY_CHUNKS_MAX = 97;

/**
 * How many elements a chunk holds, guessed from the newest: a rollover moves what is past half the segment's budget,
 * so a chunk holds about half a budget of elements.
 */
export const perChunkOf = (newest: readonly Json[]) =>
  newest.length === 0
    ? 8
    : Math.max(1, Math.floor((fragmentBytes() * newest.length) / (2 * storedSize(newest as Json[]))));

/**
 * The chunks read with the array's segment (`getWithTail`, last first) that belong to its tail: its chunks below
 * `count`, from the last down to the one holding `from` at most. `reached`: they go that far.
 */
export function tailIn(
  read: readonly Segment[] | undefined,
  dir: string,
  from: number,
  count: number,
): { chunks: Segment[]; reached: boolean } {
  const chunks: Segment[] = [];
  for (const chunk of read ?? []) {
    // One a rollover made after the segment was read is not the array's yet.
    if (!chunk.key.startsWith(dir) || chunkStart(chunk.key) >= count) continue;
    chunks.push(chunk);
    if (chunkStart(chunk.key) <= from) return { chunks, reached: true };
  }
  return { chunks, reached: false };
}
