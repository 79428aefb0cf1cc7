// Operations: turns a validated request body into a content operation, applying the path and value rules.
import { MAX_CONTAINER_DEPTH } from '../config/limits';
import { Refusal } from '../config/errors';
import { parsePath } from '../paths';
import { type JsonNumber, type JsonObject, assertStorable, isJsonNumber, isStorableNumber, negate } from './json';
import type { ContentOperation } from './model';

type Body = Record<string, unknown>;

/** A value stored at a path of n segments may nest the container levels the path leaves (n sit above it). */
function valueOperation(kind: 'set' | 'push', body: Body): ContentOperation {
  const segments = parsePath(body.path);
  const stored = kind === 'push' ? [body.value] : body.value;
  assertStorable(stored, MAX_CONTAINER_DEPTH - segments.length);
  return { kind, segments, value: body.value as JsonObject };
}

function amountOf(body: Body): JsonNumber {
  const amount = body.value === undefined ? 1 : body.value;
  if (!isJsonNumber(amount) || !isStorableNumber(amount)) {
    throw new Refusal(
      'INVALID_AMOUNT',
      'value must be a number within the storable range, of at most 38 significant digits',
    );
  }
  return amount;
}

export const operations = {
  set: (body: Body): ContentOperation => valueOperation('set', body),
  push: (body: Body): ContentOperation => valueOperation('push', body),
  insert: (body: Body): ContentOperation => {
    const segments = parsePath(body.path);
    const index = body.index as number;
    if (!Number.isSafeInteger(index)) throw new Refusal('INVALID_INDEX', 'index must be an integer');
    assertStorable([body.value], MAX_CONTAINER_DEPTH - segments.length);
    return { kind: 'insert', segments, value: body.value as JsonObject, index };
  },
  increment: (body: Body): ContentOperation => {
    const segments = parsePath(body.path);
    return { kind: 'add', segments, amount: amountOf(body) };
  },
  decrement: (body: Body): ContentOperation => {
    const segments = parsePath(body.path);
    return { kind: 'add', segments, amount: negate(amountOf(body)) };
  },
  delete: (body: Body): ContentOperation => ({ kind: 'delete', segments: parsePath(body.path) }),
  update: (body: Body): ContentOperation => {
    assertStorable(body.content, MAX_CONTAINER_DEPTH);
    return { kind: 'replace', content: body.content as JsonObject };
  },
} as const;

/** The success message of each mutation route (the spec's texts): the handlers answer it, the OpenAPI document shows it. */
export const SUCCESS_MESSAGES: Record<keyof typeof operations | 'batch' | 'patch' | 'restore', string> = {
  set: 'Value set successfully',
  insert: 'Value inserted successfully',
  push: 'Object pushed successfully',
  decrement: 'Value decremented successfully',
  increment: 'Value incremented successfully',
  delete: 'Value deleted successfully',
  update: 'Content updated successfully',
  batch: 'Batch applied successfully',
  patch: 'Content patched successfully',
  restore: 'Content restored successfully',
};
