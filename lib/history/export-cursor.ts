// The cursor of an export (docs/design/backup.md §2): the revision every page reads, and where the walk is, one frame
// per open container, as opaque base64url JSON bound to the project's incarnation. Pure.
import { createHash } from 'node:crypto';
import { Refusal } from '../config/errors';
import { parseJsonText } from '../content/json';
import { MAX_CONTAINER_DEPTH, MAX_CURSOR_LENGTH, MAX_KEY_LENGTH } from '../config/limits';
import type { Path } from '../paths';

/**
 * An open container of the walk: the step from its parent's path to its own (none for the root), and how far it is.
 * `object`: the key-page cursor after the last member done (none: from its first); `array`: the next index;
 * `hand`: a value rewound in hand and cut into pieces, of which `sent` are sent.
 */
export type ExportFrame =
  | { kind: 'object'; step?: string; after?: string }
  | { kind: 'array'; step?: string; next: number }
  | { kind: 'hand'; step?: string; sent: number };

/** Where an export is: its revision (and that entry's time) and the open containers, the root's first. */
export interface ExportCursor {
  revision: string;
  time: number;
  frames: ExportFrame[];
}

/** The absolute path of each frame: its parent's and its own step. */
export function framePaths(frames: readonly ExportFrame[]): Path[] {
  const paths: Path[] = [];
  let at: Path = [];
  for (const frame of frames) {
    at = frame.step === undefined ? at : [...at, frame.step];
    paths.push(at);
  }
  return paths;
}

/** Which project a cursor belongs to: a digest of its incarnation (a cursor of another project, or of a deleted one). */
const projectTag = (inc: string) => createHash('sha256').update(`export\u0000${inc}`).digest('base64url').slice(0, 16);

const KINDS = { object: 'o', array: 'a', hand: 'h' } as const;

/** The cursor as the page's `cursor` answers it. */
export function encodeExportCursor(inc: string, cursor: ExportCursor): string {
  const frames = cursor.frames.map((f) => [
    KINDS[f.kind],
    f.step ?? null,
    f.kind === 'object' ? (f.after ?? null) : f.kind === 'array' ? f.next : f.sent,
  ]);
  return Buffer.from(JSON.stringify({ p: projectTag(inc), r: cursor.revision, t: cursor.time, f: frames })).toString(
    'base64url',
  );
}

const invalidCursor = () =>
  new Refusal('INVALID_CURSOR', "cursor must be the cursor of an earlier page of this project's export");

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const isStep = (s: unknown): s is string => typeof s === 'string' && s.length <= MAX_KEY_LENGTH;

function readFrame(raw: unknown, first: boolean): ExportFrame {
  if (!Array.isArray(raw) || raw.length !== 3) throw invalidCursor();
  const [kind, step, at] = raw as [unknown, unknown, unknown];
  // The root has no step; every frame below it has one.
  if (first ? step !== null : !isStep(step)) throw invalidCursor();
  const own = step === null ? {} : { step: step as string };
  if (kind === 'o' && (at === null || (typeof at === 'string' && at.length > 0 && at.length <= MAX_CURSOR_LENGTH))) {
    return { kind: 'object', ...own, ...(at === null ? {} : { after: at as string }) };
  }
  if (kind === 'a' && isCount(at)) return { kind: 'array', ...own, next: at };
  if (kind === 'h' && isCount(at)) return { kind: 'hand', ...own, sent: at };
  throw invalidCursor();
}

/** `cursor` as given: one this project's export made, or a 400 INVALID_CURSOR (a page never reads another project). */
export function decodeExportCursor(inc: string, text: string): ExportCursor {
  if (text.length === 0 || text.length > 4 * MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) {
    throw invalidCursor();
  }
  let parsed: unknown;
  try {
    parsed = parseJsonText(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidCursor();
  const { p, r, t, f, ...rest } = parsed as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || p !== projectTag(inc)) throw invalidCursor();
  if (typeof r !== 'string' || !/^[0-9]{1,40}$/.test(r) || !isCount(t)) throw invalidCursor();
  // At least the root's frame (an export done has no cursor), at most one per level a content nests.
  if (!Array.isArray(f) || f.length === 0 || f.length > MAX_CONTAINER_DEPTH + 1) throw invalidCursor();
  const frames = f.map((raw, i) => readFrame(raw, i === 0));
  // Only the innermost frame may be a value cut in hand: nothing is open below it.
  if (frames.slice(0, -1).some((frame) => frame.kind === 'hand')) throw invalidCursor();
  return { revision: r, time: t, frames };
}
