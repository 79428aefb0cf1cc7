// The write request loop: one content operation, from the segment this Lambda remembers to the one that holds its
// path; and the replacement of the whole content.
import { fragmentBytes } from '../config/env';
import { MAX_BODY_BYTES } from '../config/limits';
import { ROOT_KEY } from './layout/keys';
import { chunkStubOf, chunkedIndex } from './layout/chunked';
import { type Json, type JsonObject, storedSize } from '../content/json';
import type { ContentOperation } from '../content/model';
import { type UpdateRequest, compileWrite, growthBound } from '../expressions';
import { type Segment, etagOf, readSegment, tokenIn } from './segment';
import { createRoot } from './io/commit';
import { getWithTail, getSegmentAndChunk, querySubtree } from './io/read';
import { lookupLocation } from './memory';
import { PreconditionFailed, Refusal } from '../config/errors';

import { applyBatch } from './batch';
import { holdsIndex, readPlan } from './chunked';
import {
  type Envelope,
  type Landed,
  sendDecision,
  commitPieces,
  tryOneRequest,
  guardedBase,
  hasLanded,
  writeEnvelope,
} from './commit';
import { decide, piecesOf } from './decide';
import { foldIfSmall } from './fold';
import { epochAccess, grantFor, verifyAgain } from './grant';
import { sendUpdate } from './io/write';
import { contentTooLarge } from './refusals';
import { type WriteRequest, type WriteResult, formatEtag } from './requests';
import { backoff, recognisingRetry, rereadAfter, retrySegment, assertAttemptsLeft } from './retry';
import { type At, type Place, arrive, enterChunk, entersTarget, relativeTo } from './walk';

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

/** What one read brought for where a request is: the segment (none: it is gone), and what was read beside it. */
interface Read {
  segment?: Segment;
  /** A chunked array's last chunks, read with its segment for an insert or delete among them. */
  tail?: Segment[];
  /** A chunk read with its array's segment for a write to an old element (the chunk this Lambda knows holds it). */
  chunk?: Segment;
}

/** One content operation (writeContent), not yet recognising a named request's refused retry. */
async function applyContent(request: WriteRequest): Promise<WriteResult> {
  const op = request.op;
  if (op.kind === 'replace') return replaceContent(request, op.content);
  const grant = request.grant ?? (await grantFor(request.project, request.principal, 'write'));
  const { token, slot, mark, envelope } = writeEnvelope(request);
  const done = { etag: formatEtag(token) };
  const toward = { path: op.segments, enterLast: entersTarget(op) };
  let place: Place = {
    grant,
    at: lookupLocation(grant.inc, op.segments, op.segments.length - (toward.enterLast ? 0 : 1)),
  };
  /** What the last step left in hand for `place` (a refusal's segment, a chunk); none: read by the plan. */
  let inHand: Read | undefined;
  for (let attempt = 1; ; ) {
    let rel = relativeTo(op, place.at);
    // A delete below the root may leave its segment small enough to fold back into its parent: it asks for what it left.
    const shrinks = op.kind === 'delete' && place.at.key !== ROOT_KEY;
    const fold = (item: Parameters<typeof foldIfSmall>[3]) =>
      foldIfSmall(place.grant, envelope, op.segments.slice(0, place.at.depth), item);
    const read = inHand ?? (await readFor(place, rel, { request, envelope, shrinks }));
    inHand = undefined;
    if ('landed' in read) {
      if (shrinks) await fold(read.item);
      return done;
    }
    const arrival = await arrive(place, read.segment, { slot, mark, toward });
    if (arrival.kind === 'landed') return done;
    if (arrival.kind === 'next') {
      place = arrival.place;
      continue;
    }
    const current = arrival.segment;
    if (arrival.kind === 'chunk') {
      // An element in a chunk: changed there, unless the change moves the elements after it (the whole array).
      if (op.kind === 'delete' && rel.segments.length === 1)
        return writeWholeArray(request, op, { at: place.at, segment: current, tail: read.tail });
      const { dir, index } = arrival;
      const held = read.chunk && holdsIndex(read.chunk, dir, index) ? read.chunk : undefined;
      const entered = await enterChunk(place.grant.inc, current, place.at, { dir, index, held });
      if (entered === 'moved') {
        // An insert or delete before the element moved it since the array's segment was read: read it again.
        attempt++;
        inHand = { segment: await rereadAfter(place.grant, place.at.key, attempt) };
        continue;
      }
      // No chunk holds it any more (no segment in hand): the walk starts again from the root, as for any segment gone.
      inHand = { segment: entered?.chunk };
      if (entered) place = { ...place, at: entered.at, array: place.at };
      continue;
    }
    rel = { ...rel, segments: arrival.path };
    if (rel.kind === 'insert' && rel.segments.length === 0 && chunkStubOf(current.fragment)) {
      // An insert into a chunked array: after its chunk stub, in the segment; before it, the whole array.
      const where = chunkedIndex(current.fragment as Json[], rel.index);
      const length = (current.fragment as Json[]).length;
      if (!('position' in where) || where.position < 0 || where.position > length)
        return writeWholeArray(request, op, { at: place.at, segment: current, tail: read.tail });
      rel = { ...rel, index: where.position };
    }
    const decision = await decide(place.grant, current, { request, op: rel, mark, slot });
    if (decision.kind === 'applied') return done;
    if (decision.kind === 'unchanged') return { etag: formatEtag(decision.etag) };
    const sent = await sendDecision(place.grant, { envelope, segment: current, decision, returnNew: shrinks });
    if (sent.ok) {
      if (shrinks) await fold(sent.item);
      return done;
    }
    attempt++;
    if (place.array) {
      // A chunk's write refused (on its version): an insert or delete may have moved the element, so the array's
      // segment is read again to find it.
      place = { grant: place.grant, at: place.array };
      inHand = { segment: await rereadAfter(place.grant, place.at.key, attempt) };
      continue;
    }
    inHand = { segment: await retrySegment(place.grant, place.at.key, sent, attempt) };
  }
}

/**
 * The segment a write goes to, read as this Lambda's memory of a chunked array there plans it (readPlan); a `try`
 * is one UpdateItem when the operation compiles without reading and cannot outgrow the segment: landed, or the
 * segment to decide on.
 */
async function readFor(
  { grant, at }: Place,
  rel: Exclude<ContentOperation, { kind: 'replace' }>,
  { request, envelope, shrinks }: { request: WriteRequest; envelope: Envelope; shrinks: boolean },
): Promise<Read | Landed> {
  const plan = readPlan(grant.inc, at, rel, { ifMatch: request.ifMatch !== undefined });
  if (plan.kind === 'tail') {
    const { segment, chunks } = await getWithTail(grant.inc, at.key, plan.limit);
    return { segment, tail: chunks };
  }
  if (plan.kind === 'withChunk') return getSegmentAndChunk(grant.inc, at.key, plan.chunk);
  // A write that may grow its segment past the budget cannot be one UpdateItem: it is planned (and cut) at once.
  const growth = growthBound(rel);
  const update =
    growth > fragmentBytes()
      ? undefined
      : compileWrite(
          { op: plan.after?.op ?? rel },
          { ...envelope, access: epochAccess(grant), size: { growth }, chunkStub: plan.after?.stub },
        );
  const tried = await tryOneRequest(grant, at.key, update, { returnNew: shrinks, record: envelope.record });
  return hasLanded(tried) ? tried : { segment: tried };
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
    if (error instanceof Refusal) error.index = undefined;
    throw error;
  }
}

/** Replaces the whole content: the new content's pieces, committed with the old segments' deletes. */
async function replaceContent(request: WriteRequest, content: JsonObject): Promise<WriteResult> {
  if (growthBound(request.op) > MAX_BODY_BYTES * 2) throw contentTooLarge();
  let grant = request.grant ?? (await grantFor(request.project, request.principal, 'write'));
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
    const all = await querySubtree(grant.inc, ROOT_KEY, { keysOnly: !request.ifMatch });
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
    const sent = await commitPieces(grant, {
      base: guardedBase(envelope, grant),
      key: ROOT_KEY,
      version: root.version,
      pieces,
      orphans: others,
    });
    if (sent.ok) return { etag: formatEtag(token) };
    // A revocation since the grant was read: verified again (the caller's 401 or 403, or the new epoch to write at).
    if (sent.item && readSegment(sent.item).epoch !== grant.epoch) grant = await verifyAgain(grant);
    // Past the attempts (this loop counts from 1 before its first retry) or the deadline: the 409.
    assertAttemptsLeft(attempt + 1);
    await backoff(attempt);
  }
}
