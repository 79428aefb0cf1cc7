// The stream consumer: DynamoDB Streams records of the table → one change per committed write → the change log, the
// hooks, and every subscription it touches (docs/design/realtime.md). Runs in the stream Lambda and, locally, in the
// local server fed by lib/local/stream.ts; one batch at a time, in stream order.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { AccessProof } from '../auth/access';
import { setBounded } from '../config/bounded';
import { realtimeSendConcurrency } from '../config/env';
import { HttpError } from '../config/errors';
import {
  ROOT_KEY,
  chunkCount,
  byChunkStart,
  chunkStart,
  chunkStubOf,
  fragmentsOf,
  isBucketKey,
  isChunkKey,
} from '../content/fragments';
import { type Json, Stub } from '../content/json';
import { fromAttribute } from '../dynamo/attributes';
import { formatPath, type Segments } from '../paths';
import { A } from '../schema/attributes';
import { projectOfIncarnation } from '../store/segments';
import { type Change, commitChanges, diffValues, stubPaths, toWire, trimTo } from './changes';
import { onCommittedChange } from './hooks';
import { MAX_MESSAGE_BYTES, encode, encodeForEach, encodeWithin } from './messages';
import {
  type CommitRecord,
  SUBSCRIPTION_PREFIX,
  type Subscription,
  changesSince,
  deleteSubscription,
  lastRevision,
  logChange,
  markStarted,
  querySubscriptions,
  readSubscription,
  removeConnection,
  removeSubscription,
} from './records';
import { forgetBelow, learnTree, pathOf } from './segment-paths';
import { forgetReads, noteReads, readsFrom } from './read-access';
import { type CommitView, complete } from './commit-reads';
import { revisionFor } from './revisions';
import { type AwaitedOld, completeAwaited, exactOldValues, stampOfRecord } from './history';
import { sendTo } from './sender';
import { readSnapshot } from './snapshot';

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

/** A change without the value it replaced (`was` absent, not undefined: undefined says there was none). */
function withoutWas(change: Change): Change {
  const { was: _was, ...rest } = change;
  return rest as Change;
}

/** Runs `run` over several subscriptions at once: as many in flight as the stage allows posts (config/env.ts). */
async function eachLimited<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(realtimeSendConcurrency(), items.length) }, worker));
}

const log = (level: 'WARN' | 'ERROR', message: string, extra: Record<string, unknown> = {}) =>
  console.error(JSON.stringify({ level, message, ...extra }));

/**
 * Sends a frame to a subscription's connection; a connection gone (410) is forgotten with its subscriptions, this
 * one included (its connection's record may be gone already, and with it the list that names it).
 */
async function send(sub: Subscription, text: string): Promise<boolean> {
  try {
    if ((await sendTo(sub.connectionId, text)) === 'sent') return true;
    await removeConnection(sub.connectionId);
    await deleteSubscription(sub);
  } catch (error) {
    // One connection's trouble (throttled, a network fault) must not hold every other subscriber's changes back.
    log('WARN', 'realtime send failed', { error: String(error) });
  }
  return false;
}

async function revoke(sub: Subscription): Promise<void> {
  await send(sub, encode({ type: 'revoked', id: sub.id }));
  await removeSubscription(sub.connectionId, sub.id);
}

const projectRef = (name: string) => {
  const slash = name.indexOf('/');
  return { username: name.slice(0, slash), slug: name.slice(slash + 1) };
};

/** Whether the subscription's credential may still read its project (verified afresh, never from a cache). */
async function stillReads(sub: Subscription): Promise<boolean> {
  if (sub.expiresAt !== undefined && sub.expiresAt <= Date.now() / 1000) return false;
  try {
    const proof = await AccessProof.of(projectRef(sub.project), sub.principal, 'read');
    if (!proof.grant.fresh) await proof.renew();
    return proof.grant.inc === sub.inc;
  } catch (error) {
    if (error instanceof HttpError && error.statusCode < 500) return false;
    throw error;
  }
}

/** Changes at positions of an array renumbered from `offset` (the index of its first element). */
function offsetBy(changes: Change[], base: Segments, offset: (position: number) => number): Change[] {
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
  base: Segments,
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

/** The greatest grant epoch this consumer has re-verified subscriptions at, per incarnation. */
const verifiedEpochs = new Map<string, number>();

async function reverify(inc: string): Promise<void> {
  const subs = await querySubscriptions(inc);
  await eachLimited(subs, async (sub) => {
    if (!(await stillReads(sub))) await revoke(sub);
  });
}

/** A subscription's INSERT reached: `subscribed`, then the replay since `since` or a snapshot; then it is live. */
async function startSubscription(inc: string, image: Image): Promise<void> {
  const sub = readSubscription(inc, image);
  if (!(await stillReads(sub))) return revoke(sub);
  const subscribed = encode({ type: 'subscribed', id: sub.id, path: formatPath(sub.path), ref: sub.ref });
  // A replay only from where this credential has read without a break (read-access.ts), else a snapshot.
  const from = sub.since === undefined ? undefined : await readsFrom(inc, sub.principal);
  if (sub.since !== undefined && from !== undefined && BigInt(sub.since) >= BigInt(from)) {
    const replay = await changesSince(inc, sub.since);
    if (replay) {
      if (!(await send(sub, subscribed))) return;
      for (const entry of replay) {
        const changes = entry.changes === undefined ? undefined : trimTo(entry.changes, sub.path);
        if (changes?.length === 0) continue;
        const text = changes
          ? encodeWithin({ type: 'change', id: sub.id, revision: entry.revision, changes: changes.map(toWire) })
          : encode({ type: 'changed', id: sub.id, revision: entry.revision });
        if (!(await send(sub, text))) return;
      }
      return markStarted(sub, {});
    }
  }
  const revision = await lastRevision(inc);
  await noteReads(inc, sub.principal, revision);
  // Read no further than what could fit in a message (stored sizes are near the JSON's; the frame is checked exactly).
  const snapshot = await readSnapshot(inc, sub.path, 2 * MAX_MESSAGE_BYTES);
  if (!(await send(sub, subscribed))) return;
  const text = snapshot.tooLarge
    ? encode({ type: 'changed', id: sub.id, revision })
    : snapshot.value === undefined
      ? encode({ type: 'snapshot', id: sub.id, revision, missing: true })
      : encodeWithin({ type: 'snapshot', id: sub.id, revision, value: snapshot.value });
  if (!(await send(sub, text))) return;
  await markStarted(sub, snapshot.versions);
}

/** What a stream batch holds besides each MODIFY: new children by `<tx> <key>`, removed segments, partners' MODIFYs. */
interface Batch {
  written: Map<string, Json>;
  removed: Map<string, Json>;
  /** MODIFY records of segments changed in place beside their commit's top segment, by `<tx> <key>`. */
  partners: Map<string, DynamoDBRecord>;
  /** Each segment key's records in this batch: their positions and the commit tokens they set. */
  positions: Map<string, Array<{ at: number; tx?: string }>>;
  /** The old fragments of segments multi-item commits changed in place, by `<tx> <key>` (for the history). */
  priorImages: Map<string, Json>;
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
  batch: Batch,
): Promise<Change[] | typeof UNLOCATED | undefined> {
  const oldImage = imageOf(record.dynamodb?.OldImage);
  const newImage = imageOf(record.dynamodb?.NewImage);
  const before = fragmentOf(oldImage);
  const after = fragmentOf(newImage);
  const base = await pathOf(inc, key);
  const beforeStubs = before === undefined ? new Map() : stubPaths(before);
  const afterStubs = after === undefined ? new Map() : stubPaths(after);
  const moved =
    beforeStubs.size !== afterStubs.size ||
    [...afterStubs].some(([k, p]) => formatPath(beforeStubs.get(k) ?? ['\u0000']) !== formatPath(p));
  if (moved) forgetBelow(inc, key);
  // A segment no longer reachable (removed by a later commit). That commit's own change does not always tell its
  // subscribers: a fold or re-cut carries this record's value into new segments, and its diff finds it unchanged.
  // Unless the record changed no content (a revocation's stamp), clients are told to read it.
  if (base === undefined) return changesContent(record) ? UNLOCATED : undefined;
  const tx = ownTransaction(record);
  const mine =
    tx === undefined
      ? []
      : [...batch.written]
          .filter(([k]) => k.startsWith(`${tx} `))
          .map(([k, fragment]) => ({ key: k.slice(tx.length + 1), fragment }));
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
    // A chunked array's segment: its window of the array; one that cannot be lined up is the whole array, read.
    return (
      chunkedChanges(
        base,
        before as Json[],
        after as Json[],
        writtenOf,
        mine.map((m) => m.key),
      ) ?? [{ path: base, value: after as Json }]
    );
  }
  if (isChunkKey(key)) {
    // A chunk changed in place (its elements keep their indexes): renumbered from its first index.
    return offsetBy(diffValues(before, after, base), base, (position) => chunkStart(key) + position);
  }
  return commitChanges({ base, before, after, removed: removedOf, written: writtenOf });
}

/** What completing a commit's values checks what it reads against (commit-reads.ts). */
function commitView(key: string, record: DynamoDBRecord, batch: Batch, at: number): CommitView {
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
 * One commit: its MODIFY record, with the batch's records it wrote (same `tx`) and removed. A commit that changed
 * several segments in place (a batch on a chunked array beside other paths) is one message, from its top segment's
 * record: its partners' records (`pa` = the commit) say nothing of their own, and their changes join the top's (read
 * whole when a partner's record is not in this stream batch).
 */
async function commit(inc: string, key: string, record: DynamoDBRecord, batch: Batch, at: number): Promise<void> {
  const newImage = imageOf(record.dynamodb?.NewImage);
  const tx = ownTransaction(record);
  if (tx !== undefined && newImage?.[A.partnerCommit]?.S === tx) {
    // Learn its stubs and paths all the same; the top segment's record reports its change.
    await recordChanges(inc, key, record, batch);
    return;
  }
  const own = await recordChanges(inc, key, record, batch);
  // Every stamped commit is in the history, one that changed nothing too: a read at a revision waits for the stamps
  // it meets to be logged (docs/design/history.md, section 3).
  const stamp = stampOfRecord(record);
  const logEmpty = async () => {
    if (stamp) await logChange(inc, await revisionFor(inc, record), [], { stamp });
  };
  if (own === undefined) return logEmpty();
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
  if (derived.length === 0 && !unread) return logEmpty();
  const view = commitView(key, record, batch, at);
  const changes = unread ? undefined : await complete(inc, derived, view);
  const revision = await revisionFor(inc, record);
  const version = Number(newImage?.[A.version]?.N ?? 0);
  // The history keeps the values the changes replaced, made exact (a stub in one is read as it was).
  const removed = removedLookup(inc, batch);
  const prior = (segment: string) => (tx === undefined ? undefined : batch.priorImages.get(`${tx} ${segment}`));
  const exact = changes && (await exactOldValues(inc, changes, { ...view, stampTime: stamp?.time, removed, prior }));
  const kept: CommitRecord = { stamp, touched: placeless ? undefined : derived.map((c) => c.path) };
  await logChange(inc, revision, exact?.changes, kept);
  // Old values naming segments this commit removed in records still to come: logged again once they are here.
  if (exact && exact.awaited.length > 0) {
    setBounded(awaiting, `${inc} ${revision}`, { inc, revision, ...exact, record: kept }, AWAITING_MAX);
  }
  // A whole chunked array's old value is its record's fragment (a chunk stub first), which only the history
  // completes: a subscription below it gets the new value there, as before.
  const live = changes?.map((c) => (chunkStubOf(c.was) ? withoutWas(c) : c));
  const subs = await querySubscriptions(inc);
  const wire = changes?.map(toWire) ?? [];
  if (onCommittedChange.length > 0) {
    const project = await projectOfIncarnation(inc);
    for (const hook of onCommittedChange) await hook({ inc, project, revision, changes: wire });
  }
  const now = Date.now() / 1000;
  // Matched to the change once per subscription path, and encoded once: its subscribers' frames differ by id only.
  const frames = new Map<string, ((id: string) => string) | undefined>();
  const frameFor = (path: Segments) => {
    const at = formatPath(path);
    if (!frames.has(at)) {
      const inside = live && trimTo(live, path);
      frames.set(
        at,
        !inside
          ? encodeForEach({ type: 'changed', revision })
          : inside.length === 0
            ? undefined
            : encodeForEach({ type: 'change', revision, changes: inside.map(toWire) }),
      );
    }
    return frames.get(at);
  };
  await eachLimited(subs, async (sub) => {
    // Not started: its snapshot is read later and will hold this commit.
    if (!sub.started) return;
    const seen = sub.versions[key];
    if (seen !== undefined && version <= seen) return;
    if (sub.expiresAt !== undefined && sub.expiresAt <= now) return revoke(sub);
    const frame = frameFor(sub.path);
    if (frame) await send(sub, frame(sub.id));
  });
}

/** The project's content is gone (its root deleted with the project): every subscription ends. */
async function endProject(inc: string): Promise<void> {
  await eachLimited(await querySubscriptions(inc), revoke);
}

/** Old images of segments recent commits removed, by `<inc> <key>`: the old values a commit replaced hold them. */
const REMOVED_MAX = 4096;
const removedCarried = new Map<string, Json>();

/** Commits logged without some old values, waiting for the records of the segments they removed. */
const AWAITING_MAX = 256;
const awaiting = new Map<
  string,
  { inc: string; revision: string; changes: Change[]; awaited: AwaitedOld[]; record: CommitRecord }
>();

/** Removed segments' old fragments known for an incarnation: this batch's and recent batches'. */
function removedLookup(inc: string, batch: Pick<Batch, 'removed'>): (key: string) => Json | undefined {
  // Built at the first look-up: most commits' old values hold no stub.
  let lookup: ((key: string) => Json | undefined) | undefined;
  return (key) => {
    if (!lookup) {
      const prefix = `${inc} `;
      const known = [...removedCarried]
        .filter(([k]) => k.startsWith(prefix))
        .map(([k, fragment]) => ({ key: k.slice(prefix.length), fragment }));
      lookup = fragmentsOf([...known, ...[...batch.removed].map(([k, fragment]) => ({ key: k, fragment }))]);
    }
    return lookup(key);
  };
}

/** Logs again, now whole, the commits whose removed segments' records this batch brought. */
async function completeAwaiting(): Promise<void> {
  for (const [id, entry] of awaiting) {
    const changes = completeAwaited(entry.changes, entry.awaited, removedLookup(entry.inc, { removed: new Map() }));
    if (!changes) continue;
    await logChange(entry.inc, entry.revision, changes, entry.record);
    awaiting.delete(id);
  }
}

/**
 * New children of recent commits, by `<tx> <key>`, kept across batches: a commit over 100 items writes them first
 * (their INSERTs may reach an earlier batch than its MODIFY), and their images are what it wrote, where reading
 * them later might find a later commit's values.
 */
const CARRIED_MAX = 4096;
const carried = new Map<string, Json>();

/** Handles one batch of stream records, in order. */
export async function consume(records: readonly DynamoDBRecord[]): Promise<void> {
  // What this batch wrote and removed, for the commits that name them: new children by their commit's `tx`, and
  // the records of segments changed in place beside a commit's top segment.
  const batch: Batch = {
    written: new Map(carried),
    removed: new Map(),
    partners: new Map(),
    positions: new Map(),
    priorImages: new Map(),
  };
  const { written, removed } = batch;
  for (const [at, record] of records.entries()) {
    const key = record.dynamodb?.Keys?.sk?.S;
    if (!key?.startsWith('/')) continue;
    const pk = record.dynamodb?.Keys?.pk?.S ?? '';
    const seen = batch.positions.get(`${pk} ${key}`) ?? [];
    seen.push({ at, tx: record.dynamodb?.NewImage?.[A.transaction]?.S });
    batch.positions.set(`${pk} ${key}`, seen);
    const tx = record.eventName === 'MODIFY' ? ownTransaction(record) : undefined;
    const prior = tx === undefined ? undefined : fragmentOf(imageOf(record.dynamodb?.OldImage));
    if (tx !== undefined && prior !== undefined) batch.priorImages.set(`${tx} ${key}`, prior);
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
        if (pk.startsWith('C#')) setBounded(removedCarried, `${pk.slice(2)} ${key}`, fragment, REMOVED_MAX);
      }
    }
  }
  for (const [at, record] of records.entries()) {
    const pk = record.dynamodb?.Keys?.pk?.S;
    const key = record.dynamodb?.Keys?.sk?.S;
    if (!pk?.startsWith('C#') || key === undefined) continue;
    const inc = pk.slice(2);
    if (key.startsWith(SUBSCRIPTION_PREFIX)) {
      const image = imageOf(record.dynamodb?.NewImage);
      if (record.eventName === 'INSERT' && image) await startSubscription(inc, image);
      continue;
    }
    if (!key.startsWith('/')) continue;
    if (record.eventName === 'REMOVE') {
      if (key === ROOT_KEY) await endProject(inc);
      continue;
    }
    const oldEpoch = Number(record.dynamodb?.OldImage?.[A.grantEpoch]?.N ?? Number.NaN);
    const newEpoch = Number(record.dynamodb?.NewImage?.[A.grantEpoch]?.N ?? Number.NaN);
    if (newEpoch > oldEpoch && newEpoch > (verifiedEpochs.get(inc) ?? -1)) {
      // A revocation stamps every segment: the first stamp seen re-verifies the project's subscriptions.
      verifiedEpochs.set(inc, newEpoch);
      await forgetReads(inc);
      await reverify(inc);
    }
    if (record.eventName === 'MODIFY') await commit(inc, key, record, batch, at);
  }
  if (awaiting.size > 0) await completeAwaiting();
}
