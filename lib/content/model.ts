// Content semantics: what each operation does to a content tree, decided in memory as one concrete action.
import { Refusal } from '../config/errors';
import { asIndex, formatPath, type Path } from '../paths';
import {
  type Json,
  type JsonNumber,
  type JsonObject,
  addNumbers,
  cloneJson,
  hasOwn,
  isJsonNumber,
  isObject,
  setOwn,
} from './json';

/** One concrete step of a stored path: a map key, or an index into a list. */
export type Step = string | number;

/**
 * `shown`: the path as the client sent it, when `segments` was taken relative to the segment that holds it (the store
 * plans on one segment's fragment): what every message names.
 */
export type ContentOperation =
  | { kind: 'set'; segments: Path; shown?: Path; value: Json }
  | { kind: 'insert'; segments: Path; shown?: Path; value: Json; index: number }
  | { kind: 'push'; segments: Path; shown?: Path; value: Json }
  /** increment (amount > 0) and decrement (amount < 0) */
  | { kind: 'add'; segments: Path; shown?: Path; amount: JsonNumber }
  | { kind: 'delete'; segments: Path; shown?: Path }
  /** update: the whole content */
  | { kind: 'replace'; content: JsonObject };

/** The client's path for a message, up to `steps` steps into `segments` (all of it by default). */
export function shownPath(op: { segments: Path; shown?: Path }, steps = op.segments.length): string {
  const shown = op.shown ?? op.segments;
  return formatPath(shown.slice(0, shown.length - op.segments.length + steps));
}

/** A change at a concrete path, as DynamoDB can apply it in one UpdateItem. */
export type Action =
  | { kind: 'set'; steps: Step[]; value: Json }
  | { kind: 'append'; steps: Step[]; value: Json }
  | { kind: 'prepend'; steps: Step[]; value: Json }
  | { kind: 'add'; steps: Step[]; amount: JsonNumber }
  | { kind: 'remove'; steps: Step[] }
  /** A middle insert: the elements from `index` move up one, in place (DynamoDB copies them from the old item). */
  | { kind: 'insert'; steps: Step[]; index: number; value: Json; length: number };

/** Beyond this many elements to move, a middle insert rewrites the list instead (update expressions are capped). */
export const MAX_SHIFTED_ELEMENTS = 100;

/**
 * What a read-then-write assumed about the content it read. The write is conditioned on exactly these, so writes
 * that commute (two decrements of `list.-1.n`, keys created under one new parent) do not conflict; only a rewritten
 * list needs the whole version unchanged.
 */
export type Guard =
  | { kind: 'type'; steps: Step[]; type: 'M' | 'L' | 'N' }
  | { kind: 'size'; steps: Step[]; size: number }
  | { kind: 'absent'; steps: Step[] }
  | { kind: 'present'; steps: Step[] }
  /** The number still leaves room for the amount (sums commute), or is exactly what was read (near the range edge). */
  | { kind: 'between'; steps: Step[]; low: number; high: number }
  | { kind: 'equals'; steps: Step[]; number: string }
  | { kind: 'version' };

type Stop = 'missing' | 'out-of-range' | 'through-scalar' | 'key-on-array';

/** How far a path can be followed in the content: the concrete steps taken, and why it stopped, if it did. */
interface Walk {
  steps: Step[];
  node: Json;
  stop?: Stop;
}

/** Follows a path into the content: the concrete steps taken, the node reached, and why it stopped, if it did. */
export function walk(root: JsonObject, segments: Path): Walk {
  const steps: Step[] = [];
  let node: Json = root;
  for (const segment of segments) {
    if (Array.isArray(node)) {
      const index = asIndex(segment);
      if (index === undefined) return { steps, node, stop: 'key-on-array' };
      const position = index < 0 ? node.length + index : index;
      if (position < 0 || position >= node.length) return { steps, node, stop: 'out-of-range' };
      steps.push(position);
      node = node[position] as Json;
    } else if (isObject(node)) {
      if (!hasOwn(node, segment)) return { steps, node, stop: 'missing' };
      steps.push(segment);
      node = node[segment] as Json;
    } else {
      return { steps, node, stop: 'through-scalar' };
    }
  }
  return { steps, node };
}

function nest(segments: Path, value: Json): Json {
  let nested = value;
  for (let i = segments.length - 1; i >= 0; i--) {
    const parent: JsonObject = {};
    setOwn(parent, segments[i] as string, nested);
    nested = parent;
  }
  return nested;
}

/** What a read-then-write decided: the action, and what it assumed about the content it read (see Guard). */
export interface Plan {
  action: Action;
  guards: Guard[];
}

/** An action with the guards its own branch assumed, beyond the walk's (see walkGuards). */
const planned = (action: Action, ...assumed: Guard[]) => ({ action, assumed });
type Chosen = ReturnType<typeof planned>;

/** Throws the 400 for a path that cannot be followed, or returns the action that creates it (parents as objects). */
function createAt(op: { segments: Path; shown?: Path }, w: Walk, value: Json): Chosen {
  const segments = op.segments;
  const at = w.steps.length;
  const segment = segments[at] as string;
  const where = shownPath(op, at) || '(root)';
  // Creating: nothing may have appeared there meanwhile, and an append position must still be the end.
  switch (w.stop) {
    case 'through-scalar':
      throw new Refusal('NOT_A_CONTAINER', `cannot create '${shownPath(op)}': '${where}' is not an object or array`);
    case 'key-on-array':
      throw new Refusal('INVALID_PATH', `'${where}' is an array: '${segment}' is not an index`);
    case 'out-of-range': {
      const length = (w.node as Json[]).length;
      const index = asIndex(segment) as number;
      if (index !== length) {
        throw new Refusal(
          'INDEX_OUT_OF_RANGE',
          `index ${segment} is outside the array at '${where}' (length ${length})`,
        );
      }
      const steps = [...w.steps, length];
      return planned(
        { kind: 'set', steps, value: nest(segments.slice(at + 1), value) },
        { kind: 'absent', steps },
        { kind: 'size', steps: w.steps, size: length },
      );
    }
    default: {
      const steps = [...w.steps, segment];
      return planned({ kind: 'set', steps, value: nest(segments.slice(at + 1), value) }, { kind: 'absent', steps });
    }
  }
}

function insertAction(steps: Step[], list: Json[], index: number, value: Json): Chosen {
  if (index < -list.length || index > list.length) {
    throw new Refusal('INDEX_OUT_OF_RANGE', `index ${index} is outside -${list.length}..${list.length}`);
  }
  const isList: Guard = { kind: 'type', steps, type: 'L' };
  const position = index < 0 ? list.length + index : index;
  if (position === 0) return planned({ kind: 'prepend', steps, value }, isList);
  if (position === list.length) return planned({ kind: 'append', steps, value }, isList);
  // Shifting in place copies whatever the elements are then; only the length must be the one planned with.
  if (list.length - position <= MAX_SHIFTED_ELEMENTS) {
    return planned({ kind: 'insert', steps, index: position, value, length: list.length }, isList, {
      kind: 'size',
      steps,
      size: list.length,
    });
  }
  const next = list.slice();
  next.splice(position, 0, value);
  // A long middle insert rewrites the list from what was read: nothing in the project may have changed.
  return planned({ kind: 'set', steps, value: next }, { kind: 'version' });
}

/** The action the operation takes where the walk ended, with what that branch assumed; undefined for no change. */
function choose(op: Exclude<ContentOperation, { kind: 'replace' }>, w: Walk): Chosen | undefined {
  const found = w.stop === undefined;
  const path = shownPath(op);
  switch (op.kind) {
    case 'set':
      return found ? planned({ kind: 'set', steps: w.steps, value: op.value }) : createAt(op, w, op.value);
    case 'delete':
      return found ? planned({ kind: 'remove', steps: w.steps }, { kind: 'present', steps: w.steps }) : undefined;
    case 'push':
      if (!found) return createAt(op, w, [op.value]);
      if (!Array.isArray(w.node)) throw new Refusal('NOT_AN_ARRAY', `the value at '${path}' is not an array`);
      return planned({ kind: 'append', steps: w.steps, value: op.value }, { kind: 'type', steps: w.steps, type: 'L' });
    case 'insert':
      if (!found) {
        const create = createAt(op, w, [op.value]);
        // A missing target is an empty array, where only index 0 is in range.
        if (op.index !== 0) throw new Refusal('INDEX_OUT_OF_RANGE', `index ${op.index} is outside -0..0`);
        return create;
      }
      if (!Array.isArray(w.node)) throw new Refusal('NOT_AN_ARRAY', `the value at '${path}' is not an array`);
      return insertAction(w.steps, w.node, op.index, op.value);
    case 'add':
      if (!found) return createAt(op, w, op.amount);
      if (!isJsonNumber(w.node)) throw new Refusal('NOT_A_NUMBER', `the value at '${path}' is not a number`);
      return planned({ kind: 'add', steps: w.steps, amount: op.amount }, { kind: 'type', steps: w.steps, type: 'N' });
  }
}

/** What following the path assumed: every list a step indexes into stays a list; one indexed from the end keeps its length. */
function walkGuards(root: JsonObject, segments: Path, steps: readonly Step[]): Guard[] {
  const guards: Guard[] = [];
  let node: Json = root;
  steps.forEach((step, i) => {
    if (typeof step === 'number') {
      guards.push({ kind: 'type', steps: steps.slice(0, i), type: 'L' });
      if ((asIndex(segments[i] as string) as number) < 0) {
        guards.push({ kind: 'size', steps: steps.slice(0, i), size: (node as Json[]).length });
      }
    }
    node = (node as Record<string | number, Json>)[step] as Json;
  });
  return guards;
}

/**
 * The action an operation takes on this content and the guards it assumed, undefined when there is nothing to
 * change; throws its 400s. The guards come from the same walk and branch as the action, so they cannot disagree.
 */
export function plan(root: JsonObject, op: ContentOperation): Plan | undefined {
  if (op.kind === 'replace') return { action: { kind: 'set', steps: [], value: op.content }, guards: [] };
  const w = walk(root, op.segments);
  const chosen = choose(op, w);
  if (chosen === undefined) return undefined;
  const { action, assumed } = chosen;
  const target = action.steps;
  const parent: Guard[] =
    target.length > 0
      ? [{ kind: 'type', steps: target.slice(0, -1), type: typeof target[target.length - 1] === 'number' ? 'L' : 'M' }]
      : [];
  const seen = new Set<string>();
  const guards = [...walkGuards(root, op.segments, w.steps), ...parent, ...assumed];
  return { action, guards: guards.filter((g) => !seen.has(JSON.stringify(g)) && seen.add(JSON.stringify(g))) };
}

/** The value at a path (GET), or a 404 when the path does not exist. */
export function valueAt(root: JsonObject, segments: Path, shown = segments): Json {
  const w = walk(root, segments);
  if (w.stop !== undefined) throw new Refusal('PATH_NOT_FOUND', `nothing at '${formatPath(shown)}'`);
  return w.node;
}

/** A shallow copy of a container (spread defines own data properties, so a `__proto__` key stays plain data). */
const copyOf = (node: Json): Json => (Array.isArray(node) ? node.slice() : { ...(node as JsonObject) });

/**
 * Applies an action to a copy of the content (for sizes and models; DynamoDB computes what is stored). Only the
 * containers on the action's path are copied; the rest is shared with `root`, which is never changed. Containers in
 * `owned` (copies an earlier call made, recorded there) are changed in place instead: a batch copies each once.
 */
export function applyAction(root: JsonObject, action: Action, owned?: WeakSet<object>): JsonObject {
  if (action.steps.length === 0) {
    if (action.kind === 'set') return cloneJson(action.value) as JsonObject;
    // Changing the root itself (a segment's root can be an array): as a member of a holder.
    const held = applyAction({ r: root } as JsonObject, { ...action, steps: ['r'] } as Action, owned);
    return held.r as JsonObject;
  }
  const own = (node: Json): Json => {
    if (owned?.has(node as object)) return node;
    const copy = copyOf(node);
    owned?.add(copy as object);
    return copy;
  };
  const next = own(root) as JsonObject;
  let parent: Json = next;
  for (const step of action.steps.slice(0, -1)) {
    const holder = parent as Record<string | number, Json>;
    const child = own(holder[step] as Json);
    if (Array.isArray(holder)) holder[step as number] = child;
    else setOwn(holder as JsonObject, step as string, child);
    parent = child;
  }
  const last = action.steps[action.steps.length - 1] as Step;
  const container = parent as Json[] & JsonObject;
  const current = (container as Record<string | number, Json>)[last] as Json;
  const put = (value: Json) => {
    if (Array.isArray(container)) container[last as number] = value;
    else setOwn(container, last as string, value);
  };
  switch (action.kind) {
    case 'set':
      put(action.value);
      break;
    case 'append':
      put([...(current as Json[]), action.value]);
      break;
    case 'prepend':
      put([action.value, ...(current as Json[])]);
      break;
    case 'add':
      put(addNumbers(current as JsonNumber, action.amount));
      break;
    case 'remove':
      if (Array.isArray(container)) container.splice(last as number, 1);
      else delete container[last as string];
      break;
    case 'insert':
      put([...(current as Json[]).slice(0, action.index), action.value, ...(current as Json[]).slice(action.index)]);
      break;
  }
  return next;
}
