// History, the recording side (docs/design/history.md): a request's write stamp made from its principal, how long
// history is kept, and whether a commit can be rewound. The stamp's format is lib/schema/write-stamp.ts's; the old
// values of a commit's changes are made exact by the change feed (lib/storage/feed/old-values.ts).
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/access';
import { optionalEnv } from '../config/env';
import type { Actor, Stamp } from '../schema/write-stamp';
import type { Change } from '../storage';

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

/** Days of history kept (stage parameter HISTORY_DAYS): default 7, 1 to 35. */
export function historyDays(): number {
  const days = Number(optionalEnv('HISTORY_DAYS') ?? 7);
  return Number.isInteger(days) ? Math.min(35, Math.max(1, days)) : 7;
}

/** Whether every change of a commit can be rewound (its old value is known exactly). */
export const rewindable = (changes: readonly Change[]): boolean => changes.every((c) => 'was' in c);
