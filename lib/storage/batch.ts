// The batch request loop: several operations applied in order, all or none, in one UpdateItem or one commit.
import { newSegmentId } from './ids';
import { fragmentBytes } from '../config/env';
import { type BatchOperation, intoNewest, planBatch } from '../content/batch';
import { MissingSegment, stubsIn } from './layout/stubs';
import { type Piece, cut } from './layout/cut';
import { ROOT_KEY, chunkCount } from './layout/keys';
import { type Json, type JsonObject, storedSize } from '../content/json';
import { compileBatchWrite } from '../expressions';
import { type Segment, etagOf } from './segment';
import { getSegment } from './io/read';
import { lookupLocation } from './memory';
import { changeTooLarge, MAX_CHANGE_BYTES, MAX_TRANSACTION_ITEMS } from './refusals';
import { logger } from '../config/logger';
import { PreconditionFailed, Refusal, isRefusal } from '../config/errors';
import type { Path } from '../paths';

import { type Members, type Newest, loadForBatch, splitMembers, splitNewest } from './batch-load';
import { sendDecision, tryOneRequest, hasLanded, writeEnvelope } from './commit';
import { type Decision, piecesFit, piecesOf } from './decide';
import { foldIfSmall } from './fold';
import { epochAccess, grantFor } from './grant';
import type { Sent } from './io/write';
import { contentTooLarge } from './refusals';
import { type BatchWriteRequest, type WriteResult, formatEtag } from './requests';
import { recognisingRetry, retrySegment } from './retry';
import { type At, type Place, arrive, entersTarget, relativeTo } from './walk';

/** The longest path prefix every operation's segment lies under (set and delete: their parent's). */
function commonPrefix(ops: readonly BatchOperation[]): Path {
  let prefix: Path | undefined;
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
 * What a batch may grow its content to while it is planned: what one transaction can write (the content read, if
 * that is more). Past it the planner stops at once with 413 `CHANGE_TOO_LARGE` (and the operation's index), so no
 * request grows a value in memory beyond it, whatever it copies.
 */
const changeBudget = (tree: Json) => ({
  maxBytes: Math.max(MAX_CHANGE_BYTES, storedSize(tree)),
  tooLarge: changeTooLarge,
});

/** Whether a planner's refusal is the change's size (the budget above): no other plan of it can be smaller. */
const isChangeTooLarge = (error: unknown) => isRefusal(error, 'CHANGE_TOO_LARGE');

/**
 * A batch's result cut into the pieces it is stored in under `key`. One that cannot be (a piece too large for any
 * segment) fails at the operation that made it so: its index (found planning the operations one by one, once each).
 */
function batchPieces(key: string, tree: JsonObject, ops: readonly BatchOperation[], result: Json): Piece[] {
  const pieces = cut(key, result, { limit: fragmentBytes(), newId: newSegmentId });
  if (piecesFit(pieces)) return pieces;
  let content = tree;
  const index = ops.findIndex((op) => {
    content = planBatch(content, [op], changeBudget(tree)).content;
    return !piecesFit(cut(key, content, { limit: fragmentBytes(), newId: newSegmentId }));
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
  options: { ifMatch?: readonly string[]; tail?: readonly Segment[]; newest?: boolean; members?: boolean },
): Promise<BatchDecision> {
  const { ifMatch, tail } = options;
  const newest = options.newest ?? !ifMatch;
  const loaded = await loadForBatch(inc, top, ops, { newest, tail, members: options.members ?? newest });
  const { tree, below, newest: open, members } = loaded;
  // A tail's stub stands for elements left where they are: not a value the batch drops.
  const dropped = stubsIn(tree).filter((k) => !below.some((s) => s.key === k) && !open.some((n) => n.stub.key === k));
  if (open.length > 0 || members.length > 0) {
    const decided = decideOnNewest(top, ops, { ...loaded, tree: tree as JsonObject, dropped });
    if (!('declined' in decided)) return decided;
    const whole = await decideBatch(inc, top, ops, {
      ifMatch,
      newest: false,
      members: open.length > 0 && members.length > 0,
    });
    // Planned on more than its members: past one transaction it will be refused (413), so say why it was.
    if (whole.kind === 'rewrite' && whole.pieces.length + (whole.carried?.length ?? 0) >= MAX_TRANSACTION_ITEMS) {
      logger.warn('batch planned on the whole past one transaction', {
        declined: decided.declined,
        top: top.key,
        pieces: whole.pieces.length,
        carried: whole.carried?.length ?? 0,
      });
    }
    return whole;
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
 * A batch planned on chunked arrays' newest elements (their indexes moved to positions in their segments), or why it
 * is to be planned on the whole instead: any refusal (its message must be the whole array's), no change (its ETag is that
 * of everything), an array reached past its newest elements after all, an object's member with no bucket read, a
 * piece too large.
 */
function decideOnNewest(
  top: Segment,
  ops: readonly BatchOperation[],
  loaded: {
    tree: JsonObject;
    below: readonly Segment[];
    newest: readonly Newest[];
    members: readonly Members[];
    dropped: readonly string[];
  },
): BatchDecision | { declined: string } {
  const { tree, below, newest: open, members, dropped } = loaded;
  const moved = open.reduce((o, n) => intoNewest(o, n.path, chunkCount(n.stub.key)), ops);
  let planned: ReturnType<typeof planBatch>;
  try {
    planned = planBatch(tree, moved, changeBudget(tree));
  } catch (error) {
    // Planned on members alone, a refusal is the whole object's (an operation on a member never sees the others); on an
    // array's newest elements or tail, the whole array's message is planned for. A change too large on a part is
    // too large on the whole.
    if (error instanceof Refusal && open.length > 0 && !isChangeTooLarge(error))
      return { declined: `${error.code} on an array's newest elements` };
    throw error;
  }
  if (!planned.changed) return { declined: 'no change' };
  try {
    const split = splitNewest(planned.content, open, top);
    if (!split) return { declined: 'an array reached past its newest elements' };
    const objects = splitMembers(split.content, members, top);
    if ('declined' in objects) return objects;
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
    if (error instanceof Refusal && !isChangeTooLarge(error))
      return { declined: `${error.code} laying the result out` };
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
export async function applyBatch(
  request: BatchWriteRequest,
  read?: { at: At; segment: Segment; tail?: readonly Segment[] },
): Promise<WriteResult> {
  const grant = request.grant ?? (await grantFor(request.project, request.principal, 'write'));
  const { token, slot, mark, envelope } = writeEnvelope(request);
  const done = { etag: formatEtag(token) };
  const prefix = commonPrefix(request.ops);
  let place: Place = { grant, at: read?.at ?? lookupLocation(grant.inc, prefix) };
  // A batch of one a single write hands on, with the segment it read: planned at once.
  let segment: Segment | undefined = read?.segment;
  /** Chunks read with that segment (a chunked array's last ones): for the first plan only. */
  let tail = read?.tail;
  /** A batch that may remove something below the root may leave its segment small enough to fold into its parent. */
  const removes = request.ops.some((op) => op.kind === 'delete' || op.kind === 'patch' || op.kind === 'merge');
  const shrinks = (where: At) => removes && where.key !== ROOT_KEY;
  const fold = (item: Parameters<typeof foldIfSmall>[3]) =>
    foldIfSmall(place.grant, envelope, prefix.slice(0, place.at.depth), item);
  // One UpdateItem can only change one segment: when this Lambda already knows the operations lie in different ones,
  // it does not try.
  let fast =
    !read &&
    request.ops.every((op) => {
      if (!('segments' in op)) return true;
      const path = entersTarget(op) && op.kind !== 'test' ? op.segments : op.segments.slice(0, -1);
      return lookupLocation(grant.inc, path).key === place.at.key;
    });
  for (let attempt = 1; ; ) {
    const { at } = place;
    const rel = request.ops.map((op) => relativeTo(op, at));
    if (fast) {
      fast = false;
      // What the engine refuses of a merged write (a result beyond its digits or range) belongs to one of its
      // operations: planning says which, with its index.
      const update = compileBatchWrite(rel, { ...envelope, access: epochAccess(place.grant) });
      const tried = await tryOneRequest(place.grant, at.key, update, {
        planOnRefusal: true,
        returnNew: shrinks(at),
        record: envelope.record,
      });
      if (hasLanded(tried)) {
        if (shrinks(at)) await fold(tried.item);
        return done;
      }
      segment = tried;
    } else if (segment === undefined) {
      // No one-request try (the operations lie in different segments): the segment they all lie under, read.
      segment = await getSegment(place.grant.inc, at.key);
    }
    const arrival = await arrive(place, segment, { slot, mark });
    if (arrival.kind === 'landed') return done;
    if (arrival.kind === 'next') {
      place = arrival.place;
      fast = true;
      continue;
    }
    const current = arrival.segment;
    let sent: Sent;
    try {
      const decision = await decideBatch(place.grant.inc, current, rel, { ifMatch: request.ifMatch, tail });
      tail = undefined;
      if (decision.kind === 'unchanged') return { etag: formatEtag(decision.etag) };
      sent = await sendDecision(place.grant, { envelope, segment: current, decision, returnNew: shrinks(at) });
    } catch (error) {
      if (!(error instanceof MissingSegment)) throw error;
      sent = { ok: false };
    }
    if (sent.ok) {
      if (shrinks(at)) await fold(sent.item);
      return done;
    }
    attempt++;
    segment = await retrySegment(place.grant, at.key, sent, attempt);
  }
}
