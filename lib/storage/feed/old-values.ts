// The old values the history keeps (docs/design/history.md, section 2): a commit's changes with the values they
// replaced made exact. A `was` holding stubs has them resolved from stream records (the old images of the segments the
// commit changed in place, then of those recent commits removed), else read now and kept only when unchanged since.
import { setBounded } from '../../config/bounded';
import type { Json } from '../../content/json';
import { stampOfItem } from '../../schema/write-stamp';
import { A } from '../../schema/attributes';
import { querySubtree } from '../io/read';
import { assemble, fragmentsOf, stubsIn } from '../layout/stubs';
import type { Segment } from '../segment';
import type { Change } from './changes';
import type { CommitView } from './commit-reads';

/** Old images of segments recent commits removed, by `<inc> <key>`: the old values a commit replaced hold them. */
const REMOVED_MAX = 4096;
const removedCarried = new Map<string, Json>();

/** Keeps a removed segment's old fragment for commits in later stream batches whose old values name it. */
export function carryRemoved(inc: string, key: string, fragment: Json): void {
  setBounded(removedCarried, `${inc} ${key}`, fragment, REMOVED_MAX);
}

/** What the stream records show of the segments before a commit (formerFragments). */
export interface FormerImages {
  /** This batch's removed segments' old images. */
  removed: ReadonlyMap<string, Json>;
  /** Those of them a later commit changed before their removal: their image is not their state at this commit. */
  stale?: ReadonlySet<string>;
  /** The old images of the segments the commit changed in place. */
  prior?: readonly { key: string; fragment: Json }[];
}

/**
 * Segments' fragments before a commit, as stream records show them: `prior` over `removed` (but the `stale`) and
 * recent batches' removed segments. A later commit that removed a segment this one changed in place left its image
 * as this one made it: the prior comes first.
 */
function formerFragments(
  inc: string,
  { removed, stale = new Set(), prior = [] }: FormerImages,
): (key: string) => Json | undefined {
  // Built at the first look-up: most commits' old values hold no stub.
  let lookup: ((key: string) => Json | undefined) | undefined;
  return (key) => {
    if (!lookup) {
      const prefix = `${inc} `;
      const known = [...removedCarried, ...[...removed].map(([k, fragment]) => [`${prefix}${k}`, fragment] as const)]
        .filter(([k]) => k.startsWith(prefix) && !stale.has(k.slice(prefix.length)))
        .map(([k, fragment]) => ({ key: k.slice(prefix.length), fragment }));
      lookup = fragmentsOf([...known, ...prior]);
    }
    return lookup(key);
  };
}

/** A change whose old value still names segments this commit removed, whose records have not come yet. */
export interface AwaitedOld {
  /** Its position in the commit's changes. */
  index: number;
  /** Its old value as far as known (stubs of the removed segments left in). */
  was: Json;
}

/**
 * The commit's changes with exact old values: a `was` that holds stubs has them resolved from the stream's images of
 * the segments before the commit (FormerImages), else read, and kept only when what was read is what was there before
 * the commit (not written by it, nor since). A stub whose segment is gone and not so known was removed by this commit
 * in records still to come (a commit's records may span stream batches): the change is `awaited`. A change whose old
 * value cannot be made exact loses its `was`.
 */
export async function exactOldValues(
  inc: string,
  changes: readonly Change[],
  commit: CommitView & FormerImages & { stampTime?: number },
): Promise<{ changes: Change[]; awaited: AwaitedOld[] }> {
  const out: Change[] = [];
  const awaited: AwaitedOld[] = [];
  const former = formerFragments(inc, commit);
  const prior = new Map((commit.prior ?? []).map((s) => [s.key, s.fragment]));
  for (const [index, change] of changes.entries()) {
    const was = 'was' in change && change.was !== undefined ? assemble(change.was, former, 'keep') : undefined;
    const stubs = was === undefined ? [] : stubsIn(was);
    if (!('was' in change) || stubs.length === 0) {
      out.push(was === undefined ? change : ({ ...change, was } as Change));
      continue;
    }
    const read: Array<{ key: string; fragment: Json }> = [];
    let changed = false;
    for (const subtree of await Promise.all(stubs.map((stub) => querySubtree(inc, stub)))) {
      for (const segment of subtree.values()) {
        // Changed in place by this commit (chunks rewritten by an insert): as its record's old image shows it.
        const before = prior.get(segment.key);
        if (before !== undefined) read.push({ key: segment.key, fragment: before });
        else if (unchangedSince(segment, commit)) read.push(segment);
        else changed = true;
      }
    }
    const { was: _dropped, ...rest } = change;
    if (changed) {
      out.push(rest as Change);
      continue;
    }
    const partial = assemble(was as Json, fragmentsOf(read), 'keep');
    if (stubsIn(partial).length === 0) out.push({ ...rest, was: partial } as Change);
    else {
      out.push(rest as Change);
      awaited.push({ index, was: partial });
    }
  }
  return { changes: out, awaited };
}

/**
 * The awaited old values of an incarnation's commit completed from the removed segments' records seen since, when
 * every stub in them is there now; else undefined (still waiting).
 */
export function completeAwaited(
  inc: string,
  changes: readonly Change[],
  awaited: readonly AwaitedOld[],
): Change[] | undefined {
  const former = formerFragments(inc, { removed: new Map() });
  const out = [...changes];
  for (const { index, was } of awaited) {
    const complete = assemble(was, former, 'keep');
    if (stubsIn(complete).length > 0) return undefined;
    out[index] = { ...(out[index] as Change), was: complete } as Change;
  }
  return out;
}

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
