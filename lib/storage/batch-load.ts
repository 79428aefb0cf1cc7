// What a batch plans on: the segments its paths run into, chunked arrays by their newest elements or a tail,
// bucketed objects by the buckets of the members named; and the result laid back into them.
import { fragmentBytes } from '../config/env';
import { type BatchOperation, lowestReach, plansOnMembers, plansOnNewest, touchedPaths } from '../content/batch';
import { MissingSegment, assemble, reachableFrom, fragmentsOf, stubsIn } from './layout/stubs';
import { bucketOf } from './layout/bucketed';
import { chunkCount, chunkDir, chunkStart, isBucketKey, isChunkStubKey } from './layout/keys';
import { chunkStubOf, layTail } from './layout/chunked';
import { type Json, type JsonObject, Stub, isObject, setOwn, storedSize } from '../content/json';
import { walk } from '../content/model';
import { type Segment, assertSnapshot } from './segment';
import { getSegment, getTail, querySubtree } from './io/read';
import { knownCuts, learnBucket } from './memory';
import type { Path } from '../paths';
import { PathTree } from '../paths/tree';

import { TAIL_CHUNKS_MAX, WHOLE_ARRAY_CHUNKS_MAX, perChunkOf, tailIn } from './chunked';
import { type Rewritten, applyToFragment, atSteps, piecesOf } from './decide';
import { step } from './walk';

/**
 * A chunked array a batch plans on without all of its chunks: its segment, its path from the top segment, the chunk
 * stub at the head of what is planned on. Planned on its newest elements, that is the segment's own stub; planned on
 * a tail, a stub for the elements before the tail, and `tail` the chunks read (in order) and the segment's own count.
 */
export interface Newest {
  segment: Segment;
  path: Path;
  stub: Stub;
  tail?: { chunks: Segment[]; count: number };
}

/**
 * A bucketed object a batch plans on the buckets of the members it names (docs/design/storage.md, section 13, step 4):
 * the segment whose fragment is its bucket stub (the top segment, or named by a stub in it), where it is, its stub.
 */
export interface Members {
  segment: Segment;
  path: Path;
  stub: string;
  /** Its buckets read, by key (nested ones too, when one was cut into buckets of its own): never another object's. */
  buckets: Map<string, Segment>;
  /**
   * Each bucket the plan knows was cut into buckets of its own → their stub: read, or remembered (and then skipped).
   * The result's members are laid by these alone, never by the Lambda's memory, which may forget meanwhile.
   */
  cuts: Map<string, string>;
}

/**
 * A chunked array's tail for a batch that reaches below its newest elements, when every path that meets it is an
 * element index, an insert or a push (docs/design/storage.md, section 13, step 4): the chunks from the one holding the
 * lowest index reached to the last, read. Undefined when the batch reads the array whole, or the tail is too long.
 */
async function tailFor(
  inc: string,
  array: { segment: Segment; stub: Stub; path: Path; prefetched?: readonly Segment[] },
  ops: readonly BatchOperation[],
): Promise<Newest | undefined> {
  const { segment, stub, path, prefetched } = array;
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
      : await getTail(inc, {
          dir,
          from: reach,
          count,
          perChunk: perChunkOf(newest),
          max: TAIL_CHUNKS_MAX,
          whole: WHOLE_ARRAY_CHUNKS_MAX,
          read: read.chunks,
        });
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
export async function loadForBatch(
  inc: string,
  top: Segment,
  ops: readonly BatchOperation[],
  options: {
    /** Plan chunked arrays on their newest elements when the batch allows. */
    newest?: boolean;
    /** The top segment's tail of chunks, already read. */
    tail?: readonly Segment[];
    /** Plan bucketed objects on the buckets of the members named (default: as `newest`). */
    members?: boolean;
  } = {},
): Promise<{ tree: Json; below: Segment[]; newest: Newest[]; members: Members[] }> {
  const { newest = false, tail } = options;
  const plan = { members: options.members ?? newest };
  const loaded = new Map<string, Segment>();
  /**
   * Bucketed objects planned on the buckets of the members named, by their bucket stub, and by the stub of each of
   * their buckets cut into buckets of its own. A bucketed object held in another's bucket is an object of its own,
   * though its keys extend the other's: it is known by the segment that holds it, not by its key.
   */
  const members = new Map<string, Members>();
  /** Where each segment reached through a member's stub from `top` (not a bucket) is in the tree. */
  const pathOf = new Map<string, Path>([[top.key, []]]);
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
    let depth = 0;
    for (;;) {
      // Planned on what is read now: memory is asked only for the cuts of a member's bucket, below.
      const next = step(segment, path, { key: segment.key, depth }, { enterLast: true });
      // Into a chunked array: its chunks are read below, if at all.
      if (!('to' in next)) break;
      if (next.bucket !== undefined) {
        const at = path.slice(0, next.to.depth);
        let object = members.get(next.bucket);
        if (
          !object &&
          plan.members &&
          next.to.depth === depth &&
          pathOf.has(segment.key) &&
          plansOnMembers(touched, at)
        ) {
          object = { segment, path: at, stub: next.bucket, buckets: new Map(), cuts: new Map() };
          members.set(next.bucket, object);
        }
        if (object) {
          // Into a bucketed object planned on its members: the member's bucket alone (a nested one's, in turn,
          // straight to the deepest this Lambda knows: a bucket once cut stays cut into the same buckets).
          const { key, cuts } = knownCuts(inc, next.to.key, path[depth] as string);
          for (const [cut, into] of cuts) object.cuts.set(cut, into);
          const bucket = loaded.get(key) ?? (await getSegment(inc, key));
          if (!bucket) throw new MissingSegment(key);
          loaded.set(bucket.key, bucket);
          object.buckets.set(bucket.key, bucket);
          if (bucket.fragment instanceof Stub) {
            learnBucket(inc, [], bucket.key, bucket.fragment.key);
            object.cuts.set(bucket.key, bucket.fragment.key);
            // Cut into buckets of its own: still this object's.
            members.set(bucket.fragment.key, object);
          }
          segment = bucket;
          continue;
        }
        // Into a bucketed object: it is planned on whole, all its buckets (and all below them) read.
        if (!queried.has(next.bucket)) await readWhole(next.bucket);
        queried.add(next.bucket);
        whole.add(next.bucket);
        break;
      }
      const below = loaded.get(next.to.key) ?? (await getSegment(inc, next.to.key));
      if (!below) throw new MissingSegment(next.to.key);
      loaded.set(below.key, below);
      if (pathOf.has(segment.key) || isBucketKey(segment.key)) pathOf.set(below.key, path.slice(0, next.to.depth));
      if (segment === top) named.add(below.key);
      segment = below;
      depth = next.to.depth;
    }
    const w = walk(segment.fragment as JsonObject, path.slice(depth));
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
        ? await tailFor(inc, { segment, stub, path, prefetched: segment === top ? tail : undefined }, ops)
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
 * commit); the content with the object behind its segment's stub again. Declined (and why) when the result is no
 * object there, or holds a member whose bucket was not read.
 */
export function splitMembers(
  content: Json,
  members: readonly Members[],
  top: Segment,
): { content: Json; rewritten: Rewritten[] } | { declined: string } {
  const rewritten: Rewritten[] = [];
  // Innermost first: an object held in another's bucket goes back behind its stub before that bucket is laid.
  for (const { segment, path, stub, buckets, cuts } of [...members].reverse()) {
    const value = atSteps(content, path);
    if (!isObject(value)) return { declined: 'no object where it was' };
    const laid = new Map<string, JsonObject>();
    for (const b of buckets.values()) if (!(b.fragment instanceof Stub)) laid.set(b.key, {});
    for (const m of Object.keys(value)) {
      // Its bucket, through the cuts the plan read or relied on.
      let key = bucketOf(stub, m);
      for (let into = cuts.get(key); into !== undefined; into = cuts.get(key)) key = bucketOf(into, m);
      const into = laid.get(key);
      if (!into) return { declined: `no bucket read for a member (${key})` };
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
export function splitNewest(
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
