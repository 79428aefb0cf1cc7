// Completing a commit's values from the table (docs/design/realtime.md, section 2): a value that still holds stubs
// (segments the commit's stream records did not carry) is read, and what is read must be what the commit left, not
// what a later commit wrote since (issue 27, data integrity 5: a whole-array message carried later values).
import type { Json } from '../../content/json';
import { assemble, fragmentsOf, stubsIn } from '../layout/stubs';
import { A } from '../../schema/attributes';
import type { Segment } from '../segment';
import { querySubtree } from '../io/read';
import type { Change } from './changes';
import { type AwaitedPart, imagesOf, sideOf } from './commit-images';

/** What the consumer knows of one commit when it completes its values. */
export interface CommitView {
  /** The commit's token (`tx`), when it wrote several items. */
  tx?: string;
  /** The versions the commit gave the segments it changed in place (its record's key, and its `pv`). */
  versions: ReadonlyMap<string, number>;
  /** Whether a later record of this stream batch changes or removes the segment. */
  changedLater: (key: string) => boolean;
  /**
   * Whether the commit changed the segment in place beside its top segment (a partner, a chunk it rewrote): its own
   * record carries the segment before and after it, and may reach the consumer in a later stream batch.
   */
  changedInPlace?: (key: string) => boolean;
}

/**
 * Whether a segment read now still holds what the commit left. One the commit wrote carries its `tx` until a later
 * write (a one-item write drops `tx`, a multi-item one sets its own); a chunk or partner it rewrote also names, in
 * `pv`, a version the commit gave, kept by later one-item writes: so named without the `tx`, it changed since; one
 * naming a later version of a segment the commit changed was rewritten by a later commit (versions only grow). One
 * the commit did not write changed since when a later record of the batch says so (a later batch's records are not
 * known here: documented).
 */
export function asOfCommit(segment: Pick<Segment, 'key' | 'raw'>, commit: CommitView): boolean {
  if (commit.changedLater(segment.key)) return false;
  if (commit.tx !== undefined && segment.raw[A.transaction]?.S === commit.tx) return true;
  for (const [key, version] of Object.entries(segment.raw[A.partners]?.M ?? {})) {
    const ours = commit.versions.get(key);
    // Named at our version without our token: changed since; at a later one: rewritten by a later commit.
    if (ours !== undefined && Number(version.N) >= ours) return false;
  }
  return true;
}

/**
 * Completes values that still hold stubs: from the commit's own records of the segments it wrote (commit-images.ts),
 * else by reading them, kept when what is read is the commit's own state. Undefined (the client is told to fetch)
 * when a segment read changed since; a value that lacks only segments the commit changed in place, whose records
 * are still to come, is `awaited` (its change keeps its stubs).
 */
export async function complete(
  inc: string,
  changes: Change[],
  commit: CommitView,
): Promise<{ changes: Change[]; awaited: AwaitedPart[] } | undefined> {
  const stubs = changes.flatMap((c) => ('value' in c ? stubsIn(c.value) : []));
  if (stubs.length === 0) return { changes, awaited: [] };
  const images = imagesOf(commit.tx);
  const known: Array<{ key: string; fragment: Json }> = [];
  const waitsFor: string[] = [];
  for (const subtree of await Promise.all(stubs.map((stub) => querySubtree(inc, stub)))) {
    for (const segment of subtree.values()) {
      const own = images.get(segment.key)?.after;
      if (own !== undefined) known.push({ key: segment.key, fragment: own });
      else if (asOfCommit(segment, commit)) known.push(segment);
      else if (commit.changedInPlace?.(segment.key)) waitsFor.push(segment.key);
      else return undefined;
    }
  }
  // The commit's segments gone since (a later commit removed them) are in its records too.
  const lookup = fragmentsOf([...known, ...sideOf(commit.tx, 'after')]);
  const out: Change[] = [];
  const awaited: AwaitedPart[] = [];
  for (const [index, c] of changes.entries()) {
    if (!('value' in c)) {
      out.push(c);
      continue;
    }
    const value = assemble(c.value, lookup, 'keep');
    out.push({ ...c, value });
    if (stubsIn(value).length === 0) continue;
    // Rewritten again since: the value is no longer there to read.
    if (waitsFor.length === 0) return undefined;
    awaited.push({ index, side: 'value', partial: value, known, tx: commit.tx, waitsFor });
  }
  return { changes: out, awaited };
}
