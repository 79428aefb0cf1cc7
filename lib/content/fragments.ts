// Fragments: a content tree cut into segment-sized pieces joined by stubs (docs/design/storage.md, section 4). Pure.
import { randomBytes } from 'node:crypto';
import { asIndex, type Segments } from '../paths';
import { type Json, type JsonObject, Stub, hasOwn, isObject, setOwn, storedSize } from './json';

/** The root segment's key; a child's key is its parent's plus a random birth id and `/`, so a key prefixes its subtree. */
export const ROOT_KEY = '/';

/** A new child key under `parent`: random, so a subtree written again at the same path never reuses an old key. */
export const childKey = (parent: string) => `${parent}${randomBytes(6).toString('base64url')}/`;

/**
 * Where a path leads in a fragment: into it (`here`, the model then decides what the path means there) or onto a
 * stub after `consumed` path segments, to be followed into that segment. `enterLast` says whether a stub found at
 * the very end of the path is followed (reading it, pushing to it, incrementing it: the value lives over there) or
 * stays here (set and delete replace the stub itself).
 *
 * Only object members are ever stubs (arrays are kept whole in one segment), so the path to a segment's root is
 * object keys only and never moves when a list changes.
 */
export type Located = { at: 'here' } | { at: 'stub'; key: string; consumed: number };

export function locate(fragment: Json, segments: Segments, enterLast: boolean): Located {
  let node: Json = fragment;
  for (const [i, segment] of segments.entries()) {
    if (node instanceof Stub) return { at: 'stub', key: node.key, consumed: i };
    if (Array.isArray(node)) {
      const index = asIndex(segment);
      if (index === undefined) return { at: 'here' };
      const position = index < 0 ? node.length + index : index;
      if (position < 0 || position >= node.length) return { at: 'here' };
      node = node[position] as Json;
    } else if (isObject(node) && hasOwn(node, segment)) {
      node = node[segment] as Json;
    } else {
      return { at: 'here' };
    }
  }
  return enterLast && node instanceof Stub ? { at: 'stub', key: node.key, consumed: segments.length } : { at: 'here' };
}

/** Every stub in a value (a subtree being replaced or removed leaves these segments unreachable). */
export function stubsIn(value: Json | undefined, found: string[] = []): string[] {
  if (value instanceof Stub) found.push(value.key);
  else if (Array.isArray(value)) for (const v of value) stubsIn(v, found);
  else if (isObject(value)) for (const k of Object.keys(value)) stubsIn(value[k] as Json, found);
  return found;
}

/**
 * Where a fragment's stubs are, by the first key of their path (key → count; what a segment's A.stubsUnder holds):
 * every segment records it when written whole, so a set or delete that does not read first can be conditioned on
 * not replacing a stub.
 */
export function stubsUnderOf(fragment: Json): Record<string, number> {
  const under: Record<string, number> = {};
  if (!isObject(fragment)) return under;
  for (const k of Object.keys(fragment)) {
    const n = stubsIn(fragment[k] as Json).length;
    if (n > 0) setOwn(under as JsonObject, k, n);
  }
  return under;
}

/** A segment to be written: its key and fragment. */
export interface Piece {
  key: string;
  fragment: Json;
}

/**
 * Cuts a value that will be stored at `key` into pieces of at most `limit` bytes (storedSize): while it is over,
 * its largest object-valued or array-valued member moves to a child segment and a stub takes its place, until the
 * value is at most `target` (half the limit, so the next writes have room before splitting again). A member moved
 * out that is itself over the limit is cut the same way. What cannot be cut (an array, or an object whose members are
 * all scalars, over the limit) stays whole: such a segment is larger than `limit`, up to what one item holds.
 *
 * Returns the piece for `key` first, then the new children (parents before children). `value` is not changed:
 * the containers on the way are copied.
 */
export function cut(
  key: string,
  value: Json,
  limit: number,
  target = Math.floor(limit / 2),
  newKey: (parent: string) => string = childKey,
): Piece[] {
  if (!isObject(value) || storedSize(value) <= limit) return [{ key, fragment: value }];
  const fragment: JsonObject = {};
  const members = Object.keys(value);
  for (const k of members) setOwn(fragment, k, value[k] as Json);
  const movable = members
    .filter((k) => Array.isArray(fragment[k]) || isObject(fragment[k]))
    .map((k) => ({ k, size: storedSize(fragment[k] as Json) }))
    .sort((a, b) => b.size - a.size);
  const children: Piece[] = [];
  let size = storedSize(fragment);
  for (const { k, size: memberSize } of movable) {
    if (size <= target) break;
    const child = newKey(key);
    const stub = new Stub(child);
    // Moving a member saves its size and costs the stub's; a member smaller than its stub stays.
    if (memberSize <= storedSize(stub)) break;
    children.push(...cut(child, fragment[k] as Json, limit, target, newKey));
    setOwn(fragment, k, stub);
    size += storedSize(stub) - memberSize;
  }
  return [{ key, fragment }, ...children];
}

/**
 * The value a fragment stands for: every stub replaced by the fragment of the segment it names, recursively.
 * `fragmentOf` returns undefined for a segment it does not have: a MissingSegment (the content changed while it was
 * read), or with `keep`, the stub stays (a partial tree: the segments off the paths a batch works on).
 */
export function assemble(
  fragment: Json,
  fragmentOf: (key: string) => Json | undefined,
  missing: 'throw' | 'keep' = 'throw',
): Json {
  if (fragment instanceof Stub) {
    const child = fragmentOf(fragment.key);
    if (child !== undefined) return assemble(child, fragmentOf, missing);
    if (missing === 'keep') return fragment;
    throw new MissingSegment(fragment.key);
  }
  if (Array.isArray(fragment)) return fragment.map((v) => assemble(v, fragmentOf, missing));
  if (isObject(fragment)) {
    let copy: JsonObject | undefined;
    for (const k of Object.keys(fragment)) {
      const v = fragment[k] as Json;
      if (!(v instanceof Stub) && !Array.isArray(v) && !isObject(v)) continue;
      const assembled = assemble(v, fragmentOf, missing);
      if (assembled === v) continue;
      copy ??= { ...fragment };
      setOwn(copy, k, assembled);
    }
    return copy ?? fragment;
  }
  return fragment;
}

/** A stub named a segment that was not there: the content changed while it was being read. */
export class MissingSegment extends Error {
  constructor(readonly key: string) {
    super(`segment ${key} is missing`);
  }
}
