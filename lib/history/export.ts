// GET export (docs/design/backup.md §2): the whole content in pages of pieces, every page at the one revision the
// first fixed. Each page reads the content now, page by page of its large containers, and rewinds what it reads to
// that revision with the change log (lib/history/read.ts); what cannot be rewound member by member is a 409.
import type { Principal } from '../auth/access';
import { Refusal, isRefusal } from '../config/errors';
import { MAX_RESPONSE_BYTES } from '../config/limits';
import type { Json } from '../content/json';
import type { Stamp } from '../schema/write-stamp';
import { decodeCursor } from '../content/key-pages';
import type { Path } from '../paths';
import { historyPage } from '../realtime/change-log';
import { formatRevision } from '../realtime/revisions';
import type { ProjectRef } from '../schema/items';
import { readContent, readSnapshot } from '../storage';
import {
  type ExportCursor,
  type ExportFrame,
  decodeExportCursor,
  encodeExportCursor,
  framePaths,
} from './export-cursor';
import {
  type ExportBudgets,
  type Piece,
  pieceBytes,
  piecesOf,
  replacedWhole,
  staleContainer,
  toPointer,
  valueFromLog,
} from './export-plan';
import { type RevisionLog, entriesAfter, awaitLogged } from './read';
import { HistoryIncomplete, rewind } from './rewind';

/** What one page of an export answers. */
export interface ExportPage {
  revision: string;
  pieces: Piece[];
  cursor: string | null;
}

/** What a page needs: the project (its incarnation verified for a read of the whole content) and the caller. */
export interface ExportRequest {
  project: ProjectRef;
  principal: Principal;
  inc: string;
  cursor?: string;
  budgets: ExportBudgets;
  /** Reads of the content one page makes at most (each a GetItem walk, a key page or a slice). */
  maxReads: number;
}

/** Keys asked for per key page, and elements per slice: what a page of pieces usually needs, in one read. */
const KEYS_PER_READ = 200;
const ELEMENTS_PER_READ = 500;

const stale = (why: string) =>
  new Refusal(
    'EXPORT_STALE',
    `the content changed since this export's revision in a way it cannot undo (${why}); export again`,
  );

/** A frame with what this page holds in hand: the rest of its last key page or slice, or its value cut in hand. */
type OpenFrame = ExportFrame & {
  path: Path;
  keys?: Array<[key: string, after: string]>;
  /** The members of that key page its read held whole: sent without a read of their own. */
  values?: ReadonlyMap<string, Json>;
  lastKeys?: boolean;
  elements?: Json[];
  pieces?: Piece[];
};

/** Where a member's step ended: sent or left out, opened (a frame pushed), or not sent for want of room. */
type Step = 'done' | 'opened' | 'full';

class ExportWalk {
  readonly pieces: Piece[] = [];
  private bytes = 0;
  private reads = 0;
  /** A key page or a slice was read on this page: reads that, unlike a walk from the root, may meet an import's copies. */
  private paged = false;

  constructor(
    private readonly request: ExportRequest,
    private readonly log: RevisionLog,
    readonly frames: OpenFrame[],
    /** A first page may still move its revision to the newest logged, until it sends a piece. */
    private movable: boolean,
  ) {}

  get spent(): boolean {
    return this.reads >= this.request.maxReads;
  }

  /** Adds a piece if the page has room (a page always takes its first). */
  private add(piece: Piece): boolean {
    // With the comma between it and the one before: the page's `pieces` text stays within the budget.
    const bytes = pieceBytes(piece) + 1;
    if (this.pieces.length > 0 && this.bytes + bytes > this.request.budgets.page) return false;
    this.pieces.push(piece);
    this.bytes += bytes;
    this.movable = false;
    return true;
  }

  /** The entries after the revision read again, with every commit a read saw among them (or before the revision). */
  private async awaitLogged(stamps: readonly Stamp[] | undefined): Promise<void> {
    const before = this.log.entries.length;
    await awaitLogged(this.request.inc, this.log, stamps ?? []);
    if (this.movable && this.log.entries.length > before && this.log.entries.length > 0) {
      // Nothing sent yet: the export is at the newest commit logged instead, so it holds the writes just made.
      const newest = this.log.entries[0] as RevisionLog['entries'][number];
      this.log.revision = newest.revision;
      this.log.time = newest.time;
      this.log.entries = [];
    }
  }

  /**
   * Before a page that read key pages or slices answers: the commits its root shows logged, and none of them replaced
   * the whole content. A switch to an import in the middle of the page leaves segments without stamps, so what those
   * reads met of them tells nothing; the root's stamp does. (A value read from the root waits for that stamp itself,
   * and its rewind meets the import's entry.)
   */
  async assertNotReplaced(): Promise<void> {
    if (!this.paged) return;
    await this.awaitLogged((await readSnapshot(this.request.inc, [], 0)).stamps);
    const why = replacedWhole(this.log.entries);
    if (why !== undefined) throw stale(why);
  }

  private rewound(value: Json | undefined, path: Path): Json | undefined {
    return rewind(value, path, this.log.entries);
  }

  /** The value at `path` at the revision, read whole when it is at most `bytes` now; 'large' when it is not. */
  private async valueAt(path: Path, bytes: number): Promise<{ value: Json | undefined } | 'large'> {
    this.reads++;
    const snapshot = await readSnapshot(this.request.inc, path, bytes);
    // Too large, its path's segments from the root still tell which commits to wait for (one above it, an import's
    // switch among them, makes the container about to be paged stale).
    await this.awaitLogged(snapshot.stamps);
    if (!snapshot.tooLarge) return { value: this.rewound(snapshot.value, path) };
    return valueFromLog(path, this.log.entries) ?? 'large';
  }

  /** A value at the revision sent: left out when absent, one piece when it fits one, else cut in hand. */
  private sendValue(path: Path, value: Json | undefined, step: string | undefined): Step {
    if (value === undefined) return 'done';
    const piece = { path: toPointer(path), value };
    if (pieceBytes(piece) <= this.request.budgets.piece) return this.add(piece) ? 'done' : 'full';
    this.frames.push({
      kind: 'hand',
      step,
      sent: 0,
      path,
      pieces: [...piecesOf(path, value, this.request.budgets.piece)],
    });
    return 'opened';
  }

  /**
   * One member (or the root): sent whole, left out, or opened as a container whose members follow. `held`: its value
   * as its key page read it, rewound as a read of its own would be (which it saves: a walk from the root each).
   */
  async member(path: Path, step: string | undefined, held?: Json): Promise<Step> {
    if (held !== undefined && pieceBytes({ path: toPointer(path), value: held }) <= this.request.budgets.piece)
      return this.sendValue(path, this.rewound(held, path), step);
    // A page with less room than a piece ends before reading a member it might not hold (read again next page).
    if (this.pieces.length > 0 && this.request.budgets.page - this.bytes < this.request.budgets.piece) return 'full';
    const found = await this.valueAt(path, this.request.budgets.piece);
    if (found !== 'large') return this.sendValue(path, found.value, step);
    // Larger than a piece now and not changed at or above since the revision: the same container then, paged.
    const frame = await this.open(path, step);
    if (frame === undefined) {
      // A scalar larger than a piece (a long string): one piece all the same; or gone since: what it was at R.
      const whole = await this.valueAt(path, MAX_RESPONSE_BYTES);
      if (whole === 'large') throw stale('a value changed past what one page holds');
      return this.sendValue(path, whole.value, step);
    }
    // Its first read may have met commits logged since: the log decides again.
    const then = valueFromLog(path, this.log.entries);
    if (then !== undefined) return this.sendValue(path, then.value, step);
    const why = staleContainer(path, this.log.entries);
    if (why !== undefined) throw stale(why);
    if (!this.add({ path: toPointer(path), value: frame.kind === 'array' ? [] : {} })) return 'full';
    this.frames.push(frame);
    return 'opened';
  }

  /**
   * A container's first read: a page of its keys, else (not an object) a slice; undefined when it is neither (a
   * long string) or gone since it was found larger than a piece.
   */
  private async open(path: Path, step: string | undefined): Promise<OpenFrame | undefined> {
    const object: OpenFrame = { kind: 'object', step, path };
    try {
      await this.readKeys(object);
      return object;
    } catch (error) {
      if (isRefusal(error, 'PATH_NOT_FOUND')) return undefined;
      if (!isRefusal(error, 'NOT_AN_OBJECT')) throw error;
    }
    const array: OpenFrame = { kind: 'array', step, path, next: 0 };
    try {
      await this.readElements(array);
      return array;
    } catch (error) {
      if (!isRefusal(error, 'NOT_AN_ARRAY', 'PATH_NOT_FOUND')) throw error;
    }
    return undefined;
  }

  /** The next read of a container left open: gone or of another kind now, it was rewritten since the revision. */
  private async readMore(frame: OpenFrame & { kind: 'object' | 'array' }): Promise<void> {
    try {
      if (frame.kind === 'object') await this.readKeys(frame);
      else await this.readElements(frame);
    } catch (error) {
      if (isRefusal(error, 'PATH_NOT_FOUND', 'NOT_AN_OBJECT', 'NOT_AN_ARRAY')) {
        throw stale(`the value at '${toPointer(frame.path)}' was deleted or replaced`);
      }
      throw error;
    }
    const why = staleContainer(frame.path, this.log.entries);
    if (why !== undefined) throw stale(why);
  }

  private async readKeys(frame: OpenFrame & { kind: 'object' }): Promise<void> {
    this.reads++;
    const where = `the value at '${toPointer(frame.path)}'`;
    const page = await readContent({
      project: this.request.project,
      principal: this.request.principal,
      segments: frame.path,
      view: {
        kind: 'shallow',
        page: { limit: KEYS_PER_READ, where, ...(frame.after ? { after: decodeCursor(frame.after) } : {}) },
        values: true,
      },
    });
    this.paged = true;
    const revision = this.log.revision;
    await this.awaitLogged(page.stamps);
    frame.keys = page.order ?? [];
    // Read before a first page moved to a newer revision, the values may be older than it: each is read on its own.
    frame.values = this.log.revision === revision ? page.values : undefined;
    frame.lastKeys = (page.value as { next: string | null }).next === null;
  }

  private async readElements(frame: OpenFrame & { kind: 'array' }): Promise<void> {
    this.reads++;
    const where = `the value at '${toPointer(frame.path)}'`;
    const slice = await readContent({
      project: this.request.project,
      principal: this.request.principal,
      segments: frame.path,
      view: { kind: 'slice', start: frame.next, limit: ELEMENTS_PER_READ, where },
    });
    this.paged = true;
    await this.awaitLogged(slice.stamps);
    frame.elements = (slice.value as { value: Json[] }).value;
  }

  /** Goes on with the innermost open container; false when the page has no room for its next piece. */
  async step(): Promise<boolean> {
    const frame = this.frames[this.frames.length - 1] as OpenFrame;
    if (frame.kind === 'hand') {
      if (frame.pieces === undefined) {
        // Cut on an earlier page: the same value at the revision, cut the same way.
        const found = await this.valueAt(frame.path, MAX_RESPONSE_BYTES);
        if (found === 'large' || found.value === undefined) throw stale('a value changed past what one page holds');
        frame.pieces = [...piecesOf(frame.path, found.value, this.request.budgets.piece)];
      }
      for (const piece of frame.pieces.slice(frame.sent)) {
        if (!this.add(piece)) return false;
        frame.sent++;
      }
      this.frames.pop();
      return true;
    }
    if (frame.kind === 'object') {
      if (frame.keys === undefined) await this.readMore(frame);
      const keys = frame.keys as Array<[string, string]>;
      while (keys.length > 0) {
        const [key, after] = keys[0] as [string, string];
        const done = await this.member([...frame.path, key], key, frame.values?.get(key));
        if (done === 'full') return false;
        keys.shift();
        frame.after = after;
        if (done === 'opened' || this.spent) return true;
      }
      if (frame.lastKeys) this.frames.pop();
      else frame.keys = undefined;
      return true;
    }
    if (frame.elements === undefined) await this.readMore(frame);
    const elements = frame.elements as Json[];
    if (elements.length === 0) {
      this.frames.pop();
      return true;
    }
    while (elements.length > 0) {
      const path = [...frame.path, String(frame.next)];
      const then = this.rewound(elements[0], path);
      // Appended since the revision: so is every element after it (nothing was removed or inserted: not stale).
      if (then === undefined) {
        this.frames.pop();
        return true;
      }
      const done = this.sendValue(path, then, String(frame.next));
      if (done === 'full') return false;
      elements.shift();
      frame.next++;
      if (done === 'opened') return true;
    }
    frame.elements = undefined;
    return true;
  }
}

/** The point a first page exports: the newest commit the change log holds (none yet: now). */
async function newestPoint(inc: string): Promise<{ revision: string; time: number }> {
  const { entries } = await historyPage(inc, { newestFirst: true, limit: 1 });
  const newest = entries[0];
  return newest ? { revision: newest.revision, time: newest.time } : { revision: formatRevision(0n), time: Date.now() };
}

/**
 * One page of an export: without a cursor the first, at the newest revision logged; with one, the next, at its
 * revision. Pieces up to the page's budget, reads up to `maxReads`; `cursor` null after the last.
 */
export async function exportPage(request: ExportRequest): Promise<ExportPage> {
  const { inc } = request;
  const cursor: ExportCursor | undefined =
    request.cursor === undefined ? undefined : decodeExportCursor(inc, request.cursor);
  try {
    const point = cursor ?? (await newestPoint(inc));
    const log: RevisionLog = { revision: point.revision, time: point.time, entries: [] };
    log.entries = await entriesAfter(inc, log.revision);
    // Entries the consumer is still completing are waited for before the open containers are judged by them.
    await awaitLogged(inc, log, []);
    if (cursor === undefined && log.entries.length > 0) {
      // Logged between finding the newest revision and reading what came after it: nothing is sent yet, so the
      // export is at the newest of those instead (none of them need be undone; one too large to keep could not be).
      const newest = log.entries[0] as RevisionLog['entries'][number];
      log.revision = newest.revision;
      log.time = newest.time;
      log.entries = [];
    }
    const frames: OpenFrame[] = cursor
      ? cursor.frames.map((frame, i) => ({ ...frame, path: framePaths(cursor.frames)[i] as Path }))
      : [];
    // What was sent of each container still open was read at the revision; the rest can be only if none was rewritten.
    for (const frame of frames) {
      if (frame.kind === 'hand') continue;
      const why = staleContainer(frame.path, log.entries);
      if (why !== undefined) throw stale(why);
    }
    const walk = new ExportWalk(request, log, frames, cursor === undefined);
    let room = true;
    if (cursor === undefined) room = (await walk.member([], undefined)) !== 'full';
    while (room && frames.length > 0 && !walk.spent) room = await walk.step();
    await walk.assertNotReplaced();
    return {
      revision: log.revision,
      pieces: walk.pieces,
      cursor:
        frames.length === 0
          ? null
          : encodeExportCursor(inc, {
              revision: log.revision,
              time: log.time,
              frames: frames.map(({ kind, step, ...rest }) => frameOf(kind, step, rest)),
            }),
    };
  } catch (error) {
    if (error instanceof HistoryIncomplete) throw stale(error.message);
    // More commits since the revision than a page may undo: this export cannot finish; a new one starts from now.
    if (isRefusal(error, 'HISTORY_TOO_LONG')) throw stale((error as Error).message);
    // A key page's cursor made before its object was bucketed anew: rewritten since the revision.
    if (isRefusal(error, 'STALE_CURSOR')) throw stale('an object was rewritten as a whole');
    throw error;
  }
}

/** A frame as the cursor keeps it (without what the page held in hand). */
function frameOf(
  kind: ExportFrame['kind'],
  step: string | undefined,
  at: { after?: string; next?: number; sent?: number },
): ExportFrame {
  const own = step === undefined ? {} : { step };
  if (kind === 'object') return { kind, ...own, ...(at.after === undefined ? {} : { after: at.after }) };
  if (kind === 'array') return { kind, ...own, next: at.next ?? 0 };
  return { kind, ...own, sent: at.sent ?? 0 };
}
