// Write stamps: the content segments a request writes carry a small attribute saying who wrote them and how, which
// the table's stream shows to the consumer that keeps the history (docs/design/history.md, section 2). The request
// hands its stamp to the engine (WriteRequest.stamp), whose expressions set it with every segment write: no extra
// request on the write path.
import type { DynamoDBRecord } from 'aws-lambda';
import { A } from './attributes';

/** The attribute a stamped segment carries: JSON text (see `Stamp`); lib/expressions writes it with every update. */
export const STAMP_ATTRIBUTE = A.writeStamp;

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
