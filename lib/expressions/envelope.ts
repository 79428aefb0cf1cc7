// What every write adds to its operation (the envelope): access, version, ETag, token slot, If-Match, size
// budget, the layout's bookkeeping, and a commit's stamp.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { A, slotAttribute } from '../schema/attributes';
import type { ExpressionState } from './state';

/** What a write proves about its caller: the grant epoch and incarnation its credential was verified at. */
export interface AccessCheck {
  ge: number;
  inc: string;
}

/**
 * A commit over several items stamps its token in each item it writes in place (`tx`; with `tail`, `rt` too: a
 * chunked array's segment whose chunks it rewrites; with `partner`, `pa`: a segment changed beside the commit's top
 * one): the stream consumer groups a commit's records by it.
 */
export interface CommitStamp {
  token: string;
  tail?: boolean;
  partner?: boolean;
}

export interface WriteEnvelope {
  access: AccessCheck;
  /** The segment's byte budget (SEGMENT_FRAGMENT_BYTES): how full a write that grows it may leave it. */
  budget: number;
  /** A write that is part of a commit over several items: its stamp. Absent: a write of its own. */
  commit?: CommitStamp;
  /** The request's write stamp (JSON text, lib/schema/write-stamp.ts): set on every segment it writes. */
  stamp?: string;
  /** Random per request: becomes the new ETag and fills a token slot. */
  requestToken: string;
  slot: number;
  /** What the token slot holds: a digest of the token, shorter than it (the token itself when absent). */
  slotMark?: string;
  /** If-Match: the write applies only while the stored etag is one of these. */
  ifMatch?: readonly string[];
  /** Read-then-write: the version that was read. */
  expectedVersion?: number;
  /** Segments: a set or delete without reading needs its first key to hold no stubs (A.stubsUnder). */
  guardStubs?: boolean;
  /** Segments: a write that rewrites the fragment records where its stubs now are (A.stubsUnder). */
  stubsUnder?: Record<string, number>;
  /** Segments: the write holds only while the segment has no stubs at all (so no other segment hangs below it). */
  soleSegment?: boolean;
  /** Segments: one of several changed in place by one commit records all of their new versions (A.partners). */
  partners?: Record<string, number>;
  /** Segments: a chunked array's segment whose chunks the commit rewrites in place records which (A.tailChunks). */
  tailChunks?: TailChunks;
  /**
   * Segments: a write to a chunked array's segment (its root) whose first step (or root insert's index) is already a
   * position after this chunk stub: the write holds while the stub is still its index 0 (the chunks hold the same
   * count of elements, so every position still names the element it named).
   */
  chunkStub?: string;
  /**
   * The content-size estimate: `growth` adds a bound and checks the budget (fast path; nothing for a bound of 0); `exact` resets it (writes
   * guarded by the version); `added` adds what a guarded read-then-write grows it by, already checked in memory.
   */
  size: { growth: number } | { exact: number } | { added: number };
}

/**
 * The chunks of a chunked array one commit rewrote in place: those under `dir` with starts `from` to `to`, each of
 * which then names, in its `pv`, the array segment's version `generation` or a later one.
 */
export interface TailChunks {
  dir: string;
  from: number;
  to: number;
  generation: number;
}

/**
 * The condition that the caller may still do this: the project's grant epoch and incarnation are the ones its
 * credential was verified at (lib/auth/access.ts). Revoking anything advances the epoch, so a grant a Lambda
 * remembers fails here from the next request on; the condition costs the same whatever the number of keys and members.
 */
export function compileAccess(state: ExpressionState, access: AccessCheck): string {
  return `${state.name(A.grantEpoch)} = ${state.number(access.ge)} AND ${state.name(A.incarnation)} = ${state.value({ S: access.inc })}`;
}

/** What every write adds: access, the version bump, the new etag, the request token, If-Match and the size budget. */
export function compileEnvelope(state: ExpressionState, envelope: WriteEnvelope): void {
  const version = state.name(A.version);
  const etag = state.name(A.etag);
  const slot = state.name(slotAttribute(envelope.slot));
  // A write that cannot grow the content (delete: a bound of 0) adds nothing and checks nothing: every write keeps
  // the estimate within the budget, so that check would always hold. (Nor is the name given: the engines refuse a
  // request with a name no expression uses.)
  const bytes = 'growth' in envelope.size && envelope.size.growth === 0 ? undefined : state.name(A.bytes);
  const token = state.value({ S: envelope.requestToken });
  const mark = envelope.slotMark === undefined ? token : state.value({ S: envelope.slotMark });
  state.conditions.unshift(compileAccess(state, envelope.access));
  state.sets.push(`${version} = ${version} + ${state.number(1)}`, `${etag} = ${token}`, `${slot} = ${mark}`);
  if (envelope.stamp !== undefined)
    state.sets.push(`${state.name(A.writeStamp)} = ${state.value({ S: envelope.stamp })}`);
  // A missing slot compares unequal on every engine, so this also holds before the slot was first used.
  state.conditions.push(`${slot} <> ${mark}`);
  if (envelope.ifMatch !== undefined) {
    state.conditions.push(`${etag} IN (${envelope.ifMatch.map((e) => state.value({ S: e })).join(', ')})`);
  }
  if (envelope.expectedVersion !== undefined) {
    state.conditions.push(`${version} = ${state.number(envelope.expectedVersion)}`);
  }
  if (envelope.soleSegment) {
    const under = state.name(A.stubsUnder);
    state.conditions.push(`(attribute_not_exists(${under}) OR size(${under}) = ${state.number(0)})`);
  }
  if (envelope.stubsUnder !== undefined) {
    state.sets.push(`${state.name(A.stubsUnder)} = ${state.value(numberMap(envelope.stubsUnder))}`);
  }
  if (envelope.tailChunks !== undefined) {
    const { dir, from, to, generation } = envelope.tailChunks;
    const range = { d: { S: dir }, f: { N: String(from) }, t: { N: String(to) }, g: { N: String(generation) } };
    state.sets.push(`${state.name(A.tailChunks)} = ${state.value({ M: range })}`);
  }
  if (envelope.partners !== undefined) {
    state.sets.push(`${state.name(A.partners)} = ${state.value(numberMap(envelope.partners))}`);
  }
  compileCommitStamp(state, envelope.commit);
  if (bytes === undefined) return;
  if ('exact' in envelope.size) {
    state.sets.push(`${bytes} = ${state.number(envelope.size.exact)}`);
  } else if ('added' in envelope.size) {
    state.sets.push(`${bytes} = ${bytes} + ${state.number(envelope.size.added)}`);
    // Decided on a read without the version: writers since may have grown the segment; a write that grows it too
    // must still find it within the budget (else it reads again, and cuts).
    if (envelope.size.added > 0) {
      state.conditions.push(`${bytes} <= ${state.number(envelope.budget - envelope.size.added)}`);
    }
  } else {
    state.sets.push(`${bytes} = ${bytes} + ${state.number(envelope.size.growth)}`);
    state.conditions.push(`${bytes} <= ${state.number(envelope.budget - envelope.size.growth)}`);
  }
}

/**
 * A commit's token stamped (CommitStamp); or, for a write of its own, the token an earlier commit left dropped: no
 * later stream record needs it (the consumer takes a `tx` as a commit's only when the write changed it), and some 40
 * bytes every later write of the segment would bill (DynamoDB bills the item's size by the KB).
 */
function compileCommitStamp(state: ExpressionState, stamp: CommitStamp | undefined): void {
  const txn = state.name(A.transaction);
  if (stamp === undefined) {
    state.removes.push(txn, state.name(A.tailCommit), state.name(A.partnerCommit));
    return;
  }
  const token = state.value({ S: stamp.token });
  state.sets.push(`${txn} = ${token}`);
  if (stamp.tail) state.sets.push(`${state.name(A.tailCommit)} = ${token}`);
  if (stamp.partner) state.sets.push(`${state.name(A.partnerCommit)} = ${token}`);
}

/** A map of numbers as a DynamoDB map attribute. */
const numberMap = (numbers: Record<string, number>): AttributeValue => ({
  M: Object.fromEntries(Object.entries(numbers).map(([k, n]) => [k, { N: String(n) }])),
});
