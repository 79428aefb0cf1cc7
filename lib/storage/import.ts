// Import (docs/design/backup.md §3): a whole content replaced atomically, at any size. The document is built page by
// page in a shadow content (a partition of its own) through the engine's ordinary writes, copied into the project's
// partition under fresh keys, unreachable, then switched in with one transaction: the root's new fragment, as many of
// the old content's deletes as fit, and the session turned into a `deletes` marker for the rest.
import { TransactWriteItemsCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { createHash, randomBytes } from 'node:crypto';
import { fragmentBytes, tableName } from '../config/env';
import { PreconditionFailed, Refusal, isRefusal } from '../config/errors';
import { type Json, type JsonObject, jsonText, storedSize } from '../content/json';
import { type PieceWrite, type WriteGroup, groupWrites, planPieces } from '../content/pieces';
import { dynamo } from '../dynamo/client';
import { currentDeadline } from '../dynamo/deadline';
import { type UpdateRequest, compileWrite } from '../expressions';
import type { Principal } from '../auth/access';
import type { ProjectRef } from '../schema/items';
import { writeBatch } from './batch';
import { guardedBase, writeEnvelope } from './commit';
import { type Grant, grantFor, partitionGrant, verifyAgain } from './grant';
import { newCommitToken } from './ids';
import { copyShadow, segmentKeysOutside } from './io/copy';
import { deleteAbandoned, finishSwitch } from './import-sweep';
import { createRoot, keyRoots } from './io/commit';
import {
  type ImportSession,
  abandonSession,
  beginCopy,
  beginPage,
  finishPage,
  listSessions,
  noteCopied,
  notePageProgress,
  putSession,
  readSession,
  switchSession,
} from './io/import-session';
import { getSegment, querySubtree } from './io/read';
import { COPY_ID_LENGTH, ROOT_KEY, copiedKey, copyPrefix, shadowIncarnation } from './layout/keys';
import { reachableFrom, rekeyStubs, stubsIn, stubsUnderOf } from './layout/stubs';
import { forgetLocations } from './memory';
import { MAX_TRANSACTION_ITEMS } from './refusals';
import { formatEtag } from './requests';
import { backoff } from './retry';
import { type Segment, etagOf, segmentItemKey } from './segment';
import { writeContent } from './write';

/** Who imports into which project: verified by the route (owner, or a key with content:write and no path limit). */
export interface ImportCaller {
  project: ProjectRef;
  principal: Principal;
}

/** A request lives at most the Lambda's timeout (10 s): a page that began longer ago than this is over. */
const PAGE_LIFE_MS = 15_000;
/**
 * What one commit call spends copying at most, or deleting after its switch, one page call writing, and what each
 * leaves of its deadline (a copy call took 9.5 s of the Lambda's 10 s on DynamoDB Local with 5 s to copy).
 */
const COPY_BUDGET_MS = 3_500;
const CLEANUP_BUDGET_MS = 2_000;
const PAGE_BUDGET_MS = 6_000;
const DEADLINE_MARGIN_MS = 2_500;
/** Switch attempts against writers racing the root. */
const SWITCH_ATTEMPTS = 5;

/** Sets in one batch at most (as many as a batch request may hold). */
const MAX_GROUP_WRITES = 100;

const SESSION_ID = /^[A-Za-z0-9_-]{16}$/;

const notFound = (id: string) =>
  new Refusal('IMPORT_NOT_FOUND', `import session ${id} does not exist (abandoned, finished, or never started)`);

/** The time a call may work until: its budget, within the request's deadline. */
const budgetUntil = (budgetMs: number) => Math.min(Date.now() + budgetMs, currentDeadline() - DEADLINE_MARGIN_MS);

/** An open session of the caller's project, or 404 IMPORT_NOT_FOUND. */
async function openSession(grant: Grant, id: string): Promise<ImportSession> {
  const session = SESSION_ID.test(id) ? await readSession(grant.inc, id) : undefined;
  if (session?.kind !== 'open') throw notFound(id);
  return session;
}

/** Starts an import: its session (a sweep marker from now on) and its shadow content's root. Returns the session id. */
export async function startImport(caller: ImportCaller): Promise<string> {
  const grant = await grantFor(caller.project, caller.principal, 'write');
  const id = randomBytes(12).toString('base64url');
  // The session first: a death before the shadow's root leaves only what the sweeper deletes.
  await putSession(grant.inc, id);
  await createRoot(shadowIncarnation(grant.inc, id), 0);
  return id;
}

/** A page's outcome: applied (false: it had been before), or cut short by its time (send it again to go on). */
export type ImportPage = { applied: boolean } | { partial: { done: number; of: number } };

/**
 * Applies page `sequence` of an import: its pieces checked against what the pages before left open (400
 * INVALID_PIECES) and written into the shadow content. A retry of the last page applied is answered without applying
 * it again (`applied: false`); any other out of order is a 409. A page that would outlast its time stops after a
 * write group and says how far it got: the same page sent again goes on from there (another page is a 409).
 */
export async function applyImportPage(
  caller: ImportCaller,
  id: string,
  page: { sequence: number; pieces: readonly unknown[] },
): Promise<ImportPage> {
  const grant = await grantFor(caller.project, caller.principal, 'write');
  for (let attempt = 1; ; attempt++) {
    const session = await openSession(grant, id);
    if (page.sequence === session.sequence) return { applied: false };
    if (session.copyId !== undefined)
      throw new Refusal(
        'IMPORT_OUT_OF_ORDER',
        'the session is being committed: no page applies after its commit began',
      );
    if (page.sequence !== session.sequence + 1)
      throw new Refusal(
        'IMPORT_OUT_OF_ORDER',
        `page ${page.sequence} is out of order: the session expects page ${session.sequence + 1} next`,
      );
    const digest = createHash('sha256').update(jsonText(page.pieces)).digest('base64url');
    if (session.partial && session.partial.digest !== digest)
      throw new Refusal(
        'IMPORT_OUT_OF_ORDER',
        `page ${page.sequence} was cut short with other pieces: send those again to finish it`,
      );
    const planned = planPieces(session.state, page.pieces);
    // Another request for the same page, or a commit, got there first: read the session again and decide anew.
    if (!(await beginPage(session))) {
      if (attempt >= 3) throw new Refusal('IMPORT_OUT_OF_ORDER', `page ${page.sequence} is being applied already`);
      continue;
    }
    const groups = groupWrites(planned.writes, { maxWrites: MAX_GROUP_WRITES, maxBytes: fragmentBytes() * 16 });
    const shadow = partitionGrant(shadowIncarnation(grant.inc, id), 0);
    const base = { project: caller.project, principal: caller.principal, grant: shadow };
    const until = budgetUntil(PAGE_BUDGET_MS);
    for (let done = session.partial?.done ?? 0; done < groups.length; done++) {
      // Out of time: how far it got is kept, and the same page sent again goes on from there.
      if (Date.now() >= until) {
        if (!(await notePageProgress(session, done, digest))) throw notFound(id);
        return { partial: { done, of: groups.length } };
      }
      await applyGroup(base, groups[done] as WriteGroup);
    }
    if (await finishPage(session, planned.state)) return { applied: true };
    // The same page applied by a request beside this one (its writes are idempotent sets): applied once.
    const now = await readSession(grant.inc, id);
    if (now && now.kind === 'open' && now.sequence >= page.sequence) return { applied: true };
    throw notFound(id);
  }
}

/** One group of a page's writes, through the engine's ordinary writes, so every layout is the engine's own. */
async function applyGroup(
  base: { project: ProjectRef; principal: Principal; grant: Grant },
  group: WriteGroup,
): Promise<void> {
  if (group.kind === 'replace') {
    await writeContent({ ...base, op: { kind: 'replace', content: group.write.value as JsonObject } });
    return;
  }
  await writeSets(base, group.writes);
}

/** Sets beside one another under one parent: one batch, halved when it would write too many segments at once. */
async function writeSets(
  base: { project: ProjectRef; principal: Principal; grant: Grant },
  writes: readonly PieceWrite[],
): Promise<void> {
  const sets = writes.map((w) => ({ kind: 'set' as const, segments: w.segments, value: w.value as Json }));
  if (sets.length === 1) {
    await writeContent({ ...base, op: sets[0] as (typeof sets)[0] });
    return;
  }
  try {
    await writeBatch({ ...base, ops: sets });
  } catch (error) {
    if (!isRefusal(error, 'CHANGE_TOO_LARGE')) throw error;
    const half = Math.ceil(writes.length / 2);
    await writeSets(base, writes.slice(0, half));
    await writeSets(base, writes.slice(half));
  }
}

/** A commit call's outcome: the copy's progress (the client calls again), or the new content switched in. */
/** `etag`: the content's new version, as a write answers it (absent on a retry that finds the switch already done). */
export type ImportCommit = { done: false; copied: number } | { done: true; etag?: string };

/**
 * Commits an import: copies the shadow content into the project's partition (a bounded time per call: `done: false`
 * with the progress), then switches it in with one transaction, If-Match checked against the content's ETag. `stamp`:
 * the request's write stamp (the history's `import` entry), carried by the switch alone.
 */
export async function commitImport(
  caller: ImportCaller,
  id: string,
  options: { ifMatch?: readonly string[]; stamp?: string } = {},
): Promise<ImportCommit> {
  let grant = await grantFor(caller.project, caller.principal, 'write');
  let session = SESSION_ID.test(id) ? await readSession(grant.inc, id) : undefined;
  if (!session || session.kind === 'abandoned') throw notFound(id);
  // Switched already (a retry whose answer was lost): what it left is finished, and it is done.
  if (session.kind === 'switched') {
    await finishSwitch(session, budgetUntil(CLEANUP_BUDGET_MS));
    return { done: true };
  }
  if (!session.state.started)
    throw new Refusal('IMPORT_OUT_OF_ORDER', 'the session has no pieces yet: send the document before committing');
  if (session.partial)
    throw new Refusal(
      'IMPORT_OUT_OF_ORDER',
      `page ${session.sequence + 1} was cut short: send it again before committing`,
    );
  if (session.copyId === undefined) {
    const copyId = randomBytes(8).toString('base64url').slice(0, COPY_ID_LENGTH);
    if (await beginCopy(session, copyId, PAGE_LIFE_MS)) session = { ...session, copyId };
    else {
      session = await readSession(grant.inc, id);
      if (session?.kind !== 'open') throw notFound(id);
      if (session.copyId === undefined)
        throw new Refusal('IMPORT_OUT_OF_ORDER', 'a page is still being applied: commit once it has answered');
    }
  }
  const until = budgetUntil(COPY_BUDGET_MS);
  const copyId = session.copyId as string;
  const copiedBefore = session.copied;
  const progress = await copyShadow(
    shadowIncarnation(grant.inc, id),
    { inc: grant.inc, epoch: grant.epoch, copyId },
    { upTo: session.copiedUpTo, copied: session.copied },
    until,
  );
  if (!(await noteCopied(session, progress.upTo, progress.copied))) throw notFound(id);
  session = { ...session, copiedUpTo: progress.upTo, copied: progress.copied };
  // The switch lists the content it replaces, which may take seconds: it gets a call of its own, unless this call
  // copied nothing (the copy was done before).
  if (!progress.done || progress.copied > copiedBefore || Date.now() >= until)
    return { done: false, copied: progress.copied };
  let etag: string;
  for (let attempt = 1; ; attempt++) {
    const outcome = await trySwitch(caller, grant, session, options);
    if (typeof outcome === 'object') {
      etag = outcome.etag;
      break;
    }
    if (outcome === 'gone') throw notFound(id);
    if (attempt >= SWITCH_ATTEMPTS) throw new Refusal('WRITE_CONFLICT', 'the content kept changing: commit again');
    // The root changed under it (a write, or a revocation: verified again).
    grant = await verifyAgain(grant);
    await backoff(attempt);
  }
  forgetLocations(grant.inc);
  const switched = await readSession(grant.inc, id);
  if (switched?.kind === 'switched')
    await finishSwitch(switched, budgetUntil(CLEANUP_BUDGET_MS)).catch(() => undefined);
  return { done: true, etag };
}

/**
 * One attempt at the switch: the root's new fragment (the shadow root's, its stubs naming the copies), the old content's
 * deletes as far as one transaction holds them, the session settled on being still open (a sweeper's claim refuses
 * it), answered with the root's new ETag. `root-changed`: a writer or a revocation moved the root since it was read.
 */
async function trySwitch(
  caller: ImportCaller,
  grant: Grant,
  session: ImportSession,
  options: { ifMatch?: readonly string[]; stamp?: string },
): Promise<{ etag: string } | 'root-changed' | 'gone'> {
  const shadowRoot = await getSegment(shadowIncarnation(grant.inc, session.id), ROOT_KEY);
  if (!shadowRoot) return 'gone';
  const copyId = session.copyId as string;
  const top = rekeyStubs(shadowRoot.fragment, (key) => copiedKey(copyId, key));
  // The keys first, then the sessions: a copy present when the keys were listed had its session's copy id recorded
  // before, so it is found and kept (another import's, not switched yet). This import's own copy is never read: the
  // content it replaces is listed around it (keys only), and read whole only to compare its ETag with If-Match.
  const root = await getSegment(grant.inc, ROOT_KEY);
  const keys = await segmentKeysOutside(grant.inc, copyPrefix(copyId));
  const live = (await listSessions(grant.inc))
    .filter((s) => s.kind === 'open' && s.copyId !== undefined)
    .map((s) => copyPrefix(s.copyId as string));
  if (!root) {
    await createRoot(grant.inc, grant.epoch);
    return 'root-changed';
  }
  if (options.ifMatch) {
    const all = await querySubtree(grant.inc, ROOT_KEY);
    const etag = contentEtag(all.get(ROOT_KEY) ?? root, all);
    if (!options.ifMatch.includes(etag)) throw new PreconditionFailed(formatEtag(etag));
  }
  const old = keys.filter((k) => k !== ROOT_KEY && !live.some((prefix) => k.startsWith(prefix)));
  // The root's update and the session's item, then as many deletes as fit.
  const carried = old.slice(0, MAX_TRANSACTION_ITEMS - 2);
  const rest = old.slice(carried.length);
  // The root's update carries the import's write stamp (the history's who and how), as every write's does.
  const { token, envelope } = writeEnvelope({ ...caller, stamp: options.stamp });
  const tx = newCommitToken();
  const update = compileWrite(
    { action: { kind: 'set', steps: [], value: top }, guards: [] },
    {
      ...guardedBase(envelope, grant),
      expectedVersion: root.version,
      size: { exact: storedSize(top) },
      stubsUnder: stubsUnderOf(top),
      commit: { token: tx },
    },
  ) as UpdateRequest;
  const table = tableName();
  const items = [
    {
      Update: { TableName: table, Key: segmentItemKey(grant.inc, ROOT_KEY), ...update },
    },
    ...carried.map((key) => ({ Delete: { TableName: table, Key: segmentItemKey(grant.inc, key) } })),
    switchSession(session, keyRoots(rest)),
  ];
  try {
    // The SDK's own retries resend the token: a switch applied whose answer was lost is not applied again.
    await dynamo.send(new TransactWriteItemsCommand({ TransactItems: items, ClientRequestToken: tx }));
    return { etag: formatEtag(token) };
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    const reasons = error.CancellationReasons ?? [];
    if (reasons[reasons.length - 1]?.Code === 'ConditionalCheckFailed') return 'gone';
    return 'root-changed';
  }
}

/** The whole content's ETag, as a GET of it answers: the root's, or a digest of every segment its stubs reach. */
function contentEtag(root: Segment, all: ReadonlyMap<string, Segment>): string {
  const reached = reachableFrom(stubsIn(root.fragment), all);
  return etagOf([root, ...[...all.values()].filter((s) => s.key !== ROOT_KEY && reached.has(s.key))]);
}

/** DELETE of a session: abandoned at once (nothing of it can be committed after), its items deleted as time allows. */
export async function abandonImport(caller: ImportCaller, id: string): Promise<void> {
  const grant = await grantFor(caller.project, caller.principal, 'write');
  const session = await openSession(grant, id);
  if (!(await abandonSession(session))) throw notFound(id);
  // A page or a copy may still be writing (touched less than a request's life ago): deleting now could miss what it
  // writes next, so the sweeper deletes it, later. Otherwise now, and what is left past the time budget is the
  // sweeper's too (the session stays, abandoned, until then).
  if (session.touched > Date.now() - PAGE_LIFE_MS) return;
  await deleteAbandoned({ ...session, kind: 'abandoned' }, budgetUntil(COPY_BUDGET_MS)).catch(() => undefined);
}
