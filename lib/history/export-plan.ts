// What an export sends at its revision (docs/design/backup.md §2), decided from the change log's entries after it:
// the pieces of a value in hand, the budgets of a page, whether a member's value at the revision comes from the log,
// and whether a container being paged can still be read at the revision member by member. Pure.
import { type Json, isObject, jsonText } from '../content/json';
import type { Path } from '../paths';
import { valueBelow } from '../storage';
import { HistoryIncomplete, type RewindEntry, rewind } from './rewind';

/** One piece of an export: a value at a JSON Pointer, or an open container (`{}`/`[]`) whose members follow it. */
export interface Piece {
  path: string;
  value: Json;
}

/** The largest piece: a quarter of a page, and never over 256 KiB (a value up to it is read and sent whole). */
const MAX_PIECE_BYTES = 256 * 1024;

/** A page's budgets in bytes of JSON text: all its pieces, and one piece. */
export interface ExportBudgets {
  page: number;
  piece: number;
}

/** The budgets of a page of at most `pageBytes` of pieces. */
export const exportBudgets = (pageBytes: number): ExportBudgets => ({
  page: pageBytes,
  piece: Math.max(1, Math.min(MAX_PIECE_BYTES, Math.floor(pageBytes / 4))),
});

/** A path as a JSON Pointer (RFC 6901): `""` the root, each step after a `/`, `~` and `/` escaped. */
export const toPointer = (path: Path): string =>
  path.map((step) => `/${step.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** The bytes a piece takes in a page: its JSON text. */
export const pieceBytes = (piece: Piece): number => Buffer.byteLength(jsonText(piece));

/**
 * A value in hand as pieces of at most `budget` bytes, depth-first: whole when it fits, else open (`{}`/`[]`) with
 * its members after it; a scalar larger than the budget is one piece all the same.
 */
export function* piecesOf(path: Path, value: Json, budget: number): Generator<Piece> {
  const whole = { path: toPointer(path), value };
  if (pieceBytes(whole) <= budget || !(Array.isArray(value) || isObject(value))) {
    yield whole;
    return;
  }
  if (Array.isArray(value)) {
    yield { path: whole.path, value: [] };
    for (const [i, element] of value.entries()) yield* piecesOf([...path, String(i)], element, budget);
    return;
  }
  yield { path: whole.path, value: {} };
  for (const key of Object.keys(value)) yield* piecesOf([...path, key], value[key] as Json, budget);
}

const isPrefix = (prefix: Path, path: Path) => prefix.length <= path.length && prefix.every((s, i) => path[i] === s);

/** The paths an entry changed; undefined: unknown (any path). */
const pathsOf = (entry: RewindEntry): readonly Path[] | undefined => entry.changes?.map((c) => c.path) ?? entry.touched;

/**
 * The value at `path` at the revision when something since changed it at or above `path`: the value the oldest such
 * change replaced, with the older changes below it undone; undefined when nothing since changed it at or above (the
 * value there now is the one to rewind). Throws HistoryIncomplete where the log did not keep what is needed.
 */
export function valueFromLog(path: Path, entries: readonly RewindEntry[]): { value: Json | undefined } | undefined {
  for (const [i, entry] of entries.entries()) {
    if (!entry.rewindable || entry.changes === undefined) {
      const paths = pathsOf(entry);
      if (paths === undefined || paths.some((p) => isPrefix(p, path))) throw new HistoryIncomplete(entry.revision);
      continue;
    }
    // The newest change at or above the path: what was there before it, and the older changes undone from there.
    const j = entry.changes.findLastIndex((c) => isPrefix(c.path, path));
    if (j < 0) continue;
    const change = entry.changes[j] as NonNullable<RewindEntry['changes']>[number];
    if (!('was' in change)) throw new HistoryIncomplete(entry.revision);
    const before = change.was === undefined ? undefined : valueBelow(change.was, path.slice(change.path.length));
    const older = [{ ...entry, changes: entry.changes.slice(0, j) }, ...entries.slice(i + 1)];
    return { value: rewind(before, path, older) };
  }
  return undefined;
}

/**
 * Why a container being paged member by member cannot give its members at the revision any more, or undefined when
 * it can: it was changed at or above its path since (rewritten: its members now are not its members then), one of
 * its members there was deleted since (the pages read now cannot list it), or a change to it was not kept in full.
 */
export function staleContainer(path: Path, entries: readonly RewindEntry[]): string | undefined {
  const member = (p: Path) => p.length === path.length + 1 && isPrefix(path, p);
  for (const entry of entries) {
    const paths = pathsOf(entry);
    if (paths === undefined) return `the change at revision ${entry.revision} was not kept in full`;
    if (paths.some((p) => isPrefix(p, path))) return `it was rewritten at revision ${entry.revision}`;
    if (!entry.rewindable && paths.some(member)) return `the change at revision ${entry.revision} was not kept in full`;
    for (const change of entry.changes ?? []) {
      if (!member(change.path) || !('deleted' in change)) continue;
      // Deleted since, and there at the revision: the pages read now no longer list it.
      if (valueFromLog(change.path, entries)?.value !== undefined) {
        return `a member was deleted at revision ${entry.revision}`;
      }
    }
  }
  return undefined;
}

/**
 * Why the whole content may have been replaced since the revision, or undefined: a change at the root (an import's
 * switch among them, whose new segments carry no write stamp of their own), or one not kept whose paths are unknown.
 */
export function replacedWhole(entries: readonly RewindEntry[]): string | undefined {
  for (const entry of entries) {
    const paths = pathsOf(entry);
    if (paths === undefined) return `the change at revision ${entry.revision} was not kept in full`;
    if (paths.some((p) => p.length === 0)) return `the whole content was replaced at revision ${entry.revision}`;
  }
  return undefined;
}
