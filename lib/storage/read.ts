// The read request loop: the value at a path (whole, or a view of it) and its ETag, from the segments that hold it.
import { READ_ATTEMPTS } from './retry';
import { MAX_RESPONSE_BYTES } from '../config/limits';
import { type KeyOrder, orderOfObject, pageOfValue } from '../content/key-pages';
import { shallowView, sliceArray } from '../content/views';
import { MissingSegment, assemble, reachableFrom, fragmentsOf, stubsIn } from './layout/stubs';
import { ROOT_KEY, chunkCount, chunkDir, chunkStart, isBucketStubKey } from './layout/keys';
import { chunkStubOf, logicalLength } from './layout/chunked';
import { type Json, type JsonObject, Stub, isObject, storedSize } from '../content/json';
import { valueAt } from '../content/model';
import { type Segment, assertSnapshot, etagOf } from './segment';
import { forgetLocations, lookupLocation } from './memory';
import { getChunks, getSegment, querySubtree, SubtreeTooLarge } from './io/read';
import { stampsOf } from './snapshot';
import type { Stamp } from '../schema/write-stamp';
import { readBucketKeys } from './key-pages';
import { Refusal } from '../config/errors';

import { grantFor, verifyAgain, verifyOnEpochChange } from './grant';
import { type ReadRequest, type ReadView, formatEtag } from './requests';
import { type At, ROOT_AT, enterChunk, step } from './walk';

/** A view of a value that is all in hand. */
export const viewOf = (value: Json, view: ReadView): Json => {
  if (view.kind === 'slice') return sliceArray(value, view.start, view.limit, view.where);
  return view.page ? { ...pageOfValue(value, view.page) } : shallowView(value);
};

/** A view as read: the value, its ETag, the segments read (their write stamps), a page's keys in order. */
export interface ViewRead {
  value: Json;
  etag: string;
  /** Every segment the view read: their write stamps tell a read at a revision which commits it saw. */
  read: readonly Segment[];
  /** A page of keys: each key in the key order with the cursor that resumes after it. */
  order?: KeyOrder;
  /** Asked for with the page (`values`): its members held whole in the segments read, by key. */
  values?: ReadonlyMap<string, Json>;
}

/** The members of a page of keys that `holders` (objects read, an object's or its buckets') hold whole. */
function valuesHeld(order: KeyOrder, holders: readonly Json[]): Map<string, Json> {
  const values = new Map<string, Json>();
  const wanted = new Set(order.map(([k]) => k));
  for (const holder of holders) {
    if (!isObject(holder)) continue;
    for (const k of Object.keys(holder)) {
      const value = holder[k] as Json;
      if (wanted.has(k) && stubsIn(value).length === 0) values.set(k, value);
    }
  }
  return values;
}

/**
 * A view of the value a segment holds at the path: a chunked array's length is its stub's count plus its own
 * elements, and a slice of it reads the chunks of its range (one Query for the first, one for the rest); a bucketed
 * object's keys are its buckets' (read by key, as many as a page needs). Its ETag is that of the segments read.
 */
async function readView(inc: string, segment: Segment, held: Json, view: ReadView): Promise<ViewRead> {
  const chunked = chunkStubOf(held);
  if (view.kind === 'shallow' && held instanceof Stub && isBucketStubKey(held.key)) {
    // Its buckets, read by key as far as the page needs (all of them without a page): lib/storage/key-pages.ts.
    const keys = await readBucketKeys({
      inc,
      segment,
      stub: held.key,
      limit: view.page?.limit,
      after: view.page?.after,
    });
    const value = view.page ? { value: keys.value, next: keys.next } : keys.value;
    const values = view.values
      ? valuesHeld(
          keys.order,
          keys.read.slice(1).map((s) => s.fragment),
        )
      : undefined;
    return { value, etag: formatEtag(keys.etag), read: keys.read, order: keys.order, ...(values ? { values } : {}) };
  }
  if (view.kind === 'shallow' && chunked && !view.page) {
    return { value: { length: logicalLength(held as Json[]) }, etag: formatEtag(segment.etag), read: [segment] };
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
    return {
      value: { value: elements, start: from, length },
      etag: formatEtag(etagOf([segment, ...chunks])),
      read: [segment, ...chunks],
    };
  }
  const value = viewOf(held, view);
  const order =
    view.kind === 'shallow' && view.page && isObject(held)
      ? orderOfObject(Object.keys(held), view.page.limit, view.page.after)
      : undefined;
  const values = order && view.kind === 'shallow' && view.values ? valuesHeld(order, [held]) : undefined;
  return {
    value,
    etag: formatEtag(segment.etag),
    read: [segment],
    ...(order ? { order } : {}),
    ...(values ? { values } : {}),
  };
}

/** Largest value a GET returns (lib/config/limits.ts). */
const MAX_READ_BYTES = MAX_RESPONSE_BYTES;

const readTooLarge = () =>
  new Refusal(
    'RESPONSE_TOO_LARGE',
    `the value is larger than ${MAX_READ_BYTES} bytes; read the parts below it one by one`,
  );

/** A subtree for a GET: past what one response carries, a 413 (and no more pages read). */
async function readSubtree(inc: string, key: string): Promise<Map<string, Segment>> {
  try {
    return await querySubtree(inc, key, { maxBytes: MAX_READ_BYTES });
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
export async function readContent(request: ReadRequest): Promise<{
  value: Json;
  etag: string;
  stamps?: readonly Stamp[];
  order?: KeyOrder;
  values?: ReadonlyMap<string, Json>;
}> {
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
        grant = await verifyAgain(grant);
        const value = segments.length === 0 ? {} : valueAt({}, segments);
        return { value: request.view ? viewOf(value, request.view) : value, etag: '"0"' };
      }
      forgetLocations(grant.inc);
      at = ROOT_AT;
      continue;
    }
    if (segment.epoch !== grant.epoch) {
      grant = await verifyOnEpochChange(grant, segment);
      continue;
    }
    const next = step(segment, segments, at, { enterLast: true, inc: grant.inc });
    if ('to' in next) {
      at = next.to;
      continue;
    }
    if ('chunk' in next) {
      // An older element of a chunked array: the chunk that holds it (one Query), read as the next segment.
      const entered = await enterChunk(grant.inc, segment, at, next.chunk);
      if (typeof entered !== 'object') {
        // Gone, or rewritten by an insert or delete before its elements since the array's segment was read.
        if (attempt >= READ_ATTEMPTS) throw new MissingSegment(next.chunk.dir);
        continue;
      }
      ({ chunk, at } = entered);
      continue;
    }
    const rel = next.here;
    const value = valueAt(segment.fragment as JsonObject, rel, segments);
    if (request.view) {
      try {
        const { read, ...viewed } = await readView(grant.inc, segment, value, request.view);
        return { ...viewed, stamps: stampsOf(read) };
      } catch (error) {
        if (!(error instanceof MissingSegment) || attempt >= READ_ATTEMPTS) throw error;
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
      if (!(error instanceof MissingSegment) || attempt >= READ_ATTEMPTS) throw error;
    }
  }
}
