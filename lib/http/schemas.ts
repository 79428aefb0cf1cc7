// Request schemas: the one source for the ajv validators (compiled at build time) and the OpenAPI document.
import { MAX_PIECES_PER_PAGE } from '../content/pieces';
import {
  DEFAULT_SLICE_LIMIT,
  MAX_CURSOR_LENGTH,
  MAX_EXPIRES_IN_SECONDS,
  MAX_PATH_LENGTH,
  MAX_SLICE_LIMIT,
  MAX_WEBHOOK_URL_LENGTH,
} from '../config/limits';

const path = {
  type: 'string',
  description: 'Dot-separated path; `\\.` is a literal dot, `\\\\` a literal backslash.',
  examples: ['data.items'],
};
const anyValue = { description: 'Any JSON value (null included).' };
const amount = { type: 'number', description: 'Amount; a finite number, default 1.', default: 1 };

const body = (properties: Record<string, object>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const historyPoint = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description:
    'A point in the history: a revision (as history entries and realtime messages name them) or an ISO-8601 time. Within the history kept (HISTORY_DAYS, default 7).',
  examples: ['2026-11-27T08:00:00Z'],
};

const mutationSchemas = {
  set: body({ path, value: anyValue }, ['path', 'value']),
  insert: body(
    {
      path,
      value: anyValue,
      index: { type: 'number', description: 'Zero-based integer index; negative counts from the end.' },
    },
    ['path', 'value', 'index'],
  ),
  push: body({ path, value: anyValue }, ['path', 'value']),
  decrement: body({ path, value: amount }, ['path']),
  increment: body({ path, value: amount }, ['path']),
  delete: body({ path }, ['path']),
  update: body({ content: { type: 'object', description: 'The whole new content (an object).' } }, ['content']),
} as const;

/** A batch's precondition: `value` (equal as JSON, numbers as decimals) or `exists` (false: nothing is there). */
export const testOperationSchema = body(
  {
    path,
    value: { description: 'The value expected at `path` (any JSON; numbers compare as decimals).' },
    exists: { type: 'boolean', description: 'false: holds when nothing is at `path`; true: when something is.' },
  },
  ['path'],
);

export const MAX_BATCH_OPERATIONS = 100;

/** The batch route's operations: each one route's body plus `op`, which tells them apart. */
export const BATCH_OPERATIONS = ['set', 'insert', 'push', 'increment', 'decrement', 'delete', 'test'] as const;
export type BatchOperationName = (typeof BATCH_OPERATIONS)[number];

const withOp = (op: BatchOperationName, schema: ReturnType<typeof body>) => ({
  ...schema,
  properties: { op: { const: op }, ...schema.properties },
  required: ['op', ...schema.required],
});

/** What the batch route's validator checks before each operation is checked by its own route's rules. */
export const batchEnvelopeSchema = body(
  { operations: { type: 'array', minItems: 1, maxItems: MAX_BATCH_OPERATIONS } },
  ['operations'],
);

export const requestSchemas = {
  ...mutationSchemas,
  /** POST content/restore: a path (left out: the whole content) and the point in the history to restore it from. */
  restore: body({ path, at: historyPoint }, ['at']),
  batch: body(
    {
      operations: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_BATCH_OPERATIONS,
        description:
          'Applied in order, each seeing the effect of the ones before it, all or none. Each is the body of its own route plus `op`; `test` is a precondition.',
        items: {
          oneOf: BATCH_OPERATIONS.map((op) =>
            withOp(op, op === 'test' ? testOperationSchema : (mutationSchemas[op] as ReturnType<typeof body>)),
          ),
        },
      },
    },
    ['operations'],
  ),
} as const;

/**
 * GET content's query string: API Gateway hands every parameter over as a string, so the numbers are patterns
 * (integers as written, without leading zeros). Other parameters are ignored (cache busters).
 */
export const readQuerySchema = {
  type: 'object',
  properties: {
    path: {
      ...path,
      description: 'Dot-separated path of the value to read; `\\.` is a literal dot. Left out: the whole content.',
    },
    shallow: {
      type: 'string',
      enum: ['true', 'false'],
      description:
        '`true`: an object\'s keys each with `true` (members held in other segments are not read), an array\'s length as `{"length": n}`, a scalar as itself. Not with `start`. With `limit` (and `after`): a page of an object\'s keys, `{"value": {...}, "next": <cursor or null>}`.',
      examples: ['true'],
    },
    start: {
      type: 'string',
      pattern: '^(0|-?[1-9][0-9]{0,14})$',
      description:
        'Slice an array from this index (default 0); negative counts from the end (`-10`: the last ten). At or past the end: an empty page.',
      examples: ['100'],
    },
    limit: {
      type: 'string',
      pattern: '^([1-9][0-9]{0,2}|1000)$',
      description: `Slice an array: at most this many elements, 1 to ${MAX_SLICE_LIMIT} (default ${DEFAULT_SLICE_LIMIT}). With \`shallow=true\`: at most this many keys of an object in one page.`,
      examples: ['50'],
    },
    after: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CURSOR_LENGTH,
      pattern: '^[A-Za-z0-9_-]+$',
      description: `With \`shallow=true\`: the \`next\` of the previous page of an object's keys; the page after it (\`limit\` keys, default ${DEFAULT_SLICE_LIMIT}).`,
      examples: ['eyJsIjoiIiwiayI6ImIwMDEyIn0'],
    },
    at: {
      ...historyPoint,
      description: `The value as it was just after this revision, or at this time. ${historyPoint.description}`,
    },
  },
} as const;

/** GET content/history's query string. */
export const historyQuerySchema = {
  type: 'object',
  properties: {
    path: {
      ...path,
      description: 'The changes at, below or above this path. Left out: the whole content.',
      examples: ['data.items'],
    },
    limit: {
      type: 'string',
      pattern: '^([1-9][0-9]?|100)$',
      description: 'At most this many entries read, 1 to 100 (default 20); a page holds those that touched the path.',
      examples: ['50'],
    },
    before: {
      type: 'string',
      pattern: '^[0-9]{1,40}$',
      description: 'The `next` of the previous page: entries older than this revision.',
      examples: ['0000000000000000000000000000000001234567'],
    },
  },
} as const;

/** Import bodies (docs/design/backup.md §3). */
export const importSchemas = {
  /** POST import/{session}: one page of the document's pieces, in order. */
  importPage: body(
    {
      sequence: {
        type: 'integer',
        minimum: 1,
        maximum: 1_000_000_000,
        description:
          "The page's number, from 1 without gaps. Sending the last page applied again applies nothing (a retry); any other out of order is a 409.",
        examples: [1],
      },
      pieces: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_PIECES_PER_PAGE,
        description:
          'Pieces in depth-first document order: the first of the import at `""` (the root, an object). A value goes at its path; a container too large for one piece is sent open, as `{}` or `[]`, then its members as pieces below it (an array\'s from index 0, none missing), and is closed by the first piece not below it.',
        items: body(
          {
            path: {
              type: 'string',
              description:
                'A JSON Pointer (RFC 6901): `""` the root, `/a/0` member `a`, element 0; `~1` is `/`, `~0` is `~`.',
              examples: ['/items/0'],
            },
            value: anyValue,
          },
          ['path', 'value'],
        ),
        examples: [
          [
            { path: '', value: {} },
            { path: '/items', value: [] },
            { path: '/items/0', value: { n: 1 } },
          ],
        ],
      },
    },
    ['sequence', 'pieces'],
  ),
} as const;

/** Management bodies (projects, API keys, members). */
export const managementSchemas = {
  createProject: body({}, []),
  createKey: body(
    {
      name: { type: 'string', minLength: 1, maxLength: 100, description: 'A label for the key.', examples: ['ci'] },
      permissions: {
        type: 'array',
        minItems: 1,
        maxItems: 10,
        items: { enum: ['content:read', 'content:write'] },
        description: 'content:read allows GET; content:write allows every mutation.',
      },
      expiresInSeconds: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_EXPIRES_IN_SECONDS,
        description: `Lifetime in whole seconds, 1 to ${MAX_EXPIRES_IN_SECONDS} (10 years); omit for a key that does not expire.`,
      },
      paths: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: { type: 'string', minLength: 1, maxLength: MAX_PATH_LENGTH },
        description:
          'Limits the key to these dot paths (at and below each; 403 elsewhere), intersected with its permissions; omit for the whole content.',
        examples: [['builds', 'public.status']],
      },
    },
    ['name', 'permissions'],
  ),
  createWebhook: body(
    {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_WEBHOOK_URL_LENGTH,
        description: `Where changes are POSTed: an https URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters whose host resolves only to public addresses.`,
        examples: ['https://hooks.example.com/content'],
      },
      path: {
        ...path,
        maxLength: MAX_PATH_LENGTH,
        description: `${path.description} Only changes at, under or above it are delivered (trimmed to it); omit for the whole content.`,
        examples: ['data'],
      },
    },
    ['url'],
  ),
  putRules: body(
    {
      rules: {
        type: 'array',
        items: { type: 'object' },
        description:
          'The rules, in order: each `{"match", "read"?, "write"?, "validate"?}` (README, "Rules"; docs/rules.md).',
      },
      allowPublicWrite: {
        type: 'boolean',
        description: 'Must be true for a rule that lets anyone write everywhere below a pattern of captures only.',
      },
    },
    ['rules'],
  ),
  testRules: body(
    {
      auth: {
        type: ['object', 'null'],
        description:
          'The caller as conditions see it: null (no credential) or `{kind, username?, sub?, claims?, keyId?, permissions?, paths?}`.',
      },
      operation: { enum: ['read', 'write'] },
      path: { type: 'string', maxLength: MAX_PATH_LENGTH, description: "The path; '' is the root." },
      value: { description: 'write: the value it leaves at the path (newData; its schemas are checked).' },
      rules: {
        type: 'array',
        items: { type: 'object' },
        description: 'Rules to try instead of the stored ones (nothing is stored).',
      },
      allowPublicWrite: { type: 'boolean' },
    },
    ['operation', 'path'],
  ),
  putMember: body({ role: { enum: ['viewer', 'editor'], description: 'viewer reads; editor reads and writes.' } }, [
    'role',
  ]),
} as const;

const pointer = (what: string) => ({
  type: 'string',
  description: `${what}: a JSON Pointer (RFC 6901): '' is the whole content, '/a/b' the key b of a, '/l/0' an element, '/l/-' (add only) after the last one; '~1' is '/', '~0' is '~'.`,
});

/**
 * The PATCH bodies, for the API docs (lib/http/patch.ts reads them by RFC 6902 and RFC 7396, with its own errors):
 * each media type's schema.
 */
export const patchSchemas = {
  jsonPatch: {
    type: 'array',
    maxItems: 100,
    description:
      'RFC 6902: applied in order, each operation seeing the ones before it, all or none. Members besides these are ignored.',
    items: {
      type: 'object',
      properties: {
        op: { enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] },
        path: pointer('The target'),
        from: pointer('move and copy: the source'),
        value: { description: 'add, replace, test: any JSON (test compares numbers as decimals).' },
      },
      required: ['op', 'path'],
    },
  },
  mergePatch: {
    type: 'object',
    description:
      'RFC 7396: null removes a member, an object merges into an object member, anything else replaces it. Applied to the whole content.',
  },
} as const;
