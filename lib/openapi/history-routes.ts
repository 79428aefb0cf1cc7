// Route table of the history routes (GET content/history, POST content/restore), for the API docs.
import type { ErrorCode } from '../config/error-codes';
import { SUCCESS_MESSAGES } from '../content/operations';
import { historyQuerySchema, requestSchemas } from '../http/schemas';
import { ACCESS_ERRORS, MUTATION_ERRORS, PATH_ERRORS, type RouteDoc, messageSchema } from './route-doc';

const CONTENT = '/api/{username}/{projectSlug}/content';

/** What a read or restore at a point in the history can answer besides the route's own codes. */
export const HISTORY_ERRORS: ErrorCode[] = [
  'HISTORY_EXPIRED',
  'HISTORY_INCOMPLETE',
  'HISTORY_TOO_LONG',
  'SERVICE_UNAVAILABLE',
];

const actorSchema = {
  description:
    'Who made the change: `{"kind":"key","id"}` (an API key), `{"kind":"user","username"}` (a session or JWT; an end user whose JWT names no user here is `{"kind":"user","username":null,"sub"}`), `{"kind":"anonymous"}` (a caller without a credential, by the rules), or `{"kind":"unknown"}` (a change not made through the HTTP API). Never a secret or a hash.',
  type: 'object',
  properties: {
    kind: { enum: ['key', 'user', 'anonymous', 'unknown'] },
    id: { type: 'string' },
    username: { type: ['string', 'null'] },
    sub: { type: 'string' },
  },
  required: ['kind'],
};

const entrySchema = {
  type: 'object',
  properties: {
    revision: {
      type: 'string',
      description: "The change's revision (as realtime messages name it); pass as `at` or `before`.",
    },
    at: { type: 'string', format: 'date-time', description: 'When the request that made it began.' },
    actor: actorSchema,
    operation: {
      type: 'string',
      description: 'The route: set, insert, push, increment, decrement, delete, update, batch, patch, restore.',
    },
    idempotencyKey: { type: 'string', description: "The request's Idempotency-Key, when it had one." },
    changes: {
      description:
        'The changes at, below or above the path (trimmed to it as realtime trims them): `{path, value}` or `{path, deleted: true}`; `"changed"` when the change was too large to keep.',
      oneOf: [{ type: 'array', items: { type: 'object' } }, { const: 'changed' }],
    },
  },
  required: ['revision', 'at', 'actor', 'operation', 'changes'],
};

export const HISTORY_ROUTES: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: `${CONTENT}/history`,
    operationId: 'getHistory',
    tag: 'content',
    summary: 'Who changed what, newest first',
    description:
      "The changes that touched `path` (at, below or above it), newest first, with who made each one, by which route, when, and its Idempotency-Key. Kept `historyDays` (a stage parameter, default 7). Needs read access to `path` (rules included). A page is one DynamoDB Query of `limit` entries: those that did not touch the path are left out, so a page may hold fewer than `limit` and still have a `next`. History is written from the table's stream: a change shows a moment after its write answers.",
    query: (['path', 'limit', 'before'] as const).map((name) => {
      const { description, examples, ...schema } = historyQuerySchema.properties[name] as {
        description: string;
        examples?: readonly string[];
      };
      return { name, required: false, description, schema, example: examples?.[0] };
    }),
    success: {
      status: 200,
      description: 'A page of history and where the next one starts (`before`), or null.',
      schema: {
        type: 'object',
        properties: {
          entries: { type: 'array', items: entrySchema },
          next: { type: ['string', 'null'], description: 'The `before` of the next (older) page; null at the end.' },
        },
        required: ['entries', 'next'],
      },
      example: {
        entries: [
          {
            revision: '0000000000000000000000000000000001234567',
            at: '2026-11-27T08:00:00.000Z',
            actor: { kind: 'key', id: '0123456789abcdef' },
            operation: 'set',
            idempotencyKey: 'deploy-42',
            changes: [{ path: 'data.item.name', value: 'Lamp' }],
          },
        ],
        next: null,
      },
    },
    errors: [
      ...ACCESS_ERRORS,
      'INVALID_PATH',
      'PATH_TOO_DEEP',
      'INVALID_LIMIT',
      'INVALID_QUERY',
      'SERVICE_UNAVAILABLE',
    ],
  },
  {
    method: 'POST',
    path: `${CONTENT}/restore`,
    operationId: 'restoreContent',
    tag: 'content',
    summary: 'Restore a path as it was',
    description:
      'Sets `path` (left out: the whole content) to its value just after revision `at` (or at the ISO-8601 time `at`), or deletes it if nothing was there then, as one ordinary atomic write: a new ETag, `If-Match` and `Idempotency-Key` honoured, delivered to realtime subscribers and webhooks, and recorded in the history as `restore` (so a restore can itself be undone). Needs write access to `path`. 410 `HISTORY_EXPIRED` before the history kept; 409 `HISTORY_INCOMPLETE` across a change too large to keep.',
    body: {
      schema: requestSchemas.restore,
      example: { path: 'data.item', at: '0000000000000000000000000000000001234567' },
    },
    versioned: 'write',
    success: {
      status: 200,
      description: 'Done; `ETag` carries the new version of the content.',
      schema: messageSchema,
      example: { message: SUCCESS_MESSAGES.restore },
    },
    errors: [
      ...new Set<ErrorCode>([
        ...MUTATION_ERRORS,
        ...PATH_ERRORS,
        'INVALID_QUERY',
        'RESPONSE_TOO_LARGE',
        ...HISTORY_ERRORS,
      ]),
    ],
  },
];
