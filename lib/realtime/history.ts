// History, the recording side (docs/design/history.md): the write stamp's format, how long history is kept, and the
// old values of a commit's changes made exact (stubs in them read) before the change log keeps them.
import type { DynamoDBRecord } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/access';
import { optionalEnv } from '../config/env';
import { MissingSegment, assemble, fragmentsOf, stubsIn } from '../content/fragments';
import type { Json } from '../content/json';
import { STAMP_ATTRIBUTE } from '../dynamo/write-stamp';
import { A } from '../schema/attributes';
import { type Segment, querySubtree } from '../store/segments';
import type { Change } from './changes';
import type { CommitView } from './commit-reads';

/** Who made a change: never a secret, a hash or a claim. */
export type Actor = { kind: 'key'; id: string } | { kind: 'user'; username: string } | { kind: 'anonymous' };

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
  if (principal.kind === 'user') return { kind: 'user', username: principal.username };
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

/**
 * The commit's changes with exact old values: a `was` that holds stubs (segments the commit did not write) has them
 * read, and kept only when what was read is what was there before the commit (not written by it, nor since). A
 * change whose old value cannot be made exact loses its `was`: the entry then says it cannot be rewound past.
 */
export async function exactOldValues(
  inc: string,
  changes: readonly Change[],
  commit: CommitView & { stampTime?: number },
): Promise<Change[]> {
  const out: Change[] = [];
  for (const change of changes) {
    const was = 'was' in change ? change.was : undefined;
    const stubs = was === undefined ? [] : stubsIn(was);
    if (!('was' in change) || stubs.length === 0) {
      out.push(change);
      continue;
    }
    const read: Segment[] = [];
    for (const subtree of await Promise.all(stubs.map((stub) => querySubtree(inc, stub)))) {
      read.push(...subtree.values());
    }
    const { was: _dropped, ...rest } = change;
    if (!read.every((segment) => unchangedSince(segment, commit))) {
      out.push(rest as Change);
      continue;
    }
    try {
      out.push({ ...rest, was: assemble(was as Json, fragmentsOf(read)) } as Change);
    } catch (error) {
      if (!(error instanceof MissingSegment)) throw error;
      out.push(rest as Change);
    }
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
