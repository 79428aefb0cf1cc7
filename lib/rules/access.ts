// Content access with rules: the one decision the content routes, realtime and the rules tester share. The owner,
// members and keys keep what their role or permissions give; rules add access for everyone else (docs/design/rules.md).
import type { ProjectRole } from '../policy';
import { type ContentNeed, keyAllows, roleAllows } from '../policy';
import type { Permission } from '../schema/attributes';
import { type Path, formatPath } from '../paths';
import { type RuleAuth, type Verdict, decideByRules } from './decision';
import type { RuleSet } from './document';

/** What the caller is in the project besides the rules: a role, or a key's permissions and paths. */
export interface Standing {
  role?: ProjectRole;
  key?: { permissions: readonly Permission[]; paths?: readonly Path[] };
}

/** One request's access question: an operation at each path it touches, by a caller. */
export interface AccessQuestion {
  operation: ContentNeed;
  paths: readonly Path[];
  auth: RuleAuth | null;
  standing: Standing;
  now: number;
  data?: unknown;
  newData?: unknown;
}

/** Whether `path` is at or below one of a scoped key's paths. */
export const withinPaths = (scopes: readonly Path[], path: Path) =>
  scopes.some((scope) => scope.length <= path.length && scope.every((step, i) => step === path[i]));

const shown = (path: Path) => (path.length === 0 ? 'the root' : `'${formatPath(path)}'`);

/**
 * The decision for a whole request: allowed when the caller's standing allows the operation (a scoped key only within
 * its paths), or else when the rules grant it at every path touched. The verdict of the first path refused, or of the
 * last one allowed.
 */
export function explainAccess(rules: RuleSet, question: AccessQuestion): Verdict {
  const { standing, operation } = question;
  if (standing.role !== undefined && roleAllows(standing.role, operation)) {
    return { allowed: true, rule: null, reason: `the ${standing.role} role allows ${operation}` };
  }
  if (standing.key !== undefined) {
    if (!keyAllows(standing.key.permissions, operation)) {
      return { allowed: false, rule: null, reason: `the key lacks the content:${operation} permission` };
    }
    const scopes = standing.key.paths;
    const outside = scopes === undefined ? undefined : question.paths.find((path) => !withinPaths(scopes, path));
    if (outside !== undefined) {
      return { allowed: false, rule: null, reason: `${shown(outside)} is outside the key's paths` };
    }
    return { allowed: true, rule: null, reason: `the key's content:${operation} permission allows it` };
  }
  let verdict: Verdict = { allowed: false, rule: null, reason: 'no path' };
  for (const path of question.paths) {
    verdict = decideByRules(rules, { ...question, path });
    if (!verdict.allowed) return verdict;
  }
  return verdict;
}
