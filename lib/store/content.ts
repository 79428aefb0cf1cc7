// Content store: sends compiled operations to DynamoDB (one UpdateItem on the fast path) and handles the slow paths.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import Big from 'big.js';
import { createHash, randomBytes } from 'node:crypto';
import { tableName } from '../config/env';
import { MAX_CONTENT_BYTES, MAX_WRITE_ATTEMPTS } from '../config/limits';
import { type BatchOperation, planBatch } from '../content/batch';
import { type Json, type JsonNumber, decimalOf, numberError, numberProblem, storedSize } from '../content/json';
import {
  type Action,
  type ContentOperation,
  type Guard,
  type Step,
  applyAction,
  plan,
  valueAt,
} from '../content/model';
import { dynamo } from '../dynamo/client';
import { currentDeadline } from '../dynamo/deadline';
import {
  type UpdateRequest,
  type WriteEnvelope,
  compileBatchWrite,
  compileRead,
  compileWrite,
  growthBound,
  isAssumptionRefused,
  roomFor,
} from '../expressions';
import { A, TOKEN_SLOTS, slotAttribute } from '../schema/attributes';
import { BadRequest, Conflict, HttpError, PayloadTooLarge, PreconditionFailed } from '../config/errors';
import type { Segments } from '../paths';
import { AccessProof, type Need, type Principal, readEpoch } from '../auth/access';
import { type ProjectItem, type ProjectRef, itemKeyAttributes, projectPk, readProjectItem } from '../schema/items';

export interface WriteRequest {
  project: ProjectRef;
  principal: Principal;
  op: ContentOperation;
  /** Parsed If-Match header; undefined when absent or `*`. */
  ifMatch?: readonly string[];
  /**
   * The write's token (its ETag and slot); random unless the client named the request (Idempotency-Key), so that
   * a retry of a write whose answer was lost recognises it instead of applying it again.
   */
  requestToken?: string;
}

export interface WriteResult {
  etag: string;
}

const key = (project: ProjectRef) => itemKeyAttributes(projectPk(project));

const contentTooLarge = () =>
  new PayloadTooLarge('CONTENT_TOO_LARGE', `the content would exceed ${MAX_CONTENT_BYTES} bytes; nothing was changed`);

/**
 * Maps what DynamoDB refuses about a write to the client's 4xx (the service checks first; this is the backstop).
 * Busy or slow is left to the edge (503).
 */
function mapWriteError(error: unknown): never {
  if (error instanceof HttpError) throw error;
  const message = error instanceof Error ? error.message : '';
  const name = error instanceof Error ? error.name : '';
  if (name === 'ValidationException' && /item size/i.test(message)) throw contentTooLarge();
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

type Sent = { ok: true } | { ok: false; item?: Record<string, AttributeValue> };

async function sendUpdate(project: ProjectRef, request: UpdateRequest, fast = false): Promise<Sent> {
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: key(project),
        ...request,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { ok: true };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return { ok: false, item: error.Item };
    if (fast && isAssumptionRefused(error)) return { ok: false };
    return mapWriteError(error);
  }
}

type Raw = Record<string, AttributeValue>;

async function readItem(project: ProjectRef): Promise<Raw | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: key(project), ConsistentRead: true }),
  );
  return Item;
}

/** The item a failed condition returned (DynamoDB's ALL_OLD), or one read when the engine returned none. */
async function itemAfterFailure(project: ProjectRef, sent: Sent): Promise<Raw | undefined> {
  return !sent.ok && sent.item ? sent.item : readItem(project);
}

type Decision =
  | { kind: 'applied' }
  | { kind: 'unchanged'; etag: string }
  /** The item read is of another grant epoch than the one the (renewed) grant was verified at: read it again. */
  | { kind: 'stale' }
  | { kind: 'write'; action: Action; guards: Guard[]; size: WriteEnvelope['size']; version?: number };

/**
 * With the item in hand: did our write already land; if not, is the caller's grant of the item's epoch (else it is
 * verified afresh: 401/403/404, or the item is older than the renewed grant) and does If-Match hold.
 */
async function admit(
  request: Omit<WriteRequest, 'op'>,
  proof: AccessProof,
  raw: Raw | undefined,
  token: string,
  slot: number,
): Promise<ProjectItem | 'applied' | 'stale'> {
  if (raw?.[slotAttribute(slot)]?.S === token) return 'applied';
  if (!proof.holdsOn(raw)) {
    await proof.renew();
    if (!proof.holdsOn(raw)) return 'stale';
  }
  const current = readProjectItem(raw as Raw);
  if (request.ifMatch && !request.ifMatch.includes(current.etag))
    throw new PreconditionFailed(formatEtag(current.etag));
  return current;
}

/** With the item in hand: did our write already land, may the caller write, does If-Match hold, what to change. */
async function decide(
  request: WriteRequest,
  proof: AccessProof,
  raw: Raw | undefined,
  token: string,
  slot: number,
): Promise<Decision> {
  const current = await admit(request, proof, raw, token, slot);
  if (current === 'applied' || current === 'stale') return { kind: current };
  const planned = plan(current.content, request.op);
  if (planned === undefined) return { kind: 'unchanged', etag: current.etag };
  const { action, guards } = planned;
  if (action.kind === 'add') assertSumStorable(current.raw, action.steps, action.amount);
  const before = storedSize(current.content);
  const bytes = storedSize(applyAction(current.content, action));
  if (bytes > MAX_CONTENT_BYTES) throw contentTooLarge();
  if (action.kind === 'add') guards.push(sumGuard(current.raw, action.steps, action.amount));
  // Near the budget the size estimate is reset exactly, which needs nothing else to have changed.
  const estimate = Number(current.raw[A.bytes]?.N ?? 0);
  const exact = guards.some((g) => g.kind === 'version') || estimate + growthBound(request.op) > MAX_CONTENT_BYTES;
  return exact
    ? { kind: 'write', action, guards, size: { exact: bytes }, version: current.version }
    : { kind: 'write', action, guards, size: { added: Math.max(0, bytes - before) } };
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

/**
 * Applies one content operation. Success costs one UpdateItem when the operation compiles without reading;
 * otherwise (and after a failed condition) it reads the item, decides in memory and writes conditionally on what
 * that decision assumed (the guards plan returns), retrying with jitter while other writers race it.
 */
export async function writeContent(request: WriteRequest): Promise<WriteResult> {
  const proof = await AccessProof.of(request.project, request.principal, 'write');
  const { token, slot, envelope } = writeEnvelope(request, proof);
  const growth = growthBound(request.op);
  if (request.op.kind === 'replace' && growth > MAX_CONTENT_BYTES) throw contentTooLarge();
  const fast = compileWrite(
    { op: request.op },
    { ...envelope, size: request.op.kind === 'replace' ? { exact: growth } : { growth } },
  );
  return sendDecided(request.project, proof, envelope, token, fast, (item) =>
    decide(request, proof, item, token, slot),
  );
}

export interface BatchWriteRequest extends Omit<WriteRequest, 'op'> {
  /** Applied in order, each seeing the ones before it, all or none. */
  ops: readonly BatchOperation[];
}

/** With the item in hand, a batch planned in memory: the whole resulting content, guarded by the version read. */
async function decideBatch(
  request: BatchWriteRequest,
  proof: AccessProof,
  raw: Raw | undefined,
  token: string,
  slot: number,
): Promise<Decision> {
  const current = await admit(request, proof, raw, token, slot);
  if (current === 'applied' || current === 'stale') return { kind: current };
  const planned = planBatch(current.content, request.ops, { maxBytes: MAX_CONTENT_BYTES, tooLarge: contentTooLarge });
  if (!planned.changed) return { kind: 'unchanged', etag: current.etag };
  return {
    kind: 'write',
    action: { kind: 'set', steps: [], value: planned.content },
    guards: [{ kind: 'version' }],
    size: { exact: planned.bytes },
    version: current.version,
  };
}

/**
 * Applies a batch atomically. One UpdateItem when every operation compiles without reading and no two touch
 * overlapping paths; otherwise (and after a failed condition) it reads the item, plans every operation in order on
 * a copy and writes the result conditioned on the version read, retrying with jitter while other writers race it.
 */
export async function writeBatch(request: BatchWriteRequest): Promise<WriteResult> {
  const proof = await AccessProof.of(request.project, request.principal, 'write');
  const { token, slot, envelope } = writeEnvelope(request, proof);
  const fast = compileBatchWrite(request.ops, envelope);
  // What the engine refuses of a merged write (a result beyond its digits or range) belongs to one of its operations:
  // planning says which, with its index.
  return sendDecided(
    request.project,
    proof,
    envelope,
    token,
    fast,
    (item) => decideBatch(request, proof, item, token, slot),
    true,
  );
}

type Envelope = Omit<WriteEnvelope, 'size'>;

function writeEnvelope(
  request: Omit<WriteRequest, 'op'>,
  proof: AccessProof,
): { token: string; slot: number; envelope: Envelope } {
  const token = request.requestToken ?? randomBytes(16).toString('base64url');
  // The slot follows from the token, so a retry in another invocation checks the slot the first attempt used.
  const slot = createHash('sha256').update(token).digest()[0]! % TOKEN_SLOTS;
  const envelope = {
    access: proof.check(),
    requestToken: token,
    slot,
    ifMatch: request.ifMatch,
  };
  return { token, slot, envelope };
}

/** Sends the fast write if there is one; otherwise, or when its condition fails, reads, decides and writes guarded. */
async function sendDecided(
  project: ProjectRef,
  proof: AccessProof,
  envelope: Envelope,
  token: string,
  fast: UpdateRequest | undefined,
  decideOn: (item: Raw | undefined) => Promise<Decision>,
  planOnRefusal = false,
): Promise<WriteResult> {
  let item: Raw | undefined;
  if (fast) {
    const sent = await sendUpdate(project, fast, true).catch((error: unknown): Sent => {
      if (planOnRefusal && error instanceof HttpError && error.statusCode < 500) return { ok: false };
      throw error;
    });
    if (sent.ok) return { etag: formatEtag(token) };
    item = await itemAfterFailure(project, sent);
  } else {
    item = await readItem(project);
  }

  for (let attempt = 1; ; attempt++) {
    const decision = await decideOn(item);
    if (decision.kind === 'applied') return { etag: formatEtag(token) };
    if (decision.kind === 'unchanged') return { etag: formatEtag(decision.etag) };
    let sent: Sent;
    if (decision.kind === 'stale') {
      sent = { ok: false };
    } else {
      const write = compileWrite(
        { action: decision.action, guards: decision.guards },
        // The epoch of the grant as it is now (renewed when an item showed another one).
        { ...envelope, access: proof.check(), expectedVersion: decision.version, size: decision.size },
      ) as UpdateRequest;
      sent = await sendUpdate(project, write);
      if (sent.ok) return { etag: formatEtag(token) };
    }
    if (attempt >= MAX_WRITE_ATTEMPTS || Date.now() >= currentDeadline()) {
      throw new Conflict('WRITE_CONFLICT', 'Too many concurrent writes to this project; retry shortly', {
        'Retry-After': '1',
      });
    }
    // The item the failed condition returned is the newest there is: retry on it at once. After that, back off,
    // then read afresh (an item from before the sleep is already stale when other writers keep going).
    if (attempt === 1) {
      item = await itemAfterFailure(project, sent);
    } else {
      await backoff(attempt);
      item = await readItem(project);
    }
  }
}

export interface ReadRequest {
  project: ProjectRef;
  principal: Principal;
  segments?: Segments;
}

/** Reads of an item that shows another grant epoch than a renewed grant's before giving up (a revocation storm). */
const MAX_READ_ATTEMPTS = 5;

/**
 * One GetItem: the content (or the part the path needs), the etag, and the grant epoch the caller's grant is
 * compared with (a different one: verified afresh, 401/403/404 or read again). The first request with a
 * credential in a container adds its verification (one BatchGetItem).
 */
export async function readContent(request: ReadRequest): Promise<{ value: Json; etag: string }> {
  const proof = await AccessProof.of(request.project, request.principal, 'read');
  const projection = compileRead(request.segments);
  for (let attempt = 1; ; attempt++) {
    const { Item } = await dynamo.send(
      new GetItemCommand({ TableName: tableName(), Key: key(request.project), ConsistentRead: true, ...projection }),
    );
    if (!proof.holdsOn(Item)) await proof.renew();
    if (proof.holdsOn(Item)) {
      const item = readProjectItem(Item as Raw);
      return {
        value: request.segments ? valueAt(item.content, request.segments) : item.content,
        etag: formatEtag(item.etag),
      };
    }
    if (attempt >= MAX_READ_ATTEMPTS) {
      throw new Conflict('WRITE_CONFLICT', 'Access to this project is changing; retry shortly', { 'Retry-After': '1' });
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
