// Carries a decision out: one guarded UpdateItem, or a commit over several segments (the segment's new fragment,
// its new children, the deletes of what it orphans); and a write's one-request form, tried first.
import { fragmentBytes } from '../config/env';
import { newCommitToken } from './ids';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { createHash, randomBytes } from 'node:crypto';
import type { Piece } from './layout/cut';
import { chunkDir, chunkStart, isChunkKey } from './layout/keys';
import { stubsUnderOf } from './layout/stubs';
import { type Json, storedSize } from '../content/json';
import {
  type CommitStamp,
  type TailChunks,
  type UpdateRequest,
  type WriteEnvelope,
  compileWrite,
} from '../expressions';
import { TOKEN_SLOTS } from '../schema/attributes';
import type { Segment } from './segment';
import { type Rewrite, commitRewrite } from './io/commit';
import { getSegment, querySubtree } from './io/read';
import { type RequestRecord, requestRecordOf } from './request-records';
import { Refusal } from '../config/errors';

import { trackChunked } from './chunked';
import type { Decision, Rewritten } from './decide';
import { type Grant, epochAccess } from './grant';
import { type Sent, sendUpdate } from './io/write';
import type { WriteRequest } from './requests';
import { segmentAfter } from './retry';

/**
 * The segments below these stubs, to be deleted with the change that drops the stubs, each on the version read:
 * the change was decided (If-Match included) on what they held then.
 */
async function subtreesOf(inc: string, stubs: readonly string[]): Promise<{ key: string; version: number }[]> {
  const subtrees = await Promise.all(stubs.map((stub) => querySubtree(inc, stub)));
  return subtrees.flatMap((subtree) => [...subtree.values()].map((s) => ({ key: s.key, version: s.version })));
}

/** What every write of a request carries; a named request's record too (written with its change). */
export type Envelope = Omit<WriteEnvelope, 'size' | 'access'> & { record?: RequestRecord };

/** What every write of a request carries: its token (given or random), the token's slot and mark, the envelope. */
export function writeEnvelope(request: Omit<WriteRequest, 'op'>): {
  token: string;
  slot: number;
  mark: string;
  envelope: Envelope;
} {
  const token = request.requestToken ?? randomBytes(16).toString('base64url');
  // The slot follows from the token, so a retry in another invocation checks the slot the first attempt used; the slot
  // holds 72 more bits of the token's digest, not the token (32 slots on every segment: 320 bytes less than tokens).
  const digest = createHash('sha256').update(token).digest();
  const slot = digest[0]! % TOKEN_SLOTS;
  const mark = digest.subarray(1, 10).toString('base64url');
  return {
    token,
    slot,
    mark,
    envelope: {
      requestToken: token,
      stamp: request.stamp,
      budget: fragmentBytes(),
      slot,
      slotMark: mark,
      ifMatch: request.ifMatch,
      guardStubs: true,
      record: request.requestToken === undefined ? undefined : requestRecordOf(request.requestToken),
    },
  };
}

/** A write decided on what was read: If-Match was checked there, and the write holds on the versions read. */
export const guardedBase = (envelope: Envelope, grant: Grant) => ({
  ...envelope,
  guardStubs: false,
  ifMatch: undefined,
  access: epochAccess(grant),
});

/** Sends a decision: one guarded UpdateItem, or a commit over several segments. */
export async function sendDecision(
  grant: Grant,
  decided: {
    envelope: Envelope;
    /** The segment decided on. */
    segment: Segment;
    decision: Extract<Decision, { kind: 'write' | 'rewrite' }>;
    /** Answer the item the write left (a shrinking write checks whether to fold). */
    returnNew?: boolean;
  },
): Promise<Sent> {
  const { envelope, segment, decision, returnNew = false } = decided;
  const base = guardedBase(envelope, grant);
  if (decision.kind === 'write') {
    const write = compileWrite(
      { action: decision.action, guards: decision.guards },
      {
        ...base,
        expectedVersion: envelope.ifMatch ? segment.version : decision.version,
        size: decision.size,
      },
    ) as UpdateRequest;
    return sendUpdate(grant.inc, segment.key, write, { returnNew, record: envelope.record });
  }
  const orphans = [
    ...(decision.carried ?? []).map((s) => ({ key: s.key, version: s.version, carried: true })),
    ...(await subtreesOf(grant.inc, decision.dropped)),
  ];
  return commitPieces(grant, {
    base,
    key: segment.key,
    version: decision.version,
    pieces: decision.pieces,
    orphans,
    rewritten: decision.rewritten,
    returnNew,
    oneTransaction: decision.oneTransaction,
  });
}

/** A segment's new fragment and what goes with it, for commitPieces. */
export interface PiecesCommit {
  /** The envelope every write of the commit carries (its conditions, token, write stamp, a named request's record). */
  base: Omit<WriteEnvelope, 'size'> & { record?: RequestRecord };
  /** The segment rewritten, and the version it was read at. */
  key: string;
  version: number;
  /** Its new fragment first, then the new children it names. */
  pieces: readonly Piece[];
  /** Segments the change makes unreachable. */
  orphans: Rewrite['orphans'];
  /** Segments below it rewritten in place in the same commit (a chunked array's chunks). */
  rewritten?: readonly Rewritten[];
  /** Answer the item the write left (one UpdateItem only). */
  returnNew?: boolean;
  /** Every item in the one transaction, or a 413 (batches and patches: Rewrite.oneTransaction). */
  oneTransaction?: boolean;
}

/**
 * Writes a segment's new fragment (the first piece) on the version read, with its new children and the deletes of
 * what it orphans: one UpdateItem when there are none, else one commit over all of them (io/commit.ts).
 */
export async function commitPieces(grant: Grant, commit: PiecesCommit): Promise<Sent> {
  const { base, key, version, pieces, orphans, rewritten = [], returnNew = false } = commit;
  const [top, ...children] = pieces as [Piece, ...Piece[]];
  // Several segments changed in place: each records the versions all of them will have (readers' torn-read check);
  // a chunk, its array's segment's alone (every reader reads that segment before its chunks).
  const versions = new Map([
    [key, version + 1],
    ...rewritten.map((r) => [r.segment.key, r.segment.version + 1] as const),
  ]);
  const arrays = rewritten.filter((r) => r.chunkOf === undefined);
  const partners =
    arrays.length === 0
      ? undefined
      : Object.fromEntries([key, ...arrays.map((r) => r.segment.key)].map((k) => [k, versions.get(k) as number]));
  /** A chunk or a bucket records the one segment it is read with; the others, every one's. */
  const partnersOf = (r: Rewritten) => {
    const one = r.chunkOf ?? r.hub;
    return one === undefined ? partners : { [one]: versions.get(one) as number };
  };
  /** The arrays whose chunks this commit rewrites in place: the range of those chunks' starts, in their directory. */
  const tails = new Map<string, TailChunks>();
  for (const r of rewritten) {
    if (r.chunkOf === undefined) continue;
    const start = chunkStart(r.segment.key);
    const known = tails.get(r.chunkOf);
    tails.set(r.chunkOf, {
      dir: chunkDir(r.segment.key),
      from: Math.min(known?.from ?? start, start),
      to: Math.max(known?.to ?? start, start),
      generation: versions.get(r.chunkOf) as number,
    });
  }
  // One item: one UpdateItem of its own; several: one commit, whose token each of its updates stamps.
  const single = children.length === 0 && orphans.length === 0 && rewritten.length === 0;
  const tx = single ? undefined : newCommitToken();
  /** A segment's whole new fragment, on the version read (stamped `rt`/`pa` as `stamp` says, in a commit). */
  const replacing = (
    fragment: Json,
    expectedVersion: number,
    partners?: Record<string, number>,
    tail?: TailChunks,
    marks: Omit<CommitStamp, 'token'> = {},
  ) =>
    compileWrite(
      { action: { kind: 'set', steps: [], value: fragment }, guards: [] },
      {
        ...base,
        expectedVersion,
        size: { exact: storedSize(fragment) },
        stubsUnder: stubsUnderOf(fragment),
        ...(partners ? { partners } : {}),
        ...(tail ? { tailChunks: tail } : {}),
        ...(tx === undefined ? {} : { commit: { token: tx, ...marks } }),
      },
    ) as UpdateRequest;
  const update = replacing(top.fragment, version, partners, tails.get(key), { tail: tails.has(key) });
  // What this Lambda knows of a chunked array it rewrote (its chunk stub after a shift among its chunks, a rollover):
  // kept current, so its next insert after the chunks is one request.
  const landed = <T extends { ok: boolean; earlier?: true }>(sent: T): T => {
    if (sent.ok && !sent.earlier)
      for (const [k, fragment] of [
        [key, top.fragment] as const,
        ...rewritten.map((r) => [r.segment.key, r.pieces[0]?.fragment] as const),
      ])
        if (!isChunkKey(k)) trackChunked(grant.inc, k, fragment);
    return sent;
  };
  if (tx === undefined) return landed(await sendUpdate(grant.inc, key, update, { returnNew, record: base.record }));
  const token = { slot: base.slot, value: base.slotMark ?? base.requestToken };
  return landed(
    await commitRewrite({
      inc: grant.inc,
      epoch: grant.epoch,
      tx,
      parent: { key, update },
      rewritten: rewritten.map((r) => ({
        key: r.segment.key,
        update: replacing((r.pieces[0] as Piece).fragment, r.segment.version, partnersOf(r), tails.get(r.segment.key), {
          tail: tails.has(r.segment.key),
          partner: r.chunkOf === undefined,
        }),
      })),
      children: [...children, ...rewritten.flatMap((r) => r.pieces.slice(1))],
      orphans,
      token,
      record: base.record,
      stamp: base.stamp,
      oneTransaction: commit.oneTransaction,
    }),
  );
}

/** A one-request form that landed; with `returnNew`, the item it left. */
export interface Landed {
  landed: true;
  item?: Record<string, AttributeValue>;
}

/** Whether a one-request form landed (rather than leaving a segment to decide on). */
export const hasLanded = (tried: Landed | Segment | undefined): tried is Landed =>
  tried !== undefined && 'landed' in tried;

/**
 * A write's one-request form, when it has one: landed, or the segment to decide on (the one the refusal returned,
 * or read). `planOnRefusal`: a refusal the engine gives the merged form (a batch's sum past its digits) is left to the
 * planned write, which names the operation.
 */
export async function tryOneRequest(
  grant: Grant,
  key: string,
  update: UpdateRequest | undefined,
  {
    planOnRefusal = false,
    returnNew = false,
    record,
  }: { planOnRefusal?: boolean; returnNew?: boolean; record?: RequestRecord },
): Promise<Landed | Segment | undefined> {
  if (!update) return getSegment(grant.inc, key);
  const sent = await sendUpdate(grant.inc, key, update, { fast: true, returnNew, record }).catch(
    (error: unknown): Sent => {
      if (planOnRefusal && error instanceof Refusal) return { ok: false };
      throw error;
    },
  );
  return sent.ok ? { landed: true, item: sent.item } : segmentAfter(grant, key, sent);
}
