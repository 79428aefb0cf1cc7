// Writes applied to a value held in memory, by the server's path rules (docs/api.md, Paths and Semantics): the changes
// a subscription receives, and the writes the offline queue shows before the server has them. Pure, and copying along
// the path: a value handed to a callback is never changed afterwards.
import { parsePath } from './paths';

/** A content write as the offline queue keeps it: a route of the API and its fields. */
export type Write =
  | { op: 'set' | 'push'; path: string; value: unknown }
  | { op: 'insert'; path: string; value: unknown; index: number }
  | { op: 'increment' | 'decrement'; path: string; by?: number }
  | { op: 'delete'; path: string };

/** A change as a `change` frame carries it: its path absolute, the new value there or that nothing is. */
export type WireChange = { path: string; value?: unknown; deleted?: true };

const REMOVE = Symbol('remove');
// An array index: no leading zeros, no -0, an exact integer (the server's rule).
const INDEX = /^(?:0|-?[1-9][0-9]{0,14})$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const refuse = (why: string): never => {
  throw new TypeError(why);
};

/** The array position a segment names (negative from the end); undefined when it names none of `length + 1`. */
function position(step: string, length: number): number | undefined {
  if (!INDEX.test(step)) return undefined;
  const i = Number(step) < 0 ? length + Number(step) : Number(step);
  return i >= 0 && i <= length ? i : undefined;
}

/** The value at `segments` below `node` (object keys, array indexes, negative from the end), or undefined. */
export function valueAt(node: unknown, segments: readonly string[]): unknown {
  for (const step of segments) {
    if (Array.isArray(node)) {
      const i = position(step, node.length);
      node = i === undefined ? undefined : node[i];
    } else node = isObject(node) && Object.hasOwn(node, step) ? node[step] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/**
 * A copy of `node` with the value at `segments` replaced by `replace(current)` (REMOVE: taken out; an array element
 * is spliced out). Missing parents are created as objects; an array takes an index up to its length (appending).
 */
function update(node: unknown, segments: readonly string[], at: number, replace: (v: unknown) => unknown): unknown {
  if (at === segments.length) return replace(node);
  const step = segments[at] as string;
  if (Array.isArray(node)) {
    const i = position(step, node.length) ?? refuse(`${step} is not an index of this array`);
    const next = update(node[i], segments, at + 1, replace);
    const copy = node.slice();
    if (next !== REMOVE) copy[i] = next;
    else if (i < node.length) copy.splice(i, 1);
    return copy;
  }
  if (node !== undefined && !isObject(node)) refuse(`a path cannot go through ${JSON.stringify(node)}`);
  const object = (node ?? {}) as Record<string, unknown>;
  const next = update(Object.hasOwn(object, step) ? object[step] : undefined, segments, at + 1, replace);
  const copy = { ...object };
  if (next === REMOVE) delete copy[step];
  else copy[step] = next;
  return copy;
}

/** `value` (the value at a subscription's path) with a change applied; `relative`: its path below the subscription's. */
export function applyChange(value: unknown, relative: readonly string[], change: WireChange): unknown {
  if (!change.deleted) return update(value, relative, 0, () => change.value);
  if (relative.length === 0) return undefined;
  return valueAt(value, relative) === undefined ? value : update(value, relative, 0, () => REMOVE);
}

/** `root` (the content) after `write`, as the server would make it; throws where the server would refuse it. */
export function applyWrite(root: unknown, write: Write): unknown {
  const segments = parsePath(write.path);
  if (segments.length === 0) refuse('a write needs a path');
  switch (write.op) {
    case 'set':
      return update(root, segments, 0, () => write.value);
    case 'push':
      return update(root, segments, 0, (v) =>
        v === undefined ? [write.value] : Array.isArray(v) ? [...v, write.value] : refuse('push onto a non-array'),
      );
    case 'insert':
      return update(root, segments, 0, (v) => {
        if (v === undefined && write.index === 0) return [write.value];
        if (!Array.isArray(v)) return refuse('insert into a non-array');
        const i = write.index < 0 ? v.length + write.index : write.index;
        if (!Number.isSafeInteger(i) || i < 0 || i > v.length) refuse('insert index out of range');
        const copy = v.slice();
        copy.splice(i, 0, write.value);
        return copy;
      });
    case 'increment':
    case 'decrement': {
      const by = (write.by ?? 1) * (write.op === 'increment' ? 1 : -1);
      return update(root, segments, 0, (v) =>
        v === undefined ? by : typeof v === 'number' ? v + by : refuse('arithmetic on a non-number'),
      );
    }
    case 'delete':
      return valueAt(root, segments) === undefined ? root : update(root, segments, 0, () => REMOVE);
  }
}
