// Writing segments: a new segment's item, a change over several segments (TransactWriteItems, with a marker when
// it is larger than one), the project's root, stamping a new grant epoch, deleting a project's content.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  PutItemCommand,
  TransactWriteItemsCommand,
  type TransactWriteItem,
  TransactionCanceledException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { tableName } from '../../config/env';
import { ROOT_KEY } from '../layout/keys';
import { stubsUnderOf } from '../layout/stubs';
import { type Json, storedSize } from '../../content/json';
import { toAttribute } from '../../dynamo/attributes';
import { batchWriteAll } from '../../dynamo/batch-write';
import { dynamo } from '../../dynamo/client';
import type { UpdateRequest } from '../../expressions';
import { A, slotAttribute } from '../../schema/attributes';
import { type RequestRecord, recordPut, recordedBefore } from '../request-records';
import { MARKER_PREFIX, abandon, markerKey, putMarker, settleMarker } from './markers';
import { querySubtree } from './read';
import { forgetLocations } from '../memory';
import { segmentItemKey } from '../segment';
import { MAX_CHANGE_BYTES, MAX_TRANSACTION_ITEMS, changeTooLarge } from '../refusals';

/** A new segment's item: written before anything names it, so no reader or writer can meet it half-made. */
export function newSegmentItem(
  inc: string,
  key: string,
  fragment: Json,
  made: {
    /** The grant epoch it is written at. */
    epoch: number;
    /** The request's token slot and what it holds. */
    token?: { slot: number; value: string };
    /** The commit that writes it (several items). */
    tx?: string;
    /** The request's write stamp, as its updated segments carry it (lib/expressions compileEnvelope). */
    stamp?: string;
  },
): Record<string, AttributeValue> {
  const { epoch, token, tx, stamp } = made;
  return {
    // The change that made it: a retry of that request which meets this segment first knows it landed.
    ...(token ? { [slotAttribute(token.slot)]: { S: token.value } } : {}),
    ...segmentItemKey(inc, key),
    [A.content]: toAttribute(fragment),
    [A.version]: { N: '1' },
    [A.etag]: { S: randomBytes(16).toString('base64url') },
    [A.bytes]: { N: String(storedSize(fragment)) },
    [A.grantEpoch]: { N: String(epoch) },
    // Writes prove the grant by epoch and incarnation (lib/expressions compileAccess), as on the project's head.
    [A.incarnation]: { S: inc },
    // A cut can leave stubs in a new segment too: writes that do not read first must see them.
    [A.stubsUnder]: toAttribute(stubsUnderOf(fragment)),
    // Which commit wrote it: the stream consumer finds a commit's new children by it.
    ...(tx === undefined ? {} : { [A.transaction]: { S: tx } }),
    ...(stamp === undefined ? {} : { [A.writeStamp]: { S: stamp } }),
  };
}

/** A project's root segment, holding `{}`; created with the project, or by the first write if that was lost. */
export async function createRoot(inc: string, epoch: number, project?: string): Promise<void> {
  try {
    await dynamo.send(
      new PutItemCommand({
        TableName: tableName(),
        Item: { ...newSegmentItem(inc, ROOT_KEY, {}, { epoch }), ...(project ? { [A.project]: { S: project } } : {}) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** A commit's outcome; `earlier`: not applied now because the named request it belongs to applied before. */
export type Committed = { ok: true; earlier?: true } | { ok: false; item?: Record<string, AttributeValue> };

/** Whether a commit would name one segment twice (rewrite it and delete it, say): one transaction may not. */
export const namesAnItemTwice = (items: readonly { key: string }[]) =>
  new Set(items.map((i) => i.key)).size !== items.length;

/** The keys with no ancestor among them (a key prefixes every key of its subtree, birth ids being fresh). */
export function keyRoots(keys: readonly string[]): string[] {
  const roots: string[] = [];
  for (const key of [...keys].sort()) {
    const last = roots[roots.length - 1];
    if (last === undefined || !key.startsWith(last)) roots.push(key);
  }
  return roots;
}

export interface Rewrite {
  inc: string;
  epoch: number;
  /** The commit's token (newCommitToken): its updates are compiled with it stamped (lib/expressions CommitStamp). */
  tx: string;
  /** The change to the segment whose subtree is rewritten (compiled with its conditions and the commit's stamp). */
  parent: { key: string; update: UpdateRequest };
  /** Segments below it written in place in the same commit (a chunked array kept under its key, its chunks), each guarded. */
  rewritten?: readonly { key: string; update: UpdateRequest }[];
  /** New segments, named only by the parent's new fragment. */
  children: readonly { key: string; fragment: Json }[];
  /**
   * Segments the change makes unreachable, each deleted on the version read. `carried`: its content was read into the
   * new fragments, so its delete must be part of the commit (a write to it in between would otherwise be lost).
   */
  orphans: readonly { key: string; version?: number; carried?: boolean }[];
  /** The request's token, recorded in the new segments' slots too (where its written path may now be). */
  token?: { slot: number; value: string };
  /** A named request's record (docs/design/storage.md §8a): put in the commit, which it refuses if already there. */
  record?: RequestRecord;
  /** The request's write stamp (lib/schema/write-stamp.ts), carried by the new segments as by the updated ones. */
  stamp?: string;
  /**
   * A batch or patch: every segment it writes (its new ones too) in the one transaction that commits it, or 413
   * `CHANGE_TOO_LARGE` before anything is written. Only the deletes of what it drops may follow the commit. A single
   * write of a large value (`set`, `update`) writes its new segments first, behind a pending-commit marker.
   */
  oneTransaction?: boolean;
}

/**
 * Commits a change over several segments: one TransactWriteItems with the parent's update, the new children and the
 * orphans' deletes, all or nothing. A change too large for one transaction writes its children first (unreachable
 * until the parent names them), then commits the parent with as many deletes as fit, then deletes the rest.
 */
export async function commitRewrite(rewrite: Rewrite): Promise<Committed> {
  const table = tableName();
  // The commit's token, stamped in every item it writes (`tx`): the stream consumer's grouping.
  const token = rewrite.tx;
  const parent: TransactWriteItem = {
    Update: {
      TableName: table,
      Key: segmentItemKey(rewrite.inc, rewrite.parent.key),
      ...rewrite.parent.update,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const rewritten: TransactWriteItem[] = (rewrite.rewritten ?? []).map((r) => ({
    Update: {
      TableName: table,
      Key: segmentItemKey(rewrite.inc, r.key),
      ...r.update,
    },
  }));
  const puts: TransactWriteItem[] = rewrite.children.map((child) => ({
    Put: {
      TableName: table,
      Item: newSegmentItem(rewrite.inc, child.key, child.fragment, {
        epoch: rewrite.epoch,
        token: rewrite.token,
        tx: token,
        stamp: rewrite.stamp,
      }),
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  }));
  const deletes: TransactWriteItem[] = rewrite.orphans.map((orphan) => ({
    Delete: {
      TableName: table,
      Key: segmentItemKey(rewrite.inc, orphan.key),
      ...(orphan.version === undefined
        ? {}
        : {
            ConditionExpression: '#ver = :ver',
            ExpressionAttributeNames: { '#ver': A.version },
            ExpressionAttributeValues: { ':ver': { N: String(orphan.version) } },
          }),
    },
  }));
  if (namesAnItemTwice([rewrite.parent, ...(rewrite.rewritten ?? []), ...rewrite.children, ...rewrite.orphans])) {
    // Planned on a stale view (this Lambda's memory of where segments are): DynamoDB would refuse the transaction
    // as a whole (a ValidationException). Not applied; the writer reads afresh, from the root.
    forgetLocations(rewrite.inc);
    return { ok: false };
  }
  const bytes = rewrite.children.reduce((sum, c) => sum + storedSize(c.fragment) + 200, 0);
  const recorded = rewrite.record ? [recordPut(rewrite.record)] : [];
  const fits =
    1 + rewritten.length + puts.length + deletes.length + recorded.length <= MAX_TRANSACTION_ITEMS &&
    bytes <= MAX_CHANGE_BYTES;
  const carried = deletes.filter((_, i) => rewrite.orphans[i]?.carried);
  let first: TransactWriteItem[];
  let after: TransactWriteItem[] = [];
  let marker: Record<string, AttributeValue> | undefined;
  if (fits) {
    first = [parent, ...rewritten, ...puts, ...deletes, ...recorded];
  } else if (rewrite.oneTransaction) {
    // Every item it writes counted, its new segments too, the record, and the marker's own when deletes follow.
    const fixed = 2 + rewritten.length + puts.length + carried.length + recorded.length;
    if (fixed > MAX_TRANSACTION_ITEMS || bytes > MAX_CHANGE_BYTES) throw changeTooLarge();
    const dropped = deletes.filter((d) => !carried.includes(d));
    const room = MAX_TRANSACTION_ITEMS - fixed;
    first = [parent, ...rewritten, ...puts, ...carried, ...dropped.slice(0, room), ...recorded];
    after = dropped.slice(room);
    // A marker naming the deletes left for after the commit (no children: none is written before it).
    marker = markerKey(rewrite.inc, `${MARKER_PREFIX}${randomBytes(12).toString('base64url')}`);
    await putMarker(marker, rewrite.parent.key, [], keyRoots(after.map((d) => d.Delete?.Key?.sk?.S as string)));
    first.push(settleMarker(table, marker, { deletesLeft: after.length > 0 }));
  } else {
    // The parent, the segments written in place, the carried deletes, the marker's own item and the record.
    const fixed = 2 + rewritten.length + carried.length + recorded.length;
    if (fixed > MAX_TRANSACTION_ITEMS) throw changeTooLarge();
    const dropped = deletes.filter((d) => !carried.includes(d));
    const room = MAX_TRANSACTION_ITEMS - fixed;
    first = [parent, ...rewritten, ...carried, ...dropped.slice(0, room), ...recorded];
    after = dropped.slice(room);
    // First a marker naming what the next steps write and leave: a death between them leaves it to the sweeper.
    marker = markerKey(rewrite.inc, `${MARKER_PREFIX}${randomBytes(12).toString('base64url')}`);
    await putMarker(
      marker,
      rewrite.parent.key,
      keyRoots(rewrite.children.map((c) => c.key)),
      keyRoots(after.map((d) => d.Delete?.Key?.sk?.S as string)),
    );
    // The new children next: no stub names them until the commit.
    await batchWriteAll(puts.map((p) => ({ PutRequest: { Item: p.Put?.Item } })));
    first.push(settleMarker(table, marker, { deletesLeft: after.length > 0 }));
  }
  try {
    // The SDK's own retries resend this token: a transaction applied whose answer was lost is not applied again,
    // even when another write has since taken its request-token slot.
    await dynamo.send(new TransactWriteItemsCommand({ TransactItems: first, ClientRequestToken: token }));
  } catch (error) {
    if (error instanceof TransactionCanceledException) {
      // Not applied: the children written first are unreachable for good; delete them now (the sweeper would).
      if (marker)
        await abandon(rewrite.inc, marker, rewrite.oneTransaction ? [] : rewrite.children).catch(() => undefined);
      // The named request's record was there: it applied before (its answer was lost); nothing applies twice.
      const at = recorded.length > 0 ? first.indexOf(recorded[0] as TransactWriteItem) : -1;
      if (at >= 0 && recordedBefore(error, at)) return { ok: true, earlier: true };
      const reason = error.CancellationReasons?.[0];
      return { ok: false, item: reason?.Code === 'ConditionalCheckFailed' ? reason.Item : undefined };
    }
    throw error;
  }
  if (after.length > 0) {
    await batchWriteAll(after.map((d) => ({ DeleteRequest: { Key: d.Delete?.Key } })));
    // Only once every orphan is gone: an interruption before leaves the marker, and the sweeper finishes them.
    if (marker) await batchWriteAll([{ DeleteRequest: { Key: marker } }]);
  }
  return { ok: true };
}

/** One segment brought up to a grant epoch (by a revocation, or by a writer that meets one not yet stamped). */
export async function stampSegment(inc: string, key: string, epoch: number): Promise<void> {
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: segmentItemKey(inc, key),
        UpdateExpression: 'SET #ge = :ge',
        ConditionExpression: 'attribute_exists(pk) AND #ge < :ge',
        ExpressionAttributeNames: { '#ge': A.grantEpoch },
        ExpressionAttributeValues: { ':ge': { N: String(epoch) } },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** A deleted project's content: every segment of its incarnation (no later project reuses it). */
export async function deleteSegments(inc: string): Promise<void> {
  const keys = [...(await querySubtree(inc, ROOT_KEY, { keysOnly: true })).keys()];
  await batchWriteAll(keys.map((key) => ({ DeleteRequest: { Key: segmentItemKey(inc, key) } })));
}
