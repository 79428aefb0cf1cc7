// Batches: plans operations in order on an in-memory copy, each seeing the ones before it; the storage layout is not its concern.
import { Refusal } from '../config/errors';
import { type Path, asIndex } from '../paths';
import type { PathTree } from '../paths/tree';
import {
  type Json,
  type JsonNumber,
  type JsonObject,
  decimalOf,
  hasOwn,
  isObject,
  jsonEquals,
  numberError,
  numberProblem,
  storedSize,
} from './json';
import { type Action, type ContentOperation, type Step, applyAction, plan, shownPath, walk } from './model';
import { type MergeOperation, type PatchOperation, applyMerge, applyPatch } from './patch';

/** A precondition: the value at the path equals `value` (as JSON, numbers as decimals), or nothing is there. */
export interface TestOperation {
  kind: 'test';
  segments: Path;
  /** The client's path, when `segments` is relative to a segment (see ContentOperation). */
  shown?: Path;
  value?: Json;
  exists?: boolean;
}

/** An operation its route would refuse as sent (its 400): it fails the batch when its turn comes, like any other. */
export interface InvalidOperation {
  kind: 'invalid';
  error: Refusal;
}

export type BatchOperation =
  | Exclude<ContentOperation, { kind: 'replace' }>
  | TestOperation
  | InvalidOperation
  /** PATCH content: an RFC 6902 operation, or an RFC 7396 merge patch (lib/content/patch.ts). */
  | PatchOperation
  | MergeOperation;

/**
 * An operation read from a batch or patch, or the 400 its reading threw (with its position) as an operation that
 * fails the batch when its turn comes, as if sent one by one.
 */
export function readOperation(index: number, read: () => BatchOperation): BatchOperation {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    error.index = index;
    return { kind: 'invalid', error };
  }
}

export interface BatchPlan {
  /** The content after every operation. */
  content: JsonObject;
  /** Whether any operation changed anything (a batch of tests and missing deletes writes nothing). */
  changed: boolean;
  /** The stored size of the resulting content. */
  bytes: number;
}

/** JSON equality (numbers as decimals): kept here for the batch's callers. */
export { jsonEquals } from './json';

function assertTest(root: JsonObject, op: TestOperation): void {
  const w = walk(root, op.segments);
  const found = w.stop === undefined;
  const path = shownPath(op);
  if (op.value === undefined) {
    if (found !== op.exists) {
      throw new Refusal('TEST_FAILED', op.exists ? `nothing at '${path}'` : `there is a value at '${path}'`);
    }
    return;
  }
  if (!found || !jsonEquals(w.node, op.value)) {
    throw new Refusal('TEST_FAILED', `the value at '${path}' is not the one tested`);
  }
}

/** The number an add action reads, exactly as stored (a missing target was planned as a set). */
function numberAt(root: JsonObject, steps: readonly (string | number)[]): JsonNumber {
  let node: Json = root;
  for (const step of steps) node = (node as Record<string | number, Json>)[step] as Json;
  return node as JsonNumber;
}

/** What the entry at `steps` adds to its container's stored size (storedSize is a sum over entries); 0 if absent. */
function entrySize(root: JsonObject, steps: readonly Step[]): number {
  let node: Json = root;
  for (const step of steps.slice(0, -1)) node = (node as Record<string | number, Json>)[step] as Json;
  const last = steps[steps.length - 1] as Step;
  if (Array.isArray(node)) {
    return typeof last === 'number' && last < node.length ? 1 + storedSize(node[last] as Json) : 0;
  }
  const object = node as JsonObject;
  if (!hasOwn(object, last as string)) return 0;
  return 1 + Buffer.byteLength(last as string, 'utf8') + storedSize(object[last as string] as Json);
}

type PlanState = { content: JsonObject; bytes: number; owned: WeakSet<object> };

/** One operation on the content as the ones before it left it: its own error, exactly as it would get it alone. */
function applyOne(state: PlanState, op: BatchOperation, maxBytes: number, tooLarge: () => Refusal): void {
  const root = state.content;
  if (op.kind === 'invalid') throw op.error;
  if (op.kind === 'test') {
    assertTest(root, op);
    return;
  }
  if (op.kind === 'patch' || op.kind === 'merge') {
    // A patch operation is one or more actions (move: a remove, then an add), each seeing the one before it.
    const ctx = {
      content: () => state.content,
      change: (action: Action) => applyChange(state, action, maxBytes, tooLarge),
    };
    if (op.kind === 'patch') applyPatch(ctx, op);
    else applyMerge(ctx, op);
    return;
  }
  const planned = plan(root, op);
  if (planned === undefined) return;
  applyChange(state, planned.action, maxBytes, tooLarge);
}

/** One action on the planned content, within the number rules and the size budget. */
function applyChange(state: PlanState, action: Action, maxBytes: number, tooLarge: () => Refusal): void {
  const root = state.content;
  if (action.kind === 'add') {
    const problem = numberProblem(decimalOf(numberAt(root, action.steps)).plus(decimalOf(action.amount)));
    if (problem !== undefined) throw numberError(problem, 'the result');
  }
  if (action.steps.length === 0) {
    // The whole content replaced (a patch of the root).
    const next = applyAction(root, action, state.owned);
    const bytes = storedSize(next);
    if (bytes > maxBytes) throw tooLarge();
    state.content = next;
    state.bytes = bytes;
    return;
  }
  // Only the entry at the action's path changes (a removed element: one entry fewer), so the size moves by its change.
  const before = entrySize(root, action.steps);
  // The containers this batch copied already are changed in place; `root` as the batch got it never is.
  const next = applyAction(root, action, state.owned);
  const after = action.kind === 'remove' ? 0 : entrySize(next, action.steps);
  const bytes = state.bytes - before + after;
  if (bytes > maxBytes) throw tooLarge();
  state.content = next;
  state.bytes = bytes;
}

/**
 * Applies the operations in order to a copy of `root`, each seeing the effect of the ones before it. The first that
 * fails throws its own error with its position (`index`); `root` is never changed.
 */
export function planBatch(
  root: JsonObject,
  ops: readonly BatchOperation[],
  budget: { maxBytes: number; tooLarge: () => Refusal },
): BatchPlan {
  const state = { content: root, bytes: storedSize(root), owned: new WeakSet<object>() };
  for (const [index, op] of ops.entries()) {
    try {
      applyOne(state, op, budget.maxBytes, budget.tooLarge);
    } catch (error) {
      // A merge patch is the whole request's one operation: its errors name no position.
      if (error instanceof Refusal && op.kind !== 'merge') error.index = index;
      throw error;
    }
  }
  return { content: state.content, changed: state.content !== root, bytes: state.bytes };
}

/**
 * The paths an operation reads or changes: its own (and a JSON Patch's `from`), every leaf of a merge patch. The
 * segments along them, and below their values, are what the batch is planned on.
 */
export function touchedPaths(op: BatchOperation): Path[] {
  if ('segments' in op) return [op.segments];
  if (op.kind === 'patch') return op.from === undefined ? [op.path] : [op.path, op.from];
  if (op.kind !== 'merge') return [];
  // A merge patch's leaves are asked for once per array or object it meets: listed once.
  const known = mergeLeaves.get(op);
  if (known) return known;
  const paths: Path[] = [];
  const leaves = (value: Json, prefix: string[]) => {
    if (!isObject(value)) paths.push(prefix);
    // `{}` changes nothing in an object there (else it sets one): what is there is read, not the whole of it.
    else if (Object.keys(value).length === 0) paths.push([...prefix, EMPTY_MERGE_PROBE]);
    else for (const k of Object.keys(value)) leaves(value[k] as Json, [...prefix, k]);
  };
  leaves(op.patch, []);
  mergeLeaves.set(op, paths);
  return paths;
}

const mergeLeaves = new WeakMap<MergeOperation, Path[]>();

/**
 * The member a merge patch's `{}` is touched at, below its own path: the value there is reached (its type decides
 * between nothing and a set) without reading its members, so a wide object merged with `{}` is not rewritten whole.
 */
const EMPTY_MERGE_PROBE = '\u0000';

/** Whether `path` runs through `at` (is `at` or below it). */
const through = (path: Path, at: Path) => path.length >= at.length && at.every((s, i) => path[i] === s);

/**
 * Whether a batch can be planned on a chunked array's segment alone, `[chunk stub, newest…]`, its chunks unread
 * (docs/design/storage.md, section 13, step 4): every path that meets the array at `at` (relative to where the batch
 * is planned) pushes, inserts at the end or at an index at or after `count` (what the chunk stub stands for), or goes
 * to such an element, or to one counted from the end no further than the segment's `own` elements less those the
 * operations before it may have removed; none reads or replaces the array whole.
 */
export function plansOnNewest(ops: readonly BatchOperation[], at: Path, count: number, own: number): boolean {
  let room = own;
  const newest = (i: number | undefined) => i !== undefined && (i >= count || (i < 0 && -i <= room));
  /** An element of the array: the path's step into it. */
  const element = (path: Path | undefined) => path !== undefined && path.length === at.length + 1 && through(path, at);
  for (const op of ops) {
    for (const path of touchedPaths(op)) {
      if (!through(path, at)) {
        // Above the array: the value read, tested or replaced holds all of it.
        if (through(at, path)) return false;
        continue;
      }
      if (path.length === at.length) {
        if (op.kind === 'push') continue;
        if (op.kind === 'insert' && newest(op.index)) continue;
        return false;
      }
      const step = path[at.length] as string;
      // JSON Patch's end of an array.
      if (step === '-' && op.kind === 'patch') continue;
      if (!newest(asIndex(step))) return false;
    }
    // What may leave one element fewer for the next operations to count from the end.
    if (op.kind === 'delete' && element(op.segments)) room--;
    if (op.kind === 'patch' && ((op.op === 'remove' && element(op.path)) || (op.op === 'move' && element(op.from))))
      room--;
  }
  return true;
}

/**
 * Whether a batch can be planned on the buckets of the members it names of the bucketed object at `at`
 * (docs/design/storage.md, section 13, step 4): it meets the object, and every path that does goes to a member or
 * below one; none reads, tests, replaces or deletes the object whole. `touched`: the batch's paths (`touchedPaths`).
 */
export function plansOnMembers(touched: PathTree, at: Path): boolean {
  // In the length of `at`, whatever the number of paths: a merge patch may name tens of thousands of members.
  const { over, under } = touched.meets(at);
  return under && !over;
}

/**
 * The lowest element index of the array at `at` (of `length` elements) that a batch reaches, counting from the end
 * as from the array's length before the batch (operations that remove elements only lower what a later negative index
 * reaches, so `plansOnNewest` checks those again with its room); undefined when it reaches none. What the batch does
 * to elements at or after it is planned on the chunks from the one that holds it (docs/design/storage.md, step 4).
 */
export function lowestReach(ops: readonly BatchOperation[], at: Path, length: number): number | undefined {
  let lowest: number | undefined;
  const reach = (i: number | undefined) => {
    if (i === undefined) return;
    const logical = Math.max(0, i < 0 ? length + i : i);
    lowest = lowest === undefined ? logical : Math.min(lowest, logical);
  };
  for (const op of ops) {
    for (const path of touchedPaths(op)) {
      if (!through(path, at)) continue;
      if (path.length === at.length) {
        if (op.kind === 'insert') reach(op.index);
        continue;
      }
      reach(asIndex(path[at.length] as string));
    }
  }
  return lowest;
}

/** The operations with their indexes into the array at `at` moved to positions in `[chunk stub, newest…]`. */
export function intoNewest(ops: readonly BatchOperation[], at: Path, count: number): BatchOperation[] {
  const position = (step: string) => {
    const i = asIndex(step);
    return i === undefined || i < count ? step : String(i - count + 1);
  };
  const moved = (path: Path): Path =>
    through(path, at) && path.length > at.length
      ? [...path.slice(0, at.length), position(path[at.length] as string), ...path.slice(at.length + 1)]
      : path;
  return ops.map((op) => {
    if (op.kind === 'patch')
      return { ...op, path: moved(op.path), ...(op.from === undefined ? {} : { from: moved(op.from) }) };
    if (!('segments' in op)) return op;
    if (op.kind === 'insert' && op.segments.length === at.length && through(op.segments, at) && op.index >= count)
      return { ...op, index: op.index - count + 1 };
    return { ...op, segments: moved(op.segments) };
  });
}
