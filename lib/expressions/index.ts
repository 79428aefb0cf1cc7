// Expression compiler: pure functions from operations to DynamoDB UpdateItem/GetItem parameters, no I/O, no
// environment (budgets come in with the envelope). The only author of the engine's write and read expressions.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { BatchOperation } from '../content/batch';
import type { Action, ContentOperation, Guard, Step } from '../content/model';
import { fastForms } from '../content/patch';
import { type JsonNumber, approximate, storedSize } from '../content/json';
import { toAttribute } from '../dynamo/attributes';
import { asIndex, type Path } from '../paths';
import { PathTree } from '../paths/tree';
import { A } from '../schema/attributes';
import { type WriteEnvelope, compileEnvelope } from './envelope';
import { ExpressionState, type GetRequest, type UpdateRequest } from './state';

export {
  type AccessCheck,
  type CommitStamp,
  type TailChunks,
  type WriteEnvelope,
  compileAccess,
  compileEnvelope,
} from './envelope';
export { ExpressionState, type GetRequest, type UpdateRequest } from './state';

/**
 * Steps for a path without reading the content: the first segment is a key (the root is an object), a later
 * non-negative integer is taken as a list index, which the condition then verifies. Negative indexes need the
 * list's length, so they return undefined (read first).
 */
export function assumeSteps(
  segments: Path,
  { firstIsIndex = false }: { firstIsIndex?: boolean } = {},
): Step[] | undefined {
  const steps: Step[] = [];
  for (const [i, segment] of segments.entries()) {
    const index = i === 0 && !firstIsIndex ? undefined : asIndex(segment);
    if (index === undefined) steps.push(segment);
    else if (index < 0) return undefined;
    else steps.push(index);
  }
  return steps;
}

/**
 * The container at `parent` can take `last`: for an index, a list (indexAssumptions) of at least `last` elements;
 * for a key, something with a size, so a missing parent fails the condition (and the item comes back with it). A
 * parent that has a size but is no object (a list, a string) makes the engine refuse the update's document path
 * instead, which the store also treats as "read and plan" (isAssumptionRefused). The root is always an object.
 *
 * Why not attribute_type(parent, :M)? To the store both say the same, but functions and parentheses are what an
 * engine that parses every expression afresh (dynalite: a backtracking parser) spends most of a request on, while
 * comparisons, size() and NOT cost a fraction. The fast path keeps to those; read-then-write guards need not.
 */
function requireParent(state: ExpressionState, steps: Step[]): void {
  const last = steps[steps.length - 1] as Step;
  if (typeof last !== 'number' && steps.length === 1) return;
  state.conditions.push(
    `size(${state.path(steps.slice(0, -1))}) >= ${state.number(typeof last === 'number' ? last : 0)}`,
  );
}

function compileFastSet(state: ExpressionState, steps: Step[], value: AttributeValue): void {
  state.sets.push(`${state.path(steps)} = ${state.value(value)}`);
  requireParent(state, steps);
}

/** A target that is there but no list makes the engine refuse list_append's operand (isAssumptionRefused). */
function compileFastPush(state: ExpressionState, steps: Step[], value: AttributeValue): void {
  const target = state.path(steps);
  state.sets.push(
    `${target} = list_append(if_not_exists(${target}, ${state.value({ L: [] })}), ${state.value({ L: [value] })})`,
  );
  requireParent(state, steps);
}

function compileFastInsert(
  state: ExpressionState,
  steps: Step[],
  value: AttributeValue,
  index: number,
  chunkStub: string | undefined,
): boolean {
  const target = state.path(steps);
  // A segment's root array may be chunked (docs/design/storage.md, step 4): its index 0 is then a chunk stub standing
  // for its oldest elements, and neither form below means the index asked for; the planned write places it. Unless
  // the index is already a position after the stub the writer knows (compileFastOperation holds the write to it).
  if (steps.length === 0 && chunkStub === undefined)
    state.conditions.push(`NOT attribute_type(${target}[0], ${state.value({ S: 'B' })})`);
  if (index === 0) {
    state.sets.push(
      `${target} = list_append(${state.value({ L: [value] })}, if_not_exists(${target}, ${state.value({ L: [] })}))`,
    );
    requireParent(state, steps);
    return true;
  }
  if (index < 0) return false;
  // Guess "at the end": right when index equals the length; otherwise the condition fails and we read. (An object
  // or string of that size gets past the condition and makes the engine refuse list_append's operand instead.)
  state.sets.push(`${target} = list_append(${target}, ${state.value({ L: [value] })})`);
  state.conditions.push(`size(${target}) = ${state.number(index)}`);
  return true;
}

/** Well inside DynamoDB's range: near its edge the result is computed exactly after a read instead. */
export const SAFE_MAGNITUDE = 9e125;

/** Where a number leaves room for adding `amount` (well inside DynamoDB's range). */
export function roomFor(amount: JsonNumber): { low: number; high: number } {
  // A double is close enough here: the room is 1e125 short of the edge.
  const a = approximate(amount);
  return { low: -SAFE_MAGNITUDE - Math.min(a, 0), high: SAFE_MAGNITUDE - Math.max(a, 0) };
}

/**
 * The number at `target`, if there is one, leaves room for adding `amount`: near the edge of the range the sum is
 * checked exactly after a read instead. A missing target compares false both ways, so NOT lets it through; so does
 * a value that is no number, which then makes the engine refuse the addition's operand (isAssumptionRefused).
 */
function roomInRange(state: ExpressionState, target: string, amount: JsonNumber): string {
  const { low, high } = roomFor(amount);
  return `NOT ${target} < ${state.number(low)} AND NOT ${target} > ${state.number(high)}`;
}

function compileFastAdd(state: ExpressionState, steps: Step[], amount: JsonNumber): void {
  const target = state.path(steps);
  state.sets.push(`${target} = if_not_exists(${target}, ${state.number(0)}) + ${state.number(amount)}`);
  requireParent(state, steps);
  // dynalite does not check arithmetic overflow; bounding the operand keeps every engine's answer the same.
  state.conditions.push(roomInRange(state, target, amount));
}

function compileFastDelete(state: ExpressionState, steps: Step[]): void {
  const target = state.path(steps);
  state.removes.push(target);
  state.conditions.push(`attribute_exists(${target})`);
}

/**
 * Every container an index step goes into must be a list: checked explicitly, because an engine may read `m[0]` on
 * a map as its key "0" (dynalite does) and the update would then fail instead of the condition.
 */
function indexAssumptions(state: ExpressionState, steps: Step[]): void {
  steps.forEach((step, i) => {
    if (typeof step === 'number')
      state.conditions.push(`attribute_type(${state.path(steps.slice(0, i))}, ${state.value({ S: 'L' })})`);
  });
}

/**
 * The engine refused a fast update itself: its document path does not fit the item ("The document path provided in
 * the update expression is invalid for update") or an operand has the wrong type ("An operand in the update
 * expression has an incorrect data type": list_append or + on something else). The fast condition leaves these
 * to the engine (requireParent, roomInRange), so for a fast update it means an assumption failed and nothing was
 * written: read and plan.
 */
export const isAssumptionRefused = (error: unknown): boolean =>
  error instanceof Error &&
  error.name === 'ValidationException' &&
  /document path|incorrect data type/i.test(error.message);

/** Compiles an operation without reading the content; false when it cannot be done that way. */
export function compileFastOperation(state: ExpressionState, op: ContentOperation, chunkStub?: string): boolean {
  if (op.kind === 'replace') {
    state.sets.push(`${state.name(A.content)} = ${state.value(toAttribute(op.content))}`);
    return true;
  }
  const steps = assumeSteps(op.segments, { firstIsIndex: chunkStub !== undefined });
  if (steps === undefined || (op.kind === 'insert' && op.index < 0)) return false;
  if (chunkStub !== undefined) {
    // A chunked array's segment (its root): the path's first step, or the root insert's index, is a position after
    // its chunk stub, which maps the client's index to it while that stub is its index 0 (the stub's key holds the
    // count of elements in its chunks; a rollover or a shift among the chunks replaces it).
    const position = steps.length === 0 ? (op.kind === 'insert' ? op.index : 0) : steps[0];
    if (typeof position !== 'number' || position < 1) return false;
    state.conditions.push(`${state.path([0])} = ${state.value({ B: Buffer.from(chunkStub, 'utf8') })}`);
  }
  indexAssumptions(state, steps);
  switch (op.kind) {
    case 'set':
      compileFastSet(state, steps, toAttribute(op.value));
      return true;
    case 'push':
      compileFastPush(state, steps, toAttribute(op.value));
      return true;
    case 'insert':
      return compileFastInsert(state, steps, toAttribute(op.value), op.index, chunkStub);
    case 'add':
      compileFastAdd(state, steps, op.amount);
      return true;
    case 'delete':
      compileFastDelete(state, steps);
      return true;
  }
}

/** The conditions of a read-then-write: what its plan assumed (the version guard becomes the envelope's). */
export function compileGuards(state: ExpressionState, guards: readonly Guard[]): void {
  for (const guard of guards) {
    if (guard.kind === 'version') continue;
    const path = state.path(guard.steps);
    switch (guard.kind) {
      case 'type':
        state.conditions.push(`attribute_type(${path}, ${state.value({ S: guard.type })})`);
        break;
      case 'size':
        state.conditions.push(`size(${path}) = ${state.number(guard.size)}`);
        break;
      case 'absent':
        state.conditions.push(`attribute_not_exists(${path})`);
        break;
      case 'present':
        state.conditions.push(`attribute_exists(${path})`);
        break;
      case 'between':
        state.conditions.push(`${path} BETWEEN ${state.number(guard.low)} AND ${state.number(guard.high)}`);
        break;
      case 'equals':
        state.conditions.push(`${path} = ${state.value({ N: guard.number })}`);
        break;
    }
  }
}

/** Compiles a concrete action (read-then-write path), with the guards its plan assumed. */
export function compileAction(state: ExpressionState, action: Action): void {
  const target = state.path(action.steps);
  switch (action.kind) {
    case 'set':
      state.sets.push(`${target} = ${state.value(toAttribute(action.value))}`);
      return;
    case 'append':
      state.sets.push(`${target} = list_append(${target}, ${state.value({ L: [toAttribute(action.value)] })})`);
      return;
    case 'prepend':
      state.sets.push(`${target} = list_append(${state.value({ L: [toAttribute(action.value)] })}, ${target})`);
      return;
    case 'add':
      state.sets.push(`${target} = ${target} + ${state.number(action.amount)}`);
      return;
    case 'remove':
      state.removes.push(target);
      return;
    case 'insert': {
      // Every operand reads the item as it was before the update, so each element moves up exactly one place.
      for (let i = action.length; i > action.index; i--) {
        state.sets.push(`${state.path([...action.steps, i])} = ${state.path([...action.steps, i - 1])}`);
      }
      state.sets.push(`${state.path([...action.steps, action.index])} = ${state.value(toAttribute(action.value))}`);
      return;
    }
  }
}

const NUMBER_BYTES = 21;
const keyBytes = (segments: Path) => 1 + Buffer.byteLength(segments[segments.length - 1] ?? '', 'utf8');

/** How much an operation can grow the content at most, as DynamoDB counts bytes (a bound, not the exact change). */
export function growthBound(op: ContentOperation): number {
  switch (op.kind) {
    case 'set':
      return keyBytes(op.segments) + storedSize(op.value);
    case 'push':
    case 'insert':
      return keyBytes(op.segments) + 4 + storedSize(op.value);
    case 'add':
      return keyBytes(op.segments) + NUMBER_BYTES;
    case 'delete':
      return 0;
    case 'replace':
      return storedSize(op.content);
  }
}

/** A set or delete without reading replaces what is there: its first key must lead to no stub (A.stubsUnder). */
function compileStubGuards(state: ExpressionState, ops: readonly ContentOperation[]): void {
  const firsts = new Set<string>();
  for (const op of ops) {
    if ((op.kind === 'set' || op.kind === 'delete') && op.segments.length > 0) firsts.add(op.segments[0] as string);
  }
  for (const first of firsts) {
    state.conditions.push(`attribute_not_exists(${state.name(A.stubsUnder)}.${state.name(first)})`);
  }
}

/** One UpdateItem for a write: the fast form of the operation, or a concrete action (and its guards) after a read. */
export function compileWrite(
  change: { op: ContentOperation } | { action: Action; guards?: readonly Guard[] },
  envelope: WriteEnvelope,
): UpdateRequest | undefined {
  const state = new ExpressionState();
  if ('op' in change) {
    if (!compileFastOperation(state, change.op, envelope.chunkStub)) return undefined;
    if (envelope.guardStubs) compileStubGuards(state, [change.op]);
  } else {
    compileAction(state, change.action);
    compileGuards(state, change.guards ?? []);
  }
  compileEnvelope(state, envelope);
  return state.buildUpdate();
}

/** DynamoDB's limit on the length of each expression string. */
export const MAX_EXPRESSION_LENGTH = 4096;

/** DynamoDB's limit on the operators and functions in one expression (the embedded engine does not enforce it). */
export const MAX_EXPRESSION_OPERATORS = 300;

/**
 * The operators and functions an expression holds, counted as DynamoDB counts them or more (a comparator, AND, OR,
 * NOT, BETWEEN, IN, each function call), never fewer: past the limit a write takes its planned form.
 */
export const operatorCount = (expression: string): number =>
  expression.match(/\b(?:AND|OR|NOT|BETWEEN|IN)\b|<>|<=|>=|=|<|>|[A-Za-z_]+\(/g)?.length ?? 0;

/**
 * One UpdateItem for a whole batch, without reading: every operation's fast form in one state (SET, REMOVE and
 * conditions merged, placeholders numbered once), or undefined when that would not be the batch's meaning. Operations
 * see the ones before them, while one UpdateItem reads every operand from the item as it was: that is the same only
 * when no path is a prefix of another and no list loses an element under another operation. Tests need a read,
 * and so does an invalid operation (the ones before it may fail first).
 */
export function compileBatchWrite(
  ops: readonly BatchOperation[],
  envelope: Omit<WriteEnvelope, 'size'>,
): UpdateRequest | undefined {
  const writes: ContentOperation[] = [];
  // Targets a patch's replace requires to be there (its fast form is a set, which would create them).
  const present: Path[] = [];
  for (const op of ops) {
    if (op.kind === 'test' || op.kind === 'invalid') return undefined;
    if (op.kind === 'patch' || op.kind === 'merge') {
      const forms = fastForms(op);
      if (forms === undefined) return undefined;
      for (const form of forms) {
        writes.push(form.op);
        if (form.present) present.push(form.op.segments);
      }
    } else {
      writes.push(op);
    }
  }
  // Nothing to write (an empty patch): the read path answers the current ETag without writing. Past what one
  // expression can name (each write's path is at least `#n0.#n1` and a separator), no one-request form either: a
  // merge patch of 40,000 members is refused here in time proportional to it, never compared pair by pair.
  if (writes.length === 0 || writes.length > MAX_EXPRESSION_LENGTH / 8) return undefined;
  if (writes.length > 1) {
    const paths = new PathTree();
    for (const op of writes) {
      if (op.kind === 'replace') return undefined;
      paths.add(op.segments);
    }
    if (!paths.prefixFree) return undefined;
  }
  // Removing a list element shifts the ones after it, which the other operations' paths would have to see.
  const removesElement = (op: ContentOperation) =>
    op.kind === 'delete' &&
    op.segments.length > 1 &&
    asIndex(op.segments[op.segments.length - 1] as string) !== undefined;
  if (writes.length > 1 && writes.some(removesElement)) return undefined;
  const state = new ExpressionState();
  for (const op of writes) if (!compileFastOperation(state, op)) return undefined;
  if (envelope.guardStubs) compileStubGuards(state, writes);
  for (const segments of present)
    state.conditions.push(`attribute_exists(${state.path(assumeSteps(segments) as Step[])})`);
  const growth = writes.reduce((sum, op) => sum + growthBound(op), 0);
  compileEnvelope(state, { ...envelope, size: { growth } });
  const request = state.buildUpdate();
  // Past what one expression may hold (a batch of 100 new members is some 300 operators): the planned form.
  const tooLong = [request.UpdateExpression, request.ConditionExpression].some(
    (e) => e.length > MAX_EXPRESSION_LENGTH || operatorCount(e) > MAX_EXPRESSION_OPERATORS,
  );
  return tooLong ? undefined : request;
}

/**
 * GetItem projection for a read: the content down to the first index (the rest is resolved in memory), or none
 * at all when `segments` is null, plus the grant epoch and incarnation the caller's grant is compared with.
 */
export function compileRead(segments: Path | undefined | null): GetRequest {
  const state = new ExpressionState();
  const projection = [
    'pk',
    state.name(A.etag),
    state.name(A.version),
    state.name(A.grantEpoch),
    state.name(A.incarnation),
  ];
  if (segments !== null) {
    const prefix: Step[] = [];
    for (const [i, segment] of (segments ?? []).entries()) {
      if (i > 0 && asIndex(segment) !== undefined) break;
      prefix.push(segment);
    }
    projection.push(state.path(prefix));
  }
  return { ProjectionExpression: projection.join(', '), ExpressionAttributeNames: state.attributeNames() };
}
