// History reads (docs/design/history.md): a page of who changed what at a path, and the value at a path as it was
// at a revision or a time, rewound from the value now with the old values the change log keeps.
import { setTimeout as sleep } from 'node:timers/promises';
import { Refusal, Unavailable } from '../config/errors';
import { MAX_RESPONSE_BYTES, MAX_REWIND_ENTRIES } from '../config/limits';
import type { Json, JsonObject } from '../content/json';
import { valueAt } from '../content/model';
import { type Path, asIndex, formatPath } from '../paths';
import type { Actor, Stamp } from '../schema/write-stamp';
import { historyDays } from '../realtime/history';
import { type HistoryEntry, historyEntry, historyPage, loggedStamps } from '../realtime/change-log';
import { formatRevision } from '../realtime/revisions';
import { type WireChange, readSnapshot, toWire, trimTo } from '../storage';
import { HistoryIncomplete, rewind } from './rewind';

/** A revision (digits) or an ISO-8601 time, as `at` names a point in the history. */
export type HistoryPoint = { revision: string } | { time: number };

/** `at` read: up to 40 digits is a revision; anything else must be an ISO-8601 time with a date. */
export function parseHistoryPoint(at: string): HistoryPoint {
  if (/^[0-9]{1,40}$/.test(at)) return { revision: formatRevision(BigInt(at)) };
  const time = /^\d{4}-\d{2}-\d{2}/.test(at) ? Date.parse(at) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new Refusal('INVALID_QUERY', "at is a revision (digits) or an ISO-8601 time such as '2026-11-27T08:00:00Z'");
  }
  return { time };
}

const windowStart = () => Date.now() - historyDays() * 86_400_000;

/** A commit is at most this much later than its request's stamp (the 10 s timeout, and clock skew between hosts). */
const COMMIT_MARGIN_MS = 15_000;
/** How long after its commit an entry the consumer is still completing is waited for. */
const COMPLETING_MAX_MS = 60_000;
/** How long a read at a revision waits for commits the stream consumer has not logged yet. */
const LAG_WAIT_MS = 3_000;

/** One entry as the history route answers it, trimmed to a path. */
export interface HistoryItem {
  revision: string;
  at: string;
  actor: Actor | { kind: 'unknown' };
  operation: string;
  idempotencyKey?: string;
  changes: WireChange[] | 'changed';
}

const entryTouches = (entry: HistoryEntry, path: Path) =>
  entry.changes === undefined
    ? (entry.touched ?? [path]).some(
        (p) => p.every((s, i) => i >= path.length || path[i] === s) || path.every((s, i) => p[i] === s),
      )
    : undefined;

/** An entry as the route shows it: its changes at `path` (trimmed as realtime trims), or null when none. */
export function historyItem(entry: HistoryEntry, path: Path): HistoryItem | undefined {
  let changes: HistoryItem['changes'];
  if (entry.changes === undefined) {
    if (!entryTouches(entry, path)) return undefined;
    changes = 'changed';
  } else {
    const inside = trimTo(entry.changes, path);
    if (inside.length === 0) return undefined;
    changes = inside.map(toWire);
  }
  return {
    revision: entry.revision,
    at: new Date(entry.time).toISOString(),
    actor: entry.stamp?.actor ?? { kind: 'unknown' },
    operation: entry.stamp?.operation ?? 'unknown',
    ...(entry.stamp?.idempotencyKey === undefined ? {} : { idempotencyKey: entry.stamp.idempotencyKey }),
    changes,
  };
}

/**
 * A page of history at `path`, newest first: one Query of `limit` entries before `before`; those that did not touch
 * the path are left out (a page may hold fewer than `limit`). `next`: the `before` of the next page, or null.
 */
export async function historyAt(
  inc: string,
  path: Path,
  options: { limit: number; before?: string },
): Promise<{ entries: HistoryItem[]; next: string | null }> {
  const before = options.before === undefined ? undefined : formatRevision(BigInt(options.before));
  const page = await historyPage(inc, { before, limit: options.limit, newestFirst: true });
  const entries = page.entries.flatMap((e) => historyItem(e, path) ?? []);
  return { entries, next: page.next ?? null };
}

/** Every entry after `revision` (exclusive), newest first; past MAX_REWIND_ENTRIES, a 413. */
export async function entriesAfter(inc: string, revision: string): Promise<HistoryEntry[]> {
  const found: HistoryEntry[] = [];
  let start: string | undefined;
  do {
    const page = await historyPage(inc, { after: revision, newestFirst: true, start, limit: 500 });
    found.push(...page.entries);
    if (found.length > MAX_REWIND_ENTRIES) {
      throw new Refusal(
        'HISTORY_TOO_LONG',
        `more than ${MAX_REWIND_ENTRIES} changes were made since then; read at a later revision or time`,
      );
    }
    start = page.next;
  } while (start !== undefined);
  return found;
}

const expiredAt = (what: string) =>
  new Refusal('HISTORY_EXPIRED', `${what} is not in the history kept (${historyDays()} days)`);

/**
 * Where a point in the history is: the revision after which every later entry is undone, and its time. A time: the
 * newest entry at or before it (entries found newer are undone); none: every entry is.
 */
async function locate(inc: string, point: HistoryPoint): Promise<{ revision: string; time: number }> {
  if ('revision' in point) {
    const entry = await historyEntry(inc, point.revision);
    if (entry === undefined || entry.time < windowStart()) throw expiredAt(`revision ${point.revision}`);
    return { revision: entry.revision, time: entry.time };
  }
  if (point.time < windowStart()) throw expiredAt(new Date(point.time).toISOString());
  let start: string | undefined;
  do {
    const page = await historyPage(inc, { newestFirst: true, limit: 100, start });
    const at = page.entries.find((e) => e.time <= point.time);
    if (at) return { revision: at.revision, time: at.time };
    start = page.next;
  } while (start !== undefined);
  return { revision: formatRevision(0n), time: point.time };
}

/**
 * Whether every stamp on the segments read is accounted for: logged after the point (its commit is among those
 * undone), or at or before it. A stamp older than the point by more than a commit can take is before it; the others
 * are looked up (one BatchGetItem of the stamps' small items). `retry`: a commit logged since `after` was read.
 */
export async function stampsLogged(
  inc: string,
  stamps: readonly Stamp[],
  point: { revision: string; time: number },
  after: readonly HistoryEntry[],
): Promise<'yes' | 'pending' | 'retry'> {
  const logged = new Set(after.flatMap((e) => (e.stamp ? [e.stamp.nonce] : [])));
  // A commit whose request began more than the margin before the newest logged one's was committed before it, and
  // the log is in commit order: it is logged, so, not after the point, it is at or before it.
  const newest = Math.max(point.time, ...after.map((e) => e.time));
  const open = stamps.filter(
    (stamp) =>
      !logged.has(stamp.nonce) &&
      stamp.time >= point.time - COMMIT_MARGIN_MS &&
      stamp.time + COMMIT_MARGIN_MS >= newest,
  );
  if (open.length === 0) return 'yes';
  const revisions = await loggedStamps(
    inc,
    open.map((s) => s.nonce),
  );
  for (const stamp of open) {
    const revision = revisions.get(stamp.nonce);
    if (revision === undefined) return 'pending';
    if (revision > point.revision) return 'retry';
  }
  return 'yes';
}

/** A point in the history and every entry after it, newest first: what rewinding a read to the point undoes. */
export interface RevisionLog {
  revision: string;
  time: number;
  entries: HistoryEntry[];
}

/**
 * Waits until every write stamp a read saw is accounted for by `log` (section 3, stream lag): a commit logged since
 * the entries were read has them read again; one the consumer has not logged yet, or an entry it is still
 * completing, is waited for (50 ms steps, until `deadline`, then a retry-safe 503). The read itself stays right:
 * every commit it saw is then among the entries.
 */
export async function awaitLogged(
  inc: string,
  log: RevisionLog,
  stamps: readonly Stamp[],
  deadline = Date.now() + LAG_WAIT_MS,
): Promise<void> {
  for (;;) {
    const stamped = await stampsLogged(inc, stamps, log, log.entries);
    // An entry logged before the rest of its commit's stream records came is logged again whole when they do; one
    // completing for longer is taken as it is (its consumer restarted meanwhile: not rewindable there).
    const completing = log.entries.some((e) => e.completing && Date.now() - e.time < COMPLETING_MAX_MS);
    const logged = stamped === 'yes' && completing ? 'pending' : stamped;
    if (logged === 'yes') return;
    if (Date.now() > deadline) throw new Unavailable('the history is catching up with the latest writes');
    if (logged === 'pending') await sleep(50);
    log.entries = await entriesAfter(inc, log.revision);
  }
}

/** The path up to its first index counted from the end (resolved against the value as it was), and the rest. */
function literalPrefix(path: Path): [Path, Path] {
  const i = path.findIndex((s) => (asIndex(s) ?? 0) < 0);
  return i < 0 ? [path, []] : [path.slice(0, i), path.slice(i)];
}

/** `rewind`, with a change not kept in full answered as 409 HISTORY_INCOMPLETE. */
function rewound(value: Json | undefined, path: Path, entries: readonly HistoryEntry[]): Json | undefined {
  try {
    return rewind(value, path, entries);
  } catch (error) {
    if (!(error instanceof HistoryIncomplete)) throw error;
    throw new Refusal('HISTORY_INCOMPLETE', error.message);
  }
}

/**
 * The value at `path` as it was at a point in the history: read now (consistently, from the root), then every
 * later entry undone. Waits for the stream consumer to log the commits the read saw (at most LAG_WAIT_MS, then a
 * retry-safe 503). 404 when nothing was there, 410 before the history kept, 409 across a change not kept in full.
 */
export async function valueAtPoint(inc: string, path: Path, point: HistoryPoint): Promise<Json> {
  const at = await locate(inc, point);
  const [prefix, rest] = literalPrefix(path);
  const snapshot = await readSnapshot(inc, prefix, MAX_RESPONSE_BYTES);
  if (snapshot.tooLarge) {
    throw new Refusal(
      'RESPONSE_TOO_LARGE',
      `the value is larger than ${MAX_RESPONSE_BYTES} bytes; read the parts below it one by one`,
    );
  }
  const log: RevisionLog = { ...at, entries: await entriesAfter(inc, at.revision) };
  await awaitLogged(inc, log, snapshot.stamps ?? []);
  const value = rewound(snapshot.value, prefix, log.entries);
  if (value === undefined) throw new Refusal('PATH_NOT_FOUND', `nothing at '${formatPath(path)}' then`);
  return rest.length === 0 ? value : valueAt({ v: value } as JsonObject, ['v', ...rest], path);
}
