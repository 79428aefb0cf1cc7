// An import's leftovers (docs/design/backup.md §3): what a switch did not carry of the old content, an abandoned
// session's shadow content and copies, and the sweeper's part. Deletes only: the sweeper's bundle needs no more.
import { deleteRange } from './io/copy';
import { type ImportSession, abandonSession, deleteSession, readSession } from './io/import-session';
import { copyPrefix, shadowIncarnation } from './layout/keys';

/**
 * After the switch: the old content's segments the transaction did not carry, the shadow content, then the session
 * (a `deletes` marker until then: an interruption leaves the rest to the sweeper). Stops past `until`.
 */
export async function finishSwitch(session: ImportSession, until: number): Promise<boolean> {
  for (const root of session.orphans) if (!(await deleteRange(session.inc, root, until)).done) return false;
  if (!(await deleteRange(shadowIncarnation(session.inc, session.id), '', until)).done) return false;
  await deleteSession(session);
  return true;
}

/** Everything an abandoned session wrote: its shadow content and its copies; then the session. */
export async function deleteAbandoned(session: ImportSession, until: number): Promise<number> {
  let deleted = 0;
  const shadow = await deleteRange(shadowIncarnation(session.inc, session.id), '', until);
  deleted += shadow.deleted;
  if (!shadow.done) return deleted;
  if (session.copyId !== undefined) {
    const copies = await deleteRange(session.inc, copyPrefix(session.copyId), until);
    deleted += copies.deleted;
    if (!copies.done) return deleted;
  }
  await deleteSession(session);
  return deleted;
}

/**
 * The sweeper's part (docs/design/storage.md §7.4): a session not touched since `before` (epoch ms). Open: claimed
 * (nothing of it can commit after) and deleted with everything it wrote; abandoned: deleted; switched: what the
 * switch left of the old content, and the shadow. Returns the segments deleted, or undefined when left alone.
 */
export async function sweepImportSession(
  inc: string,
  id: string,
  before: number,
): Promise<{ abandoned: boolean; deleted: number } | undefined> {
  const session = await readSession(inc, id);
  if (!session || session.touched >= before) return undefined;
  const until = Number.POSITIVE_INFINITY;
  if (session.kind === 'switched') {
    let deleted = 0;
    for (const root of session.orphans) deleted += (await deleteRange(inc, root, until)).deleted;
    deleted += (await deleteRange(shadowIncarnation(inc, id), '', until)).deleted;
    await deleteSession(session);
    return { abandoned: false, deleted };
  }
  if (session.kind === 'open' && !(await abandonSession(session, session.touched))) return undefined;
  return { abandoned: true, deleted: await deleteAbandoned(session, until) };
}
