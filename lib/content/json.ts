// JSON values: the content types, prototype-safe object helpers, and the checks DynamoDB would make.
import Big from 'big.js';
import { LosslessNumber, parse as parseLosslessText } from 'lossless-json';
import { Refusal } from '../config/errors';
import { MAX_DEPTH, MAX_KEY_LENGTH, MAX_NUMBER_MAGNITUDE, MIN_NUMBER_MAGNITUDE, RESERVED_KEY } from '../config/limits';

/**
 * A JSON number: a plain `number` when a double holds its decimal value (prints it back: `1.50` is 1.5), else an
 * exact decimal that keeps its digits as text (lossless-json's LosslessNumber), such as a 20-digit id or 1e-130.
 */
export type JsonNumber = number | LosslessNumber;
export type Json = null | boolean | JsonNumber | string | Stub | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}
export { LosslessNumber };

declare global {
  // Node 22+ (ES2025's JSON.parse source text access); not yet in the TypeScript lib this project targets.
  interface JSON {
    rawJSON(text: string): unknown;
  }
}

/** JSON.stringify's replacer for exact decimals: their digits as a JSON number (`JSON.rawJSON`, Node 22+). */
const writeExactNumbers = (_key: string, value: unknown) =>
  value instanceof LosslessNumber ? JSON.rawJSON(value.value) : value;

/**
 * The JSON text of anything the service sends (responses, realtime frames, webhook bodies): exact decimals are
 * written as JSON numbers with every digit, as GET gives them, never as lossless-json's object. Measured on Node 24:
 * a 150 KB body in 0.82 ms, against 1.88 ms with lossless-json's own stringify.
 */
export const jsonText = (value: unknown): string => JSON.stringify(value, writeExactNumbers);

/**
 * Where a stored fragment of the content refers to another segment (docs/design/storage.md, section 4): the child
 * segment's sort key. Stored as a binary value, a type client content never has, so it is never mistaken for data.
 * The key is a private field: no path step (an own property) can reach into a stub, and the model treats a stub
 * as a leaf. A client never sees one: reads replace every stub by the segment it names.
 */
export class Stub {
  readonly #key: string;
  constructor(key: string) {
    this.#key = key;
  }
  get key(): string {
    return this.#key;
  }
}

/** Whether a value is a JSON object (not null, an array, an exact decimal or a stub). */
export function isObject(value: unknown): value is JsonObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof LosslessNumber) &&
    !(value instanceof Stub)
  );
}

/** Whether a value is a JSON number: a double or an exact decimal. */
export const isJsonNumber = (value: unknown): value is JsonNumber =>
  typeof value === 'number' || value instanceof LosslessNumber;

/** At most 15 digits and no exponent: always held by a double (the common case, told without parsing twice). */
const SHORT_PLAIN = /^-?[\d.]{1,15}$/;

/**
 * The JSON number a decimal text stands for (JSON text, or DynamoDB's N). Exact decimals are kept in canonical
 * form, the way JavaScript prints numbers: no trailing zeros, exponent notation from 1e21 and below 1e-6.
 */
export function jsonNumber(text: string): JsonNumber {
  const n = Number(text);
  if (SHORT_PLAIN.test(text)) return n;
  const exact = new Big(text);
  return Number.isFinite(n) && exact.eq(String(n)) ? n : new LosslessNumber(exact.toString());
}

/** The exact decimal value of a JSON number. */
export const decimalOf = (n: JsonNumber): Big => new Big(typeof n === 'number' ? n : n.value);

/** A number as a double (for bounds that leave a wide margin, never for stored values). */
export const approximate = (n: JsonNumber): number => (typeof n === 'number' ? n : Number(n.value));

/** A number with its sign flipped, exactly. */
export const negate = (n: JsonNumber): JsonNumber =>
  typeof n === 'number' ? -n : jsonNumber(new Big(n.value).neg().toString());

/** DynamoDB's decimal addition, exactly. */
export const addNumbers = (a: JsonNumber, b: JsonNumber): JsonNumber =>
  jsonNumber(decimalOf(a).plus(decimalOf(b)).toString());

/** DynamoDB keeps at most this many significant digits. */
export const MAX_SIGNIFICANT_DIGITS = 38;

/** Whether `key` is an own property of an object (never an inherited one). */
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

const MAX_MAGNITUDE_TEXT = '1e126';
const MIN_MAGNITUDE_TEXT = '1e-130';

/** Why DynamoDB cannot store a number: out of its range (0, or 1e-130 to below 1e126), or over 38 digits. */
export function numberProblem(n: JsonNumber | Big): 'NUMBER_OUT_OF_RANGE' | 'NUMBER_TOO_PRECISE' | undefined {
  if (typeof n === 'number') {
    // A plain number is a double's shortest form (at most 17 digits): its range is checked on the double.
    const magnitude = Math.abs(n);
    const inRange =
      Number.isFinite(n) &&
      (magnitude === 0 || (magnitude >= MIN_NUMBER_MAGNITUDE && magnitude < MAX_NUMBER_MAGNITUDE));
    return inRange ? undefined : 'NUMBER_OUT_OF_RANGE';
  }
  const decimal = n instanceof Big ? n : new Big(n.value);
  const magnitude = decimal.abs();
  if (!decimal.eq(0) && (magnitude.gte(MAX_MAGNITUDE_TEXT) || magnitude.lt(MIN_MAGNITUDE_TEXT)))
    return 'NUMBER_OUT_OF_RANGE';
  return decimal.c.length > MAX_SIGNIFICANT_DIGITS ? 'NUMBER_TOO_PRECISE' : undefined;
}

/** Whether DynamoDB can store a number: in its range, at most 38 significant digits. */
export const isStorableNumber = (n: JsonNumber): boolean => numberProblem(n) === undefined;

/** The 400 for a number DynamoDB cannot store (`what`: the value, or the result of arithmetic). */
export function numberError(code: 'NUMBER_OUT_OF_RANGE' | 'NUMBER_TOO_PRECISE', what = 'numbers'): Refusal {
  return code === 'NUMBER_OUT_OF_RANGE'
    ? new Refusal(code, `${what} must be 0 or have a magnitude between 1e-130 and 9.99e125`)
    : new Refusal(code, `${what} may have at most ${MAX_SIGNIFICANT_DIGITS} significant digits`);
}

/**
 * Checks a client value against DynamoDB's rules before any engine sees it: non-empty keys, numbers in range and
 * precision,
 * and objects/arrays nested at most `levelsLeft` deep (what the path above it has not used). Walks iteratively so a hostile
 * depth cannot overflow the stack.
 */
export function assertStorable(value: unknown, levelsLeft: number): asserts value is Json {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (isJsonNumber(v)) {
      const problem = numberProblem(v);
      if (problem !== undefined) throw numberError(problem);
      continue;
    }
    if (typeof v !== 'object') throw new Refusal('INVALID_VALUE', 'value must be JSON');
    if (depth + 1 > levelsLeft) {
      throw new Refusal(
        'VALUE_TOO_DEEP',
        `content may nest at most ${MAX_DEPTH} levels, counting the root and the values at the bottom`,
      );
    }
    if (Array.isArray(v)) {
      for (const item of v) stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(v)) {
      if (key.length === 0) throw new Refusal('EMPTY_KEY', 'object keys must not be empty');
      if (key === RESERVED_KEY) throw new Refusal('RESERVED_KEY', '"__proto__" cannot be used as a key');
      if (key.length > MAX_KEY_LENGTH) {
        throw new Refusal('KEY_TOO_LONG', `object keys must be at most ${MAX_KEY_LENGTH} characters`);
      }
      stack.push([(v as JsonObject)[key], depth + 1]);
    }
  }
}

function numberSize(n: JsonNumber): number {
  // DynamoDB: about one byte per two significant digits, plus one.
  const digits =
    typeof n === 'number'
      ? Math.abs(n).toExponential().split('e')[0]!.replace('.', '').replace(/0+$/, '').length || 1
      : new Big(n.value).c.length;
  return Math.ceil(digits / 2) + 1;
}

/** The size DynamoDB counts for a value, in bytes (its published item-size rules). */
export function storedSize(value: Json): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (value instanceof Stub) return Buffer.byteLength(value.key, 'utf8');
  if (isJsonNumber(value)) return numberSize(value);
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

/** JSON equality: numbers by exact decimal value, objects by their own keys in any order, stubs by their segment. */
export function jsonEquals(a: Json, b: Json): boolean {
  if (a instanceof Stub || b instanceof Stub) return a instanceof Stub && b instanceof Stub && a.key === b.key;
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

/**
 * `JSON.parse`, except that a text with an escape is read by lossless-json's parser (numbers as JavaScript numbers,
 * the last of duplicate keys winning, as JSON.parse does). V8 in Node 24 can read an escaped object key as another
 * key of the same length that an object of the same shape had before (the JSON text `"a\n"` after `"a\\"`: nodejs/node#63785),
 * so a client's key would be stored as another: every text a client could have written goes through here.
 */
export function parseJsonText(text: string): unknown {
  if (!text.includes('\\')) return JSON.parse(text);
  return parseLosslessText(text, null, { parseNumber: Number, onDuplicateKey: ({ newValue }) => newValue });
}
