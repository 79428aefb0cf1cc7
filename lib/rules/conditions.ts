// Rule conditions: CEL expressions compiled once (parse + plan with @bufbuild/cel) under bounds that keep each
// evaluation's work linear in its source, and evaluated to exactly `true` or not (an error is a refusal, not a throw).
import { LosslessNumber } from 'lossless-json';
import type { Engines } from './load';

/** A condition's source may be at most this long, and nest brackets at most this deep. */
export const MAX_CONDITION_LENGTH = 1000;
export const MAX_CONDITION_NESTING = 32;
/** At most this many AST nodes (a macro's expansion counts), so a condition's work is bounded by its source. */
const MAX_CONDITION_NODES = 2000;

/** Why a condition is refused, as a sentence; thrown by compileCondition. */
export class ConditionError extends Error {}

/** The names every condition sees besides its pattern's captures. */
const ENVIRONMENT = ['auth', 'path', 'now', 'data', 'newData'] as const;

/** What a condition is evaluated with. */
export interface ConditionInput {
  auth: Record<string, unknown> | null;
  path: string;
  now: number;
  captures: Record<string, string>;
  data?: unknown;
  newData?: unknown;
}

/** A compiled condition: evaluates to true, false, or an error message (a refusal). */
export interface Condition {
  source: string;
  /** Whether it reads `data` or `newData` (a write must read the node first to give them). */
  usesData: boolean;
  evaluate(input: ConditionInput): true | false | { error: string };
}

// A generic AST node as @bufbuild/cel parses it (cel.expr.Expr): walked by kind without the spec's types.
type Node = { exprKind: { case?: string; value?: unknown } };

interface Walk {
  nodes: number;
  usesData: boolean;
}

/** Checks names, comprehension nesting and size over the AST; throws ConditionError. */
function check(node: Node | undefined, scope: ReadonlySet<string>, loops: number, walk: Walk): void {
  if (!node?.exprKind) return;
  if (++walk.nodes > MAX_CONDITION_NODES) throw new ConditionError('condition is too large');
  const { case: kind, value } = node.exprKind as { case?: string; value: Record<string, unknown> };
  switch (kind) {
    case 'identExpr': {
      const name = value.name as string;
      if (!scope.has(name)) throw new ConditionError(`undeclared reference to '${name}'`);
      if (name === 'data' || name === 'newData') walk.usesData = true;
      return;
    }
    case 'selectExpr':
      check(value.operand as Node, scope, loops, walk);
      return;
    case 'callExpr':
      check(value.target as Node | undefined, scope, loops, walk);
      for (const arg of value.args as Node[]) check(arg, scope, loops, walk);
      return;
    case 'listExpr':
      for (const element of value.elements as Node[]) check(element, scope, loops, walk);
      return;
    case 'structExpr':
      for (const entry of value.entries as Array<{ mapKey?: Node; value: Node }>) {
        check(entry.mapKey, scope, loops, walk);
        check(entry.value, scope, loops, walk);
      }
      return;
    case 'comprehensionExpr': {
      if (loops > 0) throw new ConditionError('a comprehension (all, exists, map, filter) inside another');
      check(value.iterRange as Node, scope, loops, walk);
      check(value.accuInit as Node, scope, loops, walk);
      const inner = new Set([...scope, value.iterVar as string, value.accuVar as string]);
      if (value.iterVar2) inner.add(value.iterVar2 as string);
      for (const part of ['loopCondition', 'loopStep', 'result']) check(value[part] as Node, inner, loops + 1, walk);
      return;
    }
    default:
      return;
  }
}

/** The deepest bracket nesting of the source (strings included: conservative), checked before the parser recurses. */
function nesting(source: string): number {
  let depth = 0;
  let deepest = 0;
  for (const ch of source) {
    if (ch === '(' || ch === '[' || ch === '{') deepest = Math.max(deepest, ++depth);
    else if (ch === ')' || ch === ']' || ch === '}') depth--;
  }
  return deepest;
}

/** Content values as CEL inputs: objects as Maps (no prototype to reach), exact decimals as doubles. */
export function celValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (value instanceof LosslessNumber) return Number(value.toString());
  if (Array.isArray(value)) return value.map(celValue);
  if (typeof value === 'object' && value !== null) {
    return new Map(Object.entries(value).map(([k, v]) => [k, celValue(v)]));
  }
  return value;
}

/** Compiles a condition for a pattern with these captures; throws ConditionError saying what is wrong. */
export function compileCondition(engines: Engines, source: unknown, captures: readonly string[]): Condition {
  const { CelScalar, celEnv, isCelError, parse, plan, timestampFromMs } = engines;
  if (typeof source !== 'string') throw new ConditionError('a condition must be a string (CEL)');
  if (source.length > MAX_CONDITION_LENGTH) {
    throw new ConditionError(`a condition must be at most ${MAX_CONDITION_LENGTH} characters`);
  }
  if (nesting(source) > MAX_CONDITION_NESTING) {
    throw new ConditionError(`a condition may nest brackets at most ${MAX_CONDITION_NESTING} deep`);
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (error) {
    throw new ConditionError(`invalid CEL: ${String((error as Error).message).slice(0, 200)}`);
  }
  const walk: Walk = { nodes: 0, usesData: false };
  check(parsed.expr as unknown as Node, new Set([...ENVIRONMENT, ...captures]), 0, walk);
  const variables = Object.fromEntries([...ENVIRONMENT, ...captures].map((name) => [name, CelScalar.DYN]));
  const run = plan(celEnv({ variables }), parsed);
  return {
    source,
    usesData: walk.usesData,
    evaluate(input) {
      const bindings: Record<string, unknown> = {
        ...input.captures,
        auth: celValue(input.auth),
        path: input.path,
        now: timestampFromMs(input.now),
        data: celValue(input.data),
        newData: celValue(input.newData),
      };
      let result: unknown;
      try {
        result = run(bindings as Parameters<typeof run>[0]);
      } catch (error) {
        return { error: String((error as Error).message).slice(0, 200) };
      }
      if (isCelError(result)) return { error: result.message.slice(0, 200) };
      return result === true;
    },
  };
}
