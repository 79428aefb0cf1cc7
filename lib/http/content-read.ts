// Content read: GET content[?path=][&shallow=true[&limit=&after=] | &start=&limit=].
import { parsePath, type Path } from '../paths';
import { type ReadView, assertProjectAccess, readContent, viewOf } from '../storage';
import type { Json } from '../content/json';
import { readAtPoint } from './history-handlers';
import { DEFAULT_SLICE_LIMIT } from '../config/limits';
import { httpHandler } from './edge';
import { Refusal } from '../config/errors';
import { notModified } from './request';
import { beginRequest } from './route-context';
import { type Validator, schemaError, validated } from './validation';
import { decodeCursor } from '../content/key-pages';

interface ReadQuery {
  segments?: Path;
  /** What the store reads of the value (shallow, a page of keys, a slice); none: the whole value. */
  view?: ReadView;
  /** A slice (`{value, start, length}`) and a page of keys (`{value, next}`) are the body themselves; else `{value}`. */
  paged: boolean;
}

function parseReadQuery(query: Record<string, string | undefined>, validate: Validator): ReadQuery {
  if (!validate(query)) throw schemaError(validate.errors);
  const segments = query.path === undefined ? undefined : parsePath(query.path);
  const where = query.path === undefined ? 'the content' : `the value at '${query.path}'`;
  const limit = Number(query.limit ?? DEFAULT_SLICE_LIMIT);
  if (query.shallow === 'true') {
    if (query.start !== undefined) throw new Refusal('INVALID_QUERY', 'shallow=true cannot be combined with start');
    // With limit or after: a page of an object's keys (lib/content/key-pages.ts); without, every key at once.
    if (query.limit === undefined && query.after === undefined)
      return { segments, view: { kind: 'shallow' }, paged: false };
    const after = query.after === undefined ? undefined : decodeCursor(query.after);
    return { segments, view: { kind: 'shallow', page: { limit, after, where } }, paged: true };
  }
  if (query.after !== undefined) {
    throw new Refusal('INVALID_QUERY', "after pages an object's keys: it goes with shallow=true");
  }
  if (query.start === undefined && query.limit === undefined) return { segments, paged: false };
  const start = Number(query.start ?? 0);
  return { segments, view: { kind: 'slice', start, limit, where }, paged: true };
}

/** The handler of GET content: the value or a view of it, now (with its ETag) or at a point in the history. */
export function contentRead(validate: Validator) {
  return httpHandler(async (event) => {
    const { principal: caller, project } = await beginRequest(event, 'read');
    const query = validated(() => parseReadQuery(event.queryStringParameters ?? {}, validate));
    if (query instanceof Refusal) {
      await assertProjectAccess(project, caller, 'read');
      throw query;
    }
    // Rules are not filters: a read needs a grant covering its path itself (shallow and slices alike).
    const principal = { ...caller, scope: { touches: [{ operation: 'read' as const, path: query.segments ?? [] }] } };
    const at = event.queryStringParameters?.at;
    if (at !== undefined) {
      // As it was at a point in the history (docs/design/history.md): rewound from the value now.
      const inc = await assertProjectAccess(project, principal, 'read');
      const then = (await readAtPoint(inc, query.segments ?? [], at)) as Json;
      const value = query.view ? viewOf(then, query.view) : then;
      return { statusCode: 200, body: query.paged ? value : { value } };
    }
    const { value, etag } = await readContent({ project, principal, segments: query.segments, view: query.view });
    // A 304 reads what the 200 would (the ETag is the value's); it saves the transfer, not the read.
    if (notModified(event, etag)) return { statusCode: 304, body: undefined, headers: { ETag: etag } };
    return { statusCode: 200, body: query.paged ? value : { value }, headers: { ETag: etag } };
  });
}
