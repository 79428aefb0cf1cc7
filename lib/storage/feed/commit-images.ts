// What a multi-item commit's own stream records carry of the segments it wrote (docs/design/history.md, section 3):
// each segment's fragment before and after the commit, by the commit's token. A stream need not keep a
// transaction's records together (DynamoDB Local splits them; so may AWS), and a consumer lagging behind finds those
// segments rewritten since: so a commit's values and old values are taken from its records, kept across batches,
// and a commit whose records are still to come waits for them (old-values.ts, completeAwaited).
import type { Json } from '../../content/json';

/** A segment as one commit's record shows it: before (absent for one it made) and after the commit. */
export interface SegmentImages {
  before?: Json;
  after?: Json;
}

/**
 * Recent commits' images, by token then segment key, oldest commit first: kept for as many segments as the consumer
 * may still need (a commit's records span at most a few consecutive batches; a fragment is at most a few KB), so
 * memory stays bounded.
 */
const SEGMENTS_MAX = 4096;
const byCommit = new Map<string, Map<string, SegmentImages>>();
let kept = 0;

/** Keeps what a record of commit `tx` shows of segment `key`. */
export function keepImages(tx: string, key: string, images: SegmentImages): void {
  let segments = byCommit.get(tx);
  if (!segments) {
    segments = new Map();
    byCommit.set(tx, segments);
  }
  if (!segments.has(key)) kept++;
  segments.set(key, images);
  // The oldest commits' first; the newest is kept whole, however large.
  for (const [oldest, theirs] of byCommit) {
    if (kept <= SEGMENTS_MAX || oldest === tx) break;
    byCommit.delete(oldest);
    kept -= theirs.size;
  }
}

const NONE: ReadonlyMap<string, SegmentImages> = new Map();

/** The segments commit `tx` wrote, as its records seen so far show them (in this batch and recent ones). */
export const imagesOf = (tx: string | undefined): ReadonlyMap<string, SegmentImages> =>
  (tx === undefined ? undefined : byCommit.get(tx)) ?? NONE;

/** Each segment's fragment on one side of a commit, as its records seen so far show it. */
export function sideOf(tx: string | undefined, side: keyof SegmentImages): Array<{ key: string; fragment: Json }> {
  const out: Array<{ key: string; fragment: Json }> = [];
  for (const [key, images] of imagesOf(tx)) {
    const fragment = images[side];
    if (fragment !== undefined) out.push({ key, fragment });
  }
  return out;
}

/**
 * A part of one of a commit's changes still to come: its new value (`value`) or the value it replaced (`was`), which
 * names segments whose records have not reached the consumer yet. Segments the commit removed (their `REMOVE`
 * records complete it, `waitsFor` empty), or changed in place beside its top segment (`waitsFor`: their records
 * carry their fragments before and after the commit, commit-images.ts).
 */
export interface AwaitedPart {
  /** Its position in the commit's changes. */
  index: number;
  side: 'value' | 'was';
  /** As far as known (stubs of the segments awaited left in). */
  partial: Json;
  /** Segments read for it, as they were on its side of the commit (read now, and checked so). */
  known: ReadonlyArray<{ key: string; fragment: Json }>;
  /** The commit's token (multi-item commits). */
  tx?: string;
  /** The segments the commit changed in place whose records it waits for. */
  waitsFor: readonly string[];
}
