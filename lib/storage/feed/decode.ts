// The change feed (docs/design/realtime.md, section 2): DynamoDB Streams records of the content partition → the
// commits they belong to → the changes each made, at absolute paths. Everything about how segments, their keys and
// their bookkeeping attributes (tx, pv, pa, rt) look in a stream record stays here; lib/realtime routes the changes.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { setBounded } from '../../config/bounded';
import { type Json, Stub } from '../../content/json';
import { fromAttribute } from '../../dynamo/attributes';
import { type Stamp, stampOfRecord } from '../../schema/write-stamp';
import { type Path, formatPath } from '../../paths';
import { A } from '../../schema/attributes';
import { chunkStubOf } from '../layout/chunked';
import {
  ROOT_KEY,
  byChunkStart,
  chunkCount,
  chunkStart,
  incarnationOfPk,
  isBucketKey,
  isChunkKey,
  isSegmentKey,
  isShadowIncarnation,
} from '../layout/keys';
import { fragmentsOf } from '../layout/stubs';
import { type Change, commitChanges, diffValues, stubPaths } from './changes';
import { type CommitView, complete } from './commit-reads';
import { type AwaitedOld, carryRemoved, exactOldValues } from './old-values';
import { forgetBelow, learnTree, pathOf } from './segment-paths';

type Image = Record<string, AttributeValue>;

/** A Lambda event's binary values are base64 text; the SDK's are bytes. Both become bytes. */
function asSdk(value: unknown): AttributeValue {
  const v = value as { B?: unknown; L?: unknown[]; M?: Record<string, unknown> };
  if (typeof v.B === 'string') return { B: Buffer.from(v.B, 'base64') };
  if (v.L) return { L: v.L.map(asSdk) };
  if (v.M) return { M: Object.fromEntries(Object.entries(v.M).map(([k, x]) => [k, asSdk(x)])) };
  return value as AttributeValue;
}
const imageOf = (image: unknown): Image | undefined =>
  image === undefined ? undefined : (asSdk({ M: image }).M as Image);
const fragmentOf = (image: Image | undefined): Json | undefined =>
  image?.[A.content] === undefined ? undefined : fromAttribute(image[A.content] as AttributeValue);

/** Changes at positions of an array renumbered from `offset` (the index of its first element). */
function offsetBy(changes: Change[], base: Path, offset: (position: number) => number): Change[] {
  return changes.map((c) => {
    if (c.path.length <= base.length) return c;
    const path = [...c.path];
    path[base.length] = String(offset(Number(path[base.length])));
    return { ...c, path };
  });
}

/**
 * A commit to a chunked array's segment (docs/design/storage.md, step 4): its elements after the chunk stub, as a
 * window of the array from the stub's count. A rollover moved the oldest into a chunk this commit wrote: the window
 * after is taken from the same index as before, that chunk's elements first. Undefined when the windows cannot be
 * lined up (the array was cut afresh): the whole array changed.
 */
function chunkedChanges(
  base: Path,
  before: Json[],
  after: Json[],
  written: (key: string) => Json | undefined,
  keys: readonly string[],
): Change[] | undefined {
  const from = chunkCount((chunkStubOf(before) as Stub).key);
  const to = chunkCount((chunkStubOf(after) as Stub).key);
  if (to < from) return undefined;
  const moved: Json[] = [];
  for (const key of [...keys]
    .filter((k) => isChunkKey(k) && chunkStart(k) >= from && chunkStart(k) < to)
    .sort(byChunkStart)) {
    if (chunkStart(key) !== from + moved.length) return undefined;
    moved.push(...((written(key) as Json[] | undefined) ?? []));
  }
  if (from + moved.length !== to) return undefined;
  const changes = diffValues(before.slice(1), [...moved, ...after.slice(1)], base);
  // A whole-array change of the window is not the array's: the caller reads it whole.
  if (changes.some((c) => c.path.length === base.length)) return undefined;
  return offsetBy(changes, base, (position) => from + position);
}

/** What a stream batch holds besides each MODIFY: new children by `<tx> <key>`, removed segments, partners' MODIFYs. */
export interface StreamBatch {
  written: Map<string, Json>;
  removed: Map<string, Json>;
  /** MODIFY records of segments changed in place beside their commit's top segment, by `<tx> <key>`. */
  partners: Map<string, DynamoDBRecord>;
  /** Each segment key's records in this batch: their positions and the commit tokens they set. */
  positions: Map<string, Array<{ at: number; tx?: string }>>;
  /** The fragments of segments multi-item commits changed in place, before and after, by `<tx> <key>`. */
  priorImages: Map<string, Json>;
  afterImages: Map<string, Json>;
}

/** A MODIFY record's commit token (`tx`), when the record is that commit's (its old image had another). */
function ownTransaction(record: DynamoDBRecord): string | undefined {
  const tx = record.dynamodb?.NewImage?.[A.transaction]?.S;
  return tx !== undefined && tx !== record.dynamodb?.OldImage?.[A.transaction]?.S ? tx : undefined;
}

/**
 * The segments a record's commit changed in place with it: its `pv`'s keys, when this commit wrote `pv` (it then holds
 * new versions, so it differs from the old image's); a `pv` left by an earlier commit names none.
 */
function partnersSetBy(record: DynamoDBRecord): string[] {
  const entries = (image: unknown) =>
    Object.entries((imageOf(image)?.[A.partners]?.M ?? {}) as Record<string, { N?: string }>)
      .map(([k, v]) => `${k}=${v.N}`)
      .sort()
      .join(',');
  const now = entries(record.dynamodb?.NewImage);
  if (now === '' || now === entries(record.dynamodb?.OldImage)) return [];
  return Object.keys(imageOf(record.dynamodb?.NewImage)?.[A.partners]?.M ?? {});
}

/** The fragments of a batch's map by `<tx> <key>` that one commit's records hold, by segment key. */
const ofCommit = (fragments: ReadonlyMap<string, Json>, tx: string | undefined) =>
  tx === undefined
    ? []
    : [...fragments]
        .filter(([k]) => k.startsWith(`${tx} `))
        .map(([k, fragment]) => ({ key: k.slice(tx.length + 1), fragment }));

/** A record's changes whose place cannot be found any more (its segment removed since): clients read the value. */
const UNLOCATED = Symbol('unlocated');

/** Whether a MODIFY record changed the segment's content (not only its attributes, as a revocation's stamp does). */
const changesContent = (record: DynamoDBRecord) =>
  JSON.stringify(record.dynamodb?.OldImage?.[A.content]) !== JSON.stringify(record.dynamodb?.NewImage?.[A.content]);

/**
 * The changes one MODIFY record of segment `key` makes, at their absolute paths: undefined when its record says
 * nothing of its own, or its segment is no longer reachable and it changed no content; UNLOCATED when it did.
 */
async function recordChanges(
  inc: string,
  key: string,
  record: DynamoDBRecord,
  batch: StreamBatch,
): Promise<Change[] | typeof UNLOCATED | undefined> {
  const oldImage = imageOf(record.dynamodb?.OldImage);
  const newImage = imageOf(record.dynamodb?.NewImage);
  const before = fragmentOf(oldImage);
  const after = fragmentOf(newImage);
  const base = await pathOf(inc, key);
  const beforeStubs = before === undefined ? new Map() : stubPaths(before);
  const afterStubs = after === undefined ? new Map() : stubPaths(after);
  // What is known below a stub that left this fragment or moved in it is forgotten; below one where it was, its
  // paths hold still (a consumer behind the writes may need them after the segments there are gone).
  for (const [k, p] of beforeStubs) {
    const now = afterStubs.get(k);
    if (now === undefined || formatPath(now) !== formatPath(p)) forgetBelow(inc, k, { including: true });
  }
  // A segment no longer reachable (removed by a later commit). That commit's own change does not always tell its
  // subscribers: a fold or re-cut carries this record's value into new segments, and its diff finds it unchanged.
  // Unless the record changed no content (a revocation's stamp), clients are told to read it.
  if (base === undefined) return changesContent(record) ? UNLOCATED : undefined;
  const tx = ownTransaction(record);
  const mine = ofCommit(batch.written, tx);
  // Its stubs, and those its new children hold (a cut moves stubs along into them): their paths are known now.
  if (after !== undefined) learnTree(inc, base, after, new Map(mine.map((m) => [m.key, m.fragment])));
  const writtenOf = fragmentsOf(mine);
  const removedOf = fragmentsOf([...batch.removed].map(([k, fragment]) => ({ key: k, fragment })));
  if (tx !== undefined && isChunkKey(key) && newImage?.[A.partners] !== undefined) {
    // A chunk a commit rewrote in place (an insert or delete before the newest elements): the array's segment's
    // record, of the same commit, reports the change.
    return undefined;
  }
  if (tx !== undefined && chunkStubOf(after) && newImage?.[A.tailCommit]?.S === tx) {
    // Its chunks rewritten in place by this commit: the whole array, read; what it replaced, for the history, from
    // the chunks' old images (exactOldValues).
    return [{ path: base, value: after as Json, was: before }];
  }
  if (chunkStubOf(before) && chunkStubOf(after)) {
    // A chunked array's segment: its window of the array; one that cannot be lined up is the whole array, read, and
    // what it replaced is the record's old fragment (a chunk stub first), which the history completes (old-values.ts).
    return (
      chunkedChanges(
        base,
        before as Json[],
        after as Json[],
        writtenOf,
        mine.map((m) => m.key),
      ) ?? [{ path: base, value: after as Json, was: before }]
    );
  }
  if (isChunkKey(key)) {
    // A chunk changed in place (its elements keep their indexes): renumbered from its first index.
    return offsetBy(diffValues(before, after, base), base, (position) => chunkStart(key) + position);
  }
  return commitChanges({ base, before, after, removed: removedOf, written: writtenOf });
}

/** What completing a commit's values checks what it reads against (lib/storage/feed/commit-reads.ts). */
function commitView(key: string, record: DynamoDBRecord, batch: StreamBatch, at: number): CommitView {
  const newImage = imageOf(record.dynamodb?.NewImage);
  const tx = ownTransaction(record);
  const versions = new Map<string, number>([[key, Number(newImage?.[A.version]?.N ?? 0)]]);
  if (tx !== undefined && partnersSetBy(record).length > 0) {
    for (const [k, v] of Object.entries(newImage?.[A.partners]?.M ?? {})) versions.set(k, Number(v.N));
  }
  const pk = record.dynamodb?.Keys?.pk?.S ?? '';
  return {
    tx,
    versions,
    changedLater: (segment) =>
      (batch.positions.get(`${pk} ${segment}`) ?? []).some((p) => p.at > at && (tx === undefined || p.tx !== tx)),
  };
}

/**
 * This batch's removed segments whose old image is not what they held at position `at`: another commit's record of
 * theirs lies between (a later commit changed them, then another removed them). The others were removed before `at`,
 * or after it with nothing between: their image is their state at the commit.
 */
function staleRemovals(record: DynamoDBRecord, batch: StreamBatch, at: number): Set<string> {
  const pk = record.dynamodb?.Keys?.pk?.S ?? '';
  const tx = ownTransaction(record);
  const stale = new Set<string>();
  for (const key of batch.removed.keys()) {
    const later = (batch.positions.get(`${pk} ${key}`) ?? []).filter(
      (p) => p.at > at && (tx === undefined || p.tx !== tx),
    );
    if (later.length > 1) stale.add(key);
  }
  return stale;
}

/**
 * New children of recent commits, by `<tx> <key>`, kept across batches: a commit over 100 items writes them first
 * (their INSERTs may reach an earlier batch than its MODIFY), and their images are what it wrote, where reading
 * them later might find a later commit's values.
 */
const CARRIED_MAX = 4096;
const carried = new Map<string, Json>();

/**
 * A stream record of the content partition, as the feed reads it: a segment's (with the grant epoch its write
 * raised, when it did: a revocation's stamp), the removal of the root (the project's content is gone), or another
 * item kept in the partition (realtime's subscriptions), with its new image.
 */
export type FeedRecord =
  | { kind: 'segment'; inc: string; key: string; event: DynamoDBRecord['eventName']; epochRaisedTo?: number }
  | { kind: 'content-removed'; inc: string }
  | { kind: 'item'; inc: string; key: string; event: DynamoDBRecord['eventName']; newImage?: Image };

/** What a stream record of the table is to the feed; undefined for one outside every content partition. */
export function feedRecordOf(record: DynamoDBRecord): FeedRecord | undefined {
  const inc = incarnationOfPk(record.dynamodb?.Keys?.pk?.S);
  const key = record.dynamodb?.Keys?.sk?.S;
  // An import's shadow content is no project's: nothing of it is a change anyone sees (docs/design/backup.md §3).
  if (inc === undefined || key === undefined || isShadowIncarnation(inc)) return undefined;
  const event = record.eventName;
  if (!isSegmentKey(key)) return { kind: 'item', inc, key, event, newImage: imageOf(record.dynamodb?.NewImage) };
  if (event === 'REMOVE' && key === ROOT_KEY) return { kind: 'content-removed', inc };
  const oldEpoch = Number(record.dynamodb?.OldImage?.[A.grantEpoch]?.N ?? Number.NaN);
  const newEpoch = Number(record.dynamodb?.NewImage?.[A.grantEpoch]?.N ?? Number.NaN);
  return { kind: 'segment', inc, key, event, ...(newEpoch > oldEpoch ? { epochRaisedTo: newEpoch } : {}) };
}

/**
 * What one batch of stream records holds for the commits it carries: new children by their commit's `tx` (kept
 * across batches: a commit over 100 items writes them first, so their INSERTs may reach an earlier batch than its
 * MODIFY), removed segments, partners' MODIFYs, and where each segment's records are.
 */
export function readStreamBatch(records: readonly DynamoDBRecord[]): StreamBatch {
  const batch: StreamBatch = {
    written: new Map(carried),
    removed: new Map(),
    partners: new Map(),
    positions: new Map(),
    priorImages: new Map(),
    afterImages: new Map(),
  };
  const { written, removed } = batch;
  for (const [at, record] of records.entries()) {
    const key = record.dynamodb?.Keys?.sk?.S;
    if (!isSegmentKey(key)) continue;
    const pk = record.dynamodb?.Keys?.pk?.S ?? '';
    if (isShadowIncarnation(incarnationOfPk(pk) ?? '')) continue;
    const seen = batch.positions.get(`${pk} ${key}`) ?? [];
    seen.push({ at, tx: record.dynamodb?.NewImage?.[A.transaction]?.S });
    batch.positions.set(`${pk} ${key}`, seen);
    const tx = record.eventName === 'MODIFY' ? ownTransaction(record) : undefined;
    const prior = tx === undefined ? undefined : fragmentOf(imageOf(record.dynamodb?.OldImage));
    if (tx !== undefined && prior !== undefined) batch.priorImages.set(`${tx} ${key}`, prior);
    const after = tx === undefined ? undefined : fragmentOf(imageOf(record.dynamodb?.NewImage));
    if (tx !== undefined && after !== undefined) batch.afterImages.set(`${tx} ${key}`, after);
    if (tx !== undefined && record.dynamodb?.NewImage?.[A.partnerCommit]?.S === tx) {
      batch.partners.set(`${tx} ${key}`, record);
    } else if (record.eventName === 'INSERT') {
      const image = imageOf(record.dynamodb?.NewImage);
      const tx = image?.[A.transaction]?.S;
      const fragment = fragmentOf(image);
      if (tx !== undefined && fragment !== undefined) {
        written.set(`${tx} ${key}`, fragment);
        setBounded(carried, `${tx} ${key}`, fragment, CARRIED_MAX);
      }
    } else if (record.eventName === 'REMOVE') {
      const fragment = fragmentOf(imageOf(record.dynamodb?.OldImage));
      if (fragment !== undefined) {
        removed.set(key, fragment);
        const inc = incarnationOfPk(pk);
        if (inc !== undefined) carryRemoved(inc, key, fragment);
      }
    }
  }
  return batch;
}

/**
 * A commit the feed decoded. `unchanged`: a stamped commit that changed nothing (the history logs it all the same: a
 * read at a revision waits for the stamps it meets to be logged). `changed`: its top segment's new version, and its
 * changes (undefined: read the value again) as the history keeps them and as subscriptions are sent them.
 */
export type DecodedCommit =
  | { kind: 'unchanged'; stamp: Stamp }
  | {
      kind: 'changed';
      version: number;
      stamp?: Stamp;
      /** The changes with their values read back, a `was` as far as the batch's records held it (trimTo knows a
       * part not there); undefined: read again. */
      changes?: Change[];
      /** For the history: the changes with exact old values (a `was` that cannot be made exact dropped). */
      history?: Change[];
      /** Old values naming segments this commit removed in records still to come (completeAwaited). */
      awaited: AwaitedOld[];
      /** Where the commit changed things; undefined when not all known (the history rewinds no path past it). */
      touched?: Path[];
    };

/**
 * One commit: its MODIFY record (at position `at` of the batch), with the batch's records it wrote (same `tx`) and
 * removed. A commit that changed several segments in place (a batch on a chunked array beside other paths) is one
 * commit, from its top segment's record: its partners' records (`pa` = the commit) say nothing of their own, and
 * their changes join the top's (read whole when a partner's record is not in this stream batch). Undefined when the
 * record is no commit of its own, or an unstamped one that changed nothing a client sees.
 */
export async function decodeCommit(
  inc: string,
  key: string,
  record: DynamoDBRecord,
  batch: StreamBatch,
  at: number,
): Promise<DecodedCommit | undefined> {
  const newImage = imageOf(record.dynamodb?.NewImage);
  const tx = ownTransaction(record);
  if (tx !== undefined && newImage?.[A.partnerCommit]?.S === tx) {
    // Learn its stubs and paths all the same; the top segment's record reports its change.
    await recordChanges(inc, key, record, batch);
    return undefined;
  }
  const own = await recordChanges(inc, key, record, batch);
  const stamp = stampOfRecord(record);
  if (key === ROOT_KEY && tx !== undefined && stamp?.operation === 'import') {
    // An import's switch (lib/storage/import.ts): the whole content replaced, too large to send or keep. One
    // message at the root (`changed`: read it), one history entry without old values; its copies' INSERTs and the
    // old content's REMOVEs say nothing of their own.
    return {
      kind: 'changed',
      version: Number(newImage?.[A.version]?.N ?? 0),
      stamp,
      changes: undefined,
      awaited: [],
      touched: [[]],
    };
  }
  const unchanged = (): DecodedCommit | undefined => (stamp ? { kind: 'unchanged', stamp } : undefined);
  if (own === undefined) return unchanged();
  const derived = own === UNLOCATED ? [] : [...own];
  /** A change that cannot be read back (or placed): the message says the value changed, and clients read it. */
  let unread = own === UNLOCATED;
  /** Where the commit changed things is not all known (the history cannot rewind any path past it). */
  let placeless = unread;
  const partners = tx === undefined ? [] : partnersSetBy(record).filter((k) => k !== key);
  for (const partner of partners) {
    const theirs = batch.partners.get(`${tx} ${partner}`);
    if (theirs) {
      const changes = await recordChanges(inc, partner, theirs, batch);
      if (changes === UNLOCATED) unread = true;
      else derived.push(...(changes ?? []));
      continue;
    }
    // Not in this batch of records (a stream need not keep a transaction's records together): read whole. A
    // bucket holds part of its object, and which members the commit changed is in its record alone.
    if (isBucketKey(partner)) {
      unread = true;
      placeless = true;
      continue;
    }
    const path = await pathOf(inc, partner);
    if (path !== undefined) derived.push({ path, value: new Stub(partner) });
  }
  if (derived.length === 0 && !unread) return unchanged();
  const view = commitView(key, record, batch, at);
  // Segments it changed in place, as its own records left them: read later, they may hold a later commit's values
  // or be gone.
  const left = ofCommit(batch.afterImages, tx);
  // Segments a later commit of this batch removed, untouched between: their last image is their state at this one.
  const stale = staleRemovals(record, batch, at);
  const removed = [...batch.removed].filter(([k]) => !stale.has(k)).map(([k, fragment]) => ({ key: k, fragment }));
  const changes = unread ? undefined : await complete(inc, derived, { ...view, own: left, removed });
  // The history keeps the values the changes replaced, made exact (a stub in one is read as it was).
  const former = { removed: batch.removed, stale, prior: ofCommit(batch.priorImages, tx) };
  const exact = changes && (await exactOldValues(inc, changes, { ...view, ...former, stampTime: stamp?.time }));
  return {
    kind: 'changed',
    version: Number(newImage?.[A.version]?.N ?? 0),
    stamp,
    changes,
    history: exact?.changes,
    awaited: exact?.awaited ?? [],
    touched: placeless ? undefined : derived.map((c) => c.path),
  };
}
