// An import session's item (docs/design/backup.md §3): in the content's partition beside the pending-commit markers,
// and, like them, in the sweep index, so a session nobody finishes is deleted with everything it wrote.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type TransactWriteItem,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tableName } from '../../config/env';
import type { PiecesState } from '../../content/pieces';
import { batchWriteAll } from '../../dynamo/batch-write';
import { dynamo } from '../../dynamo/client';
import { contentPk } from '../layout/keys';
import { MARKER, SWEEP_PARTITION } from './markers';
import { parseJsonText } from '../../content/json';

/** Sort keys of import sessions: outside every segment prefix (`/…`), apart from markers (`~p/`) and subscriptions. */
export const IMPORT_PREFIX = '~i/';

/** The session's attributes besides the marker's own (kind, orphans, times: MARKER). */
const SESSION = {
  /** The last page applied (0: none yet). */
  sequence: 'seq',
  /** What the pages left open (PiecesState, JSON text). */
  state: 'st',
  /** When a page began being applied and has not finished (epoch ms): the copy waits for it. */
  page: 'pg',
  /** A page cut short: how many of its write groups are applied, and a digest of its pieces (it must come again). */
  pageDone: 'pd',
  pageDigest: 'ph',
  /** The copy's id (copiedKey), set when the commit starts copying: no page applies after it. */
  copyId: 'x',
  /** The last shadow key copied, and how many were. */
  copiedUpTo: 'cp',
  copied: 'n',
} as const;

/**
 * `open`: pages arrive, or the copy runs; `switched`: the new content is in, and what the old content and the shadow
 * left is being deleted (the session is then a `deletes` marker); `abandoned`: deleted, or claimed by the sweeper.
 */
export type SessionKind = 'open' | 'switched' | 'abandoned';
const KIND_VALUE: Record<SessionKind, string> = { open: 'import', switched: 'deletes', abandoned: 'abandoned' };

export interface ImportSession {
  inc: string;
  id: string;
  kind: SessionKind;
  sequence: number;
  state: PiecesState;
  /** When a page still being applied began (epoch ms). */
  pageSince?: number;
  /** The next page, cut short: its write groups applied, and its pieces' digest. */
  partial?: { done: number; digest: string };
  copyId?: string;
  copiedUpTo?: string;
  copied: number;
  /** Epoch ms of the last touch (the sweep time). */
  touched: number;
  /** After the switch: the roots of the old content left to delete. */
  orphans: string[];
}

/** The key of an import session's item, in the content's partition. */
export const sessionKey = (inc: string, id: string) => ({
  pk: { S: contentPk(inc) },
  sk: { S: `${IMPORT_PREFIX}${id}` },
});

const kindOf = (value: string | undefined): SessionKind =>
  value === 'import' ? 'open' : value === 'deletes' ? 'switched' : 'abandoned';

/** A session as its item holds it. */
export function readSessionItem(inc: string, item: Record<string, AttributeValue>): ImportSession {
  return {
    inc,
    id: (item.sk?.S ?? '').slice(IMPORT_PREFIX.length),
    kind: kindOf(item[MARKER.kind]?.S),
    sequence: Number(item[SESSION.sequence]?.N ?? 0),
    state: parseJsonText(item[SESSION.state]?.S ?? '{"started":false,"open":[]}') as PiecesState,
    pageSince: item[SESSION.page]?.N === undefined ? undefined : Number(item[SESSION.page]?.N),
    partial:
      item[SESSION.pageDigest]?.S === undefined
        ? undefined
        : { done: Number(item[SESSION.pageDone]?.N ?? 0), digest: item[SESSION.pageDigest]?.S as string },
    copyId: item[SESSION.copyId]?.S,
    copiedUpTo: item[SESSION.copiedUpTo]?.S,
    copied: Number(item[SESSION.copied]?.N ?? 0),
    touched: Number(item[MARKER.sweepSk]?.N ?? 0),
    orphans: (item[MARKER.orphans]?.L ?? []).map((v) => v.S as string),
  };
}

/** A new session's item: open, no page yet, in the sweep index from now. */
export async function putSession(inc: string, id: string, now = Date.now()): Promise<void> {
  await dynamo.send(
    new PutItemCommand({
      TableName: tableName(),
      Item: {
        ...sessionKey(inc, id),
        [MARKER.kind]: { S: KIND_VALUE.open },
        [SESSION.sequence]: { N: '0' },
        [MARKER.at]: { N: String(now) },
        [MARKER.sweepPk]: { S: SWEEP_PARTITION },
        [MARKER.sweepSk]: { N: String(now) },
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** The session, read consistently; undefined when there is none. */
export async function readSession(inc: string, id: string): Promise<ImportSession | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: sessionKey(inc, id), ConsistentRead: true }),
  );
  return Item ? readSessionItem(inc, Item) : undefined;
}

/** Every session of the project's content (each one item; a project has few at once). */
export async function listSessions(inc: string): Promise<ImportSession[]> {
  const sessions: ImportSession[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: contentPk(inc) }, ':prefix': { S: IMPORT_PREFIX } },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) sessions.push(readSessionItem(inc, item));
    start = page.LastEvaluatedKey;
  } while (start);
  return sessions;
}

/** One change to the session, on a condition; false when the condition failed (the caller reads it again). */
interface SessionUpdate {
  set: Record<string, AttributeValue>;
  remove?: readonly string[];
  /** A condition over `#k`, the attributes set or removed (`#<name>`) and `:`-values of its own. */
  condition: string;
  values?: Record<string, AttributeValue>;
}

function compileUpdate(session: ImportSession, update: SessionUpdate) {
  const names: Record<string, string> = { '#k': MARKER.kind };
  const values: Record<string, AttributeValue> = { ...update.values };
  const sets = Object.entries(update.set).map(([name, value]) => {
    names[`#${name}`] = name;
    // Placeholders of their own: a condition may compare the same attribute with its value before.
    values[`:new_${name}`] = value;
    return `#${name} = :new_${name}`;
  });
  for (const name of update.remove ?? []) names[`#${name}`] = name;
  for (const name of update.condition.match(/#\w+/g) ?? []) names[name] ??= name.slice(1);
  const remove = update.remove?.length ? ` REMOVE ${update.remove.map((n) => `#${n}`).join(', ')}` : '';
  return {
    TableName: tableName(),
    Key: sessionKey(session.inc, session.id),
    UpdateExpression: `SET ${sets.join(', ')}${remove}`,
    ConditionExpression: update.condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

async function updateSession(session: ImportSession, update: SessionUpdate): Promise<boolean> {
  try {
    await dynamo.send(new UpdateItemCommand(compileUpdate(session, update)));
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

const OPEN = { ':open': { S: KIND_VALUE.open } };
const n = (value: number): AttributeValue => ({ N: String(value) });

/** A page begins: the session is touched and says a page is being applied (the copy waits for it). */
export const beginPage = (session: ImportSession, now = Date.now()) =>
  updateSession(session, {
    set: { [SESSION.page]: n(now), [MARKER.sweepSk]: n(now) },
    condition: `#k = :open AND #${SESSION.sequence} = :seq AND attribute_not_exists(#${SESSION.copyId})`,
    values: { ...OPEN, ':seq': n(session.sequence) },
  });

/** A page applied: its sequence and what it left open recorded, on the sequence before it. */
export const finishPage = (session: ImportSession, state: PiecesState, now = Date.now()) =>
  updateSession(session, {
    set: {
      [SESSION.sequence]: n(session.sequence + 1),
      [SESSION.state]: { S: JSON.stringify(state) },
      [MARKER.sweepSk]: n(now),
    },
    remove: [SESSION.page, SESSION.pageDone, SESSION.pageDigest],
    condition: `#k = :open AND #${SESSION.sequence} = :seq`,
    values: { ...OPEN, ':seq': n(session.sequence) },
  });

/** The next page cut short after `done` of its write groups: a resend of it (same digest) goes on from there. */
export const notePageProgress = (session: ImportSession, done: number, digest: string, now = Date.now()) =>
  updateSession(session, {
    set: { [SESSION.pageDone]: n(done), [SESSION.pageDigest]: { S: digest }, [MARKER.sweepSk]: n(now) },
    remove: [SESSION.page],
    condition: `#k = :open AND #${SESSION.sequence} = :seq`,
    values: { ...OPEN, ':seq': n(session.sequence) },
  });

/**
 * The copy begins under `copyId`: from now on no page applies. Refused while a page that began less than
 * `pageLifeMs` ago may still be writing the shadow content.
 */
export const beginCopy = (session: ImportSession, copyId: string, pageLifeMs: number, now = Date.now()) =>
  updateSession(session, {
    set: { [SESSION.copyId]: { S: copyId }, [MARKER.sweepSk]: n(now) },
    condition: `#k = :open AND attribute_not_exists(#${SESSION.copyId}) AND attribute_not_exists(#${SESSION.pageDigest}) AND (attribute_not_exists(#${SESSION.page}) OR #${SESSION.page} < :stale)`,
    values: { ...OPEN, ':stale': n(now - pageLifeMs) },
  });

/** How far the copy got (the next commit call goes on from there). */
export const noteCopied = (session: ImportSession, upTo: string | undefined, copied: number, now = Date.now()) =>
  updateSession(session, {
    set: {
      ...(upTo === undefined ? {} : { [SESSION.copiedUpTo]: { S: upTo } }),
      [SESSION.copied]: n(copied),
      [MARKER.sweepSk]: n(now),
    },
    condition: `#k = :open AND #${SESSION.copyId} = :x`,
    values: { ...OPEN, ':x': { S: session.copyId as string } },
  });

/**
 * The switch's own item: the session becomes a `deletes` marker naming the old content's roots left to delete
 * (and, by its id, the shadow content), on its still being open with this copy (a sweeper's claim refuses it).
 */
export function switchSession(session: ImportSession, orphans: readonly string[], now = Date.now()): TransactWriteItem {
  return {
    Update: compileUpdate(session, {
      set: {
        [MARKER.kind]: { S: KIND_VALUE.switched },
        [MARKER.orphans]: { L: orphans.map((k) => ({ S: k })) },
        [MARKER.sweepSk]: n(now),
      },
      remove: [SESSION.state, SESSION.copiedUpTo, SESSION.page, SESSION.pageDone, SESSION.pageDigest],
      condition: `#k = :open AND #${SESSION.copyId} = :x`,
      values: { ...OPEN, ':x': { S: session.copyId as string } },
    }),
  };
}

/**
 * The session abandoned (DELETE, or the sweeper): no page, copy or switch applies after this. `touched`: only if it
 * was not touched since (the sweeper's claim on a session it found idle).
 */
export const abandonSession = (session: ImportSession, touched?: number, now = Date.now()) =>
  updateSession(session, {
    set: { [MARKER.kind]: { S: KIND_VALUE.abandoned }, [MARKER.sweepSk]: n(now) },
    condition: touched === undefined ? '#k = :open' : '#k = :open AND #swt = :touched',
    values: { ...OPEN, ...(touched === undefined ? {} : { ':touched': n(touched) }) },
  });

/** The session's item deleted: the last step, once everything it names is gone. */
export const deleteSession = (session: ImportSession) =>
  batchWriteAll([{ DeleteRequest: { Key: sessionKey(session.inc, session.id) } }]);
