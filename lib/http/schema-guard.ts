// Writes under `validate` rules: the value each write leaves at the schemas' nodes is computed (read as it is now,
// the operations planned on it in memory) and checked before the write, which then runs as a batch guarded by a test
// that the value read is still there, so what is checked is what is changed (docs/design/rules.md, "Decision").
import { type Principal, SchemasChanged, checkScope, forgetGrant, grantBeforeScope } from '../auth/access';
import type { RequestScope } from '../auth/rules';
import { type BatchOperation, planBatch } from '../content/batch';
import type { Json, JsonObject } from '../content/json';
import type { ContentOperation } from '../content/model';
import { Refusal, isRefusal } from '../config/errors';
import { type Path, formatPath } from '../paths';
import { schemaViolation, validationAnchor, writeUsesData } from '../rules/decision';
import type { RuleSet } from '../rules/document';
import { requestTouches } from '../rules/touches';
import type { ProjectRef } from '../schema/items';
import { type WriteResult, readContent, writeBatch, writeContent } from '../storage';

interface GuardedWrite {
  project: ProjectRef;
  principal: Principal;
  ifMatch?: readonly string[];
  requestToken?: string;
}

const commonPrefix = (paths: readonly Path[]): Path => {
  const [first = [], ...rest] = paths;
  let n = first.length;
  for (const path of rest) {
    n = Math.min(n, path.length);
    while (n > 0 && path.slice(0, n).some((step, i) => step !== first[i])) n--;
  }
  return first.slice(0, n);
};

/** `value` at `path` in an otherwise empty tree (objects on the way): what the operations are planned on. */
function rooted(path: Path, value: Json | undefined): JsonObject {
  if (path.length === 0) return (value ?? {}) as JsonObject;
  let node: Json | undefined = value;
  // From the deepest step up: an absent value leaves its parent empty.
  for (const step of [...path].reverse()) node = node === undefined ? {} : { [step]: node };
  return node as JsonObject;
}

/** The value at `path` below `root`, undefined when absent. */
function at(root: Json, path: Path): Json | undefined {
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
export async function currentValue(project: ProjectRef, path: Path): Promise<Json | undefined> {
  const owner: Principal = { kind: 'user', username: project.username };
  try {
    return (await readContent({ project, principal: owner, segments: path.length ? path : undefined })).value;
  } catch (error) {
    if (isRefusal(error, 'PATH_NOT_FOUND')) return undefined;
    throw error;
  }
}

/** An operation's path as text (for matching it with a touch). */
const pathOf = (op: BatchOperation): string | undefined =>
  'segments' in op ? formatPath(op.segments) : op.kind === 'patch' ? formatPath(op.path) : undefined;

/** What a write leaves: the content planned on `before` at `base` (the operation's own error thrown). */
function planned(ops: readonly BatchOperation[], base: Path, before: Json | undefined): JsonObject {
  return planBatch(rooted(base, before), ops, {
    maxBytes: Number.MAX_SAFE_INTEGER,
    tooLarge: () => new Refusal('VALIDATION_FAILED', 'the value planned is too large to check'),
  }).content;
}

/** The first schema the writes break, given the content they leave (`after`, rooted as planned). */
function violation(rules: RuleSet, writes: readonly Path[], base: Path, after: JsonObject) {
  for (const path of writes) {
    const broken = schemaViolation(rules, path, base, at(after, base));
    if (broken !== undefined) return broken;
  }
  return undefined;
}

/** How often a write is judged again because the rules or the value it judged changed under it. */
const RULES_ATTEMPTS = 5;

/**
 * A content write under the rules: as usual when neither a `validate` schema nor a condition reading `data` or
 * `newData` concerns it; else the value it leaves is computed first (the node read as it is now, the operations
 * planned on it in memory), its access judged with `data`/`newData` (401/403), its schemas checked (400
 * VALIDATION_FAILED naming the rule and the schema path), and it is written as a batch led by a test that the value
 * read is unchanged, so what was judged is what changes. A write judged on rules a change has replaced meanwhile is
 * judged again.
 */
export async function writeChecked(write: GuardedWrite, op: ContentOperation | BatchOperation[]): Promise<WriteResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await writeOnce(write, op);
    } catch (error) {
      if (!(error instanceof SchemasChanged) || attempt >= RULES_ATTEMPTS) throw error;
    }
  }
}

/** The paths a write touches, each with what it needs there (and, once judged, the `data`/`newData` it sees). */
type Touches = RequestScope['touches'];

/**
 * A write as the rules judge it, computed before anything is sent: by the write itself and by the rules tester, so
 * both judge the very same value.
 */
export type JudgedWrite =
  /** Neither a schema nor a condition reading `data`/`newData` concerns it: judged by the store's own verification. */
  | { kind: 'plain'; touches: Touches }
  /**
   * Judged on the value it leaves: its write touches carry `data` and `newData`, `violation` names the first schema
   * it breaks, `guard` is the test leading the batch that sends it (none for a whole-content replace, sent as is).
   */
  | { kind: 'computed'; touches: Touches; violation?: string; guard?: BatchOperation }
  /** Its operations cannot be planned on the value there (`failure`, their own error): judged by the value it carries. */
  | { kind: 'failed'; touches: Touches; failure: unknown };

/** The rules a write is judged by: `schemas` bind every writer, `access` is what a caller without a role is granted by. */
export interface WriteRules {
  schemas?: RuleSet;
  access?: RuleSet;
}

/**
 * Judges a write under `validate` schemas and conditions on `data`/`newData`: reads the node every schema and touch
 * concerns as it is now (the common ancestor of the written paths and the schemas' anchors, so a schema on an
 * ancestor sees the ancestor's value with the write applied), plans the operations on it in memory and gives each
 * write touch the value it holds (`data`) and leaves (`newData`), and the first schema broken. Reads nothing when
 * nothing concerns the write.
 */
export async function judgeWrite(
  project: ProjectRef,
  rules: WriteRules,
  op: ContentOperation | readonly BatchOperation[],
  touches: Touches,
): Promise<JudgedWrite> {
  const { schemas, access } = rules;
  const writes = touches.flatMap((t) => (t.operation === 'write' ? [t.path] : []));
  const anchors =
    schemas === undefined
      ? []
      : writes.map((path) => validationAnchor(schemas, path)).filter((anchor) => anchor !== undefined);
  const usesData = access !== undefined && writes.some((path) => writeUsesData(access, path));
  if (anchors.length === 0 && !usesData) return { kind: 'plain', touches };
  const batch = Array.isArray(op);
  if (!batch && (op as ContentOperation).kind === 'replace') {
    // The whole content is replaced: what it leaves is the request's own value, and `data` the content before.
    const content = (op as Extract<ContentOperation, { kind: 'replace' }>).content;
    const data = usesData ? await currentValue(project, []) : undefined;
    return {
      kind: 'computed',
      touches: [{ operation: 'write', path: [], newData: content, data }],
      violation: schemas && violation(schemas, [[]], [], content),
    };
  }
  const ops = (batch ? op : [op]) as BatchOperation[];
  const base = commonPrefix([...touches.map((t) => t.path), ...anchors]);
  const before = await currentValue(project, base);
  let after: JsonObject;
  try {
    after = planned(ops, base, before);
  } catch (failure) {
    // The write fails as it would alone, once its access is judged: by the value it carries, `data` unknown.
    const carried = (path: Path) =>
      ops.find((o): o is BatchOperation & { value: Json } => 'value' in o && pathOf(o) === formatPath(path))?.value;
    return {
      kind: 'failed',
      touches: touches.map((t) => (t.operation === 'write' ? { ...t, newData: carried(t.path) } : t)),
      failure,
    };
  }
  const root = rooted(base, before);
  return {
    kind: 'computed',
    touches: touches.map((t) =>
      t.operation === 'write' ? { ...t, data: at(root, t.path), newData: at(after, t.path) } : t,
    ),
    violation: schemas && violation(schemas, writes, base, after),
    guard:
      before === undefined
        ? { kind: 'test', segments: base, exists: false }
        : { kind: 'test', segments: base, value: before },
  };
}

async function writeOnce(write: GuardedWrite, op: ContentOperation | BatchOperation[]): Promise<WriteResult> {
  const grant = await grantBeforeScope(write.project, write.principal, 'write');
  const schemas = grant.schemas;
  const touches = write.principal.scope?.touches ?? requestTouches(op);
  const scope = (extra: Partial<RequestScope>): Principal => ({
    ...write.principal,
    scope: {
      touches,
      ...write.principal.scope,
      checkedSchemas: schemas ?? null,
      checkedRules: grant.ruled?.rules ?? null,
      ...extra,
    },
  });
  // A remembered grant may speak for older rules: a refusal is only ever given on a fresh one (judged again).
  const judge = (principal: Principal) => {
    try {
      checkScope(principal, grant, 'write');
    } catch (error) {
      if (grant.fresh || !(error instanceof Refusal)) throw error;
      forgetGrant(write.project, write.principal);
      throw new SchemasChanged();
    }
  };
  const batch = Array.isArray(op);
  const judged = await judgeWrite(write.project, { schemas, access: grant.ruled?.rules }, op, touches);
  if (judged.kind === 'plain') {
    // Judged by the store's own verification, as any write.
    const plain = { ...write, principal: scope({}) };
    return batch ? writeBatch({ ...plain, ops: op }) : writeContent({ ...plain, op });
  }
  const principal = scope({ touches: judged.touches });
  judge(principal);
  if (judged.kind === 'failed') {
    // A remembered grant must not answer with the write's own failure for rules a change may have replaced: the
    // write is judged again on a fresh one first (401/403 before any other 4xx).
    if (!grant.fresh) {
      forgetGrant(write.project, write.principal);
      throw new SchemasChanged();
    }
    const error = judged.failure;
    if (error instanceof Refusal && !batch) error.index = undefined;
    throw error;
  }
  if (judged.violation !== undefined) {
    // Schemas remembered from before a rules change must not refuse what the rules now hold: judged again, fresh.
    if (!grant.fresh) {
      forgetGrant(write.project, write.principal);
      throw new SchemasChanged();
    }
    throw new Refusal('VALIDATION_FAILED', judged.violation);
  }
  if (judged.guard === undefined) return writeContent({ ...write, principal, op: op as ContentOperation });
  const ops = (batch ? op : [op]) as BatchOperation[];
  try {
    return await writeBatch({ ...write, principal, ops: [judged.guard, ...ops] });
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    // The guard failed: the value changed since it was read; judge the new one (as a rules change is).
    if (error.code === 'TEST_FAILED' && error.index === 0) throw new SchemasChanged();
    if (error.index !== undefined) error.index = batch ? error.index - 1 : undefined;
    throw error;
  }
}
