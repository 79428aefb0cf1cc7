// Decisions on the segment in hand: did this request land already, does If-Match hold, what to write (one
// guarded update, or the segment cut again with what it orphans).
import { newSegmentId } from './ids';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import Big from 'big.js';
import { fragmentBytes } from '../config/env';
import { MAX_CONTENT_BYTES } from '../config/limits';
import { type Piece, cut } from './layout/cut';
import { reachableFrom, stubsIn } from './layout/stubs';
import { chunkStubOf } from './layout/chunked';
import { isChunkKey } from './layout/keys';
import {
  type Json,
  type JsonNumber,
  type JsonObject,
  Stub,
  decimalOf,
  numberError,
  numberProblem,
  storedSize,
} from '../content/json';
import { type Action, type ContentOperation, type Guard, type Step, applyAction, plan, walk } from '../content/model';
import { type WriteEnvelope, roomFor } from '../expressions';
import { A } from '../schema/attributes';
import { type Segment, etagOf, tokenIn } from './segment';
import { querySubtree } from './io/read';
import { PreconditionFailed } from '../config/errors';
import type { Path } from '../paths';

import type { Grant } from './grant';
import { contentTooLarge } from './refusals';
import { type WriteRequest, formatEtag } from './requests';

/** An action applied to a fragment, whatever the fragment's root is (applyAction replaces a root it is given). */
export function applyToFragment(fragment: Json, action: Action): Json {
  return (applyAction({ r: fragment }, { ...action, steps: ['r', ...action.steps] } as Action) as JsonObject).r as Json;
}

/** The value at concrete steps of a fragment (undefined when absent). */
export function atSteps(fragment: Json, steps: readonly Step[]): Json | undefined {
  let node: Json | undefined = fragment;
  for (const step of steps) node = (node as Record<string | number, Json> | undefined)?.[step];
  return node;
}

/** Whether every piece fits one segment (what cannot be cut, an array or an object of scalars, may be up to 350 KiB). */
export const piecesFit = (pieces: readonly Piece[]) => pieces.every((p) => storedSize(p.fragment) <= MAX_CONTENT_BYTES);

/** A value cut into the pieces it is stored in under `key`, or the 413 when one of them is too large for any segment. */
export function piecesOf(key: string, value: Json): Piece[] {
  const pieces = cut(key, value, { limit: fragmentBytes(), newId: newSegmentId });
  if (!piecesFit(pieces)) throw contentTooLarge();
  return pieces;
}

export type Decision =
  | { kind: 'applied' }
  | { kind: 'unchanged'; etag: string }
  | { kind: 'write'; action: Action; guards: Guard[]; size: WriteEnvelope['size']; version?: number }
  /** `pieces`: the segment's new fragment cut (the segment's own piece first, then its new children). */
  | {
      kind: 'rewrite';
      pieces: Piece[];
      dropped: string[];
      carried?: readonly Segment[];
      version: number;
      rewritten?: readonly Rewritten[];
      /** A batch's or patch's: all it writes in one transaction (segments.ts, `Rewrite.oneTransaction`). */
      oneTransaction?: boolean;
    };

/**
 * A segment below written in place on its version (a chunked array kept under its key, or one of its chunks), its
 * new pieces. A chunk names its array's segment (`chunkOf`): its `pv` records that segment's new version alone. A
 * bucket names its object's segment (`hub`), and records its version alone too: every reader of a bucket's
 * neighbours reads that segment with them (it holds their stub), and it records theirs, so a mix still shows.
 */
export interface Rewritten {
  segment: Segment;
  pieces: Piece[];
  chunkOf?: string;
  hub?: string;
}

/** The If-Match check on the value at `steps` of a segment: its ETag is the segment's, or with stubs, a digest. */
async function assertIfMatch(
  inc: string,
  segment: Segment,
  steps: Path,
  ifMatch: readonly string[] | undefined,
): Promise<void> {
  if (!ifMatch) return;
  let etag = segment.etag;
  const w = walk(segment.fragment as JsonObject, steps);
  const stubs = w.stop === undefined ? stubsIn(w.node) : [];
  if (stubs.length > 0) {
    // The segments a GET of the path reads: a value that is a whole segment is that segment and its subtree.
    const read = w.node instanceof Stub ? [] : [segment];
    for (const stub of stubs) {
      const subtree = await querySubtree(inc, stub);
      const reached = reachableFrom([stub], subtree);
      read.push(...[...subtree.values()].filter((s) => reached.has(s.key)));
    }
    etag = etagOf(read);
  }
  if (!ifMatch.includes(etag)) throw new PreconditionFailed(formatEtag(etag));
}

/** With the segment in hand: did our write already land; if not, what to change (If-Match holds, access was proven). */
export async function decide(
  grant: Grant,
  segment: Segment,
  write: {
    request: WriteRequest;
    /** The operation, its path relative to the segment. */
    op: Exclude<ContentOperation, { kind: 'replace' }>;
    /** The request's token slot and what it holds once the write landed. */
    mark: string;
    slot: number;
  },
): Promise<Decision> {
  const { request, op: rel, mark, slot } = write;
  if (tokenIn(segment, slot) === mark) return { kind: 'applied' };
  await assertIfMatch(grant.inc, segment, rel.segments, request.ifMatch);
  const planned = plan(segment.fragment as JsonObject, rel);
  if (planned === undefined) return { kind: 'unchanged', etag: segment.etag };
  const { action, guards } = planned;
  // A chunked array's positions hold while its chunk stub does (the version; appends need nothing). A chunk's hold
  // while it is not rewritten by an insert or delete before them (its version: a chunk is never deleted and
  // re-created, so no version of it is ever seen twice).
  if ((chunkStubOf(segment.fragment) && action.kind !== 'append') || isChunkKey(segment.key))
    guards.push({ kind: 'version' });
  if (action.kind === 'add') assertSumStorable(segment.raw, action.steps, action.amount);
  const next = applyToFragment(segment.fragment, action);
  const replaced =
    action.kind === 'set' || action.kind === 'remove' ? atSteps(segment.fragment, action.steps) : undefined;
  const dropped = stubsIn(replaced);
  const bytes = storedSize(next);
  if (dropped.length > 0 || bytes > fragmentBytes()) {
    const pieces = piecesOf(segment.key, next);
    if (dropped.length > 0 || pieces.length > 1) return { kind: 'rewrite', pieces, dropped, version: segment.version };
  }
  if (action.kind === 'add') guards.push(sumGuard(segment.raw, action.steps, action.amount));
  // A segment over its budget that cannot be cut (one large value) is written on its version, at its exact size:
  // the commuting form below checks the budget.
  if (guards.some((g) => g.kind === 'version') || bytes > fragmentBytes()) {
    return { kind: 'write', action, guards, size: { exact: bytes }, version: segment.version };
  }
  // The size estimate (raised by every fast write's growth bound, an over-count) is brought back to the exact size by
  // adding the difference: concurrent writes keep adding their own growth, so this commutes with them and needs no
  // version. Without it, a segment's budget of a few KB would fill with estimates and send every write here, in
  // lockstep with every other writer of the segment.
  const estimate = Number(segment.raw[A.bytes]?.N ?? 0);
  return { kind: 'write', action, guards, size: { added: bytes - estimate } };
}

/** The stored number at `steps`, as DynamoDB's exact decimal string. */
function storedNumber(raw: Record<string, AttributeValue>, steps: readonly (string | number)[]): string {
  let node: AttributeValue | undefined = raw[A.content];
  for (const step of steps) node = typeof step === 'number' ? node?.L?.[step] : node?.M?.[step];
  return node?.N ?? '0';
}

/** Sums commute while the number leaves room for them; near the range edge the exact value read must still hold. */
function sumGuard(raw: Record<string, AttributeValue>, steps: Step[], amount: JsonNumber): Guard {
  const stored = storedNumber(raw, steps);
  const { low, high } = roomFor(amount);
  const value = new Big(stored);
  return value.gte(low) && value.lte(high)
    ? { kind: 'between', steps, low, high }
    : { kind: 'equals', steps, number: stored };
}

/** DynamoDB's decimal arithmetic, checked exactly: range (1e-130 to below 1e126) and 38 significant digits. */
function assertSumStorable(
  raw: Record<string, AttributeValue>,
  steps: readonly (string | number)[],
  amount: JsonNumber,
): void {
  const problem = numberProblem(new Big(storedNumber(raw, steps)).plus(decimalOf(amount)));
  if (problem !== undefined) throw numberError(problem, 'the result');
}
