// Content store: sends compiled operations to DynamoDB (one UpdateItem on the fast path) and handles the slow paths.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  TransactWriteItemsCommand,
  TransactionCanceledException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import Big from 'big.js';
import { createHash, randomBytes } from 'node:crypto';
import { setBounded } from '../config/bounded';
import { fragmentBytes, tableName } from '../config/env';
import { MAX_BODY_BYTES, MAX_CONTENT_BYTES, MAX_RESPONSE_BYTES, MAX_WRITE_ATTEMPTS } from '../config/limits';
import {
  type BatchOperation,
  intoNewest,
  lowestReach,
  planBatch,
  plansOnMembers,
  plansOnNewest,
  touchedPaths,
} from '../content/batch';
import { type KeyPageView, pageOfValue } from '../content/key-pages';
import { shallowView, sliceArray } from '../content/views';
import {
  MissingSegment,
  type Piece,
  ROOT_KEY,
  assemble,
  reachableFrom,
  bucketOf,
  chunkCount,
  chunkDir,
  chunkStart,
  chunkStubOf,
  isBucketKey,
  isBucketStubKey,
  isChunkKey,
  isChunkStubKey,
  layTail,
  logicalLength,
  chunkedIndex,
  cut,
  fragmentsOf,
  locate,
  stubsIn,
  stubsUnderOf,
} from '../content/fragments';
import {
  type Json,
  type JsonNumber,
  type JsonObject,
  Stub,
  decimalOf,
  isObject,
  numberError,
  numberProblem,
  setOwn,
  storedSize,
} from '../content/json';
import {
  type Action,
  type ContentOperation,
  type Guard,
  type Step,
  applyAction,
  plan,
  valueAt,
  walk,
} from '../content/model';
import { dynamo } from '../dynamo/client';
import { currentDeadline } from '../dynamo/deadline';
import {
  type TailChunks,
  type UpdateRequest,
  type WriteEnvelope,
  compileBatchWrite,
  compileWrite,
  growthBound,
  isAssumptionRefused,
  roomFor,
} from '../expressions';
import { A, TOKEN_SLOTS } from '../schema/attributes';
import {
  type Segment,
  type Rewrite,
  assertSnapshot,
  clearingTransaction,
  commitRewrite,
  createRoot,
  etagOf,
  forgetLocation,
  forgetLocations,
  getChunk,
  getChunks,
  getSegment,
  getTail,
  getWithTail,
  forgetChunked,
  getSegmentAndChunk,
  knownChunkKey,
  knownChunked,
  learnChunked,
  knownBucket,
  olderThanPartners,
  learnBucket,
  learnLocation,
  lookupLocation,
  querySubtree,
  readSegment,
  segmentItemKey,
  SubtreeTooLarge,
  changeTooLarge,
  MAX_CHANGE_BYTES,
  stampSegment,
  tokenIn,
} from './segments';
import { type RequestRecord, isRecorded, recordPut, recordedBefore, requestRecordOf } from './request-records';
import { readBucketKeys } from './key-pages';
import { BadRequest, Conflict, HttpError, PayloadTooLarge, PreconditionFailed } from '../config/errors';
import { type Segments, asIndex } from '../paths';
import { PathTree } from '../paths/tree';
import { AccessProof, type Need, type Principal, readEpoch } from '../auth/access';
import type { ProjectRef } from '../schema/items';

export interface WriteRequest {
  project: ProjectRef;
  principal: Principal;
  op: ContentOperation;
  /** Parsed If-Match header; undefined when absent or `*`. */
  ifMatch?: readonly string[];
  /**
   * The write's token (its ETag and slot) when the client named the request (Idempotency-Key): derived from that name,
   * so a retry of a write whose answer was lost recognises it instead of applying it again; the request's record
   * (docs/design/storage.md §8a) is written with its change. Absent: a random token, and no record.
   */
  requestToken?: string;
}

export interface WriteResult {
  etag: string;
}

const contentTooLarge = () =>
  new PayloadTooLarge(
    'CONTENT_TOO_LARGE',
    `a value that stays whole would exceed ${MAX_CONTENT_BYTES} bytes; nothing was changed`,
  );

/** DynamoDB refused a write for the item's size (past 400 KB). */
const isItemTooLarge = (error: unknown) =>
  error instanceof Error && error.name === 'ValidationException' && /item size/i.test(error.message);

/**
 * Maps what DynamoDB refuses about a write to the client's 4xx (the service checks first; this is the backstop).
 * Busy or slow is left to the edge (503).
 */
function mapWriteError(error: unknown): never {
  if (error instanceof HttpError) throw error;
  const message = error instanceof Error ? error.message : '';
  const name = error instanceof Error ? error.name : '';
  if (isItemTooLarge(error)) throw contentTooLarge();
  // DynamoDB: "Number overflow/underflow ...", "... precision up to 38 digits"; dynalite: "... 38 significant digits".
  if (name === 'ValidationException' && /number (?:overflow|underflow)/i.test(message)) {
    throw new BadRequest('NUMBER_OUT_OF_RANGE', 'the result is outside the range of numbers that can be stored', {
      cause: error,
    });
  }
  if (name === 'ValidationException' && /significant digits|precision/i.test(message)) {
    throw new BadRequest('NUMBER_TOO_PRECISE', 'the result would have more than 38 significant digits', {
      cause: error,
    });
  }
  throw error;
}

/**
 * A write's outcome; landed with `returnNew`, the item it left (DynamoDB bills nothing for returning it). `earlier`:
 * not applied now, because the named request it belongs to applied before (its record was there).
 */
type Sent =
  | { ok: true; item?: Record<string, AttributeValue>; earlier?: true }
  | { ok: false; item?: Record<string, AttributeValue> };

/**
 * How a write to one segment is sent. `fast`: a one-request form, whose refused assumptions (a stub or a non-list on
 * its path, an item past 400 KB) mean "read and plan"; `returnNew`: return the item it leaves; `record`: a named
 * request's record, written in the same transaction.
 */
interface SendOptions {
  fast?: boolean;
  returnNew?: boolean;
  record?: RequestRecord;
}

/** What DynamoDB refused about a write that a planned write handles (with `fast`), as a refusal; else its 4xx. */
function refusedWrite(error: unknown, fast: boolean | undefined): Sent {
  if (fast && isAssumptionRefused(error)) return { ok: false };
  // An engine may check an item's size before the condition (DynamoDB Local does): a fast write that would take its
  // segment past one item is then refused, not conditioned away. The planned write cuts it.
  if (fast && isItemTooLarge(error)) return { ok: false };
  return mapWriteError(error);
}

async function sendUpdate(
  inc: string,
  key: string,
  request: UpdateRequest,
  { fast, returnNew, record }: SendOptions = {},
): Promise<Sent> {
  if (record) return sendRecorded(inc, key, request, { fast, returnNew, record });
  try {
    const { Attributes } = await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: segmentItemKey(inc, key),
        ...clearingTransaction(request),
        ...(returnNew ? { ReturnValues: 'ALL_NEW' as const } : {}),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { ok: true, item: Attributes };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return { ok: false, item: error.Item };
    return refusedWrite(error, fast);
  }
}

/**
 * A named request's write to one segment (docs/design/storage.md §8a): the same update and the request's record in
 * one transaction. The record there already: the request applied before, and nothing is applied again. The update
 * refused: as the UpdateItem's refusal (a conflict with a write in flight, too, which reads again).
 */
async function sendRecorded(
  inc: string,
  key: string,
  request: UpdateRequest,
  { fast, returnNew, record }: SendOptions & { record: RequestRecord },
): Promise<Sent> {
  try {
    await dynamo.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: segmentItemKey(inc, key),
              ...clearingTransaction(request),
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          recordPut(record),
        ],
      }),
    );
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) return refusedWrite(error, fast);
    if (recordedBefore(error, 1)) return { ok: true, earlier: true };
    const reason = error.CancellationReasons?.[0];
    if (reason?.Code === 'ConditionalCheckFailed') return { ok: false, item: reason.Item };
    // What an UpdateItem would have thrown: the same answer (DynamoDB cancels; some engines throw it as it is).
    if (reason?.Code === 'ValidationError')
      return refusedWrite(Object.assign(new Error(reason.Message ?? ''), { name: 'ValidationException' }), fast);
    return { ok: false };
  }
  // A transaction returns no item: one that is asked for (a delete's fold check) is read.
  return { ok: true, item: returnNew ? (await getSegment(inc, key))?.raw : undefined };
}

/** What a request relies on once its access is verified: which life of the project, at which grant epoch. */
interface Grant {
  inc: string;
  epoch: number;
  proof: AccessProof;
}

const grantOf = (proof: AccessProof): Grant => ({ inc: proof.grant.inc, epoch: proof.grant.ge, proof });

/** Verifies the caller (401, 404, 403 in the documented order; cached per warm Lambda) and returns its grant. */
async function grantFor(project: ProjectRef, principal: Principal, need: Need): Promise<Grant> {
  return grantOf(await AccessProof.of(project, principal, need));
}

/** The grant verified afresh: a segment showed another epoch (a revocation, or a grant remembered from before one). */
async function renewed(grant: Grant): Promise<Grant> {
  await grant.proof.renew();
  return grantOf(grant.proof);
}

/** Set and delete replace what is at the path, so they act in the segment holding its parent; the rest follow stubs. */
const entersTarget = (op: { kind: string }) => op.kind !== 'set' && op.kind !== 'delete';

/** Remembers where a path continues: a stub's segment, or a bucketed object's stub (met in segment `from`). */
function learn(inc: string, prefix: Segments, from: string, located: { key: string; bucket?: string }): void {
  if (located.bucket !== undefined) learnBucket(inc, prefix, from, located.bucket);
  else learnLocation(inc, prefix, located.key);
}

/** Where a request is: a segment whose root is `depth` segments down the path; in a chunk, the index there. */
interface At {
  key: string;
  depth: number;
  /** In a chunked array's chunk or head: the first step (a logical index) as a position in the segment's array. */
  first?: string;
}

/** The operation with its path made relative to the segment it is at. */
function rebase<T extends BatchOperation | ContentOperation>(op: T, at: At): T {
  if (!('segments' in op) || (at.depth === 0 && at.first === undefined)) return op;
  const segments = op.segments.slice(at.depth);
  if (at.first !== undefined && segments.length > 0) segments[0] = at.first;
  return { ...op, segments, shown: op.shown ?? op.segments };
}

/** An action applied to a fragment, whatever the fragment's root is (applyAction replaces a root it is given). */
function applyToFragment(fragment: Json, action: Action): Json {
  return (applyAction({ r: fragment }, { ...action, steps: ['r', ...action.steps] } as Action) as JsonObject).r as Json;
}

/** The value at concrete steps of a fragment (undefined when absent). */
function atSteps(fragment: Json, steps: readonly Step[]): Json | undefined {
  let node: Json | undefined = fragment;
  for (const step of steps) node = (node as Record<string | number, Json> | undefined)?.[step];
  return node;
}

/**
 * The segments below these stubs, to be deleted with the change that drops the stubs, each on the version read:
 * the change was decided (If-Match included) on what they held then.
 */
async function subtreesOf(inc: string, stubs: readonly string[]): Promise<{ key: string; version: number }[]> {
  const subtrees = await Promise.all(stubs.map((stub) => querySubtree(inc, stub)));
  return subtrees.flatMap((subtree) => [...subtree.values()].map((s) => ({ key: s.key, version: s.version })));
}

/** Whether every piece fits one segment (what cannot be cut, an array or an object of scalars, may be up to 350 KiB). */
const piecesFit = (pieces: readonly Piece[]) => pieces.every((p) => storedSize(p.fragment) <= MAX_CONTENT_BYTES);

/** A value cut into the pieces it is stored in under `key`, or the 413 when one of them is too large for any segment. */
function piecesOf(key: string, value: Json): Piece[] {
  const pieces = cut(key, value, fragmentBytes());
  if (!piecesFit(pieces)) throw contentTooLarge();
  return pieces;
}

type Decision =
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
interface Rewritten {
  segment: Segment;
  pieces: Piece[];
  chunkOf?: string;
  hub?: string;
}

/** The If-Match check on the value at `steps` of a segment: its ETag is the segment's, or with stubs, a digest. */
async function assertIfMatch(
  inc: string,
  segment: Segment,
  steps: Segments,
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
async function decide(
  request: WriteRequest,
  grant: Grant,
  segment: Segment,
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
  mark: string,
  slot: number,
): Promise<Decision> {
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Full jitter, capped: racing writers spread out instead of colliding again in lockstep. */
const backoff = (attempt: number) => sleep(Math.random() * Math.min(100, 5 * 2 ** attempt));

export const formatEtag = (etag: string) => `"${etag}"`;

/** What every write of a request carries; a named request's record too (written with its change). */
type Envelope = Omit<WriteEnvelope, 'size' | 'access'> & { record?: RequestRecord };

function writeEnvelope(request: Omit<WriteRequest, 'op'>): {
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
      slot,
      slotMark: mark,
      ifMatch: request.ifMatch,
      guardStubs: true,
      record: request.requestToken === undefined ? undefined : requestRecordOf(request.requestToken),
    },
  };
}

const epochAccess = (grant: Grant) => grant.proof.check();

/** A write decided on what was read: If-Match was checked there, and the write holds on the versions read. */
const guardedBase = (envelope: Envelope, grant: Grant) => ({
  ...envelope,
  guardStubs: false,
  ifMatch: undefined,
  access: epochAccess(grant),
});

/** Sends a decision: one guarded UpdateItem, or a commit over several segments. */
async function carryOut(
  grant: Grant,
  envelope: Envelope,
  segment: Segment,
  decision: Extract<Decision, { kind: 'write' | 'rewrite' }>,
  returnNew = false,
): Promise<Sent> {
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
  return commitPieces(
    grant,
    base,
    segment.key,
    decision.version,
    decision.pieces,
    orphans,
    decision.rewritten,
    returnNew,
    { oneTransaction: decision.oneTransaction },
  );
}

/**
 * Writes a segment's new fragment (the first piece) on the version read, with its new children and the deletes of
 * what it orphans: one UpdateItem when there are none, else one commit over all of them (segments.ts).
 */
async function commitPieces(
  grant: Grant,
  base: Omit<WriteEnvelope, 'size'> & { record?: RequestRecord },
  key: string,
  version: number,
  pieces: readonly Piece[],
  orphans: Rewrite['orphans'],
  rewritten: readonly Rewritten[] = [],
  returnNew = false,
  options: { oneTransaction?: boolean } = {},
): Promise<Sent> {
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
  /** A segment's whole new fragment, on the version read. */
  const replacing = (fragment: Json, expectedVersion: number, partners?: Record<string, number>, tail?: TailChunks) =>
    compileWrite(
      { action: { kind: 'set', steps: [], value: fragment }, guards: [] },
      {
        ...base,
        expectedVersion,
        size: { exact: storedSize(fragment) },
        stubsUnder: stubsUnderOf(fragment),
        ...(partners ? { partners } : {}),
        ...(tail ? { tailChunks: tail } : {}),
      },
    ) as UpdateRequest;
  const update = replacing(top.fragment, version, partners, tails.get(key));
  // What this Lambda knows of a chunked array it rewrote (its chunk stub after a shift among its chunks, a rollover):
  // kept current, so its next insert after the chunks is one request.
  const landed = <T extends { ok: boolean; earlier?: true }>(sent: T): T => {
    if (sent.ok && !sent.earlier)
      for (const [k, fragment] of [
        [key, top.fragment] as const,
        ...rewritten.map((r) => [r.segment.key, r.pieces[0]?.fragment] as const),
      ])
        if (!isChunkKey(k)) noteChunked(grant.inc, k, fragment);
    return sent;
  };
  if (children.length === 0 && orphans.length === 0 && rewritten.length === 0)
    return landed(await sendUpdate(grant.inc, key, update, { returnNew, record: base.record }));
  const token = { slot: base.slot, value: base.slotMark ?? base.requestToken };
  return landed(
    await commitRewrite({
      inc: grant.inc,
      epoch: grant.epoch,
      parent: { key, update, tail: tails.has(key) },
      rewritten: rewritten.map((r) => ({
        key: r.segment.key,
        update: replacing((r.pieces[0] as Piece).fragment, r.segment.version, partnersOf(r), tails.get(r.segment.key)),
        tail: tails.has(r.segment.key),
        partner: r.chunkOf === undefined,
      })),
      children: [...children, ...rewritten.flatMap((r) => r.pieces.slice(1))],
      orphans,
      token,
      record: base.record,
      oneTransaction: options.oneTransaction,
    }),
  );
}

/** A one-request form that landed; with `returnNew`, the item it left. */
interface Landed {
  landed: true;
  item?: Record<string, AttributeValue>;
}

const hasLanded = (tried: Landed | Segment | undefined): tried is Landed => tried !== undefined && 'landed' in tried;

/**
 * A write's one-request form, when it has one: landed, or the segment to decide on (the one the refusal returned,
 * or read). `planOnRefusal`: a 4xx the engine gives the merged form (a batch's sum past its digits) is left to the
 * planned write, which names the operation.
 */
async function firstTry(
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
      if (planOnRefusal && error instanceof HttpError && error.statusCode < 500) return { ok: false };
      throw error;
    },
  );
  return sent.ok ? { landed: true, item: sent.item } : segmentAfter(grant, key, sent);
}

/** After a refused write: the segment the refusal returned, or read afresh. */
const segmentAfter = async (grant: Grant, key: string, sent: Sent) =>
  !sent.ok && sent.item ? readSegment(sent.item) : getSegment(grant.inc, key);

/** Where a request stands: the grant it proves, and the segment it goes to (its root `depth` segments down the path). */
interface Place {
  grant: Grant;
  at: At;
}

const ROOT_AT: At = { key: ROOT_KEY, depth: 0 };

/** A segment of another epoch than the grant's: the grant verified afresh, and the segment stamped if it is older. */
async function reverified(grant: Grant, segment: Segment): Promise<Grant> {
  const fresh = await renewed(grant);
  if (segment.epoch < fresh.epoch) await stampSegment(fresh.inc, segment.key, fresh.epoch);
  return fresh;
}

/**
 * What stands between a request and the segment it reached, as where it goes next: nothing (undefined), a segment
 * that is gone (walk again from the root), or an epoch that is not the grant's (a revocation: verify the credential
 * again; an older segment is stamped).
 */
async function settle({ grant, at }: Place, segment: Segment | undefined): Promise<Place | undefined> {
  if (segment === undefined) {
    if (at.key !== ROOT_KEY) {
      forgetLocations(grant.inc);
      return { grant, at: ROOT_AT };
    }
    // No root: the project was deleted (its segments with it), or its creation stopped half-way. The credential is
    // verified afresh (a deleted project's 404), and only then is an empty root made.
    const fresh = await renewed(grant);
    await createRoot(fresh.inc, fresh.epoch);
    return { grant: fresh, at: ROOT_AT };
  }
  return segment.epoch === grant.epoch ? undefined : { grant: await reverified(grant, segment), at };
}

/**
 * The segment to decide on again after a refused write: the one the refusal returned, at once (it is the newest there
 * is); after that, read afresh after a backoff (a segment from before the sleep is already stale when other writers
 * keep going). Past the attempts or the deadline, the 409.
 */
async function retrySegment(grant: Grant, key: string, sent: Sent, attempt: number): Promise<Segment | undefined> {
  if (attempt !== 2) return rereadAfter(grant, key, attempt);
  assertAttemptsLeft(attempt);
  return segmentAfter(grant, key, sent);
}

/** Past the attempts or the request's deadline: a 409 (nothing of this request applied). */
function assertAttemptsLeft(attempt: number): void {
  if (attempt > MAX_WRITE_ATTEMPTS || Date.now() >= currentDeadline()) throw tooManyWriters();
}

const tooManyWriters = () =>
  new Conflict('WRITE_CONFLICT', 'Too many concurrent writes to this project; retry shortly', { 'Retry-After': '1' });

/**
 * Applies one content operation. It goes to the segment that holds its path (the deepest one this Lambda knows of,
 * validated by the write's own condition): one UpdateItem when the operation compiles without reading. Otherwise
 * (and after a failed condition) it reads that segment, follows a stub if the path continues elsewhere, decides in
 * memory and writes conditionally on what the decision assumed, retrying with jitter while other writers race it.
 * A write that makes the segment outgrow its budget, or drops stubs, commits over several segments at once.
 */
export async function writeContent(request: WriteRequest): Promise<WriteResult> {
  return recognisingRetry(request, () => applyContent(request));
}

/** The answers a named request's own earlier write can cause on its retry (not access: that is decided afresh). */
const RETRY_REFUSALS = new Set([400, 409, 412, 413]);

/**
 * A named request about to be refused (a 412 because its own write moved the version, an index its own insert put out
 * of range, a 409 after as many attempts) reads its record first: there, the request applied before and its answer
 * was lost, so it answers success (docs/design/storage.md §8a). Only named requests on that path pay the read.
 */
async function recognisingRetry(
  request: Omit<WriteRequest, 'op'>,
  write: () => Promise<WriteResult>,
): Promise<WriteResult> {
  try {
    return await write();
  } catch (error) {
    const token = request.requestToken;
    if (token === undefined || !(error instanceof HttpError) || !RETRY_REFUSALS.has(error.statusCode)) throw error;
    if (await isRecorded(requestRecordOf(token))) return { etag: formatEtag(token) };
    throw error;
  }
}

/** One content operation (writeContent), not yet recognising a named request's refused retry. */
async function applyContent(request: WriteRequest): Promise<WriteResult> {
  const op = request.op;
  if (op.kind === 'replace') return replaceContent(request, op.content);
  let grant = await grantFor(request.project, request.principal, 'write');
  const { token, slot, mark, envelope } = writeEnvelope(request);
  let at: At = lookupLocation(grant.inc, op.segments, op.segments.length - (entersTarget(op) ? 0 : 1));
  let segment: Segment | undefined;
  let fast = true;
  /** In a chunk: where the array's segment is (the element is looked for there again if the chunk changes). */
  let arrayAt: At | undefined;
  /** A chunked array's last chunks, read with its segment for an insert or delete among them. */
  let tail: Segment[] | undefined;
  /** A chunk read with its array's segment for a write to an old element (the chunk this Lambda knows holds it). */
  let prefetched: Segment | undefined;
  for (let attempt = 1; ; ) {
    let rel = rebase(op, at);
    // A delete below the root may leave its segment small enough to fold back into its parent: it asks for what it left.
    const shrinks = op.kind === 'delete' && at.key !== ROOT_KEY;
    // A chunked array this Lambda knows: an insert or delete among its chunks reads its tail with it; a write to an old
    // element reads the chunk it knows with it; a write after the chunks is one UpdateItem held by the chunk stub.
    const chunked = fast ? chunkedWrite(grant.inc, at, rel) : undefined;
    const among = chunked !== undefined && chunked.index < chunked.count;
    const shifting = among && chunked.shifts ? tailToRead(chunked) : undefined;
    // A chunk read beside a segment pairs with that read only: never carried into a later iteration.
    prefetched = undefined;
    const chunkKnown =
      among && !chunked.shifts ? knownChunkKey(grant.inc, chunkDir(chunked.stub), chunked.index) : undefined;
    if (shifting !== undefined) {
      // An insert or delete among a known chunked array's chunks: its segment and the tail, one Query, then the commit.
      fast = false;
      ({ segment, chunks: tail } = await getWithTail(grant.inc, at.key, shifting));
    } else if (chunkKnown !== undefined) {
      // A write to an old element whose chunk this Lambda has met: that chunk read with the array's segment (one
      // BatchGetItem) instead of the one-request try the segment would refuse; the segment is checked as ever.
      fast = false;
      ({ segment, chunk: prefetched } = await getSegmentAndChunk(grant.inc, at.key, chunkKnown));
    } else if (fast) {
      fast = false;
      // A write that may grow its segment past the budget cannot be one UpdateItem: it is planned (and cut) at once.
      const growth = growthBound(rel);
      const after = chunked && !among && !request.ifMatch ? afterChunkStub(rel, chunked) : undefined;
      const update =
        growth > fragmentBytes()
          ? undefined
          : compileWrite(
              { op: after?.op ?? rel },
              { ...envelope, access: epochAccess(grant), size: { growth }, chunkStub: after?.stub },
            );
      const tried = await firstTry(grant, at.key, update, { returnNew: shrinks, record: envelope.record });
      if (hasLanded(tried)) {
        if (shrinks) await foldIfSmall(grant, envelope, op.segments.slice(0, at.depth), tried.item);
        return { etag: formatEtag(token) };
      }
      segment = tried;
    }
    const moved = await settle({ grant, at }, segment);
    if (moved) {
      ({ grant, at } = moved);
      fast = true;
      tail = undefined;
      continue;
    }
    const current = segment as Segment;
    if (at.first === undefined) noteChunked(grant.inc, current.key, current.fragment);
    // Our token in any segment on the way: this request's write landed (its answer was lost, and a cut or split
    // since may have moved the path on).
    if (tokenIn(current, slot) === mark) return { etag: formatEtag(token) };
    const located = locate(current.fragment, rel.segments, entersTarget(op));
    if (located.at === 'stub') {
      const from = at.key;
      at = { key: located.key, depth: at.depth + located.consumed };
      learn(grant.inc, op.segments.slice(0, at.depth), from, located);
      fast = true;
      continue;
    }
    if (located.at === 'chunk') {
      // An element in a chunk: changed there, unless the change moves the elements after it (the whole array).
      if (op.kind === 'delete' && rel.segments.length === 1)
        return writeWholeArray(request, op, { at, segment: current, tail });
      const held = prefetched && holdsIndex(prefetched, located.dir, located.index) ? prefetched : undefined;
      const chunk = held ?? (await getChunk(grant.inc, located.dir, located.index));
      if (chunk && olderThanPartners([current, chunk]) !== undefined) {
        // An insert or delete before the element moved it since the array's segment was read: read it again.
        attempt++;
        segment = await rereadAfter(grant, at.key, attempt);
        continue;
      }
      // Where to find the element again if the chunk changes under this write (its index may have moved).
      arrayAt = at;
      at = {
        key: chunk?.key ?? at.key,
        depth: at.depth,
        first: String(located.index - (chunk ? chunkStart(chunk.key) : 0)),
      };
      segment = chunk;
      continue;
    }
    if (located.position !== undefined)
      rel = { ...rel, segments: [String(located.position), ...rel.segments.slice(1)] };
    else if (rel.kind === 'insert' && rel.segments.length === 0 && chunkStubOf(current.fragment)) {
      // An insert into a chunked array: after its chunk stub, in the segment; before it, the whole array.
      const where = chunkedIndex(current.fragment as Json[], rel.index);
      const length = (current.fragment as Json[]).length;
      if (!('position' in where) || where.position < 0 || where.position > length)
        return writeWholeArray(request, op, { at, segment: current, tail });
      rel = { ...rel, index: where.position };
    }
    const decision = await decide(request, grant, current, rel, mark, slot);
    if (decision.kind === 'applied') return { etag: formatEtag(token) };
    if (decision.kind === 'unchanged') return { etag: formatEtag(decision.etag) };
    const sent = await carryOut(grant, envelope, current, decision, shrinks);
    if (sent.ok) {
      if (shrinks) await foldIfSmall(grant, envelope, op.segments.slice(0, at.depth), sent.item);
      return { etag: formatEtag(token) };
    }
    attempt++;
    if (arrayAt) {
      // A chunk's write refused (on its version): an insert or delete may have moved the element, so the array's
      // segment is read again to find it.
      at = arrayAt;
      arrayAt = undefined;
      segment = await rereadAfter(grant, at.key, attempt);
      continue;
    }
    segment = await retrySegment(grant, at.key, sent, attempt);
  }
}

/**
 * Per warm Lambda: segments whose parent was too full to fold them into, when, and how small they would have had to
 * be (not looked at again for a minute unless they are that small now).
 */
const foldChecked = new Map<string, { at: number; room: number }>();
const FOLD_RECHECK_MS = 60_000;
const FOLD_CHECKED_MAX = 1_000;

/**
 * After a delete left segment `item` (the root of `path`) under a quarter of the budget: folds it back into the
 * segment that names it when the two fit in half a budget, or in no more than the parent holds now; one commit, the
 * parent in place on its version and the small segment deleted on its own (docs/design/storage.md, section 13, step 3,
 * merges). Housekeeping after a write that landed: a refusal or a fault here is logged, never the client's answer.
 */
async function foldIfSmall(
  grant: Grant,
  envelope: Envelope,
  path: Segments,
  item: Record<string, AttributeValue> | undefined,
): Promise<void> {
  if (!item) return;
  const small = readSegment(item);
  const { key, fragment } = small;
  if (key === ROOT_KEY || isChunkKey(key) || isBucketKey(key) || fragment instanceof Stub || chunkStubOf(fragment))
    return;
  const size = storedSize(fragment);
  if (size >= fragmentBytes() / 4) return;
  const checked = `${grant.inc}\u0000${key}`;
  const known = foldChecked.get(checked);
  if (known && Date.now() - known.at < FOLD_RECHECK_MS && size > known.room) return;
  try {
    const parent = await parentOf(grant.inc, path, key);
    if (!parent) return;
    const merged = assemble(parent.fragment, (k) => (k === key ? fragment : undefined), 'keep');
    const bytes = storedSize(merged);
    const limit = Math.max(fragmentBytes() / 2, storedSize(parent.fragment));
    if (bytes > limit) {
      setBounded(foldChecked, checked, { at: Date.now(), room: size - (bytes - limit) }, FOLD_CHECKED_MAX);
      return;
    }
    const pieces = [{ key: parent.key, fragment: merged }];
    // Housekeeping after the request applied: not the request's own change, so without its record.
    const housekeeping = { ...envelope, record: undefined };
    const sent = await commitPieces(grant, guardedBase(housekeeping, grant), parent.key, parent.version, pieces, [
      { key, version: small.version },
    ]);
    // Where this Lambda knew the small segment to be, it is not: found again from the root.
    if (sent.ok) forgetLocation(grant.inc, key);
  } catch (error) {
    console.error(JSON.stringify({ level: 'WARN', message: 'segment merge failed', key, error: String(error) }));
  }
}

/**
 * The segment that names segment `key` as the value at `path` (walked from the deepest segment this Lambda knows
 * above it, following stubs as a write does), or undefined when the path leads anywhere else.
 */
async function parentOf(inc: string, path: Segments, key: string): Promise<Segment | undefined> {
  let at = lookupLocation(inc, path, path.length - 1);
  for (let hops = 0; hops < 8; hops++) {
    const segment = await getSegment(inc, at.key);
    if (!segment) return undefined;
    const located = locate(segment.fragment, path.slice(at.depth), true);
    if (located.at !== 'stub') return undefined;
    const depth = at.depth + located.consumed;
    if (depth === path.length) return located.key === key && located.bucket === undefined ? segment : undefined;
    at = { key: located.key, depth };
  }
  return undefined;
}

/**
 * A chunked array's segment met (not one of its chunks): remembered for inserts and deletes among its chunks. Its
 * chunk size is measured again only when its count moved (a rollover, an insert or delete among its chunks), not on
 * every read of it.
 */
function noteChunked(inc: string, key: string, fragment: Json | undefined): void {
  const stub = chunkStubOf(fragment);
  if (!stub) {
    forgetChunked(inc, key);
    return;
  }
  if (knownChunked(inc, key)?.stub === stub.key) return;
  learnChunked(inc, key, stub.key, perChunkOf((fragment as Json[]).slice(1)));
}

/**
 * A write at a chunked array's segment this Lambda has met, by the index its path starts with (or a root insert's):
 * `shifts` when it moves the elements after it (an insert into the array, a delete of an element); `count` the
 * elements the array's chunks hold by the chunk stub it knows. Undefined for any other write.
 */
function chunkedWrite(
  inc: string,
  at: At,
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
): { stub: string; perChunk: number; count: number; index: number; into: boolean; shifts: boolean } | undefined {
  if (at.first !== undefined) return undefined;
  const known = knownChunked(inc, at.key);
  if (!known) return undefined;
  const into = rel.kind === 'insert' && rel.segments.length === 0;
  const index = into ? rel.index : rel.segments.length > 0 ? asIndex(rel.segments[0] as string) : undefined;
  if (index === undefined || index < 0) return undefined;
  const shifts = into || (rel.kind === 'delete' && rel.segments.length === 1);
  return { ...known, count: chunkCount(known.stub), index, into, shifts };
}

/**
 * An insert or delete among the chunks: how many items to read from the array segment's key (the segment, then its
 * chunks from the last down to the index, with room for some growth; at most one chunk more than a tail may have).
 */
const tailToRead = (w: { count: number; perChunk: number; index: number }) =>
  Math.min(TAIL_CHUNKS_MAX + 2, Math.ceil((w.count - w.index) / w.perChunk) + 3);

/**
 * A write after the chunks (an insert at the end, a change to one of the newest elements): the index as a position
 * after the chunk stub, written in one UpdateItem held by that stub (a rollover or an insert or delete among the
 * chunks since replaces it, and the write reads).
 */
function afterChunkStub(
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
  w: { stub: string; count: number; index: number; into: boolean },
): { op: ContentOperation; stub: string } {
  const position = w.index - w.count + 1;
  const op = w.into ? { ...rel, index: position } : { ...rel, segments: [String(position), ...rel.segments.slice(1)] };
  return { op, stub: w.stub };
}

/** Whether a chunk (of directory `dir`) holds logical index `index`: its range, from its key, and its length. */
const holdsIndex = (chunk: Segment, dir: string, index: number) =>
  chunkDir(chunk.key) === dir &&
  chunkStart(chunk.key) <= index &&
  index < chunkStart(chunk.key) + (chunk.fragment as Json[]).length;

/** A segment read again after a refused or mixed attempt (within the attempts and the deadline), after a backoff. */
async function rereadAfter(grant: Grant, key: string, attempt: number): Promise<Segment | undefined> {
  assertAttemptsLeft(attempt);
  await backoff(attempt);
  return getSegment(grant.inc, key);
}

/**
 * A change that moves the elements of a chunked array across its chunks (an insert or delete before its newest
 * elements): planned as a batch of one, on the chunks from its index to the end (or on the whole array), starting
 * from the array's segment as read.
 */
async function writeWholeArray(
  request: WriteRequest,
  op: Exclude<ContentOperation, { kind: 'replace' }>,
  read: { at: At; segment: Segment; tail?: readonly Segment[] },
) {
  try {
    return await applyBatch({ ...request, ops: [op] }, read);
  } catch (error) {
    // Not a batch: its errors name no operation.
    if (error instanceof HttpError) error.index = undefined;
    throw error;
  }
}

/** Replaces the whole content: the new content's pieces, committed with the old segments' deletes. */
async function replaceContent(request: WriteRequest, content: JsonObject): Promise<WriteResult> {
  if (growthBound(request.op) > MAX_BODY_BYTES * 2) throw contentTooLarge();
  let grant = await grantFor(request.project, request.principal, 'write');
  const { token, slot, mark, envelope } = writeEnvelope(request);
  const pieces = piecesOf(ROOT_KEY, content);
  if (pieces.length === 1) {
    // A content that fits one segment, over one that is one segment (its root has no stubs): one UpdateItem.
    const fast = compileWrite(
      { action: { kind: 'set', steps: [], value: content }, guards: [] },
      { ...envelope, access: epochAccess(grant), size: { exact: storedSize(content) }, soleSegment: true },
    ) as UpdateRequest;
    const sent = await sendUpdate(grant.inc, ROOT_KEY, fast, { fast: true, record: envelope.record });
    if (sent.ok) return { etag: formatEtag(token) };
  }
  for (let attempt = 1; ; attempt++) {
    const all = await querySubtree(grant.inc, ROOT_KEY, !request.ifMatch);
    const root = all.get(ROOT_KEY);
    if (root && tokenIn(root, slot) === mark) return { etag: formatEtag(token) };
    if (request.ifMatch) {
      const etag = etagOf([...all.values()]);
      if (!request.ifMatch.includes(etag)) throw new PreconditionFailed(formatEtag(etag));
    }
    if (!root) {
      await createRoot(grant.inc, grant.epoch);
      continue;
    }
    const others = [...all.keys()].filter((k) => k !== ROOT_KEY).map((k) => ({ key: k }));
    const sent = await commitPieces(grant, guardedBase(envelope, grant), ROOT_KEY, root.version, pieces, others);
    if (sent.ok) return { etag: formatEtag(token) };
    // A revocation since the grant was read: verified again (the caller's 401 or 403, or the new epoch to write at).
    if (sent.item && readSegment(sent.item).epoch !== grant.epoch) grant = await renewed(grant);
    if (attempt >= MAX_WRITE_ATTEMPTS || Date.now() >= currentDeadline()) throw tooManyWriters();
    await backoff(attempt);
  }
}

export interface BatchWriteRequest extends Omit<WriteRequest, 'op'> {
  /** Applied in order, each seeing the ones before it, all or none. */
  ops: readonly BatchOperation[];
}

/** The longest path prefix every operation's segment lies under (set and delete: their parent's). */
function commonPrefix(ops: readonly BatchOperation[]): Segments {
  let prefix: Segments | undefined;
  for (const op of ops) {
    if (!('segments' in op)) return [];
    const path = entersTarget(op) && op.kind !== 'test' ? op.segments : op.segments.slice(0, -1);
    if (prefix === undefined) {
      prefix = path;
      continue;
    }
    let n = 0;
    while (n < prefix.length && n < path.length && prefix[n] === path[n]) n++;
    prefix = prefix.slice(0, n);
  }
  return prefix ?? [];
}

/**
 * A chunked array a batch plans on without all of its chunks: its segment, its path from the top segment, the chunk
 * stub at the head of what is planned on. Planned on its newest elements, that is the segment's own stub; planned on
 * a tail, a stub for the elements before the tail, and `tail` the chunks read (in order) and the segment's own count.
 */
interface Newest {
  segment: Segment;
  path: Segments;
  stub: Stub;
  tail?: { chunks: Segment[]; count: number };
}

/**
 * A bucketed object a batch plans on the buckets of the members it names (docs/design/storage.md, section 13, step 4):
 * the segment whose fragment is its bucket stub (the top segment, or named by a stub in it), where it is, its stub.
 */
interface Members {
  segment: Segment;
  path: Segments;
  stub: string;
  /** Its buckets read, by key (nested ones too, when one was cut into buckets of its own): never another object's. */
  buckets: Map<string, Segment>;
}

/** The most chunks a batch rewrites in place (with the top segment, the array's and a rollover's, one transaction). */
const TAIL_CHUNKS_MAX = 90;
/**
 * The most chunks an array rewritten whole may have: one commit deletes them all with the top segment, the array's
 * and the marker of a change larger than one transaction. Past it, a change below its newest elements is a 413.
 */
const WHOLE_ARRAY_CHUNKS_MAX = 97;

/**
 * How many elements a chunk holds, guessed from the newest: a rollover moves what is past half the segment's budget,
 * so a chunk holds about half a budget of elements.
 */
const perChunkOf = (newest: readonly Json[]) =>
  newest.length === 0
    ? 8
    : Math.max(1, Math.floor((fragmentBytes() * newest.length) / (2 * storedSize(newest as Json[]))));

/**
 * The chunks read with the array's segment (`getWithTail`, last first) that belong to its tail: its chunks below
 * `count`, from the last down to the one holding `from` at most. `reached`: they go that far.
 */
function tailIn(
  read: readonly Segment[] | undefined,
  dir: string,
  from: number,
  count: number,
): { chunks: Segment[]; reached: boolean } {
  const chunks: Segment[] = [];
  for (const chunk of read ?? []) {
    // One a rollover made after the segment was read is not the array's yet.
    if (!chunk.key.startsWith(dir) || chunkStart(chunk.key) >= count) continue;
    chunks.push(chunk);
    if (chunkStart(chunk.key) <= from) return { chunks, reached: true };
  }
  return { chunks, reached: false };
}

/**
 * A chunked array's tail for a batch that reaches below its newest elements, when every path that meets it is an
 * element index, an insert or a push (docs/design/storage.md, section 13, step 4): the chunks from the one holding the
 * lowest index reached to the last, read. Undefined when the batch reads the array whole, or the tail is too long.
 */
async function tailFor(
  inc: string,
  segment: Segment,
  stub: Stub,
  ops: readonly BatchOperation[],
  path: Segments,
  prefetched?: readonly Segment[],
): Promise<Newest | undefined> {
  const count = chunkCount(stub.key);
  const newest = (segment.fragment as Json[]).slice(1);
  const own = newest.length;
  const reach = lowestReach(ops, path, count + own);
  if (reach === undefined || reach >= count) return undefined;
  const dir = chunkDir(stub.key);
  // What was read with the segment, and as much more as the tail needs (read on after it, never again).
  const read = tailIn(prefetched, dir, reach, count);
  const chunks =
    read.reached && read.chunks.length <= TAIL_CHUNKS_MAX
      ? read.chunks.reverse()
      : await getTail(inc, dir, reach, count, perChunkOf(newest), TAIL_CHUNKS_MAX, WHOLE_ARRAY_CHUNKS_MAX, read.chunks);
  if (chunks === 'long') return undefined;
  // Read after the segment: a chunk newer than it means the array changed in between; read again.
  assertSnapshot([segment, ...chunks]);
  for (const [j, chunk] of chunks.entries()) {
    const next = chunks[j + 1];
    const end = next ? chunkStart(next.key) : count;
    if (chunkStart(chunk.key) + (chunk.fragment as Json[]).length !== end) throw new MissingSegment(chunk.key);
  }
  const start = chunks.length === 0 ? Number.POSITIVE_INFINITY : chunkStart((chunks[0] as Segment).key);
  if (start > reach) throw new MissingSegment(dir);
  if (!plansOnNewest(ops, path, start, own + count - start)) return undefined;
  return { segment, path, stub: new Stub(`${dir}${start}`), tail: { chunks, count } };
}

/**
 * The content a batch works on, from the segment `top`: that segment's fragment with every segment its operations'
 * paths run into (and every one below a value they test, replace or delete) put in place of its stub. Stubs off
 * those paths stay stubs. A chunked array is read whole, chunks and all, unless `newest` allows and the batch only
 * works on its newest elements (`plansOnNewest`): it is the top segment or named by a stub in it, and stays
 * `[chunk stub, newest…]` in the tree. Returns the tree, the segments read below `top` and those arrays.
 */
async function loadForBatch(
  inc: string,
  top: Segment,
  ops: readonly BatchOperation[],
  newest = false,
  tail?: readonly Segment[],
  plan: { members: boolean } = { members: newest },
): Promise<{ tree: Json; below: Segment[]; newest: Newest[]; members: Members[] }> {
  const loaded = new Map<string, Segment>();
  /**
   * Bucketed objects planned on the buckets of the members named, by their bucket stub, and by the stub of each of
   * their buckets cut into buckets of its own. A bucketed object held in another's bucket is an object of its own,
   * though its keys extend the other's: it is known by the segment that holds it, not by its key.
   */
  const members = new Map<string, Members>();
  /** Where each segment reached through a member's stub from `top` (not a bucket) is in the tree. */
  const pathOf = new Map<string, Segments>([[top.key, []]]);
  /** The segments named by a stub in `top`: a chunked array is planned on its newest elements only there. */
  const named = new Set<string>([top.key]);
  /** Chunk and bucket stubs read whole: each must assemble, or the content changed while it was read. */
  const whole = new Set<string>();
  const paths = ops.flatMap(touchedPaths);
  const touched = new PathTree(paths);
  /** Stubs whose subtrees were read whole already (many paths may run below one). */
  const queried = new Set<string>();
  /** A value read whole: the segments its stub leads to (not an interrupted change's, which no stub names). */
  const readWhole = async (stub: string) => {
    const subtree = await querySubtree(inc, stub);
    const reached = reachableFrom([stub], subtree);
    for (const s of subtree.values()) if (reached.has(s.key) && s.key !== top.key) loaded.set(s.key, s);
  };
  for (const path of paths) {
    let segment = top;
    let rest = path;
    for (;;) {
      const located = locate(segment.fragment, rest, true);
      // Into a chunked array: its chunks are read below, if at all.
      if (located.at !== 'stub') break;
      if (located.bucket !== undefined) {
        const at = path.slice(0, path.length - rest.length + located.consumed);
        let object = members.get(located.bucket);
        if (
          !object &&
          plan.members &&
          located.consumed === 0 &&
          pathOf.has(segment.key) &&
          plansOnMembers(touched, at)
        ) {
          object = { segment, path: at, stub: located.bucket, buckets: new Map() };
          members.set(located.bucket, object);
        }
        if (object) {
          // Into a bucketed object planned on its members: the member's bucket alone (a nested one's, in turn,
          // straight to the deepest this Lambda knows: a bucket once cut stays cut into the same buckets).
          const key = knownBucket(inc, located.key, rest[0] as string);
          const bucket = loaded.get(key) ?? (await getSegment(inc, key));
          if (!bucket) throw new MissingSegment(key);
          loaded.set(bucket.key, bucket);
          object.buckets.set(bucket.key, bucket);
          if (bucket.fragment instanceof Stub) {
            learnBucket(inc, [], bucket.key, bucket.fragment.key);
            // Cut into buckets of its own: still this object's.
            members.set(bucket.fragment.key, object);
          }
          segment = bucket;
          continue;
        }
        // Into a bucketed object: it is planned on whole, all its buckets (and all below them) read.
        if (!queried.has(located.bucket)) await readWhole(located.bucket);
        queried.add(located.bucket);
        whole.add(located.bucket);
        break;
      }
      const next = loaded.get(located.key) ?? (await getSegment(inc, located.key));
      if (!next) throw new MissingSegment(located.key);
      loaded.set(next.key, next);
      if (pathOf.has(segment.key) || isBucketKey(segment.key))
        pathOf.set(next.key, path.slice(0, path.length - rest.length + located.consumed));
      if (segment === top) named.add(next.key);
      segment = next;
      rest = rest.slice(located.consumed);
    }
    const w = walk(segment.fragment as JsonObject, rest);
    for (const stub of w.stop === undefined ? stubsIn(w.node) : []) {
      if (isChunkStubKey(stub) || queried.has(stub)) continue;
      queried.add(stub);
      await readWhole(stub);
    }
  }
  const open: Newest[] = [];
  for (const segment of [top, ...loaded.values()]) {
    const stub = chunkStubOf(segment.fragment);
    if (!stub) continue;
    const path = named.has(segment.key) ? pathOf.get(segment.key) : undefined;
    const own = (segment.fragment as Json[]).length - 1;
    if (newest && path !== undefined && plansOnNewest(ops, path, chunkCount(stub.key), own)) {
      open.push({ segment, path, stub });
      continue;
    }
    const planned =
      newest && path !== undefined
        ? await tailFor(inc, segment, stub, ops, path, segment === top ? tail : undefined)
        : undefined;
    if (planned) {
      open.push(planned);
      continue;
    }
    // Planned on whole: every chunk of it read (its subtree).
    await readWhole(segment.key);
    whole.add(stub.key);
  }
  const fragmentOf = fragmentsOf([top, ...loaded.values()]);
  for (const key of whole) if (fragmentOf(key) === undefined) throw new MissingSegment(key);
  let tree = assemble(top.fragment, fragmentOf, 'keep');
  // A tail planned on: the array from the tail's first element, behind a stub for those before it.
  for (const { segment, path, stub, tail } of open) {
    if (!tail) continue;
    const value = [stub, ...tail.chunks.flatMap((c) => c.fragment as Json[]), ...(segment.fragment as Json[]).slice(1)];
    tree = path.length === 0 ? value : applyToFragment(tree, { kind: 'set', steps: [...path], value });
  }
  // A bucketed object planned on its members: the members of the buckets read, in place of its stub (one that holds
  // another, before it).
  const objects = objectsOf(members);
  for (const { path, buckets } of objects) {
    const value: JsonObject = {};
    for (const bucket of buckets.values()) {
      if (bucket.fragment instanceof Stub) continue;
      const assembled = assemble(bucket.fragment, fragmentOf, 'keep') as JsonObject;
      for (const m of Object.keys(assembled)) setOwn(value, m, assembled[m] as Json);
    }
    tree = path.length === 0 ? value : applyToFragment(tree, { kind: 'set', steps: [...path], value });
  }
  return { tree, below: [...loaded.values()], newest: open, members: objects };
}

/** The bucketed objects planned on their members, each once, outermost first (by the length of their paths). */
const objectsOf = (members: Map<string, Members>) =>
  [...new Set(members.values())].sort((a, b) => a.path.length - b.path.length);

/**
 * A batch planned on a bucketed object's members: each member of the result laid back into its bucket (computed as a
 * writer does, through nested bucket stubs), every bucket read written back on its version (changed or not: the plan
 * read it) and the object's segment unchanged on its version (a replacement of the object in between fails the
 * commit); the content with the object behind its segment's stub again. Undefined when the result is no object there.
 */
function splitMembers(
  inc: string,
  content: Json,
  members: readonly Members[],
  top: Segment,
): { content: Json; rewritten: Rewritten[] } | undefined {
  const rewritten: Rewritten[] = [];
  // Innermost first: an object held in another's bucket goes back behind its stub before that bucket is laid.
  for (const { segment, path, stub, buckets } of [...members].reverse()) {
    const value = atSteps(content, path);
    if (!isObject(value)) return undefined;
    const laid = new Map<string, JsonObject>();
    for (const b of buckets.values()) if (!(b.fragment instanceof Stub)) laid.set(b.key, {});
    for (const m of Object.keys(value)) {
      // Its bucket, through the nested ones read or known.
      let key = knownBucket(inc, bucketOf(stub, m), m);
      for (let b = buckets.get(key); b?.fragment instanceof Stub; b = buckets.get(key))
        key = knownBucket(inc, bucketOf(b.fragment.key, m), m);
      const into = laid.get(key);
      if (!into) return undefined;
      setOwn(into, m, value[m] as Json);
    }
    for (const [key, fragment] of laid)
      rewritten.push({ segment: buckets.get(key) as Segment, pieces: piecesOf(key, fragment), hub: segment.key });
    if (segment.key === top.key) {
      content = segment.fragment;
      continue;
    }
    rewritten.push({ segment, pieces: [{ key: segment.key, fragment: segment.fragment }] });
    content = applyToFragment(content, { kind: 'set', steps: [...path], value: new Stub(segment.key) });
  }
  return { content, rewritten };
}

/**
 * A batch planned on chunked arrays' newest elements: the content with each array below the top segment back behind
 * its segment's stub, and that segment's new fragment. Undefined when an array's chunk stub is no longer its first
 * element and its only one (the batch reached past the newest elements after all: it is planned on the whole).
 */
function splitNewest(
  content: JsonObject,
  open: readonly Newest[],
  top: Segment,
): { content: JsonObject; arrays: { segment: Segment; value: Json[] }[]; chunks: Rewritten[] } | undefined {
  const stubs = stubsIn(content);
  const arrays: { segment: Segment; value: Json[] }[] = [];
  const chunks: Rewritten[] = [];
  for (const { segment, path, stub, tail } of open) {
    let value = atSteps(content, path) as Json[];
    if (chunkStubOf(value)?.key !== stub.key || stubs.filter((k) => k === stub.key).length !== 1) return undefined;
    if (tail) {
      // Laid back into the chunks it was read from, the rest into the array's segment behind its own stub.
      const laid = layTail(
        value.slice(1),
        tail.chunks.map((c) => chunkStart(c.key)),
        tail.count,
      );
      if (!laid) return undefined;
      // Every chunk read is written back on its version, changed or not: the plan read it (a test, the elements it
      // shifted), so a write to it in between must fail the commit.
      for (const [j, chunk] of tail.chunks.entries()) {
        const fragment = laid.chunks[j] as Json[];
        if (storedSize(fragment) > 2 * fragmentBytes()) return undefined;
        chunks.push({ segment: chunk, pieces: [{ key: chunk.key, fragment }], chunkOf: segment.key });
      }
      value = [new Stub(`${chunkDir(stub.key)}${laid.count}`), ...laid.newest];
      if (segment.key === top.key) {
        // The array's segment is the top segment: its new fragment is the content.
        content = value as unknown as JsonObject;
        continue;
      }
    } else if (segment.key === top.key) continue;
    arrays.push({ segment, value });
    content = applyToFragment(content, { kind: 'set', steps: [...path], value: new Stub(segment.key) }) as JsonObject;
  }
  return { content, arrays, chunks };
}

/**
 * What a batch may grow its content to while it is planned: what one transaction can write (the content read, if
 * that is more). Past it the planner stops at once with 413 `CHANGE_TOO_LARGE` (and the operation's index), so no
 * request grows a value in memory beyond it, whatever it copies.
 */
const changeBudget = (tree: Json) => ({
  maxBytes: Math.max(MAX_CHANGE_BYTES, storedSize(tree)),
  tooLarge: changeTooLarge,
});

/** Whether a planner's refusal is the change's size (the budget above): no other plan of it can be smaller. */
const isChangeTooLarge = (error: unknown) => error instanceof HttpError && error.code === 'CHANGE_TOO_LARGE';

/**
 * A batch's result cut into the pieces it is stored in under `key`. One that cannot be (a piece too large for any
 * segment) fails at the operation that made it so: its index (found planning the operations one by one, once each).
 */
function batchPieces(key: string, tree: JsonObject, ops: readonly BatchOperation[], result: Json): Piece[] {
  const pieces = cut(key, result, fragmentBytes());
  if (piecesFit(pieces)) return pieces;
  let content = tree;
  const index = ops.findIndex((op) => {
    content = planBatch(content, [op], changeBudget(tree)).content;
    return !piecesFit(cut(key, content, fragmentBytes()));
  });
  const error = contentTooLarge();
  // As the planner names them: a merge patch is one operation, without an index.
  if (index >= 0 && ops[index]?.kind !== 'merge') error.index = index;
  throw error;
}

type BatchDecision = Extract<Decision, { kind: 'rewrite' | 'unchanged' }>;

/**
 * What a batch changes, planned on the segments it reads from `top`: on chunked arrays' newest elements and bucketed
 * objects' members alone when it can (and no If-Match asks for the ETag of everything), else on all of them. An
 * array that cannot be planned on its newest elements is planned whole with the objects still on their members
 * (planning those whole as well could carry more segments than one commit holds), and only then all whole.
 */
async function decideBatch(
  inc: string,
  top: Segment,
  ops: readonly BatchOperation[],
  ifMatch: readonly string[] | undefined,
  newest = !ifMatch,
  tail?: readonly Segment[],
  plan: { members: boolean } = { members: newest },
): Promise<BatchDecision> {
  const { tree, below, newest: open, members } = await loadForBatch(inc, top, ops, newest, tail, plan);
  // A tail's stub stands for elements left where they are: not a value the batch drops.
  const dropped = stubsIn(tree).filter((k) => !below.some((s) => s.key === k) && !open.some((n) => n.stub.key === k));
  if (open.length > 0 || members.length > 0) {
    const decided = decideOnNewest(inc, tree as JsonObject, below, open, members, top, ops, dropped);
    return (
      decided ??
      decideBatch(inc, top, ops, ifMatch, false, undefined, { members: open.length > 0 && members.length > 0 })
    );
  }
  if (ifMatch) {
    const etag = etagOf([top, ...below]);
    if (!ifMatch.includes(etag)) throw new PreconditionFailed(formatEtag(etag));
  }
  const planned = planBatch(tree as JsonObject, ops, changeBudget(tree));
  if (!planned.changed) return { kind: 'unchanged', etag: etagOf([top, ...below]) };
  const pieces = batchPieces(top.key, tree as JsonObject, ops, planned.content);
  const kept = new Set(stubsIn(planned.content));
  return {
    kind: 'rewrite',
    pieces,
    dropped: dropped.filter((k) => !kept.has(k)),
    carried: below,
    version: top.version,
    oneTransaction: true,
  };
}

/**
 * A batch planned on chunked arrays' newest elements (their indexes moved to positions in their segments), or
 * undefined for one to plan on the whole: any 4xx (its message must be the whole array's), no change (its ETag is
 * that of everything), an array reached past its newest elements after all, a piece too large.
 */
function decideOnNewest(
  inc: string,
  tree: JsonObject,
  below: readonly Segment[],
  open: readonly Newest[],
  members: readonly Members[],
  top: Segment,
  ops: readonly BatchOperation[],
  dropped: readonly string[],
): BatchDecision | undefined {
  const moved = open.reduce((o, n) => intoNewest(o, n.path, chunkCount(n.stub.key)), ops);
  let planned: ReturnType<typeof planBatch>;
  try {
    planned = planBatch(tree, moved, changeBudget(tree));
  } catch (error) {
    // Planned on members alone, a 4xx is the whole object's (an operation on a member never sees the others); on an
    // array's newest elements or tail, the whole array's message is planned for. A change too large on a part is
    // too large on the whole.
    if (error instanceof HttpError && error.statusCode < 500 && open.length > 0 && !isChangeTooLarge(error))
      return undefined;
    throw error;
  }
  if (!planned.changed) return undefined;
  try {
    const split = splitNewest(planned.content, open, top);
    if (!split) return undefined;
    const objects = splitMembers(inc, split.content, members, top);
    if (!objects) return undefined;
    const arrays = split.arrays.map((a) => ({ segment: a.segment, pieces: piecesOf(a.segment.key, a.value) }));
    const buckets = objects.rewritten;
    const kept = new Set([
      ...stubsIn(objects.content),
      ...split.arrays.flatMap((a) => stubsIn(a.value)),
      ...buckets.flatMap((b) => b.pieces.flatMap((p) => stubsIn(p.fragment))),
    ]);
    // Kept under their keys: the arrays' segments, the bucketed objects' segments and every bucket read of them.
    const opened = new Set([
      ...open.map((n) => n.segment.key),
      ...members.flatMap((m) => [m.segment.key, ...m.buckets.keys()]),
    ]);
    return {
      kind: 'rewrite',
      pieces: piecesOf(top.key, objects.content),
      dropped: dropped.filter((k) => !kept.has(k)),
      carried: below.filter((s) => !opened.has(s.key)),
      version: top.version,
      rewritten: [...arrays, ...split.chunks, ...buckets],
      oneTransaction: true,
    };
  } catch (error) {
    // A piece too large: planned on the whole, which names the operation.
    if (error instanceof HttpError && error.statusCode < 500 && !isChangeTooLarge(error)) return undefined;
    throw error;
  }
}

/**
 * Applies a batch atomically. One UpdateItem when every operation compiles without reading, no two touch
 * overlapping paths and all lie in one segment; otherwise it reads the segments the operations need, plans every
 * operation in order on that copy and commits the result, guarded by the versions read, retrying while others race it.
 */
export async function writeBatch(request: BatchWriteRequest): Promise<WriteResult> {
  return recognisingRetry(request, () => applyBatch(request));
}

/** A batch (writeBatch); `read`: the segment a single write that hands it on has read, planned on at once. */
async function applyBatch(
  request: BatchWriteRequest,
  read?: { at: At; segment: Segment; tail?: readonly Segment[] },
): Promise<WriteResult> {
  let grant = await grantFor(request.project, request.principal, 'write');
  const { token, slot, mark, envelope } = writeEnvelope(request);
  const prefix = commonPrefix(request.ops);
  let at: At = read?.at ?? lookupLocation(grant.inc, prefix);
  // A batch of one a single write hands on, with the segment it read: planned at once.
  let segment: Segment | undefined = read?.segment;
  /** Chunks read with that segment (a chunked array's last ones): for the first plan only. */
  let tail = read?.tail;
  // One UpdateItem can only change one segment: when this Lambda already knows the operations lie in different ones,
  // it does not try.
  /** A batch that may remove something below the root may leave its segment small enough to fold into its parent. */
  const removes = request.ops.some((op) => op.kind === 'delete' || op.kind === 'patch' || op.kind === 'merge');
  const shrinks = (where: At) => removes && where.key !== ROOT_KEY;
  let fast =
    !read &&
    request.ops.every((op) => {
      if (!('segments' in op)) return true;
      const path = entersTarget(op) && op.kind !== 'test' ? op.segments : op.segments.slice(0, -1);
      return lookupLocation(grant.inc, path).key === at.key;
    });
  for (let attempt = 1; ; ) {
    const rel = request.ops.map((op) => rebase(op, at));
    if (fast) {
      fast = false;
      // What the engine refuses of a merged write (a result beyond its digits or range) belongs to one of its
      // operations: planning says which, with its index.
      const update = compileBatchWrite(rel, { ...envelope, access: epochAccess(grant) });
      const tried = await firstTry(grant, at.key, update, {
        planOnRefusal: true,
        returnNew: shrinks(at),
        record: envelope.record,
      });
      if (hasLanded(tried)) {
        if (shrinks(at)) await foldIfSmall(grant, envelope, prefix.slice(0, at.depth), tried.item);
        return { etag: formatEtag(token) };
      }
      segment = tried;
    } else if (segment === undefined) {
      // No one-request try (the operations lie in different segments): the segment they all lie under, read.
      segment = await getSegment(grant.inc, at.key);
    }
    const moved = await settle({ grant, at }, segment);
    if (moved) {
      ({ grant, at } = moved);
      fast = true;
      continue;
    }
    const current = segment as Segment;
    if (tokenIn(current, slot) === mark) return { etag: formatEtag(token) };
    let sent: Sent;
    try {
      const decision = await decideBatch(grant.inc, current, rel, request.ifMatch, undefined, tail);
      tail = undefined;
      if (decision.kind === 'unchanged') return { etag: formatEtag(decision.etag) };
      sent = await carryOut(grant, envelope, current, decision, shrinks(at));
    } catch (error) {
      if (!(error instanceof MissingSegment)) throw error;
      sent = { ok: false };
    }
    if (sent.ok) {
      if (shrinks(at)) await foldIfSmall(grant, envelope, prefix.slice(0, at.depth), sent.item);
      return { etag: formatEtag(token) };
    }
    attempt++;
    segment = await retrySegment(grant, at.key, sent, attempt);
  }
}

export interface ReadRequest {
  project: ProjectRef;
  principal: Principal;
  segments?: Segments;
  /**
   * A partial read (shallow, an array slice), of the value as its segment holds it: only that segment is read, and of
   * a chunked array the chunks the slice needs, of a bucketed object (shallow) its buckets.
   */
  view?: ReadView;
}

/** `page`: a page of an object's keys (shallow=true with limit or after; lib/content/key-pages.ts). */
export type ReadView =
  | { kind: 'shallow'; page?: KeyPageView }
  | { kind: 'slice'; start: number; limit: number; where: string };

/** A view of a value that is all in hand. */
export const viewOf = (value: Json, view: ReadView): Json => {
  if (view.kind === 'slice') return sliceArray(value, view.start, view.limit, view.where);
  return view.page ? { ...pageOfValue(value, view.page) } : shallowView(value);
};

/**
 * A view of the value a segment holds at the path: a chunked array's length is its stub's count plus its own
 * elements, and a slice of it reads the chunks of its range (one Query for the first, one for the rest); a bucketed
 * object's keys are its buckets' (read by key, as many as a page needs). Its ETag is that of the segments read.
 */
async function readView(
  inc: string,
  segment: Segment,
  held: Json,
  view: ReadView,
): Promise<{ value: Json; etag: string }> {
  const chunked = chunkStubOf(held);
  if (view.kind === 'shallow' && held instanceof Stub && isBucketStubKey(held.key)) {
    // Its buckets, read by key as far as the page needs (all of them without a page): lib/store/key-pages.ts.
    const keys = await readBucketKeys({
      inc,
      segment,
      stub: held.key,
      limit: view.page?.limit,
      after: view.page?.after,
    });
    const value = view.page ? { value: keys.value, next: keys.next } : keys.value;
    return { value, etag: formatEtag(keys.etag) };
  }
  if (view.kind === 'shallow' && chunked && !view.page) {
    return { value: { length: logicalLength(held as Json[]) }, etag: formatEtag(segment.etag) };
  }
  if (view.kind === 'slice' && chunked) {
    const list = held as Json[];
    const count = chunkCount(chunked.key);
    const length = logicalLength(list);
    const from = view.start < 0 ? Math.max(0, length + view.start) : view.start;
    const to = Math.min(length, from + view.limit);
    const chunks = from < count ? await getChunks(inc, chunkDir(chunked.key), from, Math.min(to, count)) : [];
    const elements: Json[] = [];
    for (const c of chunks) {
      const first = chunkStart(c.key);
      for (const [i, element] of (c.fragment as Json[]).entries()) {
        if (first + i >= from && first + i < to) elements.push(element);
      }
    }
    if (elements.length !== Math.max(0, Math.min(to, count) - from)) throw new MissingSegment(chunked.key);
    assertSnapshot([segment, ...chunks]);
    if (to > count) elements.push(...list.slice(1 + Math.max(from, count) - count, 1 + to - count));
    return { value: { value: elements, start: from, length }, etag: formatEtag(etagOf([segment, ...chunks])) };
  }
  return { value: viewOf(held, view), etag: formatEtag(segment.etag) };
}

/** Largest value a GET returns (lib/config/limits.ts). */
const MAX_READ_BYTES = MAX_RESPONSE_BYTES;

const readTooLarge = () =>
  new PayloadTooLarge(
    'RESPONSE_TOO_LARGE',
    `the value is larger than ${MAX_READ_BYTES} bytes; read the parts below it one by one`,
  );

/** A subtree for a GET: past what one response carries, a 413 (and no more pages read). */
async function readSubtree(inc: string, key: string): Promise<Map<string, Segment>> {
  try {
    return await querySubtree(inc, key, false, MAX_READ_BYTES);
  } catch (error) {
    if (error instanceof SubtreeTooLarge) throw readTooLarge();
    throw error;
  }
}

/**
 * The value at a path and its ETag: one GetItem of the segment that holds it (this Lambda remembers where), plus one
 * Query per segment below the value when it spans several; the whole of a segment (the whole content) is one Query. A value changed over several segments while it was
 * being read (a stub names a segment that is gone) is read again.
 */
export async function readContent(request: ReadRequest): Promise<{ value: Json; etag: string }> {
  const segments = request.segments ?? [];
  let grant = await grantFor(request.project, request.principal, 'read');
  let at: At = lookupLocation(grant.inc, segments);
  /** A chunk found by its Query: read already. */
  let chunk: Segment | undefined;
  for (let attempt = 1; ; attempt++) {
    // The whole of a segment (a GET of the content, or of a path known to be a segment's root): one Query reads it
    // with everything below it. A view needs the segment alone: one GetItem.
    const whole = segments.length === at.depth && !request.view ? await readSubtree(grant.inc, at.key) : undefined;
    const segment = whole ? whole.get(at.key) : (chunk ?? (await getSegment(grant.inc, at.key)));
    chunk = undefined;
    if (segment === undefined) {
      if (at.key === ROOT_KEY) {
        // No root: a deleted project (verified afresh: its 404), or one whose creation stopped half-way (`{}`).
        grant = await renewed(grant);
        const value = segments.length === 0 ? {} : valueAt({}, segments);
        return { value: request.view ? viewOf(value, request.view) : value, etag: '"0"' };
      }
      forgetLocations(grant.inc);
      at = ROOT_AT;
      continue;
    }
    if (segment.epoch !== grant.epoch) {
      grant = await reverified(grant, segment);
      continue;
    }
    if (at.first === undefined) noteChunked(grant.inc, segment.key, segment.fragment);
    let rel = segments.slice(at.depth);
    if (at.first !== undefined) rel[0] = at.first;
    const located = locate(segment.fragment, rel, true);
    if (located.at === 'stub') {
      const from = at.key;
      at = { key: located.key, depth: at.depth + located.consumed };
      learn(grant.inc, segments.slice(0, at.depth), from, located);
      continue;
    }
    if (located.at === 'chunk') {
      // An older element of a chunked array: the chunk that holds it (one Query), read as the next segment.
      chunk = await getChunk(grant.inc, located.dir, located.index);
      if (!chunk || olderThanPartners([segment, chunk]) !== undefined) {
        // Gone, or rewritten by an insert or delete before its elements since the array's segment was read.
        chunk = undefined;
        if (attempt >= 3) throw new MissingSegment(located.dir);
        continue;
      }
      at = { key: chunk.key, depth: at.depth, first: String(located.index - chunkStart(chunk.key)) };
      continue;
    }
    if (located.position !== undefined) rel = [String(located.position), ...rel.slice(1)];
    const value = valueAt(segment.fragment as JsonObject, rel, segments);
    if (request.view) {
      try {
        return await readView(grant.inc, segment, value, request.view);
      } catch (error) {
        if (!(error instanceof MissingSegment) || attempt >= 3) throw error;
        continue;
      }
    }
    const stubs = stubsIn(value);
    if (stubs.length === 0) return { value, etag: formatEtag(segment.etag) };
    // Everything below the value: what the whole segment's Query read, or each stub's subtree (read in parallel).
    const subtrees = whole ? [whole] : await Promise.all(stubs.map((stub) => readSubtree(grant.inc, stub)));
    const all = new Map(subtrees.flatMap((t) => [...t]));
    // Only what the value's stubs lead to: not the segments of a change interrupted before its commit (its size,
    // its ETag and its torn-read check are the value's alone, before the sweeper as after).
    const reached = reachableFrom(stubs, all);
    const below = [...all.values()].filter((s) => s.key !== segment.key && reached.has(s.key));
    const bytes = below.reduce((sum, s) => sum + storedSize(s.fragment), storedSize(value));
    if (bytes > MAX_READ_BYTES) throw readTooLarge();
    const read = [segment, ...below];
    try {
      assertSnapshot(read);
      return { value: assemble(value, fragmentsOf(read)), etag: formatEtag(etagOf(read)) };
    } catch (error) {
      if (!(error instanceof MissingSegment) || attempt >= 3) throw error;
    }
  }
}

/**
 * Decides 401/404/403 with one read, for requests that do not prove access in a write of their own: those that fail
 * validation (401/404/403 come before 400) and named ones (Idempotency-Key), which may be answered from a record.
 * Returns the project's incarnation, so a record of a deleted project never answers for its re-creation.
 */
export async function assertProjectAccess(project: ProjectRef, principal: Principal, need: Need): Promise<string> {
  const proof = await AccessProof.of(project, principal, need);
  // A grant verified by this request is as current as the head; a remembered one is compared with it (one GetItem).
  if (!proof.grant.fresh && !proof.holdsOn(await readEpoch(project))) await proof.renew();
  return proof.grant.inc;
}
