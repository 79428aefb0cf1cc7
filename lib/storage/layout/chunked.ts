// Chunked arrays (docs/design/storage.md §13, step 4): the chunk stub at an array's head, its logical length and
// indexes, and a tail laid back into its chunks. Pure.
import { type Json, Stub } from '../../content/json';
import { chunkCount, isChunkStubKey } from './keys';

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
