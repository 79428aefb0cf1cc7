// Decisions: whether the rules grant an operation at a path to a caller (which rule, or why not), and which schemas a
// write must satisfy on the value it leaves. Pure: the requests, the tester and realtime all ask these.
import { type Path, asIndex, formatPath } from '../paths';
import type { RuleOperation, RuleSet } from './document';
import { coveringMatch, relationTo } from './patterns';
import { schemaFailure } from './schemas';

/** The caller as conditions see it (`auth`); null for a request without a credential. */
export interface RuleAuth {
  kind: 'user' | 'key';
  username?: string | null;
  sub?: string | null;
  claims?: Record<string, unknown>;
  keyId?: string | null;
  permissions?: string[];
}

/** One question to the rules. */
export interface RulesQuestion {
  operation: RuleOperation;
  path: Path;
  auth: RuleAuth | null;
  /** Epoch milliseconds. */
  now: number;
  data?: unknown;
  newData?: unknown;
}

/** The answer: allowed or not, by which rule (its index), and a sentence saying why. */
export interface Verdict {
  allowed: boolean;
  rule: number | null;
  reason: string;
}

const shown = (path: Path) => (path.length === 0 ? 'the root' : `'${formatPath(path)}'`);

/** The first rule (in document order) covering the path whose condition for the operation is true. */
export function decideByRules(set: RuleSet, question: RulesQuestion): Verdict {
  const errors: string[] = [];
  let considered = 0;
  for (const rule of set.rules) {
    const condition = rule[question.operation];
    if (condition === undefined) continue;
    const captures = coveringMatch(rule.pattern, question.path);
    if (captures === undefined) continue;
    considered++;
    const result = condition.evaluate({
      auth: question.auth as Record<string, unknown> | null,
      path: formatPath(question.path),
      now: question.now,
      captures,
      data: question.data,
      newData: question.newData,
    });
    if (result === true) {
      return {
        allowed: true,
        rule: rule.index,
        reason: `rules[${rule.index}] (${rule.pattern.source}) grants ${question.operation}`,
      };
    }
    if (result !== false && errors.length < 3) errors.push(`rules[${rule.index}]: ${result.error}`);
  }
  const why =
    considered === 0
      ? `no rule grants ${question.operation} at ${shown(question.path)}`
      : `no condition for ${question.operation} at ${shown(question.path)} is true`;
  return { allowed: false, rule: null, reason: errors.length ? `${why} (${errors.join('; ')})` : why };
}

/** Whether any condition for writes at this path reads `data` or `newData` (the write must compute them). */
export const writeUsesData = (set: RuleSet, path: Path): boolean =>
  set.rules.some((rule) => rule.write?.usesData && coveringMatch(rule.pattern, path) !== undefined);

/**
 * The node whose new value a write at `path` must compute for the schemas to be checked: the shallowest node a
 * schema rule names at or above the path (or the path itself when a schema names something below it); undefined
 * when no schema concerns the write.
 */
export function validationAnchor(set: RuleSet, path: Path): Path | undefined {
  let anchor: Path | undefined;
  for (const rule of set.rules) {
    if (rule.validate === undefined) continue;
    const relation = relationTo(rule.pattern, path);
    if (relation === undefined) continue;
    const node = relation === 'descendant' ? path : path.slice(0, rule.pattern.segments.length);
    if (anchor === undefined || node.length < anchor.length) anchor = node;
  }
  return anchor;
}

/** The value at `steps` below `value` (own keys of objects, indices of arrays), or undefined when absent. */
function valueAt(value: unknown, steps: Path): unknown {
  let current = value;
  for (const step of steps) {
    if (Array.isArray(current)) {
      const index = asIndex(step);
      current = index === undefined ? undefined : current[index];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, step)) {
      current = (current as Record<string, unknown>)[step];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Every concrete node under `base` (at `at`) that the remaining pattern segments name, with its value. */
function* nodesMatching(
  segments: ReadonlyArray<{ literal: string } | { capture: string }>,
  at: string[],
  value: unknown,
): Generator<{ at: string[]; value: unknown }> {
  if (value === undefined) return;
  const [first, ...rest] = segments;
  if (first === undefined) {
    yield { at, value };
    return;
  }
  if ('literal' in first) {
    yield* nodesMatching(rest, [...at, first.literal], valueAt(value, [first.literal]));
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* nodesMatching(rest, [...at, String(i)], item);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) yield* nodesMatching(rest, [...at, key], item);
  }
}

/**
 * The first schema a write at `path` breaks, given the value it leaves at `anchor` (validationAnchor's node); a node
 * the write leaves absent is checked by its parent's schema (`required`), not its own. Undefined when all hold.
 */
export function schemaViolation(set: RuleSet, path: Path, anchor: Path, after: unknown): string | undefined {
  for (const rule of set.rules) {
    const validate = rule.validate;
    if (validate === undefined || relationTo(rule.pattern, path) === undefined) continue;
    const depth = rule.pattern.segments.length;
    const start = Math.max(anchor.length, Math.min(depth, path.length));
    const base = [...path.slice(0, start)];
    const rest = rule.pattern.segments.slice(start);
    for (const node of nodesMatching(rest, base, valueAt(after, base.slice(anchor.length)))) {
      if (!validate(node.value)) {
        return `rules[${rule.index}] (${rule.pattern.source}) at ${shown(node.at)}: ${schemaFailure(validate)}`;
      }
    }
  }
  return undefined;
}
