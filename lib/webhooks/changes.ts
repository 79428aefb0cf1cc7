// Webhooks: which part of a committed change a webhook receives: what lies at, under or above its path, trimmed to it.
import { Refusal } from '../config/errors';
import { type Path, asIndex, formatPath, parsePath } from '../paths';

/** One path's new value, or its removal: what the Streams consumer hands over per committed write. */
export type ChangedPath = { path: string; value: unknown } | { path: string; deleted: true };

export interface CommittedChange {
  /** The project's incarnation the change was committed in. */
  inc: string;
  /** `@user/slug`. */
  project: string;
  revision: string;
  changes: ChangedPath[];
  /** The whole content changed and was not read (an import's switch): every webhook is told to read it again. */
  unread?: true;
}

/**
 * A webhook's path: a content path (lib/paths), canonical, whose integer segments are non-negative. Changes arrive
 * with absolute indexes, and which element `-1` is changes with every push: it would match nothing reliably.
 */
export function webhookPath(path: unknown): string {
  const segments = parsePath(path);
  if (segments.some((segment) => (asIndex(segment) ?? 0) < 0))
    throw new Refusal('INVALID_PATH', 'a webhook path names array elements by non-negative index only');
  return formatPath(segments);
}

/** A change's path as segments; '' is the whole content. */
const segmentsOf = (path: string): Path => (path === '' ? [] : parsePath(path));

const startsWith = (path: Path, prefix: Path) => prefix.every((segment, i) => path[i] === segment);

/** The value below `value` at `rest` (arrays by integer segment, objects by own key), or undefined when none is. */
function valueAt(value: unknown, rest: Path): unknown {
  let at = value;
  for (const segment of rest) {
    if (Array.isArray(at)) {
      const index = asIndex(segment);
      if (index === undefined) return undefined;
      at = at[index < 0 ? at.length + index : index];
    } else if (typeof at === 'object' && at !== null && Object.hasOwn(at, segment)) {
      at = (at as Record<string, unknown>)[segment];
    } else return undefined;
  }
  return at;
}

/**
 * The changes a webhook on `path` (null: the whole content) receives, in the change's order: those at or under its
 * path as they are; one above it as the new value at its path (or its removal when nothing is there any more).
 */
export function changesFor(path: string | null, changes: readonly ChangedPath[]): ChangedPath[] {
  if (path === null) return [...changes];
  const watched = parsePath(path);
  const kept: ChangedPath[] = [];
  for (const change of changes) {
    const changed = segmentsOf(change.path);
    if (startsWith(changed, watched)) kept.push(change);
    else if (startsWith(watched, changed)) {
      const value = 'deleted' in change ? undefined : valueAt(change.value, watched.slice(changed.length));
      kept.push(
        value === undefined ? { path: formatPath(watched), deleted: true } : { path: formatPath(watched), value },
      );
    }
  }
  return kept;
}
