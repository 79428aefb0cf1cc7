// Batch requests: each operation validated by its own route's rules, its 400 carrying its position.
import { Refusal } from '../config/errors';
import { type BatchOperation, readOperation } from '../content/batch';
import { type Json, LosslessNumber } from '../content/json';
import { operations } from '../content/operations';
import { parsePath } from '../paths';
import { BATCH_OPERATIONS, type BatchOperationName } from './schemas';
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

const isName = (op: unknown): op is BatchOperationName => BATCH_OPERATIONS.includes(op as BatchOperationName);

function testOperation(body: Body): BatchOperation {
  const segments = parsePath(body.path);
  if (body.value !== undefined && body.exists !== undefined) {
    throw new Refusal('INVALID_BATCH', 'a test names either value or exists, not both');
  }
  if (body.value === undefined && body.exists === undefined) {
    throw new Refusal('MISSING_VALUE', 'a test needs value (null is a value) or exists');
  }
  return body.value === undefined
    ? { kind: 'test', segments, exists: body.exists as boolean }
    : { kind: 'test', segments, value: body.value as Json };
}

/** One operation as its own route would take it, or its 400 (with its position) when the route would refuse it. */
function batchOperation(item: unknown, index: number): BatchOperation {
  return readOperation(index, () => {
    const op = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Body).op : undefined;
    if (!isName(op)) {
      throw new Refusal(
        'INVALID_BATCH',
        `each operation is an object whose op is one of ${BATCH_OPERATIONS.join(', ')}`,
      );
    }
    const { op: _, ...fields } = item as Body;
    const validate = VALIDATORS[op];
    if (!validate(schemaView(fields))) throw schemaError(validate.errors);
    return op === 'test' ? testOperation(fields) : (operations[op](fields) as BatchOperation);
  });
}

/**
 * The operations of a batch whose envelope the schema accepted (validateBatchEnvelope), each checked exactly as its
 * own route checks its body. One its route would refuse fails the batch with that 400 when its turn comes: the
 * batch stops at its first failing operation, as if sent one by one.
 */
export function batchOperations(body: Body): BatchOperation[] {
  return (body.operations as unknown[]).map(batchOperation);
}
