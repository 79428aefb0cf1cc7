// Rewinding: the value at a path as it was before some commits, from the value now and the old values the history
// kept for each change (docs/design/history.md, section 3). Pure.
import { type Json, cloneJson, hasOwn, isObject, setOwn } from '../content/json';
import { type Path, asIndex } from '../paths';
import { type Change, valueBelow } from '../storage';

/** What a rewind needs of one history entry. */
export interface RewindEntry {
  revision: string;
  /** Undefined: the changes were not kept. */
  changes?: readonly Change[];
  rewindable: boolean;
  /** When not rewindable: the paths it touched, if known (else: every path). */
  touched?: readonly Path[];
}

/** A commit between the revision asked for and now cannot be undone at the path (its old values were not kept). */
export class HistoryIncomplete extends Error {
  constructor(readonly revision: string) {
    super(`the change at revision ${revision} was not kept in full`);
  }
}

const isPrefix = (prefix: Path, path: Path) => prefix.length <= path.length && prefix.every((s, i) => path[i] === s);

const overlaps = (a: Path, b: Path) => isPrefix(a, b) || isPrefix(b, a);

/** The value with `was` put back at `rel` below it (undefined `was`: what is there removed). */
function putBack(value: Json, rel: Path, was: Json | undefined, revision: string): Json {
  const [step, ...rest] = rel as [string, ...string[]];
  if (Array.isArray(value)) {
    const index = asIndex(step);
    if (index === undefined || index < 0 || index > value.length) throw new HistoryIncomplete(revision);
    const copy = [...value];
    if (rest.length > 0) {
      if (index >= value.length) throw new HistoryIncomplete(revision);
      copy[index] = putBack(value[index] as Json, rest, was, revision);
    } else if (was === undefined) {
      // Only an appended tail is recorded index by index: it is taken off from its end.
      if (index !== value.length - 1) throw new HistoryIncomplete(revision);
      copy.pop();
    } else if (index === value.length) copy.push(was);
    else copy[index] = was;
    return copy;
  }
  if (!isObject(value)) throw new HistoryIncomplete(revision);
  const copy: Record<string, Json> = {};
  for (const k of Object.keys(value)) setOwn(copy, k, value[k] as Json);
  if (rest.length > 0) {
    if (!hasOwn(value, step)) throw new HistoryIncomplete(revision);
    setOwn(copy, step, putBack(value[step] as Json, rest, was, revision));
  } else if (was === undefined) delete copy[step];
  else setOwn(copy, step, was);
  return copy;
}

/**
 * The value at `path` before the given entries (newest first), from `value`, the value there now (undefined: nothing
 * is there). Each change is undone in reverse order: one at or above `path` gives the old value below it, one below
 * puts its old value back. Throws HistoryIncomplete when an entry that cannot be undone touched `path`.
 */
export function rewind(value: Json | undefined, path: Path, entries: readonly RewindEntry[]): Json | undefined {
  let now = value === undefined ? undefined : cloneJson(value);
  for (const entry of entries) {
    if (!entry.rewindable || entry.changes === undefined) {
      if (entry.touched === undefined || entry.touched.some((p) => overlaps(p, path))) {
        throw new HistoryIncomplete(entry.revision);
      }
      continue;
    }
    for (const change of [...entry.changes].reverse()) {
      if (!overlaps(change.path, path)) continue;
      if (!('was' in change)) throw new HistoryIncomplete(entry.revision);
      if (isPrefix(change.path, path)) {
        const was = change.was;
        now = was === undefined ? undefined : valueBelow(was, path.slice(change.path.length));
      } else {
        if (now === undefined) throw new HistoryIncomplete(entry.revision);
        now = putBack(now, change.path.slice(path.length), change.was, entry.revision);
      }
    }
  }
  return now;
}
