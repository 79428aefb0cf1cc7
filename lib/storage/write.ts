// The write request loop: one content operation, from the segment this Lambda remembers to the one that holds its
// path; and the replacement of the whole content.
import { fragmentBytes } from '../config/env';
import { MAX_BODY_BYTES } from '../config/limits';
import { ROOT_KEY, chunkDir } from './layout/keys';
import { chunkStubOf, chunkedIndex } from './layout/chunked';
import { type Json, type JsonObject, storedSize } from '../content/json';
import type { ContentOperation } from '../content/model';
import { type UpdateRequest, compileWrite, growthBound } from '../expressions';
import { type Segment, etagOf, readSegment, tokenIn } from './segment';
import { createRoot } from './io/commit';
import { getWithTail, getSegmentAndChunk, querySubtree } from './io/read';
import { knownChunkKey, lookupLocation } from './memory';
import { PreconditionFailed, Refusal } from '../config/errors';

import { applyBatch } from './batch';
import { afterChunkStub, chunkedWrite, holdsIndex, tailToRead } from './chunked';
import { sendDecision, commitPieces, tryOneRequest, guardedBase, hasLanded, writeEnvelope } from './commit';
import { decide, piecesOf } from './decide';
import { foldIfSmall } from './fold';
import { epochAccess, grantFor, verifyAgain } from './grant';
import { sendUpdate } from './io/write';
import { contentTooLarge } from './refusals';
import { type WriteRequest, type WriteResult, formatEtag } from './requests';
import { backoff, recognisingRetry, rereadAfter, retrySegment, assertAttemptsLeft } from './retry';
import { type At, enterChunk, entersTarget, relativeTo, reroute, step } from './walk';

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

/** One content operation (writeContent), not yet recognising a named request's refused retry. */
async function applyContent(request: WriteRequest): Promise<WriteResult> {
  const op = request.op;
  if (op.kind === 'replace') return replaceContent(request, op.content);
  let grant = request.grant ?? (await grantFor(request.project, request.principal, 'write'));
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
    let rel = relativeTo(op, at);
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
      const tried = await tryOneRequest(grant, at.key, update, { returnNew: shrinks, record: envelope.record });
      if (hasLanded(tried)) {
        if (shrinks) await foldIfSmall(grant, envelope, op.segments.slice(0, at.depth), tried.item);
        return { etag: formatEtag(token) };
      }
      segment = tried;
    }
    const moved = await reroute({ grant, at }, segment);
    if (moved) {
      ({ grant, at } = moved);
      fast = true;
      tail = undefined;
      continue;
    }
    const current = segment as Segment;
    // Our token in any segment on the way: this request's write landed (its answer was lost, and a cut or split
    // since may have moved the path on).
    if (tokenIn(current, slot) === mark) return { etag: formatEtag(token) };
    const next = step(current, op.segments, at, { enterLast: entersTarget(op), inc: grant.inc });
    if ('to' in next) {
      at = next.to;
      fast = true;
      continue;
    }
    if ('chunk' in next) {
      // An element in a chunk: changed there, unless the change moves the elements after it (the whole array).
      if (op.kind === 'delete' && rel.segments.length === 1)
        return writeWholeArray(request, op, { at, segment: current, tail });
      const { dir, index } = next.chunk;
      const held = prefetched && holdsIndex(prefetched, dir, index) ? prefetched : undefined;
      const entered = await enterChunk(grant.inc, current, at, { dir, index, held });
      if (entered === 'moved') {
        // An insert or delete before the element moved it since the array's segment was read: read it again.
        attempt++;
        segment = await rereadAfter(grant, at.key, attempt);
        continue;
      }
      // Where to find the element again if the chunk changes under this write (its index may have moved).
      arrayAt = at;
      // No chunk holds it any more: the walk starts again from the root (reroute, as for any segment gone).
      segment = entered?.chunk;
      if (entered) at = entered.at;
      continue;
    }
    rel = { ...rel, segments: next.here };
    if (rel.kind === 'insert' && rel.segments.length === 0 && chunkStubOf(current.fragment)) {
      // An insert into a chunked array: after its chunk stub, in the segment; before it, the whole array.
      const where = chunkedIndex(current.fragment as Json[], rel.index);
      const length = (current.fragment as Json[]).length;
      if (!('position' in where) || where.position < 0 || where.position > length)
        return writeWholeArray(request, op, { at, segment: current, tail });
      rel = { ...rel, index: where.position };
    }
    const decision = await decide(grant, current, { request, op: rel, mark, slot });
    if (decision.kind === 'applied') return { etag: formatEtag(token) };
    if (decision.kind === 'unchanged') return { etag: formatEtag(decision.etag) };
    const sent = await sendDecision(grant, { envelope, segment: current, decision, returnNew: shrinks });
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
