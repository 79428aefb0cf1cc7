// POST /api/{username}/{projectSlug}/content/restore
import { contentRestore } from '../lib/http/content-handlers';
import { restoreOperation } from '../lib/http/history-handlers';
import { parseHistoryPoint } from '../lib/history/read';
import { parsePath } from '../lib/paths';
import { SUCCESS_MESSAGES } from '../lib/content/operations';
import { validateRestore as validate } from '../lib/http/validators.generated';

export const handler = contentRestore({
  validate,
  read: (body) => {
    const segments = body.path === undefined || body.path === '' ? [] : parsePath(body.path);
    const point = parseHistoryPoint(body.at as string);
    return {
      body,
      // What it touches, for rules and scoped keys: a write of the path.
      op: segments.length === 0 ? { kind: 'replace', content: {} } : { kind: 'set', segments, value: null },
      prepare: (inc) => restoreOperation(inc, segments, point),
    };
  },
  message: SUCCESS_MESSAGES.restore,
});
