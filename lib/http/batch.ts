// Batch requests: each operation validated by its own route's rules, its 400 carrying its position.
import { BadRequest, HttpError } from '../config/errors';
import type { BatchOperation } from '../content/batch';
import { type Json, LosslessNumber } from '../content/json';
import { operations } from '../content/operations';
import { parsePath } from '../paths';
import { BATCH_OPERATIONS, type BatchOperationName, MAX_BATCH_OPERATIONS } from './schemas';
import { type Validator, schemaError } from './validation';
import {
  validateDecrement,
  validateDelete,
  validateIncrement,
  validateInsert,
  validatePush,
  validateSet,
  validateTestOperation,
} from './validators.generated';

type Body = Record<string, unknown>;

const VALIDATORS: Record<BatchOperationName, Validator> = {
  set: validateSet,
  insert: validateInsert,
  push: validatePush,
  increment: validateIncrement,
  decrement: validateDecrement,
  delete: validateDelete,
  test: validateTestOperation,
};

/** ajv tells a number by typeof: to the schema, an exact decimal (a number no double holds) is a number too. */
export function schemaView(body: Body): Body {
  if (!Object.values(body).some((v) => v instanceof LosslessNumber)) return body;
  return Object.fromEntries(
    Object.entries(body).map(([k, v]) => [k, v instanceof LosslessNumber ? Number(v.value) : v]),
  );
}

/** The batch body as the schema sees it: each operation's own view. */
export function batchView(body: Body): Body {
  if (!Array.isArray(body.operations)) return body;
  return {
    ...body,
    operations: body.operations.map((op) =>
      typeof op === 'object' && op !== null && !Array.isArray(op) ? schemaView(op as Body) : op,
    ),
  };
}

const isName = (op: unknown): op is BatchOperationName => BATCH_OPERATIONS.includes(op as BatchOperationName);

function at<T>(index: number, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (error instanceof HttpError) error.index = index;
    throw error;
  }
}

function testOperation(body: Body): BatchOperation {
  const segments = parsePath(body.path);
  if (body.value !== undefined && body.exists !== undefined) {
    throw new BadRequest('INVALID_BATCH', 'a test names either value or exists, not both');
  }
  if (body.value === undefined && body.exists === undefined) {
    throw new BadRequest('MISSING_VALUE', 'a test needs value (null is a value) or exists');
  }
  return body.value === undefined
    ? { kind: 'test', segments, exists: body.exists as boolean }
    : { kind: 'test', segments, value: body.value as Json };
}

/**
 * The operations of a batch body, each checked exactly as its own route checks its body; the first that fails
 * throws that route's 400 with its position (`index`). The body's own shape fails with INVALID_BATCH or UNKNOWN_FIELD.
 */
export function batchOperations(body: Body): BatchOperation[] {
  const extra = Object.keys(body).find((k) => k !== 'operations');
  if (extra !== undefined) throw new BadRequest('UNKNOWN_FIELD', `unknown field '${extra}'`);
  const list = body.operations;
  if (!Array.isArray(list) || list.length < 1 || list.length > MAX_BATCH_OPERATIONS) {
    throw new BadRequest('INVALID_BATCH', `operations must be an array of 1 to ${MAX_BATCH_OPERATIONS} operations`);
  }
  return list.map((item: unknown, index) =>
    at(index, () => {
      const op = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Body).op : undefined;
      if (!isName(op)) {
        throw new BadRequest(
          'INVALID_BATCH',
          `each operation is an object whose op is one of ${BATCH_OPERATIONS.join(', ')}`,
        );
      }
      const { op: _, ...fields } = item as Body;
      const validate = VALIDATORS[op];
      if (!validate(schemaView(fields))) throw schemaError(validate.errors);
      return op === 'test' ? testOperation(fields) : (operations[op](fields) as BatchOperation);
    }),
  );
}

/** The 400 for a batch body its schema refuses: the first operation's own, with its position. */
export function batchRefusal(body: Body): BadRequest {
  batchOperations(body);
  return new BadRequest('INVALID_BATCH', 'the request body does not match the batch schema');
}
