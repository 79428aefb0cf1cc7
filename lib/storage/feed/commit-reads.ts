// Completing a commit's values from the table (docs/design/realtime.md, section 2): a value that still holds stubs
// (segments the commit's stream records did not carry) is read, and what is read must be what the commit left, not
// what a later commit wrote since (issue 27, data integrity 5: a whole-array message carried later values).
import { MissingSegment, assemble, fragmentsOf, stubsIn } from '../layout/stubs';
import { A } from '../../schema/attributes';
import type { Segment } from '../segment';
import { querySubtree } from '../io/read';
import type { Json } from '../../content/json';
import type { Change } from './changes';

/** What the consumer knows of one commit when it completes its values. */
export interface CommitView {
  /** The commit's token (`tx`), when it wrote several items. */
  tx?: string;
  /** The versions the commit gave the segments it changed in place (its record's key, and its `pv`). */
  versions: ReadonlyMap<string, number>;
  /** Whether a later record of this stream batch changes or removes the segment. */
  changedLater: (key: string) => boolean;
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
 * Completes values that still hold stubs: from the commit's own records first, the rest by reading them; undefined
 * (the client is told to fetch) when what it read is not the commit's own state.
 */
export async function complete(
  inc: string,
  changes: Change[],
  commit: CommitView & {
    /** The segments this commit changed in place, as its records in the batch left them. */
    own: readonly { key: string; fragment: Json }[];
    /** Segments the batch's records removed, as they were at this commit (gone when read now). */
    removed: readonly { key: string; fragment: Json }[];
  },
): Promise<Change[] | undefined> {
  if (!changes.some((c) => 'value' in c && stubsIn(c.value).length > 0)) return changes;
  // The batch's records before any read: a later commit may have removed or rewritten those segments since.
  const known = fragmentsOf([...commit.removed, ...commit.own]);
  const partial = changes.map((c) => ('value' in c ? { ...c, value: assemble(c.value, known, 'keep') } : c));
  const stubs = partial.flatMap((c) => ('value' in c ? stubsIn(c.value) : []));
  if (stubs.length === 0) return partial;
  const mine = new Set(commit.own.map((s) => s.key));
  const read: Array<{ key: string; fragment: Json }> = [...commit.removed];
  for (const subtree of await Promise.all(stubs.map((stub) => querySubtree(inc, stub)))) {
    for (const segment of subtree.values()) {
      if (mine.has(segment.key)) continue;
      if (asOfCommit(segment, commit)) read.push(segment);
      else return undefined;
    }
  }
  const lookup = fragmentsOf([...read, ...commit.own]);
  try {
    return partial.map((c) => ('value' in c ? { ...c, value: assemble(c.value, lookup) } : c));
  } catch (error) {
    // Rewritten again since: the value is no longer there to read.
    if (error instanceof MissingSegment) return undefined;
    throw error;
  }
}
