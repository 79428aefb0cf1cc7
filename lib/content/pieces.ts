// Pieces (docs/design/backup.md §1): a whole content cut into `{path, value}` in depth-first document order, a
// container too large for one piece sent open (`{}`/`[]`, then its members below it). This module checks one page of
// an import against what the pages before it left open, and turns it into the writes that build the document. Pure.
import { Refusal } from '../config/errors';
import { MAX_CONTAINER_DEPTH } from '../config/limits';
import { type Path, formatPointer, parsePointer } from '../paths';
import { type Json, type JsonObject, assertStorable, isObject, setOwn, storedSize } from './json';

/** One piece as a client sends it: a JSON Pointer (`""` the root) and the value that goes there. */
export interface Piece {
  path: string;
  value: Json;
}

/** An open container: its key in its parent (`""` for the root), what it is, and (an array) how many elements came. */
export interface OpenContainer {
  key: string;
  kind: 'object' | 'array';
  length: number;
}

/**
 * What an import's pages have built so far, kept in its session between pages: whether the root came, and the
 * containers still open, outermost first. Small: at most 31 keys of at most 1,024 characters.
 */
export interface PiecesState {
  started: boolean;
  open: OpenContainer[];
}

/** Before the first page. */
export const NO_PIECES: PiecesState = { started: false, open: [] };

/** A write that builds the document: `value` set at `segments` (`[]`: the whole content, an object). */
export interface PieceWrite {
  segments: Path;
  value: Json;
}

/** How many pieces one page may hold (a page is also under the 512 KiB body limit). */
export const MAX_PIECES_PER_PAGE = 10_000;

const invalid = (index: number, message: string) => new Refusal('INVALID_PIECES', `pieces[${index}]: ${message}`);

/** An empty object or array: the open form of a container, whose members come as pieces below it. */
const openKind = (value: Json): OpenContainer['kind'] | undefined =>
  Array.isArray(value)
    ? value.length === 0
      ? 'array'
      : undefined
    : isObject(value) && Object.keys(value).length === 0
      ? 'object'
      : undefined;

/** An open container during a page: `built` is its value when the page opened it (its members join it in memory). */
interface Open extends OpenContainer {
  built?: JsonObject | Json[];
}

/**
 * Checks one page of pieces after `state` and returns the state after it and the writes that build it. Pieces whose
 * container this page opened are merged into that container's value, so a page costs one write per piece whose
 * container an earlier page opened (and one for the root), not one per piece. Throws 400 INVALID_PIECES naming the
 * first piece that breaks the format; nothing of the page is then applied.
 */
export function planPieces(
  state: PiecesState,
  pieces: readonly unknown[],
): { state: PiecesState; writes: PieceWrite[] } {
  if (pieces.length === 0) throw new Refusal('INVALID_PIECES', 'a page holds at least one piece');
  if (pieces.length > MAX_PIECES_PER_PAGE)
    throw new Refusal('INVALID_PIECES', `a page holds at most ${MAX_PIECES_PER_PAGE} pieces`);
  let started = state.started;
  const open: Open[] = state.open.map((o) => ({ ...o }));
  const writes: PieceWrite[] = [];
  for (const [index, raw] of pieces.entries()) {
    const { tokens, value } = readPiece(index, raw);
    if (tokens.length === 0) {
      if (started) throw invalid(index, 'the root ("") comes once, first');
      if (!isObject(value)) throw invalid(index, 'the document (the piece at "") must be an object');
      started = true;
      // An open container is a fresh one: its members are added to it, never to the piece the caller handed in.
      const root = openKind(value) ? {} : value;
      writes.push({ segments: [], value: root });
      if (openKind(value)) open.push({ key: '', kind: 'object', length: 0, built: root as JsonObject });
      continue;
    }
    if (!started) throw invalid(index, 'the first piece is the root ("")');
    // Close the containers the piece is not directly below: their members are done (depth-first order).
    const parentDepth = tokens.length - 1;
    while (open.length > parentDepth + 1 || (open.length > 0 && !isOpenAt(open, tokens))) open.pop();
    const parent = open[open.length - 1];
    if (parent === undefined || open.length !== parentDepth + 1) {
      throw invalid(
        index,
        `'${formatPointer(tokens)}' is not a member of an open container (pieces come in depth-first order, a container sent open as {} or [] before its members)`,
      );
    }
    const key = tokens[tokens.length - 1] as string;
    if (parent.kind === 'array') {
      if (key !== String(parent.length)) {
        throw invalid(
          index,
          `'${formatPointer(tokens)}' is not the next element of the open array '${formatPointer(tokens.slice(0, -1))}' (expected index ${parent.length})`,
        );
      }
      parent.length++;
    } else if (key.length === 0) {
      throw invalid(index, 'object keys must not be empty');
    }
    const kind = openKind(value);
    const placed: Json = kind === 'array' ? [] : kind === 'object' ? {} : value;
    if (parent.built !== undefined) {
      if (Array.isArray(parent.built)) parent.built.push(placed);
      else setOwn(parent.built, key, placed);
    } else {
      writes.push({ segments: tokens, value: placed });
    }
    if (kind) open.push({ key, kind, length: 0, built: placed as JsonObject | Json[] });
  }
  return { state: { started, open: open.map(({ key, kind, length }) => ({ key, kind, length })) }, writes };
}

/** Whether the open containers are exactly the ancestors of `tokens` (the root, then one per token but the last). */
function isOpenAt(open: readonly Open[], tokens: Path): boolean {
  for (let i = 1; i < open.length; i++) if (open[i]?.key !== tokens[i - 1]) return false;
  return true;
}

/** A piece's pointer and value, checked as any write's path and value are (a 400 INVALID_PIECES naming it). */
function readPiece(index: number, raw: unknown): { tokens: Path; value: Json } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid(index, 'a piece is an object {"path", "value"}');
  const piece = raw as Record<string, unknown>;
  const extra = Object.keys(piece).find((k) => k !== 'path' && k !== 'value');
  if (extra !== undefined) throw invalid(index, `a piece has only "path" and "value" (not "${extra}")`);
  if (typeof piece.path !== 'string') throw invalid(index, '"path" is a JSON Pointer string ("" the root)');
  if (!('value' in piece)) throw invalid(index, '"value" is missing');
  try {
    const tokens = parsePointer(piece.path);
    assertStorable(piece.value, MAX_CONTAINER_DEPTH - tokens.length);
    return { tokens, value: piece.value };
  } catch (error) {
    if (error instanceof Refusal) throw invalid(index, error.message);
    throw error;
  }
}

/** How a page's writes go to the engine: the root's replacement alone, or sets under one parent, in order. */
export type WriteGroup = { kind: 'replace'; write: PieceWrite } | { kind: 'sets'; writes: PieceWrite[] };

/**
 * A page's writes in the groups they are applied in: the root alone; consecutive sets under one parent together, up to
 * `maxWrites` sets and `maxBytes` of values (one batch each, one transaction). Deterministic, so a page sent again
 * after it was cut short goes on from the group it reached.
 */
export function groupWrites(
  writes: readonly PieceWrite[],
  limits: { maxWrites: number; maxBytes: number },
): WriteGroup[] {
  const groups: WriteGroup[] = [];
  let current: PieceWrite[] = [];
  let bytes = 0;
  const parentOf = (w: PieceWrite) => w.segments.slice(0, -1).join('\u0000');
  const close = () => {
    if (current.length > 0) groups.push({ kind: 'sets', writes: current });
    current = [];
    bytes = 0;
  };
  for (const write of writes) {
    if (write.segments.length === 0) {
      close();
      groups.push({ kind: 'replace', write });
      continue;
    }
    const size = storedSize(write.value) + 64;
    const sameParent = current.length > 0 && parentOf(current[0] as PieceWrite) === parentOf(write);
    if (!sameParent || bytes + size > limits.maxBytes || current.length >= limits.maxWrites) close();
    current.push(write);
    bytes += size;
  }
  close();
  return groups;
}
