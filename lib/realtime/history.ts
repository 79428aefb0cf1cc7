// History, the recording side (docs/design/history.md): the write stamp's format, how long history is kept, and the
// old values of a commit's changes made exact (stubs in them read) before the change log keeps them.
import type { DynamoDBRecord } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/access';
import { optionalEnv } from '../config/env';
import { assemble, fragmentsOf, stubsIn } from '../content/fragments';
import type { Json } from '../content/json';
import { STAMP_ATTRIBUTE } from '../dynamo/write-stamp';
import { A } from '../schema/attributes';
import { type Segment, querySubtree } from '../store/segments';
import type { Change } from './changes';
import type { CommitView } from './commit-reads';

/**
 * Who made a change: never a secret or a hash. An app's end user signed in with a JWT that names no user here is
 * `username: null` with the token's `sub`, the one thing that tells end users apart.
 */
export type Actor =
  | { kind: 'key'; id: string }
  | { kind: 'user'; username: string }
  | { kind: 'user'; username: null; sub: string }
  | { kind: 'anonymous' };

/** What a write's segments carry (`wb`), and what the history entry of its commit says. */
export interface Stamp {
  actor: Actor;
  /** The route: set, insert, push, increment, decrement, delete, update, batch, patch, restore. */
  operation: string;
  idempotencyKey?: string;
  /** When the request began, epoch ms. */
  time: number;
  /** Tells this request's writes from every other's. */
  nonce: string;
}

/** The actor of a verified principal. */
export function actorOf(principal: Principal): Actor {
  if (principal.kind === 'key') return { kind: 'key', id: principal.keyId };
  if (principal.kind === 'user')
    return principal.username === null
      ? { kind: 'user', username: null, sub: principal.sub ?? '' }
      : { kind: 'user', username: principal.username };
  return { kind: 'anonymous' };
}

/** A new request's stamp, as the JSON text the segments carry. */
export function newStamp(principal: Principal, operation: string, idempotencyKey?: string): string {
  const stamp: Stamp = {
    actor: actorOf(principal),
    operation,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    time: Date.now(),
    nonce: randomBytes(9).toString('base64url'),
  };
  return JSON.stringify(stamp);
}

/** A stamp's text read back; undefined when absent or not one. */
export function parseStamp(text: string | undefined): Stamp | undefined {
  if (text === undefined) return undefined;
  try {
    const stamp = JSON.parse(text) as Stamp;
    return typeof stamp?.nonce === 'string' && typeof stamp.time === 'number' ? stamp : undefined;
  } catch {
    return undefined;
  }
}

/** The stamp a MODIFY record's write set: its new image's, when it differs from the old image's (else none). */
export function stampOfRecord(record: DynamoDBRecord): Stamp | undefined {
  const now = record.dynamodb?.NewImage?.[STAMP_ATTRIBUTE]?.S;
  if (now === undefined || now === record.dynamodb?.OldImage?.[STAMP_ATTRIBUTE]?.S) return undefined;
  return parseStamp(now);
}

/** The stamp a segment item carries (its last stamped write's). */
export const stampOfItem = (raw: Record<string, { S?: string }>): Stamp | undefined =>
  parseStamp(raw[STAMP_ATTRIBUTE]?.S);

/** Days of history kept (stage parameter HISTORY_DAYS): default 7, 1 to 35. */
export function historyDays(): number {
  const days = Number(optionalEnv('HISTORY_DAYS') ?? 7);
  return Number.isInteger(days) ? Math.min(35, Math.max(1, days)) : 7;
}

/** A change whose old value still names segments this commit removed, whose records have not come yet. */
export interface AwaitedOld {
  /** Its position in the commit's changes. */
  index: number;
  /** Its old value as far as known (stubs of the removed segments left in). */
  was: Json;
}

/**
 * The commit's changes with exact old values: a `was` that holds stubs (segments the commit did not write) has them
 * resolved from `removed` (segments removed by recent commits, their old images), else read, and kept only when what
 * was read is what was there before the commit (not written by it, nor since). A stub whose segment is gone and not
 * among `removed` was removed by this commit in records still to come (a commit's records may span stream batches):
 * the change is `awaited`. A change whose old value cannot be made exact loses its `was`.
 */
export async function exactOldValues(
  inc: string,
  changes: readonly Change[],
  commit: CommitView & {
    stampTime?: number;
    removed: (key: string) => Json | undefined;
    /** A segment's fragment before this commit changed it in place (its record's old image), when known. */
    prior: (key: string) => Json | undefined;
  },
): Promise<{ changes: Change[]; awaited: AwaitedOld[] }> {
  const out: Change[] = [];
  const awaited: AwaitedOld[] = [];
  for (const [index, change] of changes.entries()) {
    const was = 'was' in change && change.was !== undefined ? assemble(change.was, commit.removed, 'keep') : undefined;
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
        const before = commit.prior(segment.key);
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

/** The awaited old values completed from `removed`, when every stub in them is there now; else undefined. */
export function completeAwaited(
  changes: readonly Change[],
  awaited: readonly AwaitedOld[],
  removed: (key: string) => Json | undefined,
): Change[] | undefined {
  const out = [...changes];
  for (const { index, was } of awaited) {
    const complete = assemble(was, removed, 'keep');
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

/** Whether every change of a commit can be rewound (its old value is known exactly). */
export const rewindable = (changes: readonly Change[]): boolean => changes.every((c) => 'was' in c);
