// The stream consumer: DynamoDB Streams records of the table → one change per committed write → the change log, the
// hooks, and every subscription it touches (docs/design/realtime.md). Runs in the stream Lambda and, locally, in the
// local server fed by lib/local/stream.ts; one batch at a time, in stream order.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { AccessProof } from '../auth/access';
import { setBounded } from '../config/bounded';
import { realtimeSendConcurrency, streamBatchSize } from '../config/env';
import { Refusal } from '../config/errors';
import { logger } from '../config/logger';
import { type Path, formatPath } from '../paths';
import {
  type AwaitedOld,
  type Change,
  type DecodedCommit,
  completeAwaited,
  decodeCommit,
  feedRecordOf,
  openCommitStart,
  projectOfIncarnation,
  readSnapshot,
  readStreamBatch,
  toWire,
  trimTo,
} from '../storage';
import { onCommittedChange } from './hooks';
import { MAX_MESSAGE_BYTES, encode, encodeForEach, encodeWithin } from './messages';
import { type CommitRecord, changesSince, lastRevision, logChange } from './change-log';
import {
  SUBSCRIPTION_PREFIX,
  type Subscription,
  deleteSubscription,
  markStarted,
  querySubscriptions,
  readSubscription,
  removeConnection,
  removeSubscription,
} from './records';
import { forgetReads, noteReads, readsFrom } from './read-access';
import { revisionFor } from './revisions';
import { sendTo } from './sender';

type Image = Record<string, AttributeValue>;

/** Runs `run` over several subscriptions at once: as many in flight as the stage allows posts (config/env.ts). */
async function eachLimited<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(realtimeSendConcurrency(), items.length) }, worker));
}

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
    logger.warn('realtime send failed', { error: String(error) });
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
    if (error instanceof Refusal) return false;
    throw error;
  }
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

/**
 * One commit the feed decoded from its top segment's record (segment `key`): logged (with the old values the history
 * keeps), handed to the hooks, and sent to every started subscription it touches (trimmed to its path), or `changed`
 * when its values must be read again. A stamped commit that changed nothing is logged alone.
 */
async function deliver(inc: string, key: string, record: DynamoDBRecord, decoded: DecodedCommit): Promise<void> {
  const revision = await revisionFor(inc, record);
  if (decoded.kind === 'unchanged') return logChange(inc, revision, [], { stamp: decoded.stamp });
  const { changes, version } = decoded;
  const kept: CommitRecord = { stamp: decoded.stamp, touched: decoded.touched };
  // Old values naming segments this commit removed in records still to come: logged again once they are here, and
  // reads at a revision before it wait for that meanwhile.
  const completing = decoded.history !== undefined && decoded.awaited.length > 0;
  await logChange(inc, revision, decoded.history, completing ? { ...kept, completing } : kept);
  if (completing) {
    const entry = { inc, revision, changes: decoded.history, awaited: decoded.awaited, record: kept };
    setBounded(awaiting, `${inc} ${revision}`, entry, AWAITING_MAX);
  }
  const subs = await querySubscriptions(inc);
  const wire = changes?.map(toWire) ?? [];
  if (onCommittedChange.length > 0) {
    const project = await projectOfIncarnation(inc);
    // A change of the whole content that was not read (an import's switch): every hook is told to read it again.
    const unread = changes === undefined && decoded.touched?.some((path) => path.length === 0) === true;
    for (const hook of onCommittedChange)
      await hook({ inc, project, revision, changes: wire, ...(unread ? { unread: true as const } : {}) });
  }
  const now = Date.now() / 1000;
  // Matched to the change once per subscription path, and encoded once: its subscribers' frames differ by id only.
  const frames = new Map<string, ((id: string) => string) | undefined>();
  const frameFor = (path: Path) => {
    const at = formatPath(path);
    if (!frames.has(at)) {
      const inside = changes && trimTo(changes, path);
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

/** Commits logged without some old values, waiting for the records of the segments they removed. */
const AWAITING_MAX = 256;
const awaiting = new Map<
  string,
  { inc: string; revision: string; changes: Change[]; awaited: AwaitedOld[]; record: CommitRecord }
>();

/** Logs again, now whole, the commits whose removed segments' records this batch brought. */
async function completeAwaiting(): Promise<void> {
  for (const [id, entry] of awaiting) {
    const changes = completeAwaited(entry.inc, entry.changes, entry.awaited);
    if (!changes) continue;
    await logChange(entry.inc, entry.revision, changes, entry.record);
    awaiting.delete(id);
  }
}

/** The project's content is gone (its root deleted with the project): every subscription ends. */
async function endProject(inc: string): Promise<void> {
  await eachLimited(await querySubscriptions(inc), revoke);
}

/**
 * Handles one batch of stream records, in order. A full batch whose last commit may go on in the next is handled up
 * to that commit: `deferred` names its first record, from which the event source hands the records over again.
 */
export async function consume(
  all: readonly DynamoDBRecord[],
  options: { batchSize: number } = { batchSize: streamBatchSize() },
): Promise<{ deferred?: string }> {
  const cut = openCommitStart(all, options);
  const records = cut === undefined ? all : all.slice(0, cut);
  // What this batch wrote and removed, for the commits that name them (lib/storage's feed).
  const batch = readStreamBatch(records);
  for (const [at, record] of records.entries()) {
    const item = feedRecordOf(record);
    if (item === undefined) continue;
    const { inc } = item;
    if (item.kind === 'item') {
      if (item.key.startsWith(SUBSCRIPTION_PREFIX) && item.event === 'INSERT' && item.newImage)
        await startSubscription(inc, item.newImage);
      continue;
    }
    if (item.kind === 'content-removed') {
      await endProject(inc);
      continue;
    }
    if (item.event === 'REMOVE') continue;
    const epoch = item.epochRaisedTo;
    if (epoch !== undefined && epoch > (verifiedEpochs.get(inc) ?? -1)) {
      // A revocation stamps every segment: the first stamp seen re-verifies the project's subscriptions.
      verifiedEpochs.set(inc, epoch);
      await forgetReads(inc);
      await reverify(inc);
    }
    if (item.event !== 'MODIFY') continue;
    const decoded = await decodeCommit(inc, item.key, record, batch, at);
    if (decoded) await deliver(inc, item.key, record, decoded);
  }
  if (awaiting.size > 0) await completeAwaiting();
  const deferred = cut === undefined ? undefined : all[cut]?.dynamodb?.SequenceNumber;
  return deferred === undefined ? {} : { deferred };
}
