// Error catalogue: every stable error code, its status and an example message; the error classes take only these
// codes (lib/config/errors.ts), and the API docs are built from the same list, so the two cannot drift apart.
import {
  MAX_BODY_BYTES,
  MAX_CONTAINER_DEPTH,
  MAX_CONTENT_BYTES,
  MAX_DEPTH,
  MAX_EXPIRES_IN_SECONDS,
  MAX_KEY_LENGTH,
  MAX_RESPONSE_BYTES,
  MAX_REWIND_ENTRIES,
  MAX_SLICE_LIMIT,
} from './limits';

export interface ErrorDoc {
  /** The condition, as the example's summary. */
  when: string;
  status: number;
  message: string;
}

/**
 * One entry per code the service answers with (the constructors in lib/config/errors.ts accept nothing else). A
 * route lists the codes it can answer with; the document groups them by status, one named example per code.
 */
export const ERROR_CODES = {
  // 400: the request itself
  INVALID_JSON: {
    when: 'The body is not valid JSON, not UTF-8, or has a string with a lone surrogate',
    status: 400,
    message: 'the request body is not valid JSON',
  },
  INVALID_BODY: {
    when: 'The body is not a JSON object',
    status: 400,
    message: 'the request body must be a JSON object',
  },
  UNKNOWN_FIELD: {
    when: 'The body has a field the operation does not take',
    status: 400,
    message: "unknown field 'valeu'",
  },
  INVALID_MESSAGE: {
    when: 'A realtime (WebSocket) frame is not a JSON object with a known action and its fields',
    status: 400,
    message: "unknown action 'subscrbe'",
  },
  INVALID_IDEMPOTENCY_KEY: {
    when: 'Idempotency-Key is not 1 to 255 visible ASCII characters',
    status: 400,
    message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
  },
  INVALID_IF_MATCH: {
    when: 'If-Match cannot be read',
    status: 400,
    message: 'If-Match may name at most 20 entity tags',
  },
  INVALID_RULES: {
    when: 'A rules document is invalid: the message names the rule (rules[i]) and what is wrong',
    status: 400,
    message: 'rules[0]: invalid CEL: <input>:1:3: found + but expecting end of input',
  },
  VALIDATION_FAILED: {
    when: "A write leaves a value a rule's validate schema refuses: the message names the rule and the schema path",
    status: 400,
    message: "rules[2] (users.{uid}.profile) at 'users.u1.profile': #/required: must have required property 'name'",
  },
  INVALID_PATH: {
    when: 'path is missing, not a string, empty, has an empty segment or a bad escape',
    status: 400,
    message: 'path must not contain empty segments',
  },
  INVALID_PIECES: {
    when: 'An import page whose pieces break the format: a bad JSON Pointer, out of depth-first order, not below an open container, an array element out of order, "__proto__", an empty key, a value too deep',
    status: 400,
    message: "pieces[3]: '/list/5' is not the next element of the open array '/list' (expected index 4)",
  },
  PATH_TOO_DEEP: {
    when: 'path has more segments than content may nest',
    status: 400,
    message: `path must have at most ${MAX_CONTAINER_DEPTH} segments`,
  },
  RESERVED_KEY: {
    when: 'A path segment or object key is __proto__',
    status: 400,
    message: '"__proto__" cannot be used as a key',
  },
  INVALID_BATCH: {
    when: 'A batch without 1 to 100 operations, or an operation of no known kind',
    status: 400,
    message: 'operations must be an array of 1 to 100 operations',
  },
  INVALID_PATCH: {
    when: 'A PATCH body that is not a JSON Patch document (an array of 0 to 100 operations with their members) or has a duplicate member',
    status: 400,
    message: "operation 0 needs a string 'path' (a JSON Pointer)",
  },
  MISSING_VALUE: { when: 'value is missing', status: 400, message: 'value is required (null is a value)' },
  INVALID_INDEX: {
    when: 'index is missing, not a number or not an integer',
    status: 400,
    message: 'index must be an integer',
  },
  INVALID_AMOUNT: {
    when: 'value is not a storable number',
    status: 400,
    message: 'value must be a number within the storable range, of at most 38 significant digits',
  },
  INVALID_CONTENT: {
    when: 'content is missing or not an object',
    status: 400,
    message: 'content is required and must be a JSON object',
  },
  INVALID_SHALLOW: {
    when: 'The shallow query parameter is not true or false',
    status: 400,
    message: 'shallow must be true or false',
  },
  INVALID_START: {
    when: 'The start query parameter is not an integer (no leading zeros, at most 15 digits)',
    status: 400,
    message: 'start must be an integer (negative counts from the end)',
  },
  INVALID_LIMIT: {
    when: `The limit query parameter is not a whole number from 1 to ${MAX_SLICE_LIMIT}`,
    status: 400,
    message: `limit must be a whole number from 1 to ${MAX_SLICE_LIMIT}`,
  },
  INVALID_QUERY: {
    when: 'Query parameters that do not go together (shallow=true with start; after without shallow=true)',
    status: 400,
    message: 'shallow=true cannot be combined with start',
  },
  INVALID_CURSOR: {
    when: "The after query parameter is not the next of an earlier page of shallow=true&limit=, or an export's cursor is not one of this project's export",
    status: 400,
    message: 'after must be the next of an earlier page of shallow=true&limit=',
  },
  INVALID_NAME: {
    when: 'name is missing or not 1 to 100 characters',
    status: 400,
    message: 'name is required and must be a string of 1 to 100 characters',
  },
  INVALID_PERMISSIONS: {
    when: 'permissions is not a non-empty list of known permissions',
    status: 400,
    message: 'permissions must be a non-empty array of "content:read" and "content:write"',
  },
  INVALID_EXPIRY: {
    when: 'expiresInSeconds is not a whole number from 1 to 10 years in seconds',
    status: 400,
    message: `expiresInSeconds must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_SECONDS} (10 years)`,
  },
  INVALID_ROLE: { when: 'role is not viewer or editor', status: 400, message: 'role must be "viewer" or "editor"' },
  INVALID_PROJECT_NAME: {
    when: 'The username or project slug in the URL cannot name a project',
    status: 400,
    message:
      'a username is @ and 1-39 letters, digits, ".", "_" or "-"; a project slug is 1-100 of those, starting with a letter or digit',
  },
  INVALID_MEMBER: {
    when: 'The owner cannot also be a member',
    status: 400,
    message: 'the owner cannot also be a member',
  },
  INVALID_WEBHOOK_URL: {
    when: 'url is not an https URL (http only to loopback in local runs) of at most 2048 characters, or has credentials',
    status: 400,
    message: 'url must be an https URL of at most 2048 characters',
  },
  FORBIDDEN_DESTINATION: {
    when: "The webhook's host does not resolve, or resolves to a private, loopback, link-local, multicast or reserved address",
    status: 400,
    message: 'url resolves to 169.254.169.254, which is not a public address',
  },
  INDEX_OUT_OF_RANGE: { when: 'An array index is outside the array', status: 400, message: 'index 5 is outside -2..2' },
  NOT_A_CONTAINER: {
    when: 'The path walks through a scalar',
    status: 400,
    message: "cannot create 'data.count.x': 'data.count' is not an object or array",
  },
  NOT_AN_ARRAY: {
    when: 'The target is not an array (of a push or insert, or of a GET with start or limit)',
    status: 400,
    message: "the value at 'data.items' is not an array",
  },
  NOT_AN_OBJECT: {
    when: 'A page of keys (shallow=true with limit or after) of a value that is not an object',
    status: 400,
    message: "the value at 'data.items' is not an object: shallow=true with limit or after pages the keys of an object",
  },
  NOT_A_NUMBER: {
    when: 'The target is not a number',
    status: 400,
    message: "the value at 'data.count' is not a number",
  },
  INVALID_VALUE: { when: 'The value is not JSON', status: 400, message: 'value must be JSON' },
  VALUE_TOO_DEEP: {
    when: 'The value would nest too deep',
    status: 400,
    message: `content may nest at most ${MAX_DEPTH} levels, counting the root and the values at the bottom`,
  },
  EMPTY_KEY: { when: 'An object key is empty', status: 400, message: 'object keys must not be empty' },
  KEY_TOO_LONG: {
    when: 'An object key is too long',
    status: 400,
    message: `object keys must be at most ${MAX_KEY_LENGTH} characters`,
  },
  NUMBER_OUT_OF_RANGE: {
    when: 'A number (given or computed) is outside what DynamoDB stores',
    status: 400,
    message: 'numbers must be 0 or have a magnitude between 1e-130 and 9.99e125',
  },
  NUMBER_TOO_PRECISE: {
    when: 'A number (given or computed) has more than 38 significant digits',
    status: 400,
    message: 'numbers may have at most 38 significant digits',
  },
  // 401 / 403 / 404: who is asking, and for what
  UNAUTHORIZED: {
    when: 'No credential, or an unknown, expired or revoked one',
    status: 401,
    message: 'A valid session token or API key is required',
  },
  FORBIDDEN: {
    when: 'No access to the project, or the API key lacks the permission',
    status: 403,
    message: 'This API key lacks the content:write permission',
  },
  PROJECT_NOT_FOUND: {
    when: 'The user or project does not exist',
    status: 404,
    message: 'project @alice/site does not exist',
  },
  KEY_NOT_FOUND: {
    when: 'The project has no API key with this ID',
    status: 404,
    message: 'no such API key in this project',
  },
  MEMBER_NOT_FOUND: {
    when: 'The user is not a member of the project',
    status: 404,
    message: '@bob is not a member of this project',
  },
  WEBHOOK_NOT_FOUND: {
    when: 'The project has no webhook with this ID',
    status: 404,
    message: 'no such webhook in this project',
  },
  USER_NOT_FOUND: { when: 'The user to add does not exist', status: 404, message: 'user @bob does not exist' },
  IMPORT_NOT_FOUND: {
    when: 'An import session that does not exist: never started, abandoned (DELETE, or untouched for 5 minutes), or done',
    status: 404,
    message: 'import session Zx3k9QpLmN0aBcDe does not exist (abandoned, finished, or never started)',
  },
  PATH_NOT_FOUND: { when: 'Nothing is at the path read', status: 404, message: "nothing at 'data.missing'" },
  // 409 / 412 / 422: concurrency and retries
  TEST_FAILED: {
    when: "A batch's test operation does not hold",
    status: 409,
    message: "the value at 'a.b' is not the one tested",
  },
  STALE_CURSOR: {
    when: 'A page of keys after a cursor made before the object was rewritten as a whole (or first bucketed)',
    status: 409,
    message: 'the object was rewritten as a whole since this cursor was made; list its keys again from the first page',
  },
  WRITE_CONFLICT: {
    when: 'Too many concurrent writers',
    status: 409,
    message: 'Too many concurrent writes to this project; retry shortly',
  },
  IDEMPOTENCY_IN_PROGRESS: {
    when: 'The first request with this Idempotency-Key has not finished',
    status: 409,
    message: 'A request with this Idempotency-Key is still in progress; retry shortly',
  },
  PROJECT_EXISTS: { when: 'The project already exists', status: 409, message: 'project @alice/site already exists' },
  ALREADY_EXISTS: { when: 'The thing to create already exists', status: 409, message: 'user @alice already exists' },
  LIMIT_REACHED: {
    when: 'The project holds as many keys, members or webhooks as it may',
    status: 409,
    message: 'a project may have at most 100 keys',
  },
  IMPORT_OUT_OF_ORDER: {
    when: 'An import page whose sequence is not the next one (nor a retry of the last), or a commit before any piece',
    status: 409,
    message: 'page 5 is out of order: the session expects page 3 next',
  },
  HISTORY_INCOMPLETE: {
    when: 'A read or restore at a revision crosses a change at that path whose old values were not kept (too large)',
    status: 409,
    message: 'the change at revision 0000000000000000000000000000000000000042 was not kept in full',
  },
  EXPORT_STALE: {
    when: 'An export page cannot read its revision any more: since it, a container being paged was rewritten or lost a member, a change was not kept in full, or more than 5000 changes were made',
    status: 409,
    message:
      "the content changed since this export's revision in a way it cannot undo (a member was deleted at revision 0000000000000000000000000000000000000042); export again",
  },
  HISTORY_EXPIRED: {
    when: 'A read or restore at a revision or time before the history kept (HISTORY_DAYS), or a revision never made',
    status: 410,
    message: 'revision 0000000000000000000000000000000000000042 is not in the history kept (7 days)',
  },
  PRECONDITION_FAILED: {
    when: 'If-Match names an older version',
    status: 412,
    message: 'The content has changed since the version named in If-Match',
  },
  IDEMPOTENCY_KEY_REUSED: {
    when: 'The Idempotency-Key came with a different request',
    status: 422,
    message: 'This Idempotency-Key was already used with a different request',
  },
  // 413 / 415: the envelope
  PAYLOAD_TOO_LARGE: {
    when: 'The request body is too large',
    status: 413,
    message: `the request body must be at most ${MAX_BODY_BYTES} bytes`,
  },
  MESSAGE_TOO_LARGE: {
    when: 'A realtime (WebSocket) frame from a client is too large',
    status: 413,
    message: 'a realtime message must be at most 16384 bytes',
  },
  CONTENT_TOO_LARGE: {
    when: 'A value that stays whole (a string, an array element, an array directly in an array) would outgrow one segment',
    status: 413,
    message: `a value that stays whole would exceed ${MAX_CONTENT_BYTES} bytes; nothing was changed`,
  },
  CHANGE_TOO_LARGE: {
    when: 'A batch or patch would rewrite more segments at once than one DynamoDB transaction holds (99)',
    status: 413,
    message: 'the change reads and rewrites more than 99 segments at once; change smaller parts, one request each',
  },
  RESPONSE_TOO_LARGE: {
    when: 'The value at the path is larger than one response carries (as DynamoDB counts bytes)',
    status: 413,
    message: `the value is larger than ${MAX_RESPONSE_BYTES} bytes; read the parts below it one by one`,
  },
  HISTORY_TOO_LONG: {
    when: `A read or restore at a revision or time with more than ${MAX_REWIND_ENTRIES} changes of the project made since`,
    status: 413,
    message: `more than ${MAX_REWIND_ENTRIES} changes were made since then; read at a later revision or time`,
  },
  UNSUPPORTED_MEDIA_TYPE: {
    when: 'Content-Type is not JSON (on PATCH: not application/json-patch+json or application/merge-patch+json)',
    status: 415,
    message: 'The request body must be JSON (Content-Type: application/json)',
  },
  // 5xx: faults of the service; the message never carries internals
  INTERNAL_ERROR: { when: 'A fault of the service', status: 500, message: 'Internal server error' },
  SERVICE_UNAVAILABLE: { when: 'DynamoDB is throttling', status: 503, message: 'The service is busy; retry shortly' },
} as const satisfies Record<string, ErrorDoc>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The HTTP status a code is answered with (the edge's one mapping, lib/http/edge.ts). */
export const statusOf = (code: ErrorCode): number => ERROR_CODES[code].status;

/** The codes catalogued with this status (a table of refusals of one status takes only these). */
export type CodeWithStatus<S extends number> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]['status'] extends S ? C : never;
}[ErrorCode];

/** What each status means to a client, shared by every operation that can answer with it. */
export const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid (body, path, value or header); nothing was changed. `code` says which rule.',
  401: 'No credential, or an unknown, expired or revoked one (all look the same).',
  403: 'The caller has no access to the project, or the API key lacks the permission.',
  404: 'Something the request names does not exist; `code` says what.',
  409: 'A conflict, nothing was changed: a concurrent request got in the way (retry after `Retry-After` seconds), or what is to be created exists, or a limit is reached.',
  412: '`If-Match` no longer matches the content; nothing was changed. `ETag` carries the current version.',
  413: 'The request body, or the content the write would produce, is too large; nothing was changed.',
  415: 'The request body is not JSON.',
  422: 'The `Idempotency-Key` was already used with a different request.',
  500: 'A fault of the service; the message never carries internals.',
  503: 'The service is busy; retry after `Retry-After` seconds. Nothing was changed.',
};
