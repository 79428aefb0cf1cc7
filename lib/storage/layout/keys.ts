// The key grammar of the content's items (docs/design/storage.md §3-4), built and parsed here alone: the content
// partition, segment keys, chunk stubs and chunks, bucket stubs and buckets, pending-commit markers. Pure: the random
// ids new keys are made of are handed in.

/** The content partition of an incarnation: every segment and marker of one life of a project. */
export const contentPk = (inc: string) => `C#${inc}`;

/** The incarnation a partition key names, when it is a content partition (`C#<inc>`). */
export const incarnationOfPk = (pk: string | undefined) => (pk?.startsWith('C#') ? pk.slice(2) : undefined);

/**
 * The partition an import session builds its document in (docs/design/backup.md §3): the project's incarnation, `~`
 * and the session's id. No project's incarnation holds `~`, so nothing that reads a project's content meets it.
 */
export const shadowIncarnation = (inc: string, session: string) => `${inc}~${session}`;

/** Whether an incarnation is an import's shadow content, which the change feed leaves alone. */
export const isShadowIncarnation = (inc: string) => inc.includes('~');

/**
 * A shadow segment's key (or a stub's) as copied into the project's partition under the copy id `id`: `/<rest>`
 * becomes `/<id><rest>`. The id is longer than a birth id, so no key of the content before the copy prefixes a copied
 * one, and one `begins_with` finds every copy of an import.
 */
export const copiedKey = (id: string, key: string) => `${ROOT_KEY}${id}${key.slice(1)}`;

/** The length of an import's copy id (copiedKey): 8 random bytes in base64url, longer than a birth id (8). */
export const COPY_ID_LENGTH = 11;

/** A birth id's length (newSegmentId): what the first component of every key the engine makes starts with. */
const BIRTH_ID_LENGTH = 8;

/**
 * A key as the engine made it, before an import copied it: without the copy id. The first component of a key the
 * engine makes is one birth id (up to its `/`, `#` or `~`); a copied key's is the copy id and that birth id. What
 * hashes a key (the bucket of a member) hashes this, so a bucketed object finds its members where they were put.
 */
export function withoutCopyId(key: string): string {
  const first = /^\/[A-Za-z0-9_-]*/.exec(key)?.[0].length ?? 0;
  return first - 1 === COPY_ID_LENGTH + BIRTH_ID_LENGTH ? `${ROOT_KEY}${key.slice(1 + COPY_ID_LENGTH)}` : key;
}

/** The prefix every key an import copied under `id` starts with. */
export const copyPrefix = (id: string) => `${ROOT_KEY}${id}`;

/** The root segment's key; a child's key is its parent's plus a random birth id and `/`, so a key prefixes its subtree. */
export const ROOT_KEY = '/';

/** Every segment key starts so (the root's `/`); other items of the content partition never do. */
export const isSegmentKey = (key: string | undefined): key is string => key?.startsWith(ROOT_KEY) === true;

/** A new child key under `parent`, from a fresh random `id`: a subtree written again never reuses an old key. */
export const childKey = (parent: string, id: string) => `${parent}${id}/`;

/** The key of a segment's parent (its key without the last birth id), or undefined for the root `/`. */
export function parentKey(key: string): string | undefined {
  if (key.length <= 1) return undefined;
  return key.slice(0, key.lastIndexOf('/', key.length - 2) + 1);
}

/** The segment a stub was written in: a segment key's parent, or the segment whose key a bucket stub extends. */
export const stubHolderKey = (stub: string) =>
  stub.endsWith('/') ? parentKey(stub) : stub.slice(0, stub.lastIndexOf('/') + 1);

/*
 * Chunked arrays (docs/design/storage.md, section 13, step 4). An array too large for its segment is always that
 * segment's root (a cut moves a large array to a child segment first). Its oldest elements move out into *chunks*:
 * items keyed `<dir><start>/` (`dir` = the array segment's key + a random id + `~`, `start` = the index of the chunk's
 * first element, zero-padded so keys sort by index), each a plain array. The array segment keeps the newest elements
 * behind one *chunk stub* at index 0, keyed `<dir><count>`: it stands for the first `count` elements. A push appends to
 * the array segment; when that outgrows its budget its elements (not the stub) move into a new chunk at `start` =
 * count, one item more in the same commit. An element is found without a directory: at index >= count it is in the
 * array segment, below it in the chunk with the largest start not above it (one Query). Chunk keys are below the
 * array segment's key, so the segment's subtree is the whole array.
 */
const CHUNK_START_DIGITS = 10;

/** A new chunk directory for the array segment `key`, from a fresh random `id`. */
export const chunkDirKey = (key: string, id: string) => `${key}${id}~`;

/** The chunk stub of directory `dir` standing for the first `count` elements. */
export const chunkStubKey = (dir: string, count: number) => `${dir}${count}`;

/** Whether a stub is a chunk stub (`<dir><count>`: the last key component has `~` and no closing `/`). */
export const isChunkStubKey = (key: string) => !key.endsWith('/') && key.slice(key.lastIndexOf('/')).includes('~');

/** Whether a segment key is a chunk's (`<dir><start>/`): chunks are plain arrays, never cut further. */
export const isChunkKey = (key: string) =>
  key.endsWith('/') && key.slice(key.lastIndexOf('/', key.length - 2)).includes('~');

/** The chunk directory a chunk stub or chunk key belongs to (up to and including its `~`). */
export const chunkDir = (key: string) => key.slice(0, key.lastIndexOf('~') + 1);

/** How many elements a chunk stub stands for. */
export const chunkCount = (key: string) => Number(key.slice(key.lastIndexOf('~') + 1));

/** The key of the chunked array's segment a chunk directory (or a chunk's key) belongs to. */
export const chunkArrayKey = (key: string) => key.slice(0, key.lastIndexOf('/', key.lastIndexOf('~')) + 1);

/**
 * Chunk keys hold their first element's index subtracted from the largest one, so they sort from the last chunk to
 * the first: right after the array's segment's own key, nothing else being below it, come its last chunks. One
 * `Query` from that key reads the segment and the tail an insert or delete rewrites (docs/design/storage.md, §13).
 */
const LAST_START = 10 ** CHUNK_START_DIGITS - 1;

/** The index of a chunk's first element, from its key. */
export const chunkStart = (key: string) => LAST_START - Number(key.slice(key.lastIndexOf('~') + 1, -1));

/** The key of the chunk of directory `dir` whose first element has index `start`. */
export const chunkKey = (dir: string, start: number) =>
  `${dir}${String(LAST_START - start).padStart(CHUNK_START_DIGITS, '0')}/`;

/** Chunk keys in the order of their elements (their keys sort the other way). */
export const byChunkStart = (a: string, b: string) => chunkStart(a) - chunkStart(b);

/*
 * Bucketed objects (docs/design/storage.md, section 13, step 4). An object that cannot be cut small enough (too many
 * members for its segment even with every movable one moved out) is spread over buckets: the segment keeps only a
 * *bucket stub* `<key><random>#<fanout>`, and member `m` lives in bucket `<stub>/<r>/`, `r` = a hash of the stub and
 * `m` modulo the fan-out, so a writer computes its bucket from the path with no directory. Every bucket exists from
 * the start (an empty object at least). A bucket that outgrows its budget is cut like any segment: into a bucket stub
 * of its own (nested buckets, keyed below it), so a split never changes what is above it.
 */

/** A new bucket stub for the object at segment `key`, from a fresh random `id`, spread over `fanout` buckets. */
export const bucketStubKey = (key: string, id: string, fanout: number) => `${key}${id}#${fanout}`;

/** Whether a stub is a bucket stub (`<key><id>#<fanout>`: the last key component has `#` and no closing `/`). */
export const isBucketStubKey = (key: string) => !key.endsWith('/') && key.slice(key.lastIndexOf('/')).includes('#');

/** How many buckets a bucket stub spreads its object over. */
export const bucketFanout = (stub: string) => Number(stub.slice(stub.lastIndexOf('#') + 1));

/** The key of bucket `r` of a bucket stub. */
export const bucketKey = (stub: string, r: number) => `${stub}/${r}/`;

/** Every bucket key of a bucket stub, in order. */
export const bucketKeys = (stub: string) => Array.from({ length: bucketFanout(stub) }, (_, r) => bucketKey(stub, r));

/** Whether a segment key is a bucket's (`<stub>/<r>/`). */
export const isBucketKey = (key: string) => /#\d+\/\d+\/$/.test(key);

/** The bucket stub a bucket's key extends. */
export const bucketStubOf = (bucket: string) => bucket.slice(0, bucket.lastIndexOf('/', bucket.length - 2));

/** How deep a bucket stub is nested in buckets (1: the object's own buckets; each cut bucket adds one). */
export const bucketDepth = (stub: string) => stub.split('#').length;

/** The prefix of every segment a stub's value is stored in: a segment's subtree, a chunk stub's chunks, a bucket stub's buckets. */
export const subtreePrefix = (key: string) =>
  isChunkStubKey(key) ? chunkDir(key) : isBucketStubKey(key) ? `${key}/` : key;

/** What a content item's sort key or a stub's key names: one tagged value for every form of the grammar above. */
export type ParsedKey =
  | { kind: 'root'; key: string }
  | { kind: 'segment'; key: string; parent: string }
  | { kind: 'chunk'; key: string; dir: string; start: number; array: string }
  | { kind: 'bucket'; key: string; stub: string }
  | { kind: 'chunk-stub'; key: string; dir: string; count: number }
  | { kind: 'bucket-stub'; key: string; fanout: number }
  | { kind: 'other'; key: string };

/** Parses a key of the content partition (or a stub's key) into what it names. */
export function parseKey(key: string): ParsedKey {
  if (key === ROOT_KEY) return { kind: 'root', key };
  if (!isSegmentKey(key)) return { kind: 'other', key };
  if (isChunkStubKey(key)) return { kind: 'chunk-stub', key, dir: chunkDir(key), count: chunkCount(key) };
  if (isBucketStubKey(key)) return { kind: 'bucket-stub', key, fanout: bucketFanout(key) };
  if (isChunkKey(key))
    return { kind: 'chunk', key, dir: chunkDir(key), start: chunkStart(key), array: chunkArrayKey(key) };
  if (isBucketKey(key)) return { kind: 'bucket', key, stub: bucketStubOf(key) };
  return { kind: 'segment', key, parent: parentKey(key) as string };
}
