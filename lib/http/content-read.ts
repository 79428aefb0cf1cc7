// Content read: GET content[?path=][&shallow=true | &start=&limit=], one GetItem with the projection the path needs.
import { parsePath, type Segments } from '../paths';
import { type ReadView, assertProjectAccess, readContent } from '../store/content';
import { DEFAULT_SLICE_LIMIT } from '../config/limits';
import { httpHandler } from './edge';
import { BadRequest } from '../config/errors';
import { notModified } from './request';
import { beginRequest } from './route-context';
import { type Validator, schemaError, validated } from './validation';

interface ReadQuery {
  segments?: Segments;
  /** What the store reads of the value (shallow, a slice); none: the whole value. */
  view?: ReadView;
  /** A slice answers `{value, start, length}` itself; everything else `{value}`. */
  slice: boolean;
}

function parseReadQuery(query: Record<string, string | undefined>, validate: Validator): ReadQuery {
  if (!validate(query)) throw schemaError(validate.errors);
  const segments = query.path === undefined ? undefined : parsePath(query.path);
  const slice = query.start !== undefined || query.limit !== undefined;
  if (query.shallow === 'true') {
    if (slice) throw new BadRequest('INVALID_QUERY', 'shallow=true cannot be combined with start or limit');
    return { segments, view: { kind: 'shallow' }, slice: false };
  }
  if (!slice) return { segments, slice: false };
  const start = Number(query.start ?? 0);
  const limit = Number(query.limit ?? DEFAULT_SLICE_LIMIT);
  const where = query.path === undefined ? 'the content' : `the value at '${query.path}'`;
  return { segments, view: { kind: 'slice', start, limit, where }, slice: true };
}

export function contentRead(validate: Validator) {
  return httpHandler(async (event) => {
    const { principal: caller, project } = await beginRequest(event, 'read');
    const query = validated(() => parseReadQuery(event.queryStringParameters ?? {}, validate));
    if (query instanceof BadRequest) {
      await assertProjectAccess(project, caller, 'read');
      throw query;
    }
    // Rules are not filters: a read needs a grant covering its path itself (shallow and slices alike).
    const principal = { ...caller, scope: { touches: [{ operation: 'read' as const, path: query.segments ?? [] }] } };
    const { value, etag } = await readContent({ project, principal, segments: query.segments, view: query.view });
    // A 304 reads what the 200 would (the ETag is the value's); it saves the transfer, not the read.
    if (notModified(event, etag)) return { statusCode: 304, body: undefined, headers: { ETag: etag } };
    return { statusCode: 200, body: query.slice ? value : { value }, headers: { ETag: etag } };
  });
}
