// JSON values: the content types, prototype-safe object helpers, and the checks DynamoDB would make.
import { BadRequest } from '../config/errors';
import { MAX_DEPTH, MAX_KEY_LENGTH, MAX_NUMBER_MAGNITUDE, MIN_NUMBER_MAGNITUDE, RESERVED_KEY } from '../config/limits';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hasOwn(object: JsonObject, key: string): boolean {
  return Object.hasOwn(object, key);
}

/** Defines an own property, so keys like `__proto__` stay plain data and never touch a prototype. */
export function setOwn(object: JsonObject, key: string, value: Json): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Levels of nesting of a value: 0 for a scalar, 1 for an empty array or object. */
export function depthOf(value: Json): number {
  if (Array.isArray(value)) return 1 + value.reduce<number>((m, v) => Math.max(m, depthOf(v)), 0);
  if (isObject(value)) return 1 + Object.keys(value).reduce((m, k) => Math.max(m, depthOf(value[k] as Json)), 0);
  return 0;
}

export function isStorableNumber(n: number): boolean {
  const magnitude = Math.abs(n);
  return Number.isFinite(n) && (magnitude === 0 || (magnitude >= MIN_NUMBER_MAGNITUDE && magnitude < MAX_NUMBER_MAGNITUDE));
}

/**
 * Checks a client value against DynamoDB's rules before any engine sees it: non-empty keys, numbers in range,
 * and objects/arrays nested at most `levelsLeft` deep (what the path above it has not used). Walks iteratively so a hostile
 * depth cannot overflow the stack.
 */
export function assertStorable(value: unknown, levelsLeft: number): asserts value is Json {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!isStorableNumber(v)) {
        throw new BadRequest(
          'NUMBER_OUT_OF_RANGE',
          'numbers must be 0 or have a magnitude between 1e-130 and 9.99e125',
        );
      }
      continue;
    }
    if (typeof v !== 'object') throw new BadRequest('INVALID_VALUE', 'value must be JSON');
    if (depth + 1 > levelsLeft) {
      throw new BadRequest('VALUE_TOO_DEEP', `content may nest at most ${MAX_DEPTH} levels, counting the root and the values at the bottom`);
    }
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(v)) {
      if (key.length === 0) throw new BadRequest('EMPTY_KEY', 'object keys must not be empty');
      if (key === RESERVED_KEY) throw new BadRequest('RESERVED_KEY', '"__proto__" cannot be used as a key');
      if (key.length > MAX_KEY_LENGTH) {
        throw new BadRequest('KEY_TOO_LONG', `object keys must be at most ${MAX_KEY_LENGTH} characters`);
      }
      stack.push([(v as JsonObject)[key], depth + 1]);
    }
  }
}

function numberSize(n: number): number {
  // DynamoDB: about one byte per two significant digits, plus one.
  const digits = Math.abs(n).toExponential().split('e')[0]!.replace('.', '').replace(/0+$/, '').length || 1;
  return Math.ceil(digits / 2) + 1;
}

/** The size DynamoDB counts for a value, in bytes (its published item-size rules). */
export function storedSize(value: Json): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'number') return numberSize(value);
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + 1 + storedSize(v), 3);
  let sum = 3;
  for (const key of Object.keys(value)) sum += 1 + Buffer.byteLength(key, 'utf8') + storedSize(value[key] as Json);
  return sum;
}

/** A deep copy made of plain objects whose keys are own data properties. */
export function cloneJson(value: Json): Json {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (isObject(value)) {
    const copy: JsonObject = {};
    for (const key of Object.keys(value)) setOwn(copy, key, cloneJson(value[key] as Json));
    return copy;
  }
  return value;
}
