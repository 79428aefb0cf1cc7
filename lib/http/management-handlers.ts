// Management handlers: projects, API keys and members, for signed-in users only (API keys can never manage: 403).
import type { Reply } from './edge';
import type { Stamping } from '../storage';
import { type Event, httpHandler } from './edge';
import { Forbidden, Refusal, Unauthorized, isRefusal } from '../config/errors';
import { bodyText, header, parseJsonObject } from './request';
import { type Validator, schemaError, validated } from './validation';
import { projectOf } from './route-context';
import { grantFor, projectNotFound, resolvePrincipal } from '../auth/access';
import { parseAuthorization } from '../auth/credentials';
import { AccountError, type ProjectMeta, readProjectMeta } from '../store/accounts';
import { roleAllows } from '../policy';
import { type KeyEntry, type ProjectRef, isProjectRef, projectName } from '../schema/items';

/** Who may call a route: the user named in the URL creating it, its owner, or any member (owner included). */
export type Rule = 'creator' | 'owner' | 'member';

export interface ManagementContext {
  event: Event;
  project: ProjectRef;
  username: string;
  /** The project's head without content, with the caller's role; present for every rule but `creator`. */
  item: ProjectMeta | undefined;
  body: Record<string, unknown>;
}

export interface ManagementSpec {
  rule: Rule;
  validate?: Validator;
  run: (context: ManagementContext) => Promise<Reply>;
}

const invalidProjectName = () =>
  new Refusal(
    'INVALID_PROJECT_NAME',
    'a username is @ and 1-39 letters, digits, ".", "_" or "-"; a project slug is 1-100 of those, starting with a letter or digit',
  );

/** Account errors as the client's status: missing things 404, caps 409, duplicates 409. */
export function accountError(error: unknown, notFound: () => Refusal): never {
  if (error instanceof AccountError) {
    if (error.code === 'NOT_FOUND') throw notFound();
    if (error.code === 'LIMIT') throw new Refusal('LIMIT_REACHED', error.message);
    throw new Refusal('ALREADY_EXISTS', error.message);
  }
  throw error;
}

/** The handler of a management route: a signed-in user judged by the route's rule, the body validated. */
export function managementRoute(spec: ManagementSpec) {
  return httpHandler(async (event) => {
    const credential = parseAuthorization(header(event, 'authorization'));
    const method = event.requestContext.http.method;
    const text = method === 'POST' || method === 'PUT' ? bodyText(event) : '';
    const principal = await resolvePrincipal(credential);
    const named = isProjectRef(event.pathParameters?.username, event.pathParameters?.projectSlug);
    if (spec.rule === 'creator' && !named && principal.kind === 'user') throw invalidProjectName();
    const project = await projectOf(event, principal, 'read');

    if (principal.kind === 'key') {
      // A usable key still gets 404 for a missing project (order: 401, 404, 403), then the 403 every key gets here.
      try {
        await grantFor(project, principal, 'read');
      } catch (error) {
        if (isRefusal(error, 'UNAUTHORIZED') || (isRefusal(error, 'PROJECT_NOT_FOUND') && spec.rule !== 'creator'))
          throw error;
      }
      throw new Forbidden('API keys cannot manage projects; sign in with a session');
    }
    if (principal.kind === 'anonymous') throw new Unauthorized();
    const username = principal.username;
    // A user without a name (a JWT with no username claim) owns and is a member of nothing: 404 or 403 (creator: 403).
    const item = await readProjectMeta(project, username ?? undefined);
    if (spec.rule === 'creator') {
      if (username === null || username !== project.username) {
        throw new Forbidden('You can create projects only under your own username');
      }
      if (item) throw new Refusal('PROJECT_EXISTS', `project ${projectName(project)} already exists`);
    } else {
      if (!item) throw projectNotFound(project);
      if (username === null || !roleAllows(item.role, spec.rule === 'owner' ? 'manage' : 'read')) {
        throw new Forbidden(spec.rule === 'owner' ? 'Only the project owner can do this' : undefined);
      }
    }

    const body = validated(() => {
      const parsed = text.trim() === '' ? {} : parseJsonObject(text);
      if (spec.validate && !spec.validate(parsed)) throw schemaError(spec.validate.errors);
      return parsed;
    });
    if (body instanceof Refusal) throw body;
    return spec.run({ event, project, username, item, body });
  });
}

/** 9999-12-31T23:59:59Z: the latest instant an RFC 3339 date-time (four-digit year) can show, in epoch seconds. */
const LATEST_SHOWN_SECONDS = 253_402_300_799;

/**
 * Epoch seconds as the ISO time the API shows, or null for "never". A stored number no date can show (a record no
 * route writes any more) is shown at the nearest end of the range, never thrown on: a read route must not fail.
 */
export const isoTime = (epoch: unknown): string | null =>
  typeof epoch === 'number' && !Number.isNaN(epoch)
    ? new Date(Math.min(Math.max(epoch, 0), LATEST_SHOWN_SECONDS) * 1000).toISOString()
    : null;

const PERMISSIONS: readonly unknown[] = ['content:read', 'content:write'];

/** A key grant as GET keys lists it; whatever a stored grant holds, it is listed (and revocable). */
export function listedKey(id: string, stored: unknown) {
  const key = (typeof stored === 'object' && stored !== null ? stored : {}) as Partial<Record<keyof KeyEntry, unknown>>;
  return {
    id,
    name: typeof key.name === 'string' ? key.name : '',
    permissions: Array.isArray(key.permissions)
      ? (key.permissions.filter((p) => PERMISSIONS.includes(p)) as string[])
      : [],
    createdAt: typeof key.createdAt === 'string' ? key.createdAt : null,
    expiresAt: isoTime(key.expiresAt),
    ...(Array.isArray(key.paths) ? { paths: key.paths.filter((p): p is string => typeof p === 'string') } : {}),
  };
}

/**
 * The answer of a change that takes access away or changes the rules: 200 with `body` once every segment carries the
 * new grant epoch; 202 with `stamping` (what is left, and when it binds everywhere at the latest) when the request ran
 * out of time first (docs/design/rules.md, "A change on a large project").
 */
export const answerAfterStamping = <T extends object>(body: T, stamping: Stamping, headers?: Record<string, string>) =>
  stamping.pending ? { statusCode: 202, body: { ...body, stamping }, headers } : { statusCode: 200, body, headers };
