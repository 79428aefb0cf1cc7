// Partial reads of a value (GET content's shallow=true and array slices), on the value as its segment holds it. Pure.
import { Refusal } from '../config/errors';
import { type Json, type JsonObject, isObject, setOwn } from './json';

/**
 * `shallow=true`: an object's keys, each with `true`; an array's length as `{"length": n}` (a shallow object's
 * members are all `true`, so a number there can only be a length); a scalar as itself. A member that is a stub (held
 * by a child segment) is present like any other, so nothing below the value is read.
 */
export function shallowView(value: Json): Json {
  if (Array.isArray(value)) return { length: value.length };
  if (!isObject(value)) return value;
  const keys: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(keys, key, true);
  return keys;
}

/** One page of an array: its elements from `start`, where they start, and the array's whole length to page on. */
export type ArraySlice = { value: Json[]; start: number; length: number };

/**
 * `start`/`limit`: at most `limit` elements from `start` (negative counts from the end, and before the first element
 * starts at 0); a start at or past the end is an empty page. For an array held whole in hand; a chunked array's
 * slice reads only the chunks of `start .. start + limit` and is assembled by the storage engine (lib/storage/read.ts).
 */
export function sliceArray(value: Json, start: number, limit: number, where: string): ArraySlice {
  if (!Array.isArray(value)) {
    throw new Refusal('NOT_AN_ARRAY', `${where} is not an array: start and limit slice arrays only`);
  }
  const from = start < 0 ? Math.max(0, value.length + start) : start;
  return { value: value.slice(from, from + limit), start: from, length: value.length };
}
