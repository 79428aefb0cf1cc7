// The keys of a bucketed object, page by page (GET content?shallow=true[&limit=&after=]): its buckets read by key in
// the key order (lib/content/key-pages.ts), as many as the page needs, never the segments of its members' values.
import { setBounded } from '../config/bounded';
import { Refusal } from '../config/errors';
import { MissingSegment } from './layout/stubs';
import { isBucketStubKey, bucketFanout, bucketKey, bucketDepth } from './layout/keys';
import {
  type KeyCursor,
  type KeyOrder,
  byCodeUnits,
  encodeCursor,
  keysObject,
  layoutOf,
  staleCursor,
} from '../content/key-pages';
import { type JsonObject, Stub, isObject, storedSize } from '../content/json';
import { batchGetConsistent } from '../dynamo/batch-get';
import { A } from '../schema/attributes';
import { type Segment, assertSnapshot, etagOf, readSegment, segmentItemKey } from './segment';

/** Largest answer of keys, in DynamoDB's bytes (what a GET answers at most). */
const MAX_KEYS_BYTES = 4 * 1024 * 1024;
/**
 * Buckets one request reads, past which it reads no more (each at most 4 KB, 1 RCU: 4,096 RCU, and at most one
 * read-ahead of 400 over it, a few seconds): a page that meets this many (empty buckets, say) before it holds `limit`
 * keys ends shorter, with its `next`; without `limit`, a 413 that says to page. An object of 32,768 records of 1 KiB is about 3,200 buckets; of 32,768 strings of 1 KiB (a bucket
 * holds two) about 20,700, which no request reads whole before its deadline.
 */
const MAX_BUCKETS_READ = 4096;
/** Keys per BatchGetItem (DynamoDB's cap), requests in flight at once, and buckets asked for ahead at most. */
const BATCH_KEYS = 100;
const BATCHES_IN_FLIGHT = 4;
const MAX_AHEAD = BATCH_KEYS * BATCHES_IN_FLIGHT;
/**
 * What a bucket read needs: key, fragment, version and ETag, the partners' versions (the torn-read check), and the
 * write stamp (a read at a revision waits for the commits it saw to be logged: a member deleted or changed since).
 */
const PROJECTION = {
  '#pk': 'pk',
  '#sk': 'sk',
  '#f': A.content,
  '#v': A.version,
  '#e': A.etag,
  '#p': A.partners,
  '#w': A.writeStamp,
};

/**
 * Per warm Lambda, per bucketed object: how many keys a bucket holds, with the buckets it was cut into, at each depth
 * of cuts (0: the object's own buckets), from its last walk: to size the next page's reads. A first guess of 8 for
 * a depth not measured yet.
 */
const shapes = new Map<string, number[]>();
const SHAPES_MAX = 1_000;
const FIRST_GUESS = 8;
/** How much more than the keys still wanted a read asks for, by its estimate: one more round costs a request. */
const READ_MARGIN = 1.1;

/** A bucket stub being walked: its buckets `<stub>/<r>/`, the next one to visit, its depth of cuts. */
interface Level {
  stub: string;
  fanout: number;
  next: number;
  depth: number;
  /** Keys met below it so far; `whole`: walked from its first bucket, so at its end they are all its keys. */
  keys: number;
  whole: boolean;
}

const level = (stub: string, depth: number, next = 0): Level => ({
  stub,
  fanout: bucketFanout(stub),
  next,
  depth,
  keys: 0,
  whole: next === 0,
});

/**
 * The buckets of a bucketed object in the key order, read ahead in BatchGetItems of computed keys (a bucket's key is
 * its stub and number, a bucket cut into buckets names their stub), as many as the keys still wanted need by what
 * buckets at each depth were seen to hold.
 */
class BucketWalk {
  private readonly fetched = new Map<string, Segment>();
  /** Every bucket visited, for the ETag and the torn-read check. */
  readonly visited: Segment[] = [];
  /** Buckets read, visited or read ahead: what the walk has cost. */
  read = 0;
  /** Keys per bucket (its cuts included) by depth: sums and counts of the buckets walked whole. */
  private readonly sums: number[] = [];
  private readonly counts: number[] = [];

  constructor(
    private readonly inc: string,
    private readonly levels: Level[],
    private readonly remembered: readonly number[] = [],
    /** Buckets it may read; past them `nextLeaf` answers 'spent'. */
    private readonly budget = Number.POSITIVE_INFINITY,
  ) {}

  /** Whether every bucket has been visited. */
  get done(): boolean {
    return this.levels.every((l) => l.next >= l.fanout);
  }

  /** Keys per bucket at each depth, as far as this walk measured them, else as remembered. */
  get shape(): number[] {
    const depths = Math.max(this.remembered.length, this.counts.length);
    return Array.from({ length: depths }, (_, d) => this.estimate(d));
  }

  private record(depth: number, keys: number): void {
    this.sums[depth] = (this.sums[depth] ?? 0) + keys;
    this.counts[depth] = (this.counts[depth] ?? 0) + 1;
  }

  private estimate(depth: number): number {
    const counted = this.counts[depth] ?? 0;
    if (counted >= 2) return (this.sums[depth] ?? 0) / counted;
    return this.remembered[depth] ?? FIRST_GUESS;
  }

  /**
   * The next bucket holding members, with its keys in UTF-16 code unit order; none after the last; 'spent' when it
   * would have to read past its budget.
   */
  async nextLeaf(wanted: number): Promise<{ key: string; keys: string[] } | undefined | 'spent'> {
    for (;;) {
      const top = this.levels[this.levels.length - 1];
      if (!top) return undefined;
      if (top.next >= top.fanout) {
        this.levels.pop();
        if (top.whole && top.depth > 0) this.record(top.depth - 1, top.keys);
        continue;
      }
      const key = bucketKey(top.stub, top.next);
      if (!this.fetched.has(key)) {
        if (this.read >= this.budget) return 'spent';
        await this.readAhead(wanted);
      }
      const bucket = this.fetched.get(key);
      // Every bucket exists while its stub does (all are made with it): one gone is a change met half-way.
      if (!bucket) throw new MissingSegment(key);
      this.fetched.delete(key);
      top.next++;
      this.visited.push(bucket);
      const fragment = bucket.fragment;
      if (fragment instanceof Stub && isBucketStubKey(fragment.key)) {
        // Cut into buckets of its own: they take its place, in their order.
        this.levels.push(level(fragment.key, top.depth + 1));
        continue;
      }
      if (!isObject(fragment)) throw new MissingSegment(key);
      const keys = Object.keys(fragment as JsonObject).sort(byCodeUnits);
      this.record(top.depth, keys.length);
      for (const l of this.levels) l.keys += keys.length;
      return { key, keys };
    }
  }

  /**
   * Reads the buckets after the walk's position in order, about as many as `wanted` keys need: buckets read already
   * are followed (a cut one into the buckets it was cut into), each one not read yet counted as holding what buckets
   * of its depth were seen to hold; up to 400 in BatchGetItems of 100 at once.
   */
  private async readAhead(wanted: number): Promise<void> {
    const levels = this.levels.map((l) => ({ ...l }));
    const keys: string[] = [];
    let ahead = 0;
    while (keys.length < MAX_AHEAD && ahead < wanted * READ_MARGIN) {
      const top = levels[levels.length - 1];
      if (!top) break;
      if (top.next >= top.fanout) {
        levels.pop();
        continue;
      }
      const key = bucketKey(top.stub, top.next++);
      const known = this.fetched.get(key)?.fragment;
      if (known === undefined) {
        keys.push(key);
        ahead += this.estimate(top.depth);
      } else if (known instanceof Stub && isBucketStubKey(known.key)) levels.push(level(known.key, top.depth + 1));
      else if (isObject(known)) ahead += Object.keys(known).length;
    }
    const batches: string[][] = [];
    for (let i = 0; i < keys.length; i += BATCH_KEYS) batches.push(keys.slice(i, i + BATCH_KEYS));
    const items = await Promise.all(
      batches.map((batch) =>
        batchGetConsistent(
          batch.map((k) => segmentItemKey(this.inc, k)),
          PROJECTION,
        ),
      ),
    );
    this.read += keys.length;
    for (const item of items.flat()) {
      const segment = readSegment(item);
      this.fetched.set(segment.key, segment);
    }
  }
}

/** The walk's levels after a bucket (its path below the object's bucket stub): at each, the buckets after it. */
function levelsAfter(stub: string, bucket: string): Level[] {
  const first = /^\/(\d+)\//.exec(bucket) as RegExpExecArray;
  const levels: Level[] = [level(stub, 0, Number(first[1]) + 1)];
  let at = `${stub}${first[0]}`;
  for (const [, id, r] of bucket.slice(first[0].length).matchAll(/([A-Za-z0-9_-]{8}#\d+)\/(\d+)\//g)) {
    const cut = `${at}${id}`;
    levels.push(level(cut, levels.length, Number(r) + 1));
    at = bucketKey(cut, Number(r));
  }
  return levels;
}

export interface BucketKeysRequest {
  inc: string;
  /** The object's segment (its fragment the bucket stub), read by the caller. */
  segment: Segment;
  stub: string;
  /** Keys wanted; none: all of them (a GET of shallow=true without limit). */
  limit?: number;
  after?: KeyCursor;
}

/**
 * A page of a bucketed object's keys: after the cursor (a bucket cut since it was made read whole, its keys after the
 * cursor's), then bucket by bucket until `limit` keys or `MAX_BUCKETS_READ` buckets. Each bucket is one item of
 * at most 4 KB, 1 read unit strongly consistent (DynamoDB bills the item, not the projection): a page costs about
 * `limit` ÷ (keys per bucket) read units, in BatchGetItems of up to 100, up to 4 at once.
 */
export async function readBucketKeys(
  request: BucketKeysRequest,
): Promise<{ value: JsonObject; next: string | null; etag: string; order: KeyOrder; read: Segment[] }> {
  const { inc, segment, stub, after } = request;
  const limit = request.limit ?? Number.POSITIVE_INFINITY;
  const layout = layoutOf(stub);
  if (after && after.layout !== layout) throw staleCursor();
  const remembered = shapes.get(`${inc}\u0000${stub}`) ?? [];
  const taken: string[] = [];
  /** Each key taken with the cursor that resumes after it: the position `give` would leave after that key. */
  const order: KeyOrder = [];
  let keyBytes = 0;
  /** Where the page is: the bucket last given from, and its last key given (none: all of them). */
  let position: { bucket: string; key?: string } | undefined = after?.bucket ? { bucket: after.bucket } : undefined;
  const give = (bucket: string, keys: readonly string[]) => {
    const room = limit - taken.length;
    const given = keys.slice(0, room);
    for (const k of given) keyBytes += storedSize(k);
    if (keyBytes > MAX_KEYS_BYTES) throw keysTooLarge();
    taken.push(...given);
    for (const k of given) order.push([k, encodeCursor({ layout, bucket, key: k })]);
    position = given.length < keys.length ? { bucket, key: given[given.length - 1] } : { bucket };
  };
  let walk: BucketWalk;
  const read: Segment[] = [segment];
  if (after?.bucket) {
    // The cursor's bucket first, whole (with the buckets it was cut into since, if it was): its keys after the cursor's.
    const key = `${stub}${after.bucket}`;
    const [item] = await batchGetConsistent([segmentItemKey(inc, key)], PROJECTION);
    if (!item) throw staleCursor();
    const bucket = readSegment(item);
    read.push(bucket);
    const rest: string[] = [];
    if (after.key !== undefined) {
      let below: BucketWalk | undefined;
      if (bucket.fragment instanceof Stub && isBucketStubKey(bucket.fragment.key)) {
        const cutStub = bucket.fragment.key;
        const depth = bucketDepth(after.bucket);
        below = new BucketWalk(inc, [level(cutStub, depth)], remembered);
        for (
          let leaf = await below.nextLeaf(Infinity);
          leaf && leaf !== 'spent';
          leaf = await below.nextLeaf(Infinity)
        ) {
          rest.push(...leaf.keys);
        }
        read.push(...below.visited);
      } else if (isObject(bucket.fragment)) {
        rest.push(...Object.keys(bucket.fragment as JsonObject));
      }
      const from = after.key;
      give(after.bucket, rest.filter((k) => k > from).sort(byCodeUnits));
    }
    walk = new BucketWalk(inc, levelsAfter(stub, after.bucket), remembered, MAX_BUCKETS_READ);
  } else {
    walk = new BucketWalk(inc, [level(stub, 0)], remembered, MAX_BUCKETS_READ);
  }

  let ended = false;
  while (taken.length < limit) {
    const leaf = await walk.nextLeaf(limit - taken.length);
    if (leaf === 'spent') {
      // A page ends shorter (its next goes on from here); every key at once cannot be had.
      if (request.limit === undefined) throw keysTooLarge();
      break;
    }
    if (!leaf) {
      ended = true;
      break;
    }
    give(leaf.key.slice(stub.length), leaf.keys);
  }
  read.push(...walk.visited);
  assertSnapshot(read);
  setBounded(shapes, `${inc}\u0000${stub}`, walk.shape, SHAPES_MAX);
  const at = position as { bucket: string; key?: string } | undefined;
  const more = !ended && !(at?.key === undefined && walk.done) && at !== undefined;
  return {
    value: keysObject(taken),
    next: more && at ? encodeCursor({ layout, ...at }) : null,
    etag: etagOf(read),
    order,
    read,
  };
}

const keysTooLarge = () =>
  new Refusal(
    'RESPONSE_TOO_LARGE',
    'the object is too wide to list all its keys in one response; list them page by page with shallow=true&limit=1000, then &after=<next>',
  );
