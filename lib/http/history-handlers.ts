// History routes (docs/design/history.md): GET content/history, GET content?at=, POST content/restore.
import { Refusal, isRefusal } from '../config/errors';
import type { ContentOperation } from '../content/model';
import { type HistoryPoint, historyAt, parseHistoryPoint, valueAtPoint } from '../history/read';
import { type Path, parsePath } from '../paths';
import { assertProjectAccess } from '../storage';
import { httpHandler } from './edge';
import { beginRequest } from './route-context';
import { type Validator, schemaError, validated } from './validation';

/** GET content/history?path=&limit=&before=: who changed what at a path, newest first, one Query per page. */
export function historyRead(validate: Validator) {
  return httpHandler(async (event) => {
    const { principal: caller, project } = await beginRequest(event, 'read');
    const query = event.queryStringParameters ?? {};
    const parsed = validated(() => {
      if (!validate(query)) {
        const error = schemaError(validate.errors);
        // Its own range: a page of history is one Query, at most 100 entries.
        if (error.code === 'INVALID_LIMIT')
          throw new Refusal('INVALID_LIMIT', 'limit must be a whole number from 1 to 100');
        throw error;
      }
      return { path: query.path === undefined ? [] : parsePath(query.path), limit: Number(query.limit ?? 20) };
    });
    if (parsed instanceof Refusal) {
      await assertProjectAccess(project, caller, 'read');
      throw parsed;
    }
    // As a read of the path: rules and scoped keys judge it by that path.
    const principal = { ...caller, scope: { touches: [{ operation: 'read' as const, path: parsed.path }] } };
    const inc = await assertProjectAccess(project, principal, 'read');
    const page = await historyAt(inc, parsed.path, { limit: parsed.limit, before: query.before });
    return { statusCode: 200, body: page };
  });
}

/** The value at a path at a point in the history, for GET content?at= (the caller's read access verified). */
export async function readAtPoint(inc: string, segments: Path, at: string): Promise<unknown> {
  return valueAtPoint(inc, segments, parseHistoryPoint(at));
}

/** A restore's operation: the path set to what it was (the whole content replaced), or deleted if it was not there. */
export async function restoreOperation(inc: string, path: Path, point: HistoryPoint): Promise<ContentOperation> {
  try {
    const value = await valueAtPoint(inc, path, point);
    if (path.length === 0) return { kind: 'replace', content: value as never };
    return { kind: 'set', segments: path, value };
  } catch (error) {
    if (!isRefusal(error, 'PATH_NOT_FOUND') || path.length === 0) throw error;
    return { kind: 'delete', segments: path };
  }
}
