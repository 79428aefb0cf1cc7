// Access by rules and scoped keys: the compiled rules a caller without a role is judged by (read with the head, or
// by one GetItem when the head says a document is stored), and the verdict on the paths one request touches.
import { type AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { dynamo } from '../dynamo/client';
import { type Path, formatPath, parsePath } from '../paths';
import type { ContentNeed } from '../policy';
import { type Standing, explainAccess } from '../rules/access';
import { compiledRules } from '../rules/cache';
import type { RuleAuth } from '../rules/decision';
import type { RuleSet } from '../rules/document';
import { readRulesItem } from '../rules/stored';
import { A } from '../schema/attributes';
import {
  type KeyEntry,
  type ProjectRef,
  RULES_SK,
  incarnationOf,
  itemKeyAttributes,
  projectName,
  projectPk,
} from '../schema/items';

/** What one request touches: each path with the operation it needs there (a batch's test reads, its changes write). */
export interface RequestScope {
  /** A write's touches carry `data` and `newData` when its rules read them (lib/http/schema-guard.ts computes them). */
  touches: ReadonlyArray<{ operation: ContentNeed; path: Path; data?: unknown; newData?: unknown }>;
  /** A write: the schemas its changes were checked against (null: none); a renewal finding others ends the attempt. */
  checkedSchemas?: RuleSet | null;
  /** With checkedSchemas: the rules its access was judged on (null: none). */
  checkedRules?: RuleSet | null;
}

/** A grant that depends on the paths touched: the rules (none for a scoped key), the caller's standing and `auth`. */
export interface Ruled {
  rules?: RuleSet;
  standing: Standing;
  auth: RuleAuth | null;
}

const NO_RULE_SET: RuleSet = { source: { rules: [] }, rules: [], warnings: [], validates: false };

/**
 * The compiled rules for a caller, when the project has a document with at least one rule: from `item` when the
 * verification read it with the head, else one consistent GetItem (only when the head's `rv` says one is stored).
 */
export async function rulesFor(
  project: ProjectRef,
  head: Record<string, AttributeValue>,
  item: Record<string, AttributeValue> | undefined,
  caller: Omit<Ruled, 'rules'>,
): Promise<Ruled | undefined> {
  if (Number(head[A.rulesVersion]?.N ?? 0) === 0) return undefined;
  const inc = incarnationOf(head);
  let raw = item;
  if (raw === undefined) {
    const { Item } = await dynamo.send(
      new GetItemCommand({
        TableName: tableName(),
        Key: itemKeyAttributes(projectPk(project), RULES_SK),
        ConsistentRead: true,
      }),
    );
    raw = Item;
  }
  const stored = readRulesItem(raw as Parameters<typeof readRulesItem>[0], inc);
  if (stored.document.rules.length === 0) return undefined;
  return { ...caller, rules: await compiledRules(projectName(project), inc, stored) };
}

/** A scoped key's grant (its paths parsed; a stored path that no longer parses scopes to nothing). */
export function scopedKeyPaths(keyId: string, entry: KeyEntry): Ruled | undefined {
  if (!Array.isArray(entry.paths)) return undefined;
  const paths = entry.paths.flatMap((path) => {
    try {
      return [parsePath(path)];
    } catch {
      return [];
    }
  });
  return {
    standing: { key: { permissions: entry.permissions, paths } },
    auth: { kind: 'key', keyId, permissions: entry.permissions },
  };
}

/** Whether the grant allows every path the request touches; a request that names none (a route without paths) is refused. */
export function scopeVerdict(
  ruled: Ruled,
  scope: RequestScope | undefined,
  need: ContentNeed,
): { allowed: boolean; message?: string } {
  if (scope === undefined) return { allowed: false, message: `You may not ${need} here` };
  const now = Date.now();
  for (const { operation, path, data, newData } of scope.touches) {
    const verdict = explainAccess(ruled.rules ?? NO_RULE_SET, {
      operation,
      paths: [path],
      auth: ruled.auth,
      standing: ruled.standing,
      now,
      data,
      newData,
    });
    if (!verdict.allowed) {
      return {
        allowed: false,
        message: `You may not ${operation} at ${path.length ? `'${formatPath(path)}'` : 'the root'}`,
      };
    }
  }
  return { allowed: true };
}
