// Pages of an object's keys (GET content?shallow=true&limit=&after=): the key order, the cursor, and a page of an
// object held whole. Pure; the buckets of a bucketed object are read by lib/storage/key-pages.ts.
import { createHash } from 'node:crypto';
import { Refusal } from '../config/errors';
import { MAX_CURSOR_LENGTH, MAX_KEY_LENGTH } from '../config/limits';
import { type Json, type JsonObject, isObject, setOwn } from './json';

/*
 * The key order (docs/design/storage.md, "Pages of an object's keys"). An object held whole (in one segment): its keys
 * in UTF-16 code unit order (JavaScript's `<` on strings). A bucketed object: its buckets in order of their numbers,
 * a bucket cut into buckets of its own taking its place with them in their order, and in each bucket its keys in
 * UTF-16 code unit order. A member stays in its bucket for as long as it exists (only its bucket being cut moves it,
 * into a bucket below it), so the order holds across every write of members; a page resumes at the bucket its
 * cursor names, and a bucket cut since the cursor was made is read whole (it held what the cursor's key was compared
 * with) before the buckets after it.
 */

/** Where a page of keys ended: the bucket (its path below the object's bucket stub) and the last key given of it. */
export interface KeyCursor {
  /** Which object layout the cursor belongs to: '' for an object held whole, else a digest of its bucket stub. */
  layout: string;
  /** The bucket the page ended in, as its key after the bucket stub (`/3/`, `/3/<id>#4/1/`); none when held whole. */
  bucket?: string;
  /** The last key given; none: every key of `bucket` was given. */
  key?: string;
}

/** A bucket below a bucket stub: `/<r>/`, then for each cut below it `<id>#<fan-out>/<r>/` (fragments.ts). */
const BUCKET_PATH = /^\/(0|[1-9]\d{0,9})\/(?:[A-Za-z0-9_-]{8}#[1-9]\d{0,9}\/(0|[1-9]\d{0,9})\/)*$/;

/** The layout a cursor of a bucketed object names: its bucket stub, digested (a stub is a segment key). */
export const layoutOf = (stub: string | undefined) =>
  stub === undefined ? '' : createHash('sha256').update(stub).digest('base64url').slice(0, 16);

/** Compares keys by UTF-16 code units, the order within a bucket and of an object held whole. */
export const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The opaque `next` of a page: base64url JSON, handed back as `after`. */
export function encodeCursor(cursor: KeyCursor): string {
  const { layout, bucket, key } = cursor;
  return Buffer.from(JSON.stringify({ l: layout, b: bucket, k: key })).toString('base64url');
}

const invalidCursor = () =>
  new Refusal('INVALID_CURSOR', 'after must be the next of an earlier page of shallow=true&limit=');

/** `after` as given: a cursor this service made, or a 400 INVALID_CURSOR (it never reads outside the object). */
export function decodeCursor(after: string): KeyCursor {
  if (after.length === 0 || after.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(after)) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalidCursor();
  const { l, b, k, ...rest } = parsed as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof l !== 'string' || !/^([A-Za-z0-9_-]{16})?$/.test(l)) {
    throw invalidCursor();
  }
  if (k !== undefined && (typeof k !== 'string' || k.length === 0 || k.length > MAX_KEY_LENGTH)) throw invalidCursor();
  // An object held whole has no buckets; in a bucketed one, the cursor names one.
  if (l === '' ? b !== undefined || k === undefined : typeof b !== 'string' || !BUCKET_PATH.test(b)) {
    throw invalidCursor();
  }
  return { layout: l, ...(b === undefined ? {} : { bucket: b as string }), ...(k === undefined ? {} : { key: k }) };
}

/** A cursor made for another layout of the object (held whole then, bucketed now, or bucketed anew): a 409. */
export const staleCursor = () =>
  new Refusal(
    'STALE_CURSOR',
    'the object was rewritten as a whole since this cursor was made; list its keys again from the first page',
  );

/** One page of keys: `value` (each key with `true`, as shallow=true answers) and the cursor of the next, or null. */
export interface KeyPage {
  value: JsonObject;
  next: string | null;
}

/** The keys as a shallow value: each with `true`. */
export function keysObject(keys: readonly string[]): JsonObject {
  const value: JsonObject = {};
  for (const key of keys) setOwn(value, key, true);
  return value;
}

/** A page's keys in the key order, each with the cursor that resumes just after it (an export stops mid-page). */
export type KeyOrder = Array<[key: string, after: string]>;

/** The keys of a page of an object held whole, in the key order, each with the cursor after it. */
export function orderOfObject(keys: readonly string[], limit: number, after?: KeyCursor): KeyOrder {
  if (after && after.layout !== '') throw staleCursor();
  const from = after?.key;
  const rest = [...keys].sort(byCodeUnits).filter((k) => from === undefined || k > from);
  return rest.slice(0, limit).map((k) => [k, encodeCursor({ layout: '', key: k })]);
}

/** A page of the keys of an object held whole (one segment): after the cursor's key, in UTF-16 code unit order. */
export function pageOfObject(keys: readonly string[], limit: number, after?: KeyCursor): KeyPage {
  const order = orderOfObject(keys, limit + 1, after);
  const page = order.slice(0, limit);
  const last = page[page.length - 1];
  return {
    value: keysObject(page.map(([k]) => k)),
    next: order.length > limit && last !== undefined ? last[1] : null,
  };
}

/** What a page of keys asks for: at most `limit` keys, after a cursor; `where` names the value in a 400. */
export interface KeyPageView {
  limit: number;
  after?: KeyCursor;
  where: string;
}

/** A page of the keys of a value in hand: an object's (held whole), else a 400 NOT_AN_OBJECT. */
export function pageOfValue(value: Json, page: KeyPageView): KeyPage {
  if (!isObject(value)) {
    throw new Refusal(
      'NOT_AN_OBJECT',
      `${page.where} is not an object: shallow=true with limit or after pages the keys of an object`,
    );
  }
  return pageOfObject(Object.keys(value), page.limit, page.after);
}
