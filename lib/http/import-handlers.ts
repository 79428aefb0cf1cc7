// Import routes (docs/design/backup.md §3): POST import, POST import/{session}, POST import/{session}/commit and
// DELETE import/{session}. An import replaces the whole content, so only the owner, or an API key with content:write
// and no path limit, may run one; rules never grant it.
import { type Principal, grantBeforeScope } from '../auth/access';
import { Forbidden, Refusal, Unauthorized } from '../config/errors';
import { newStamp } from '../realtime/history';
import type { ProjectRef } from '../schema/items';
import { type ImportCaller, abandonImport, applyImportPage, commitImport, startImport } from '../storage';
import { readProjectMeta } from '../store/accounts';
import { schemaView } from './batch';
import { type Event, type Reply, httpHandler } from './edge';
import { parseIfMatch, parseJsonObject } from './request';
import { beginRequest } from './route-context';
import { type Validator, schemaError, validated } from './validation';

/** The answer of a commit whose switch is done. */
export const IMPORT_DONE_MESSAGE = 'Content imported successfully';

const NOT_FOR_IMPORT =
  'An import replaces the whole content: only the owner, or an API key with content:write and no path limit, may import';

/**
 * 401/404/403 in the documented order, then the import's own rule: the owner, or a key with content:write and no path
 * limit. Members, scoped keys and whatever rules allow get 403 (nobody, the 401 it always gets).
 */
async function assertMayImport(project: ProjectRef, principal: Principal): Promise<void> {
  const grant = await grantBeforeScope(project, principal, 'write');
  if (principal.kind === 'anonymous') throw new Unauthorized();
  if (grant.ruled) throw new Forbidden(NOT_FOR_IMPORT);
  if (principal.kind === 'user') {
    const meta = principal.username === null ? undefined : await readProjectMeta(project, principal.username);
    if (meta?.role !== 'owner') throw new Forbidden(NOT_FOR_IMPORT);
  }
}

/** One import route: the caller verified for an import, the session from the path, the route's own work. */
function importRoute(run: (caller: ImportCaller, event: Event, text: string) => Promise<Reply>) {
  return httpHandler(async (event) => {
    const { text, principal, project } = await beginRequest(event, 'write');
    await assertMayImport(project, principal);
    return run({ project, principal }, event, text);
  });
}

const sessionOf = (event: Event) => String(event.pathParameters?.session ?? '');

/** POST import: a new session, 201 {"session"}. */
export const importStart = () =>
  importRoute(async (caller) => ({ statusCode: 201, body: { session: await startImport(caller) } }));

/**
 * POST import/{session}: one page of pieces; 200 {"sequence", "applied"} (false: a retry of the last page), or 202
 * {"sequence", "partial": {"done", "of"}} when it ran out of time (send the same page again).
 */
export const importPage = (validate: Validator) =>
  importRoute(async (caller, event, text) => {
    const body = validated(() => {
      const parsed = parseJsonObject(text);
      if (!validate(schemaView(parsed))) throw schemaError(validate.errors);
      return parsed;
    });
    if (body instanceof Refusal) throw body;
    const sequence = Number(body.sequence);
    const outcome = await applyImportPage(caller, sessionOf(event), { sequence, pieces: body.pieces as unknown[] });
    // Cut short by its time: the same page sent again goes on where this one stopped.
    if ('partial' in outcome) return { statusCode: 202, body: { sequence, partial: outcome.partial } };
    return { statusCode: 200, body: { sequence, applied: outcome.applied } };
  });

/**
 * POST import/{session}/commit: 202 {"copied"} while the copy goes on (call again), then the switch, one atomic
 * write (If-Match on the content's ETag), 200 {"message"} with the new ETag.
 */
export const importCommit = () =>
  importRoute(async (caller, event) => {
    const ifMatch = parseIfMatch(event);
    // Who imported, carried by the switch's root into the history as one `import` entry.
    const stamp = newStamp(caller.principal, 'import');
    const outcome = await commitImport(caller, sessionOf(event), { ifMatch, stamp });
    if (!outcome.done) return { statusCode: 202, body: { copied: outcome.copied } };
    return {
      statusCode: 200,
      body: { message: IMPORT_DONE_MESSAGE },
      headers: outcome.etag === undefined ? undefined : { ETag: outcome.etag },
    };
  });

/** DELETE import/{session}: abandoned; the project's content never changed. */
export const importAbandon = () =>
  importRoute(async (caller, event) => {
    await abandonImport(caller, sessionOf(event));
    return { statusCode: 200, body: { message: 'Import abandoned' } };
  });
