// Route table of the import routes (POST import, pages, commit, DELETE), for the API docs (docs/design/backup.md §3).
import type { ErrorCode } from '../config/error-codes';
import { importSchemas } from '../http/schemas';
import { ACCESS_ERRORS, BODY_ERRORS, type RouteDoc, messageSchema } from './route-doc';

const IMPORT = '/api/{username}/{projectSlug}/import';

/** Who may import, said once for every route. */
const WHO =
  'Only the owner (a session), or an API key with `content:write` and no path limit; members, scoped keys and what rules allow get 403, a caller without a credential 401.';

/** What every route of a session can answer besides access. */
const SESSION_ERRORS: ErrorCode[] = ['IMPORT_NOT_FOUND', 'SERVICE_UNAVAILABLE'];

export const IMPORT_ROUTES: readonly RouteDoc[] = [
  {
    method: 'POST',
    path: IMPORT,
    operationId: 'startImport',
    tag: 'content',
    summary: 'Start an import (replace the whole content)',
    description: `Starts an import session: the new content is sent in pages of pieces (\`POST import/{session}\`), then committed (\`POST import/{session}/commit\`), which replaces the whole content in one atomic switch. Until then readers and subscribers see the old content only; a session nobody commits (or \`DELETE\`s) is deleted with everything it wrote 5 minutes after its last request. ${WHO}`,
    success: {
      status: 201,
      description: 'The session: pass its id in the next requests.',
      schema: {
        type: 'object',
        properties: { session: { type: 'string', description: 'The session id (16 characters).' } },
        required: ['session'],
      },
      example: { session: 'Zx3k9QpLmN0aBcDe' },
    },
    errors: [...ACCESS_ERRORS, 'SERVICE_UNAVAILABLE'],
  },
  {
    method: 'POST',
    path: `${IMPORT}/{session}`,
    operationId: 'importPage',
    tag: 'content',
    summary: 'Send a page of an import',
    description: `One page of the document's pieces, under the 512 KiB body limit, numbered from 1. A piece is \`{"path": <JSON Pointer>, "value"}\` in depth-first document order; the first is the root (\`""\`, an object). A container too large for one piece is sent open (\`{}\` or \`[]\`), then its members below it (an array's from 0, none missing), and is closed by the first piece not below it. Numbers keep every digit; \`__proto__\` and empty keys are refused. The page is written beside the content, which does not change. A page sent again with the same \`sequence\` (its answer was lost) is answered 200 with \`applied: false\` and not applied twice; another out of order is a 409. A page's time grows with the number of pieces below containers an earlier page opened (one write each, in batches of 100): a page that would outlast its time stops and answers 202 \`{"sequence", "partial": {"done", "of"}}\`; send the same page again (same \`sequence\`, same pieces) and it goes on from there (another page, or a commit, is a 409 until it is done). ${WHO}`,
    body: {
      schema: importSchemas.importPage,
      example: {
        sequence: 1,
        pieces: [
          { path: '', value: {} },
          { path: '/items', value: [] },
          { path: '/items/0', value: { n: 1 } },
        ],
      },
    },
    success: {
      status: 200,
      description:
        '`applied`: false when this page had been applied before (a retry). 202 `{"sequence", "partial": {"done", "of"}}`: cut short by its time (write groups applied of the page\'s), send it again.',
      schema: {
        type: 'object',
        properties: { sequence: { type: 'integer' }, applied: { type: 'boolean' } },
        required: ['sequence', 'applied'],
      },
      example: { sequence: 1, applied: true },
    },
    errors: [
      ...ACCESS_ERRORS,
      ...BODY_ERRORS,
      'INVALID_PIECES',
      'IMPORT_OUT_OF_ORDER',
      'WRITE_CONFLICT',
      'CONTENT_TOO_LARGE',
      ...SESSION_ERRORS,
    ],
  },
  {
    method: 'POST',
    path: `${IMPORT}/{session}/commit`,
    operationId: 'commitImport',
    tag: 'content',
    summary: 'Commit an import: the whole content replaced at once',
    description: `Copies the imported document into the project (a bounded time per call: 202 with how many items are copied so far; call again), then replaces the whole content with it in one atomic write: readers and subscribers see the old content or the new, never a mix. \`If-Match\` is compared with the ETag of the whole content (a GET without \`path\`): 412 when it changed. Subscribers get one \`changed\` message at the root; the history one entry, operation \`import\`, whose old values are not kept (a read at a revision before it is a 409 \`HISTORY_INCOMPLETE\`: export first). After it the session is gone (404); a commit retried while its cleanup runs answers 200 again. No page is accepted once a commit began. ${WHO}`,
    success: {
      status: 200,
      description:
        'The content is the imported document; the `ETag` header is its new version, as a write answers it (absent when a retry finds the switch done already). 202 `{"copied": n}`: still copying, call again.',
      schema: messageSchema,
      example: { message: 'Content imported successfully' },
    },
    errors: [
      ...ACCESS_ERRORS,
      'INVALID_IF_MATCH',
      'PRECONDITION_FAILED',
      'IMPORT_OUT_OF_ORDER',
      'WRITE_CONFLICT',
      ...SESSION_ERRORS,
    ],
  },
  {
    method: 'DELETE',
    path: `${IMPORT}/{session}`,
    operationId: 'abandonImport',
    tag: 'content',
    summary: 'Abandon an import',
    description: `Abandons the session: nothing of it can be committed or sent after, and what it wrote is deleted: at once, or (when a request of the session may still be writing, or there is much) by the sweeper within minutes. The content never changed. ${WHO}`,
    success: {
      status: 200,
      description: 'Abandoned.',
      schema: messageSchema,
      example: { message: 'Import abandoned' },
    },
    errors: [...ACCESS_ERRORS, ...SESSION_ERRORS],
  },
];
