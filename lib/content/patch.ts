// Patches: RFC 6902 JSON Patch and RFC 7396 merge patch semantics on the content, as actions of our own model.
import { Refusal } from '../config/errors';
import { MAX_CONTAINER_DEPTH } from '../config/limits';
import { asIndex, formatPointer, type Path } from '../paths';
import { type Json, type JsonObject, cloneJson, depthOf, hasOwn, isObject, jsonEquals, setOwn } from './json';
import type { Action, ContentOperation, Step } from './model';

export const PATCH_OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;
export type PatchOpName = (typeof PATCH_OPS)[number];

/** One RFC 6902 operation; `path` and `from` are JSON Pointers read into their tokens (parsePointer). */
export interface PatchOperation {
  kind: 'patch';
  op: PatchOpName;
  path: Path;
  from?: Path;
  value?: Json;
}

/** An RFC 7396 merge patch of the whole content (an object, so the content stays one). */
export interface MergeOperation {
  kind: 'merge';
  patch: JsonObject;
}

/** How a patch changes the content it is planned on: each change one action of the model, applied at once. */
export interface PatchContext {
  content(): JsonObject;
  change(action: Action): void;
}

/** RFC 6901 array index: decimal digits without leading zeros (so not `-1`, `01` or `-`). */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** RFC 6901 evaluation: own members of objects, indexes inside arrays; undefined when the pointer names nothing. */
function resolve(root: JsonObject, tokens: Path): { steps: Step[]; node: Json } | undefined {
  const steps: Step[] = [];
  let node: Json = root;
  for (const token of tokens) {
    if (Array.isArray(node)) {
      const index = ARRAY_INDEX.test(token) ? Number(token) : Number.NaN;
      if (!(index < node.length)) return undefined;
      steps.push(index);
      node = node[index] as Json;
    } else if (isObject(node) && hasOwn(node, token)) {
      steps.push(token);
      node = node[token] as Json;
    } else {
      return undefined;
    }
  }
  return { steps, node };
}

const nothingAt = (tokens: Path) => new Refusal('PATH_NOT_FOUND', `nothing at '${formatPointer(tokens)}'`);

function existing(root: JsonObject, tokens: Path): { steps: Step[]; node: Json } {
  const found = resolve(root, tokens);
  if (found === undefined) throw nothingAt(tokens);
  return found;
}

function replaceRoot(ctx: PatchContext, value: Json): void {
  if (!isObject(value)) throw new Refusal('INVALID_CONTENT', 'the content must stay a JSON object');
  ctx.change({ kind: 'set', steps: [], value });
}

/** add: a member is created or replaced; in an array the value is inserted at the index (`-`: at the end). */
function add(ctx: PatchContext, path: Path, value: Json): void {
  if (path.length === 0) {
    replaceRoot(ctx, value);
    return;
  }
  const above = path.slice(0, -1);
  const token = path[path.length - 1] as string;
  const parent = resolve(ctx.content(), above);
  if (parent === undefined) {
    throw new Refusal('PATH_NOT_FOUND', `nothing at '${formatPointer(above)}' to add '${token}' to`);
  }
  const where = formatPointer(above) || '(root)';
  if (Array.isArray(parent.node)) {
    const length = parent.node.length;
    if (token !== '-' && !ARRAY_INDEX.test(token)) {
      throw new Refusal('INVALID_PATH', `'${where}' is an array: '${token}' is not an index`);
    }
    const index = token === '-' ? length : Number(token);
    if (index > length) {
      throw new Refusal('INDEX_OUT_OF_RANGE', `index ${token} is outside the array at '${where}' (length ${length})`);
    }
    const { steps } = parent;
    if (index === length) ctx.change({ kind: 'append', steps, value });
    else if (index === 0) ctx.change({ kind: 'prepend', steps, value });
    else ctx.change({ kind: 'insert', steps, index, value, length });
  } else if (isObject(parent.node)) {
    if (token === '') throw new Refusal('EMPTY_KEY', 'object keys must not be empty');
    ctx.change({ kind: 'set', steps: [...parent.steps, token], value });
  } else {
    throw new Refusal('NOT_A_CONTAINER', `cannot add '${formatPointer(path)}': '${where}' is not an object or array`);
  }
}

function remove(ctx: PatchContext, path: Path): void {
  if (path.length === 0) throw new Refusal('INVALID_CONTENT', 'the content itself cannot be removed');
  ctx.change({ kind: 'remove', steps: existing(ctx.content(), path).steps });
}

/** A value copied or moved lands below `path`: it may nest only the levels the path leaves. */
function assertFits(value: Json, path: Path): void {
  if (depthOf(value) > MAX_CONTAINER_DEPTH - path.length) {
    throw new Refusal(
      'VALUE_TOO_DEEP',
      `'${formatPointer(path)}' cannot hold the value: content may nest at most 32 levels`,
    );
  }
}

/** RFC 6902 section 4: one operation, with its error when the content does not allow it. */
export function applyPatch(ctx: PatchContext, op: PatchOperation): void {
  const value = op.value as Json;
  switch (op.op) {
    case 'add':
      add(ctx, op.path, value);
      return;
    case 'remove':
      remove(ctx, op.path);
      return;
    case 'replace':
      if (op.path.length === 0) replaceRoot(ctx, value);
      else ctx.change({ kind: 'set', steps: existing(ctx.content(), op.path).steps, value });
      return;
    case 'move': {
      const from = op.from as Path;
      const moved = existing(ctx.content(), from).node;
      if (from.length === op.path.length && from.every((t, i) => t === op.path[i])) return;
      assertFits(moved, op.path);
      remove(ctx, from);
      add(ctx, op.path, moved);
      return;
    }
    case 'copy': {
      const copied = existing(ctx.content(), op.from as Path).node;
      assertFits(copied, op.path);
      // A copy of its own: the planner changes containers it owns in place, which must not show in two places.
      add(ctx, op.path, cloneJson(copied));
      return;
    }
    case 'test': {
      const found = resolve(ctx.content(), op.path);
      if (found === undefined || !jsonEquals(found.node, value)) {
        throw new Refusal('TEST_FAILED', `the value at '${formatPointer(op.path)}' is not the one tested`);
      }
      return;
    }
  }
}

/** RFC 7396's MergePatch({}, value): an object with its null members dropped, all the way down; anything else as is. */
function created(value: Json): Json {
  if (!isObject(value)) return value;
  const object: JsonObject = {};
  for (const key of Object.keys(value)) {
    const member = value[key] as Json;
    if (member !== null) setOwn(object, key, created(member));
  }
  return object;
}

function nodeAt(root: JsonObject, steps: readonly Step[]): Json {
  let node: Json = root;
  for (const step of steps) node = (node as Record<string, Json>)[step as string] as Json;
  return node;
}

/** RFC 7396 on the object at `steps`: null removes a member, an object merges into an object, anything else replaces. */
function mergeInto(ctx: PatchContext, steps: Step[], patch: JsonObject): void {
  for (const key of Object.keys(patch)) {
    const value = patch[key] as Json;
    const target = nodeAt(ctx.content(), steps) as JsonObject;
    const here = [...steps, key];
    if (value === null) {
      if (hasOwn(target, key)) ctx.change({ kind: 'remove', steps: here });
    } else if (isObject(value) && hasOwn(target, key) && isObject(target[key])) {
      mergeInto(ctx, here, value);
    } else {
      ctx.change({ kind: 'set', steps: here, value: created(value) });
    }
  }
}

/** RFC 7396: merges the patch into the whole content, one action per member set or removed. */
export function applyMerge(ctx: PatchContext, op: MergeOperation): void {
  mergeInto(ctx, [], op.patch);
}

/** Keys our one-request forms read as keys: not empty, not `-`, and nothing a dot path would take as an index. */
const plainKeys = (tokens: Path) =>
  tokens.length > 0 && tokens.every((t) => t !== '' && t !== '-' && asIndex(t) === undefined);

/** One of our operations that does what a patch does wherever its one-request condition holds; `present`: also require the target. */
export interface FastForm {
  op: Exclude<ContentOperation, { kind: 'replace' }>;
  present?: boolean;
}

function mergeForms(prefix: Path, patch: JsonObject, forms: FastForm[]): boolean {
  for (const key of Object.keys(patch)) {
    const value = patch[key] as Json;
    const segments = [...prefix, key];
    if (!plainKeys([key])) return false;
    if (value === null) forms.push({ op: { kind: 'delete', segments } });
    // An empty object makes a non-object target {}: no condition of ours says "is not an object".
    else if (isObject(value)) {
      if (Object.keys(value).length === 0 || !mergeForms(segments, value, forms)) return false;
    } else forms.push({ op: { kind: 'set', segments, value } });
  }
  return true;
}

/**
 * The one-request form of a patch, or undefined when it needs the content (move, copy, test, array positions,
 * the root, an empty object in a merge patch). add on a plain member is set (whose condition requires the parent,
 * and the engine refuses a key under a list or string), remove is delete (which requires the target), replace is set
 * that also requires the target; a merge patch is the set and delete of its leaves. Where the condition fails, the
 * store reads and plans the patch itself.
 */
export function fastForms(op: PatchOperation | MergeOperation): FastForm[] | undefined {
  if (op.kind === 'merge') {
    const forms: FastForm[] = [];
    return mergeForms([], op.patch, forms) ? forms : undefined;
  }
  if (!plainKeys(op.path)) return undefined;
  switch (op.op) {
    case 'add':
      return [{ op: { kind: 'set', segments: op.path, value: op.value as Json } }];
    case 'remove':
      return [{ op: { kind: 'delete', segments: op.path } }];
    case 'replace':
      return [{ op: { kind: 'set', segments: op.path, value: op.value as Json }, present: true }];
    default:
      return undefined;
  }
}
