// Validation: standalone ajv validators' errors as the client's 400, and deferring a refusal until access is decided.
import type { ErrorObject } from 'ajv';
import { Refusal } from '../config/errors';
import type { CodeWithStatus } from '../config/error-codes';
import { MAX_EXPIRES_IN_SECONDS, MAX_SLICE_LIMIT } from '../config/limits';

/** A standalone ajv validator, as scripts/build-validators.ts generates them. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

const FIELD_ERRORS: Record<string, [CodeWithStatus<400>, string]> = {
  path: ['INVALID_PATH', 'path is required and must be a string'],
  index: ['INVALID_INDEX', 'index is required and must be a number'],
  content: ['INVALID_CONTENT', 'content is required and must be a JSON object'],
  operations: ['INVALID_BATCH', 'operations must be an array of 1 to 100 operations'],
  name: ['INVALID_NAME', 'name is required and must be a string of 1 to 100 characters'],
  permissions: ['INVALID_PERMISSIONS', 'permissions must be a non-empty array of "content:read" and "content:write"'],
  expiresInSeconds: [
    'INVALID_EXPIRY',
    `expiresInSeconds must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_SECONDS} (10 years)`,
  ],
  role: ['INVALID_ROLE', 'role must be "viewer" or "editor"'],
  shallow: ['INVALID_SHALLOW', 'shallow must be true or false'],
  start: [
    'INVALID_START',
    'start must be an integer of at most 15 digits, without leading zeros (negative counts from the end)',
  ],
  limit: ['INVALID_LIMIT', `limit must be a whole number from 1 to ${MAX_SLICE_LIMIT}`],
  after: ['INVALID_CURSOR', 'after must be the next of an earlier page of shallow=true&limit='],
  at: [
    'INVALID_QUERY',
    "at is required and must be a revision (digits) or an ISO-8601 time such as '2026-11-27T08:00:00Z'",
  ],
  before: ['INVALID_QUERY', 'before must be the next of an earlier page of history (a revision)'],
  pieces: ['INVALID_PIECES', 'pieces must be an array of 1 to 10000 pieces, each {"path": <JSON Pointer>, "value"}'],
  sequence: ['INVALID_BODY', 'sequence is required and must be a whole number from 1'],
  url: ['INVALID_WEBHOOK_URL', 'url is required and must be a string of 1 to 2048 characters'],
};

/** The first schema error as the client's 400, with a stable code per field. */
export function schemaError(errors: ErrorObject[] | null | undefined): Refusal {
  const error = errors?.[0];
  // Anything wrong inside a piece of an import's page is the page's own 400 (not the body's).
  if (error?.instancePath.startsWith('/pieces/')) {
    return new Refusal(
      'INVALID_PIECES',
      `pieces${error.instancePath.slice('/pieces'.length).replace(/^\/(\d+)/, '[$1]')}: ${error.message ?? 'invalid'}`,
    );
  }
  if (error?.keyword === 'additionalProperties') {
    return new Refusal('UNKNOWN_FIELD', `unknown field '${String(error.params.additionalProperty)}'`);
  }
  const field =
    error?.keyword === 'required' ? String(error.params.missingProperty) : (error?.instancePath.split('/')[1] ?? '');
  if (field === 'value') {
    return error?.keyword === 'required'
      ? new Refusal('MISSING_VALUE', 'value is required (null is a value)')
      : new Refusal('INVALID_AMOUNT', 'value must be a number');
  }
  const [code, message] = FIELD_ERRORS[field] ?? ['INVALID_BODY', 'the request body does not match the operation'];
  return new Refusal(code, message);
}

/** Runs request validation, returning its refusal instead of throwing: access is decided before it is reported. */
export function validated<T>(fn: () => T): T | Refusal {
  try {
    return fn();
  } catch (error) {
    if (error instanceof Refusal) return error;
    throw error;
  }
}
