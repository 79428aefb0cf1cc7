// Content read: GET content[?path=], one GetItem with the projection the path needs.
import { parsePath, type Segments } from '../paths';
import { assertProjectAccess, readContent } from '../store/content';
import { httpHandler } from './edge';
import { BadRequest } from '../config/errors';
import { beginRequest } from './route-context';
import { validated } from './validation';

export function contentRead() {
  return httpHandler(async (event) => {
    const { principal, project } = await beginRequest(event, 'read');
    const path = event.queryStringParameters?.path;
    const segments = validated<Segments | undefined>(() => (path === undefined ? undefined : parsePath(path)));
    if (segments instanceof BadRequest) {
      await assertProjectAccess(project, principal, 'read');
      throw segments;
    }
    const { value, etag } = await readContent({ project, principal, segments });
    return { statusCode: 200, body: { value }, headers: { ETag: etag } };
  });
}
