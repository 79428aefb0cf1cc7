// Batches: plans operations in order on an in-memory copy, each seeing the ones before it; the storage layout is not its concern.
import { Conflict, HttpError } from '../config/errors';
import { formatPath, type Segments } from '../paths';
import {
  type Json,
  type JsonNumber,
  type JsonObject,
  decimalOf,
  hasOwn,
  isJsonNumber,
  isObject,
  numberError,
  numberProblem,
  storedSize,
} from './json';
import { type ContentOperation, applyAction, plan, walk } from './model';

/** A precondition: the value at the path equals `value` (as JSON, numbers as decimals), or nothing is there. */
export interface TestOperation {
  kind: 'test';
  segments: Segments;
  value?: Json;
  exists?: boolean;
}

/** An operation its route would refuse as sent (its 400): it fails the batch when its turn comes, like any other. */
export interface InvalidOperation {
  kind: 'invalid';
  error: HttpError;
}

export type BatchOperation = Exclude<ContentOperation, { kind: 'replace' }> | TestOperation | InvalidOperation;

export interface BatchPlan {
  /** The content after every operation. */
  content: JsonObject;
  /** Whether any operation changed anything (a batch of tests and missing deletes writes nothing). */
  changed: boolean;
  /** The stored size of the resulting content. */
  bytes: number;
}

/** JSON equality: numbers by exact decimal value, objects by their own keys in any order. */
export function jsonEquals(a: Json, b: Json): boolean {
  if (isJsonNumber(a) || isJsonNumber(b)) return isJsonNumber(a) && isJsonNumber(b) && decimalOf(a).eq(decimalOf(b));
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEquals(v, b[i] as Json))
    );
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => hasOwn(b, k) && jsonEquals(a[k] as Json, b[k] as Json))
    );
  }
  return a === b;
}

function assertTest(root: JsonObject, op: TestOperation): void {
  const w = walk(root, op.segments);
  const found = w.stop === undefined;
  const path = formatPath(op.segments);
  if (op.value === undefined) {
    if (found !== op.exists) {
      throw new Conflict('TEST_FAILED', op.exists ? `nothing at '${path}'` : `there is a value at '${path}'`);
    }
    return;
  }
  if (!found || !jsonEquals(w.node, op.value)) {
    throw new Conflict('TEST_FAILED', `the value at '${path}' is not the one tested`);
  }
}

/** The number an add action reads, exactly as stored (a missing target was planned as a set). */
function numberAt(root: JsonObject, steps: readonly (string | number)[]): JsonNumber {
  let node: Json = root;
  for (const step of steps) node = (node as Record<string | number, Json>)[step] as Json;
  return node as JsonNumber;
}

/** One operation on the content as the ones before it left it: its own error, exactly as it would get it alone. */
function applyOne(root: JsonObject, op: BatchOperation, maxBytes: number, tooLarge: () => HttpError): JsonObject {
  if (op.kind === 'invalid') throw op.error;
  if (op.kind === 'test') {
    assertTest(root, op);
    return root;
  }
  const planned = plan(root, op);
  if (planned === undefined) return root;
  const { action } = planned;
  if (action.kind === 'add') {
    const problem = numberProblem(decimalOf(numberAt(root, action.steps)).plus(decimalOf(action.amount)));
    if (problem !== undefined) throw numberError(problem, 'the result');
  }
  const next = applyAction(root, action);
  if (storedSize(next) > maxBytes) throw tooLarge();
  return next;
}

/**
 * Applies the operations in order to a copy of `root`, each seeing the effect of the ones before it. The first that
 * fails throws its own error with its position (`index`); `root` is never changed.
 */
export function planBatch(
  root: JsonObject,
  ops: readonly BatchOperation[],
  budget: { maxBytes: number; tooLarge: () => HttpError },
): BatchPlan {
  let content = root;
  for (const [index, op] of ops.entries()) {
    try {
      content = applyOne(content, op, budget.maxBytes, budget.tooLarge);
    } catch (error) {
      if (error instanceof HttpError) error.index = index;
      throw error;
    }
  }
  return { content, changed: content !== root, bytes: storedSize(content) };
}
