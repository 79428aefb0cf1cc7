// Route table of the content routes (GET content and the POST content/* mutations), for the API docs.
import { SUCCESS_MESSAGES } from '../content/operations';
import { patchSchemas, readQuerySchema, requestSchemas } from '../http/schemas';
import type { ErrorCode } from '../config/error-codes';
import { ACCESS_ERRORS, MUTATION_ERRORS, PATH_ERRORS, type RouteDoc, messageSchema } from './route-doc';

const VALUE: ErrorCode[] = [
  'MISSING_VALUE',
  'INVALID_VALUE',
  'VALUE_TOO_DEEP',
  'EMPTY_KEY',
  'KEY_TOO_LONG',
  'NUMBER_OUT_OF_RANGE',
  'NUMBER_TOO_PRECISE',
];

const CONTENT = '/api/{username}/{projectSlug}/content';

/** A POST content/<name> mutation: its body schema is requestSchemas[name], its success a `{message}`. */
function contentMutation(
  name: keyof typeof requestSchemas,
  doc: { summary: string; description: string; example: unknown; errors: ErrorCode[] },
): RouteDoc {
  return {
    method: 'POST',
    path: `${CONTENT}/${name}`,
    operationId: `${name}Content`,
    tag: 'content',
    summary: doc.summary,
    description: doc.description,
    body: { schema: requestSchemas[name], example: doc.example },
    versioned: 'write',
    success: {
      status: 200,
      description: 'Done; `ETag` carries the new version of the content.',
      schema: messageSchema,
      example: { message: SUCCESS_MESSAGES[name] },
    },
    errors: [...MUTATION_ERRORS, ...doc.errors],
  };
}

export const CONTENT_ROUTES: readonly RouteDoc[] = [
  {
    method: 'GET',
    path: CONTENT,
    operationId: 'getContent',
    tag: 'content',
    summary: 'Get project content',
    description:
      'The value at `path`, or the whole content when `path` is left out. Needs `content:read` (or any member role). `shallow=true` answers an object\'s keys each with `true` (members held in other segments are not read: one GetItem of the segment that holds the value), an array\'s length as `{"length": n}` and a scalar as itself. `start`/`limit` slice an array (not a shallow read): `{"value": [...], "start": <first index>, "length": <the array\'s length>}`, so the next page starts at `start + value.length` until it reaches `length`; a negative `start` counts from the end, one at or past the end answers `[]`, and a slice of anything but an array is a 400 `NOT_AN_ARRAY`. `shallow=true` with `limit` (1 to 1,000 keys) pages an object\'s keys: `{"value": {<key>: true, ...}, "next": <cursor or null>}`; pass `next` back as `after` (with `shallow=true`, and `limit`, default 100) for the next page until `next` is null. Keys come in a documented order (an object held in one segment: UTF-16 code units; a bucketed object: bucket by bucket, then UTF-16 code units; within a page the JSON object\'s members have no order), so a key present from the first page to the last is given exactly once whatever is written in between; a page of a bucketed object reads about `limit` ÷ (keys per bucket) buckets of 1 RCU each, never its members\' values. A cursor made before the object was rewritten as a whole is a 409 `STALE_CURSOR`: start again. A page of anything but an object is a 400 `NOT_AN_OBJECT`. `If-None-Match` with the ETag the request would answer with: 304 without a body (polling; the read still costs what a 200 costs). `at` (a revision or an ISO-8601 time within the history kept) answers the value as it was just after that revision, with the same `shallow`/`start`/`limit`, and no ETag; 404 `PATH_NOT_FOUND` if nothing was there then, 410 `HISTORY_EXPIRED` before the history kept. Other query parameters are ignored.',
    query: (['path', 'shallow', 'start', 'limit', 'after', 'at'] as const).map((name) => {
      const { description, examples, ...schema } = readQuerySchema.properties[name] as {
        description: string;
        examples?: readonly string[];
      };
      return { name, required: false, description, schema, example: examples?.[0] };
    }),
    versioned: 'read',
    success: {
      status: 200,
      description:
        "The value (or its shallow form), a slice of an array with its start and the array's length, or a page of an object's keys with the next page's cursor; `ETag` carries the version of what was read: the value's (send it back in `If-Match` with a write to the same path, or in `If-None-Match` to poll). A shallow read or a slice reads only the segment that holds the value, so its ETag is that segment's: the value's own while the value lies in one segment.",
      schema: {
        oneOf: [
          {
            type: 'object',
            properties: {
              value: {
                description:
                  'The JSON value at `path`, or the whole content (an object); with `shallow=true` its shallow form.',
              },
            },
            required: ['value'],
            additionalProperties: false,
          },
          {
            type: 'object',
            description: 'An array slice (`start` or `limit` given).',
            properties: {
              value: { type: 'array', description: 'At most `limit` elements, from `start`.' },
              start: {
                type: 'integer',
                minimum: 0,
                description: 'The index of the first element of `value` (a negative `start` resolved).',
              },
              length: { type: 'integer', minimum: 0, description: "The whole array's length." },
            },
            required: ['value', 'start', 'length'],
            additionalProperties: false,
          },
          {
            type: 'object',
            description: "A page of an object's keys (`shallow=true` with `limit` or `after`).",
            properties: {
              value: {
                type: 'object',
                additionalProperties: { const: true },
                description: 'At most `limit` keys, each with `true`, after the cursor in the documented key order.',
              },
              next: {
                type: ['string', 'null'],
                description: 'The cursor of the next page (send it as `after`); null when no key follows.',
              },
            },
            required: ['value', 'next'],
            additionalProperties: false,
          },
        ],
      },
      example: { value: { data: { items: ['a', 'b'], count: 3 } } },
    },
    errors: [
      ...ACCESS_ERRORS,
      ...PATH_ERRORS,
      'INVALID_SHALLOW',
      'INVALID_START',
      'INVALID_LIMIT',
      'INVALID_QUERY',
      'INVALID_CURSOR',
      'NOT_AN_ARRAY',
      'NOT_AN_OBJECT',
      'PATH_NOT_FOUND',
      'STALE_CURSOR',
      'RESPONSE_TOO_LARGE',
      // With `at`: the value as it was (GET content/history names the revisions).
      'HISTORY_EXPIRED',
      'HISTORY_INCOMPLETE',
      'HISTORY_TOO_LONG',
      'SERVICE_UNAVAILABLE',
    ],
  },
  contentMutation('set', {
    summary: 'Set a value',
    description:
      'Writes `value` at `path`, creating missing parents as objects. On an array, an index inside it replaces the element and `index == length` appends. Walking through a scalar is a 400 and changes nothing.',
    example: { path: 'data.item.name', value: 'hello' },
    errors: [...PATH_ERRORS, ...VALUE, 'NOT_A_CONTAINER', 'INDEX_OUT_OF_RANGE'],
  }),
  contentMutation('insert', {
    summary: 'Insert a value into an array',
    description:
      "Inserts `value` into the array at `path` before `index` (an integer in `-length..length`; negative counts from the end, like Python's `list.insert`). A missing array is created.",
    example: { path: 'data.items', value: 'first', index: 0 },
    errors: [...PATH_ERRORS, ...VALUE, 'INVALID_INDEX', 'INDEX_OUT_OF_RANGE', 'NOT_AN_ARRAY', 'NOT_A_CONTAINER'],
  }),
  contentMutation('push', {
    summary: 'Append a value to an array',
    description:
      'Appends `value` to the array at `path`. A missing array becomes `[value]`; a value that is not an array is a 400.',
    example: { path: 'data.items', value: { id: 1 } },
    errors: [...PATH_ERRORS, ...VALUE, 'NOT_AN_ARRAY', 'NOT_A_CONTAINER', 'INDEX_OUT_OF_RANGE'],
  }),
  contentMutation('decrement', {
    summary: 'Decrement a number',
    description:
      'Subtracts `value` (default 1) from the number at `path`. A missing number counts as 0; a value that is not a number is a 400.',
    example: { path: 'data.item.count', value: 2 },
    errors: [
      ...PATH_ERRORS,
      'INVALID_AMOUNT',
      'NOT_A_NUMBER',
      'NOT_A_CONTAINER',
      'INDEX_OUT_OF_RANGE',
      'NUMBER_OUT_OF_RANGE',
      'NUMBER_TOO_PRECISE',
    ],
  }),
  contentMutation('increment', {
    summary: 'Increment a number',
    description:
      'Adds `value` (default 1) to the number at `path`. A missing number counts as 0; a value that is not a number is a 400.',
    example: { path: 'data.item.count' },
    errors: [
      ...PATH_ERRORS,
      'INVALID_AMOUNT',
      'NOT_A_NUMBER',
      'NOT_A_CONTAINER',
      'INDEX_OUT_OF_RANGE',
      'NUMBER_OUT_OF_RANGE',
      'NUMBER_TOO_PRECISE',
    ],
  }),
  contentMutation('delete', {
    summary: 'Delete a value',
    description:
      'Removes the key or array element at `path` (later elements shift). Deleting a missing path is a 200: deleting is idempotent.',
    example: { path: 'data.item.name' },
    errors: [...PATH_ERRORS],
  }),
  contentMutation('update', {
    summary: 'Replace the whole content',
    description: 'Replaces the whole content with `content`, which must be a JSON object.',
    example: { content: { data: { items: [], count: 0 } } },
    errors: [
      'INVALID_CONTENT',
      'INVALID_VALUE',
      'VALUE_TOO_DEEP',
      'EMPTY_KEY',
      'KEY_TOO_LONG',
      'RESERVED_KEY',
      'NUMBER_OUT_OF_RANGE',
      'NUMBER_TOO_PRECISE',
    ],
  }),
  contentMutation('batch', {
    summary: 'Apply several operations atomically',
    description:
      'Applies `operations` (1 to 100) in order, each seeing the effect of the ones before it, exactly as if sent one by one, and atomically: all or none. Each operation is the body of its own route plus `op` (`set`, `insert`, `push`, `increment`, `decrement`, `delete`), or a precondition `test`: `{"op":"test","path":"a.b","value":1}` holds when the value at `path` equals `value` as JSON (numbers compared as decimals, object keys in any order), `{"op":"test","path":"p","exists":false}` when nothing is there. The first operation that fails fails the batch, nothing changes, and the error is the one that operation would get alone, plus its position `index` (a failed test: 409 `TEST_FAILED`; a body its route would refuse fails when its turn comes, like any other error). `If-Match` and `Idempotency-Key` apply to the batch as a whole (If-Match is checked before the first operation). A batch that changes nothing (tests, deletes of missing paths) answers the current `ETag`.',
    example: {
      operations: [
        { op: 'test', path: 'data.item.count', value: 3 },
        { op: 'decrement', path: 'data.item.count' },
        { op: 'push', path: 'data.orders', value: { id: 7 } },
        { op: 'set', path: 'data.item.updatedBy', value: 'ci' },
      ],
    },
    errors: [
      ...PATH_ERRORS,
      ...VALUE,
      'INVALID_BATCH',
      'TEST_FAILED',
      'INVALID_INDEX',
      'INVALID_AMOUNT',
      'INDEX_OUT_OF_RANGE',
      'NOT_AN_ARRAY',
      'NOT_A_NUMBER',
      'NOT_A_CONTAINER',
    ],
  }),
  {
    method: 'PATCH',
    path: CONTENT,
    operationId: 'patchContent',
    tag: 'content',
    summary: 'Patch the content (JSON Patch or JSON Merge Patch)',
    description:
      "By `Content-Type`: `application/json-patch+json` takes an RFC 6902 document (an array of at most 100 operations `add`, `remove`, `replace`, `move`, `copy`, `test`, paths as JSON Pointers), with the RFC's semantics: `add` creates or replaces a member and inserts into an array (`-`: at the end), `remove`/`replace`/`move`/`copy` of a missing location is a 404 `PATH_NOT_FOUND`, `test` compares JSON values (numbers as decimals); a failed test is a 409 `TEST_FAILED`. `application/merge-patch+json` takes an RFC 7396 merge patch of the whole content (an object: anything else would make the content something else, a 400 `INVALID_CONTENT`). Any other type, or none, is a 415. All or none: a failing operation changes nothing and its error carries its position `index` (a merge patch is one operation: no index). Our content rules hold (no empty keys, depth, numbers, `__proto__`). A JSON Pointer reaches any key our content allows, dots included (`/a.b` is the key `a.b`). `If-Match` and `Idempotency-Key` apply to the whole patch. A patch that changes nothing answers the current `ETag`.",
    bodies: {
      'application/json-patch+json': {
        schema: patchSchemas.jsonPatch,
        example: [
          { op: 'test', path: '/data/item/count', value: 3 },
          { op: 'replace', path: '/data/item/count', value: 2 },
          { op: 'add', path: '/data/orders/-', value: { id: 7 } },
          { op: 'move', from: '/data/draft', path: '/data/published' },
        ],
      },
      'application/merge-patch+json': {
        schema: patchSchemas.mergePatch,
        example: { data: { item: { name: 'Lamp', draft: null } } },
      },
    },
    versioned: 'write',
    success: {
      status: 200,
      description: 'Done; `ETag` carries the new version of the content.',
      schema: messageSchema,
      example: { message: SUCCESS_MESSAGES.patch },
    },
    errors: [
      ...MUTATION_ERRORS,
      ...PATH_ERRORS,
      ...VALUE.filter((code) => code !== 'MISSING_VALUE'),
      'INVALID_PATCH',
      'INVALID_CONTENT',
      'PATH_NOT_FOUND',
      'TEST_FAILED',
      'INDEX_OUT_OF_RANGE',
      'NOT_A_CONTAINER',
    ],
  },
];
