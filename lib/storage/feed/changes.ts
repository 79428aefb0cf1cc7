// Changes: what one committed write changed, from the old and new fragments of its segments, and what of it lies
// inside a subscription (docs/design/realtime.md, section 2). Pure: the consumer reads what is missing.
import { chunkStubOf } from '../layout/chunked';
import { assemble, stubsIn } from '../layout/stubs';
import { type Json, Stub, hasOwn, isObject, jsonEquals } from '../../content/json';
import { type Path, asIndex, formatPath } from '../../paths';

/**
 * A change at an absolute path: the new value there, or that nothing is there any more. `was`: the value it
 * replaced, kept where the change is not itself a diff of what it replaced, so a subscription below the path gets
 * only what changed there (never sent).
 */
export type Change = ({ path: Path; value: Json } | { path: Path; deleted: true }) & { was?: Json };

/** A change as a message carries it: the path formatted as the API's paths are. */
export type WireChange = { path: string; value: unknown } | { path: string; deleted: true };

/**
 * The changes that turn `before` into `after` at `at`: objects per key, arrays per index when their length is kept,
 * or grown or shrunk with at most half of the common indexes changed (a new tail one index each, a removed one
 * deleted from its end), else the whole array (an insert or delete shifted the elements); anything else that differs
 * is the new value at its path.
 */
export function diffValues(before: Json | undefined, after: Json | undefined, at: Path, out: Change[] = []): Change[] {
  if (after === undefined) {
    if (before !== undefined) out.push({ path: at, deleted: true, was: before });
    return out;
  }
  if (before === undefined) {
    out.push({ path: at, value: after, was: undefined });
    return out;
  }
  if (jsonEquals(before, after)) return out;
  if (isObject(before) && isObject(after)) {
    for (const k of Object.keys(before)) {
      if (!hasOwn(after, k)) out.push({ path: [...at, k], deleted: true, was: before[k] as Json });
    }
    for (const k of Object.keys(after))
      diffValues(hasOwn(before, k) ? before[k] : undefined, after[k], [...at, k], out);
    return out;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    let differing = 0;
    for (let i = 0; i < common; i++) if (!jsonEquals(before[i] as Json, after[i] as Json)) differing++;
    if (after.length === before.length || differing <= common / 2) {
      for (let i = 0; i < after.length; i++) diffValues(before[i], after[i], [...at, String(i)], out);
      // A removed tail, from its end (each delete takes the last element off): no element shifts, and what it
      // replaced is the removed elements themselves, never the array around them, which may be rewritten since.
      for (let i = before.length - 1; i >= after.length; i--) diffValues(before[i], undefined, [...at, String(i)], out);
      return out;
    }
  }
  out.push({ path: at, value: after, was: before });
  return out;
}

/**
 * One commit's changes to the segment at `base`: its old fragment with the stubs of segments the commit removed
 * resolved from their old images, against its new fragment with the stubs of the segments the commit wrote resolved
 * from their new images. A stub left on both sides naming the same segment is unchanged; a value in the result may
 * still hold stubs (segments not in the commit's records), which the caller reads and assembles.
 */
export function commitChanges(commit: {
  base: Path;
  before: Json | undefined;
  after: Json | undefined;
  removed: (key: string) => Json | undefined;
  written: (key: string) => Json | undefined;
}): Change[] {
  // A segment the new fragment still names was not removed by this commit: a REMOVE of it in the same stream batch
  // is a later commit's (a consumer behind the writes gets many in one batch), and it is unchanged here.
  const named = commit.after === undefined ? new Set<string>() : new Set(stubPaths(commit.after).keys());
  const removed = (key: string) => (named.has(key) ? undefined : commit.removed(key));
  const before = commit.before === undefined ? undefined : assemble(commit.before, removed, 'keep');
  const after = commit.after === undefined ? undefined : assemble(commit.after, commit.written, 'keep');
  return diffValues(before, after, commit.base);
}

/** The value at `rest` below `value`: object keys, and array indexes from 0 (a subscription's path is literal). */
export function valueBelow(value: Json, rest: Path): Json | undefined {
  let node: Json = value;
  for (const step of rest) {
    if (Array.isArray(node)) {
      const index = asIndex(step);
      if (index === undefined || index < 0 || index >= node.length) return undefined;
      node = node[index] as Json;
    } else if (isObject(node) && hasOwn(node, step)) {
      node = node[step] as Json;
    } else {
      return undefined;
    }
  }
  return node;
}

const isPrefix = (prefix: Path, path: Path) => prefix.length <= path.length && prefix.every((s, i) => path[i] === s);

/** What `wasBelow` answers for a replaced value not all read back. */
const unknown = Symbol('unknown');

/**
 * The value a change replaced at `rest` below its path, or `unknown` when it is not all read back: on the way there
 * or inside it, a stub (a segment the commit removed in stream records still to come; a chunked array's fragment,
 * its chunk stub first, whose indexes are not the array's).
 */
function wasBelow(was: Json | undefined, rest: Path): Json | undefined | typeof unknown {
  let node: Json | undefined = was;
  for (const step of rest) {
    if (node === undefined) break;
    if (node instanceof Stub || chunkStubOf(node)) return unknown;
    node = valueBelow(node, [step]);
  }
  return stubsIn(node).length > 0 ? unknown : node;
}

/**
 * What of `changes` lies inside a subscription to `path`: changes at or below it as they are; a change above it as
 * what changed at and below the path itself (the value it replaced against the new one, when known and read back;
 * else the new value at the path, or `deleted`); the rest is dropped.
 */
export function trimTo(changes: readonly Change[], path: Path): Change[] {
  const inside: Change[] = [];
  for (const change of changes) {
    if (isPrefix(path, change.path)) inside.push(change);
    else if (isPrefix(change.path, path)) {
      const rest = path.slice(change.path.length);
      const value = 'value' in change ? valueBelow(change.value, rest) : undefined;
      const was = 'was' in change ? wasBelow(change.was, rest) : unknown;
      if (was !== unknown) {
        diffValues(was, value, path, inside);
      } else {
        inside.push(value === undefined ? { path, deleted: true } : { path, value });
      }
    }
  }
  return inside;
}

/** A change as a message carries it: its path formatted, and its value or `deleted`. */
export const toWire = (change: Change): WireChange =>
  'value' in change
    ? { path: formatPath(change.path), value: change.value }
    : { path: formatPath(change.path), deleted: true };

/** Where each stub sits in a fragment (its key → path relative to the fragment's root). */
export function stubPaths(fragment: Json, at: Path = [], found = new Map<string, Path>()): Map<string, Path> {
  if (fragment instanceof Stub) found.set(fragment.key, at);
  else if (Array.isArray(fragment)) for (const [i, v] of fragment.entries()) stubPaths(v, [...at, String(i)], found);
  else if (isObject(fragment)) for (const k of Object.keys(fragment)) stubPaths(fragment[k] as Json, [...at, k], found);
  return found;
}
