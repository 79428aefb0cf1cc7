// The old values the history keeps (docs/design/history.md, section 2): a commit's changes with the values they
// replaced made exact. A `was` holding stubs (segments the commit did not write) has them resolved from segments
// recent commits removed (their records' old images), else read now and kept only when unchanged since the commit.
import { setBounded } from '../../config/bounded';
import type { Json } from '../../content/json';
import { stampOfItem } from '../../schema/write-stamp';
import { A } from '../../schema/attributes';
import { querySubtree } from '../io/read';
import { assemble, fragmentsOf, stubsIn } from '../layout/stubs';
import type { Segment } from '../segment';
import type { Change } from './changes';
import type { CommitView } from './commit-reads';
import { type AwaitedPart, imagesOf, sideOf } from './commit-images';

/** Old images of segments recent commits removed, by `<inc> <key>`: the old values a commit replaced hold them. */
const REMOVED_MAX = 4096;
const removedCarried = new Map<string, Json>();

/** Keeps a removed segment's old fragment for commits in later stream batches whose old values name it. */
export function carryRemoved(inc: string, key: string, fragment: Json): void {
  setBounded(removedCarried, `${inc} ${key}`, fragment, REMOVED_MAX);
}

/** Removed segments' old fragments known for an incarnation: `removed` (this batch's) and recent batches'. */
export function removedLookup(inc: string, removed: ReadonlyMap<string, Json>): (key: string) => Json | undefined {
  // Built at the first look-up: most commits' old values hold no stub.
  let lookup: ((key: string) => Json | undefined) | undefined;
  return (key) => {
    if (!lookup) {
      const prefix = `${inc} `;
      const known = [...removedCarried]
        .filter(([k]) => k.startsWith(prefix))
        .map(([k, fragment]) => ({ key: k.slice(prefix.length), fragment }));
      lookup = fragmentsOf([...known, ...[...removed].map(([k, fragment]) => ({ key: k, fragment }))]);
    }
    return lookup(key);
  };
}

/**
 * The commit's changes with exact old values: a `was` that holds stubs (segments the commit did not write) has them
 * resolved from `removed` (segments removed by recent commits, their old images), from the old images of segments
 * the commit changed in place (its own records, commit-images.ts), else read, and kept only when what was read is
 * what was there before the commit (not written by it, nor since). A stub whose segment is gone and not among
 * `removed` was removed by this commit in records still to come, and one the commit changed in place whose record
 * has not come is awaited (a commit's records may span stream batches): the change is `awaited`. A change whose old
 * value cannot be made exact loses its `was`.
 */
export async function exactOldValues(
  inc: string,
  changes: readonly Change[],
  commit: CommitView & { stampTime?: number; removed: (key: string) => Json | undefined },
): Promise<{ changes: Change[]; awaited: AwaitedPart[] }> {
  const out: Change[] = [];
  const awaited: AwaitedPart[] = [];
  const images = imagesOf(commit.tx);
  for (const [index, change] of changes.entries()) {
    const was = 'was' in change && change.was !== undefined ? assemble(change.was, commit.removed, 'keep') : undefined;
    const stubs = was === undefined ? [] : stubsIn(was);
    if (!('was' in change) || stubs.length === 0) {
      out.push(was === undefined ? change : ({ ...change, was } as Change));
      continue;
    }
    const read: Array<{ key: string; fragment: Json }> = [];
    const waitsFor: string[] = [];
    let changed = false;
    for (const subtree of await Promise.all(stubs.map((stub) => querySubtree(inc, stub)))) {
      for (const segment of subtree.values()) {
        // Changed in place by this commit (chunks rewritten by an insert): as its record's old image shows it.
        const mine = images.get(segment.key);
        if (mine?.before !== undefined) read.push({ key: segment.key, fragment: mine.before });
        // Made by this commit (its INSERT): no part of what it replaced.
        else if (mine !== undefined || madeBy(segment, commit)) continue;
        else if (unchangedSince(segment, commit)) read.push(segment);
        else if (commit.changedInPlace?.(segment.key)) waitsFor.push(segment.key);
        else changed = true;
      }
    }
    const { was: _dropped, ...rest } = change;
    if (changed) {
      out.push(rest as Change);
      continue;
    }
    const partial = assemble(was as Json, fragmentsOf(read), 'keep');
    // Whole without a segment awaited: that one was no part of it (a later commit made it in the range rewritten).
    if (stubsIn(partial).length === 0) out.push({ ...rest, was: partial } as Change);
    else {
      out.push(rest as Change);
      awaited.push({ index, side: 'was', partial, known: read, tx: commit.tx, waitsFor });
    }
  }
  return { changes: out, awaited };
}

/**
 * The awaited parts of an incarnation's commit completed from the records seen since (segments removed, segments the
 * commit changed in place): its changes whole; `waiting` while a record is still to come; `never` when every record
 * awaited came and a part still cannot be completed (a segment changed since: the entry stays not rewindable).
 */
export function completeAwaited(
  inc: string,
  changes: readonly Change[],
  awaited: readonly AwaitedPart[],
): Change[] | 'waiting' | 'never' {
  const removed = removedLookup(inc, new Map());
  const out = [...changes];
  for (const { index, side, partial, known, tx, waitsFor } of awaited) {
    // The commit's own images override what was read (a chunk stub's value takes every chunk of its directory).
    const own = fragmentsOf([...known, ...sideOf(tx, side === 'was' ? 'before' : 'after')]);
    const lookup = side === 'was' ? (key: string) => removed(key) ?? own(key) : own;
    const whole = assemble(partial, lookup, 'keep');
    if (stubsIn(whole).length > 0) {
      // Whole only with what is verified, so complete without a segment awaited (a later commit's, in the range the
      // commit rewrote); else waiting while one has no record yet (one the commit made has no old image).
      const images = imagesOf(tx);
      return waitsFor.length === 0 || waitsFor.some((key) => !images.has(key)) ? 'waiting' : 'never';
    }
    out[index] = { ...(out[index] as Change), [side]: whole } as Change;
  }
  return out;
}

/** Whether the commit made the segment read now (its token, the first version): no part of what it replaced. */
const madeBy = (segment: Segment, commit: CommitView) =>
  commit.tx !== undefined &&
  segment.raw[A.transaction]?.S === commit.tx &&
  segment.version === 1 &&
  !commit.changedLater(segment.key);

/**
 * Whether a segment read now holds what it held before the commit: not written by the commit (its token, a version it
 * gave), not by a later record of the stream batch, and last stamped before the commit's own stamp.
 */
function unchangedSince(segment: Segment, commit: CommitView & { stampTime?: number }): boolean {
  if (commit.changedLater(segment.key) || commit.versions.has(segment.key)) return false;
  if (commit.tx !== undefined && segment.raw[A.transaction]?.S === commit.tx) return false;
  const stamp = stampOfItem(segment.raw as Record<string, { S?: string }>);
  if (stamp !== undefined && commit.stampTime !== undefined && stamp.time >= commit.stampTime) return false;
  return true;
}
