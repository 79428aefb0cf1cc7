// Writes under `validate` rules: the value each write leaves at the schemas' nodes is computed (read as it is now,
// the operations planned on it in memory) and checked before the write, which then runs as a batch guarded by a test
// that the value read is still there, so what is checked is what is changed (docs/design/rules.md, "Decision").
import { type Principal, SchemasChanged, grantFor } from '../auth/access';
import { type BatchOperation, planBatch } from '../content/batch';
import type { Json, JsonObject } from '../content/json';
import type { ContentOperation } from '../content/model';
import { BadRequest, HttpError, NotFound } from '../config/errors';
import type { Segments } from '../paths';
import { schemaViolation, validationAnchor } from '../rules/decision';
import type { RuleSet } from '../rules/document';
import { requestTouches } from '../rules/touches';
import type { ProjectRef } from '../schema/items';
import { type WriteResult, readContent, writeBatch, writeContent } from '../store/content';

/** How often a guarded write is tried again when the value it checked changed meanwhile. */
const GUARD_ATTEMPTS = 5;

interface GuardedWrite {
  project: ProjectRef;
  principal: Principal;
  ifMatch?: readonly string[];
  requestToken?: string;
}

const commonPrefix = (paths: readonly Segments[]): Segments => {
  const [first = [], ...rest] = paths;
  let n = first.length;
  for (const path of rest) {
    n = Math.min(n, path.length);
    while (n > 0 && path.slice(0, n).some((step, i) => step !== first[i])) n--;
  }
  return first.slice(0, n);
};

/** `value` at `path` in an otherwise empty tree (objects on the way): what the operations are planned on. */
function rooted(path: Segments, value: Json | undefined): JsonObject {
  if (path.length === 0) return (value ?? {}) as JsonObject;
  let node: Json | undefined = value;
  // From the deepest step up: an absent value leaves its parent empty.
  for (const step of [...path].reverse()) node = node === undefined ? {} : { [step]: node };
  return node as JsonObject;
}

/** The value at `path` below `root`, undefined when absent. */
function at(root: Json, path: Segments): Json | undefined {
  let node: Json | undefined = root;
  for (const step of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = Array.isArray(node)
      ? node[Number(step)]
      : Object.hasOwn(node, step)
        ? (node as JsonObject)[step]
        : undefined;
  }
  return node;
}

/** The value at `path` as it is now (read as the project's owner: it is checked, never answered), undefined if none. */
async function current(project: ProjectRef, path: Segments): Promise<Json | undefined> {
  const owner: Principal = { kind: 'user', username: project.username };
  try {
    return (await readContent({ project, principal: owner, segments: path.length ? path : undefined })).value;
  } catch (error) {
    if (error instanceof NotFound && error.code === 'PATH_NOT_FOUND') return undefined;
    throw error;
  }
}

/** The first schema the operations break, planned on `before` at `base`; throws the operation's own error first. */
function violation(rules: RuleSet, ops: readonly BatchOperation[], base: Segments, before: Json | undefined) {
  const planned = planBatch(rooted(base, before), ops, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    tooLarge: () => new BadRequest('VALIDATION_FAILED', 'the value planned is too large to check'),
  });
  const after = at(planned.content, base);
  for (const touch of requestTouches(ops)) {
    if (touch.operation !== 'write') continue;
    const broken = schemaViolation(rules, touch.path, base, after);
    if (broken !== undefined) return broken;
  }
  return undefined;
}

/** How often a write is checked again because the rules' schemas changed under it. */
const RULES_ATTEMPTS = 3;

/**
 * A content write under the rules' `validate` schemas: one operation or a batch, as usual when no schema concerns it;
 * else checked first (400 VALIDATION_FAILED naming the rule and the schema path) and written as a guarded batch. A
 * write checked against schemas a rules change has replaced meanwhile is checked again.
 */
export async function writeChecked(write: GuardedWrite, op: ContentOperation | BatchOperation[]): Promise<WriteResult> {
  for (let attempt = 1; ; attempt++) {
    const rules = (await grantFor(write.project, write.principal, 'write')).schemas;
    const scope = { touches: [], ...write.principal.scope, checkedSchemas: rules ?? null };
    const checked = { ...write, principal: { ...write.principal, scope } };
    try {
      const guarded = rules === undefined ? undefined : await schemaGuardedWrite(checked, op, rules);
      if (guarded !== undefined) return guarded;
      return Array.isArray(op) ? await writeBatch({ ...checked, ops: op }) : await writeContent({ ...checked, op });
    } catch (error) {
      if (!(error instanceof SchemasChanged) || attempt >= RULES_ATTEMPTS) throw error;
    }
  }
}

/** The guarded write when a schema concerns `op`, else undefined (written as usual). */
async function schemaGuardedWrite(
  write: GuardedWrite,
  op: ContentOperation | BatchOperation[],
  rules: RuleSet,
): Promise<WriteResult | undefined> {
  const touches = requestTouches(op);
  const anchors = touches.flatMap((t) => (t.operation === 'write' ? [validationAnchor(rules, t.path)] : []));
  if (!anchors.some((anchor) => anchor !== undefined)) return undefined;
  const batch = Array.isArray(op);
  const base = commonPrefix([...touches.map((t) => t.path), ...anchors.filter((a) => a !== undefined)]);
  if (!batch && op.kind === 'replace') {
    // The whole content is replaced: what it leaves is the request's own value, nothing to read or guard.
    const broken = schemaViolation(rules, [], [], op.content);
    if (broken !== undefined) throw new BadRequest('VALIDATION_FAILED', broken);
    return undefined;
  }
  const ops = (batch ? op : [op]) as BatchOperation[];
  for (let attempt = 1; ; attempt++) {
    const before = await current(write.project, base);
    let broken: string | undefined;
    try {
      broken = violation(rules, ops, base, before);
    } catch (error) {
      if (error instanceof HttpError && !batch) error.index = undefined;
      throw error;
    }
    if (broken !== undefined) throw new BadRequest('VALIDATION_FAILED', broken);
    const guard: BatchOperation =
      before === undefined
        ? { kind: 'test', segments: base, exists: false }
        : { kind: 'test', segments: base, value: before };
    try {
      return await writeBatch({ ...write, ops: [guard, ...ops] });
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      // The guard failed: the value changed since it was read; check the new one.
      if (error.code === 'TEST_FAILED' && error.index === 0 && attempt < GUARD_ATTEMPTS) continue;
      if (error.index !== undefined) error.index = batch ? error.index - 1 : undefined;
      throw error;
    }
  }
}
