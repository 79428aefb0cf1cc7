// The rules routes' shared steps: the If-Match of a rules version, the tester's question read from its body.
import { readProjectMeta } from '../store/accounts';
import { parsePath, type Path } from '../paths';
import type { Permission } from '../schema/attributes';
import { type ProjectRef, USERNAME, canonicalName } from '../schema/items';
import type { AccessQuestion, Standing } from '../rules/access';
import type { RuleAuth } from '../rules/decision';
import { Refusal } from '../config/errors';
import type { Event } from './edge';
import { parseIfMatch } from './request';

/** The rules version an If-Match names (`"3"`), or undefined without one; 400 for anything else. */
export function rulesIfMatch(event: Event): number | undefined {
  const tags = parseIfMatch(event);
  if (tags === undefined) return undefined;
  const [tag] = tags;
  if (tags.length !== 1 || tag === undefined || !/^(0|[1-9][0-9]{0,14})$/.test(tag)) {
    throw new Refusal('INVALID_IF_MATCH', 'If-Match must name one rules version, such as "3"');
  }
  return Number(tag);
}

const text = (value: unknown) => (typeof value === 'string' ? value : null);

/** The tester's path: '' is the root. */
export const testedPath = (path: string): Path => (path === '' ? [] : parsePath(path));

/**
 * The tester's caller as conditions see it and its standing: a user named by `username` has the role it holds in
 * the project (read as a request would), a key its `permissions` and `paths`; null is a request without credential.
 */
export async function testedCaller(
  project: ProjectRef,
  raw: unknown,
): Promise<{ auth: RuleAuth | null; standing: Standing }> {
  if (raw === null || raw === undefined) return { auth: null, standing: {} };
  const fields = raw as Record<string, unknown>;
  const claims =
    typeof fields.claims === 'object' && fields.claims !== null && !Array.isArray(fields.claims)
      ? (fields.claims as Record<string, unknown>)
      : {};
  if (fields.kind === 'key') {
    const permissions = Array.isArray(fields.permissions) ? (fields.permissions as Permission[]) : [];
    const paths = Array.isArray(fields.paths) ? fields.paths.map((p) => testedPath(String(p))) : undefined;
    return {
      auth: { kind: 'key', keyId: text(fields.keyId), permissions },
      standing: { key: { permissions, paths } },
    };
  }
  if (fields.kind !== undefined && fields.kind !== 'user') {
    throw new Refusal('INVALID_BODY', 'auth.kind must be "user" or "key"');
  }
  const username = typeof fields.username === 'string' ? canonicalName(fields.username) : null;
  if (username !== null && !USERNAME.test(username)) {
    throw new Refusal('INVALID_BODY', 'auth.username must be a username (@name)');
  }
  const role = username === null ? undefined : (await readProjectMeta(project, username))?.role;
  return { auth: { kind: 'user', username, sub: text(fields.sub), claims }, standing: { role } };
}

export type { AccessQuestion };
