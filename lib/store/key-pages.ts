// The keys of a bucketed object, page by page (GET content?shallow=true[&limit=&after=]): its buckets read by key in
// the key order (lib/content/key-pages.ts), as many as the page needs, never the segments of its members' values.
import { setBounded } from '../config/bounded';
import { PayloadTooLarge } from '../config/errors';
import { MissingSegment, isBucketStubKey } from '../content/fragments';
import { type KeyCursor, byCodeUnits, encodeCursor, keysObject, layoutOf, staleCursor } from '../content/key-pages';
import { type JsonObject, Stub, isObject, storedSize } from '../content/json';
import { batchGetConsistent } from '../dynamo/batch-get';
import { A } from '../schema/attributes';
import { type Segment, assertSnapshot, etagOf, readSegment, segmentItemKey } from './segments';

/** Largest answer of keys, in DynamoDB's bytes (what a GET answers at most). */
const MAX_KEYS_BYTES = 4 * 1024 * 1024;
/**
 * Buckets a page reads at most, in bytes of their fragments: a page that meets this many (empty buckets, say) before
 * it holds `limit` keys ends shorter, with its `next`. Without `limit`, a 413 past `MAX_ALL_KEYS_SCAN_BYTES`.
 */
const MAX_PAGE_SCAN_BYTES = 4 * 1024 * 1024;
const MAX_ALL_KEYS_SCAN_BYTES = 64 * 1024 * 1024;
/** Keys per BatchGetItem (DynamoDB's cap), requests in flight at once, and buckets asked for ahead at most. */
const BATCH_KEYS = 100;
const BATCHES_IN_FLIGHT = 4;
const MAX_AHEAD = BATCH_KEYS * BATCHES_IN_FLIGHT;
/** What a bucket read needs: key, fragment, version and ETag, and the partners' versions (the torn-read check). */
const PROJECTION = { '#pk': 'pk', '#sk': 'sk', '#f': A.content, '#v': A.version, '#e': A.etag, '#p': A.partners };

/**
 * Per warm Lambda: keys per bucket read (a bucket cut into buckets counted too), per bucketed object, to size the next
 * read (a page of 1,000 keys reads about as many buckets as it needs). A first guess of 8.
 */
const density = new Map<string, number>();
const DENSITIES_MAX = 1_000;
const FIRST_DENSITY = 8;
const MIN_DENSITY = 0.25;
const MIN_LEAVES_MEASURED = 8;

/** A bucket stub being walked: its buckets `<stub>/<r>/`, the next one to visit. */
interface Level {
  stub: string;
  fanout: number;
  next: number;
}

const fanoutOf = (stub: string) => Number(stub.slice(stub.lastIndexOf('#') + 1));

/**
 * The buckets of a bucketed object in the key order, read ahead in BatchGetItems of computed keys (a bucket's key is
 * its stub and number, a bucket cut into buckets names their stub), as many as the keys still wanted need.
 */
class BucketWalk {
  private readonly fetched = new Map<string, Segment>();
  /** Every bucket visited, for the ETag and the torn-read check. */
  readonly visited: Segment[] = [];
  bytes = 0;
  leaves = 0;
  keys = 0;

  constructor(
    private readonly inc: string,
    private readonly levels: Level[],
    private readonly guess: number,
  ) {}

  /** Whether every bucket has been visited. */
  get done(): boolean {
    return this.levels.every((l) => l.next >= l.fanout);
  }

  /** The next bucket holding members, with its keys in UTF-16 code unit order; none after the last. */
  async nextLeaf(wanted: number): Promise<{ key: string; keys: string[] } | undefined> {
    for (;;) {
      const level = this.levels[this.levels.length - 1];
      if (!level) return undefined;
      if (level.next >= level.fanout) {
        this.levels.pop();
        continue;
      }
      const key = `${level.stub}/${level.next}/`;
      if (!this.fetched.has(key)) await this.readAhead(wanted);
      const bucket = this.fetched.get(key);
      // Every bucket exists while its stub does (all are made with it): one gone is a change met half-way.
      if (!bucket) throw new MissingSegment(key);
      this.fetched.delete(key);
      level.next++;
      this.visited.push(bucket);
      this.bytes += storedSize(bucket.fragment);
      const fragment = bucket.fragment;
      if (fragment instanceof Stub && isBucketStubKey(fragment.key)) {
        // Cut into buckets of its own: they take its place, in their order.
        this.levels.push({ stub: fragment.key, fanout: fanoutOf(fragment.key), next: 0 });
        continue;
      }
      if (!isObject(fragment)) throw new MissingSegment(key);
      const keys = Object.keys(fragment as JsonObject).sort(byCodeUnits);
      this.leaves++;
      this.keys += keys.length;
      return { key, keys };
    }
  }

  /**
   * Reads the buckets after the walk's position in order, about as many as `wanted` keys need: buckets read already
   * are followed (a cut one by the buckets it was cut into), the first ones not read yet are asked for, up to 400 in
   * BatchGetItems of 100 at once.
   */
  private async readAhead(wanted: number): Promise<void> {
    // Keys per bucket read (cut ones counted: they hold none), once a few buckets with members were met; the object's
    // last walk's figure until then (the first buckets of a walk are often the cut ones above its first members).
    const perBucket =
      this.leaves >= MIN_LEAVES_MEASURED ? Math.max(this.keys / this.visited.length, MIN_DENSITY) : this.guess;
    const levels = this.levels.map((l) => ({ ...l }));
    const keys: string[] = [];
    let ahead = 0;
    const room = () =>
      Number.isFinite(wanted) ? Math.min(MAX_AHEAD, Math.ceil((wanted - ahead) / perBucket) + 1) : MAX_AHEAD;
    while (keys.length < room()) {
      const level = levels[levels.length - 1];
      if (!level) break;
      if (level.next >= level.fanout) {
        levels.pop();
        continue;
      }
      const key = `${level.stub}/${level.next++}/`;
      const known = this.fetched.get(key)?.fragment;
      if (known === undefined) keys.push(key);
      else if (known instanceof Stub && isBucketStubKey(known.key))
        levels.push({ stub: known.key, fanout: fanoutOf(known.key), next: 0 });
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
    for (const item of items.flat()) {
      const segment = readSegment(item);
      this.fetched.set(segment.key, segment);
    }
  }
}

/** The walk's levels after a bucket (its path below the object's bucket stub): at each, the buckets after it. */
function levelsAfter(stub: string, bucket: string): Level[] {
  const first = /^\/(\d+)\//.exec(bucket) as RegExpExecArray;
  const levels: Level[] = [{ stub, fanout: fanoutOf(stub), next: Number(first[1]) + 1 }];
  let at = `${stub}${first[0]}`;
  for (const [, id, r] of bucket.slice(first[0].length).matchAll(/([A-Za-z0-9_-]{8}#\d+)\/(\d+)\//g)) {
    const cut = `${at}${id}`;
    levels.push({ stub: cut, fanout: fanoutOf(cut), next: Number(r) + 1 });
    at = `${cut}/${r}/`;
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
 * cursor's), then bucket by bucket until `limit` keys or `MAX_PAGE_SCAN_BYTES` of buckets. Each bucket is one item of
 * at most 4 KB, 1 read unit strongly consistent (DynamoDB bills the item, not the projection): a page costs about
 * `limit` ÷ (keys per bucket) read units, in BatchGetItems of up to 100, up to 4 at once.
 */
export async function readBucketKeys(
  request: BucketKeysRequest,
): Promise<{ value: JsonObject; next: string | null; etag: string }> {
  const { inc, segment, stub, after } = request;
  const limit = request.limit ?? Number.POSITIVE_INFINITY;
  const layout = layoutOf(stub);
  if (after && after.layout !== layout) throw staleCursor();
  const guess = density.get(`${inc}\u0000${stub}`) ?? FIRST_DENSITY;
  const taken: string[] = [];
  let keyBytes = 0;
  /** Where the page is: the bucket last given from, and its last key given (none: all of them). */
  let position: { bucket: string; key?: string } | undefined = after?.bucket ? { bucket: after.bucket } : undefined;
  const give = (bucket: string, keys: readonly string[]) => {
    const room = limit - taken.length;
    const given = keys.slice(0, room);
    for (const k of given) keyBytes += storedSize(k);
    if (keyBytes > MAX_KEYS_BYTES) throw keysTooLarge();
    taken.push(...given);
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
        below = new BucketWalk(inc, [{ stub: cutStub, fanout: fanoutOf(cutStub), next: 0 }], guess);
        for (let leaf = await below.nextLeaf(Infinity); leaf; leaf = await below.nextLeaf(Infinity)) {
          rest.push(...leaf.keys);
        }
        read.push(...below.visited);
      } else if (isObject(bucket.fragment)) {
        rest.push(...Object.keys(bucket.fragment as JsonObject));
      }
      const from = after.key;
      give(after.bucket, rest.filter((k) => k > from).sort(byCodeUnits));
    }
    walk = new BucketWalk(inc, levelsAfter(stub, after.bucket), guess);
  } else {
    walk = new BucketWalk(inc, [{ stub, fanout: fanoutOf(stub), next: 0 }], guess);
  }
  const budget = request.limit === undefined ? MAX_ALL_KEYS_SCAN_BYTES : MAX_PAGE_SCAN_BYTES;
  let ended = false;
  while (taken.length < limit) {
    if (walk.bytes > budget) {
      if (request.limit === undefined) throw keysTooLarge();
      break;
    }
    const leaf = await walk.nextLeaf(limit - taken.length);
    if (!leaf) {
      ended = true;
      break;
    }
    give(leaf.key.slice(stub.length), leaf.keys);
  }
  read.push(...walk.visited);
  assertSnapshot(read);
  if (walk.leaves >= MIN_LEAVES_MEASURED) {
    setBounded(density, `${inc}\u0000${stub}`, Math.max(walk.keys / walk.visited.length, MIN_DENSITY), DENSITIES_MAX);
  }
  const at = position as { bucket: string; key?: string } | undefined;
  const more = !ended && !(at?.key === undefined && walk.done) && at !== undefined;
  return {
    value: keysObject(taken),
    next: more && at ? encodeCursor({ layout, ...at }) : null,
    etag: etagOf(read),
  };
}

const keysTooLarge = () =>
  new PayloadTooLarge(
    'RESPONSE_TOO_LARGE',
    'the object has too many keys for one response; list them page by page with shallow=true&limit=1000, then &after=<next>',
  );
