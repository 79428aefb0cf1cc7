// Access: who the caller is, and what a credential may do in a project: verified against the project's head and the
// credential's grant item with one request, then cached per warm container and proven by each write's condition.
import { createHash } from 'node:crypto';
import { type AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent } from '../dynamo/batch-get';
import { documents, dynamo } from '../dynamo/client';
import { setBounded } from '../config/bounded';
import { tableName } from '../config/env';
import { Forbidden, Refusal, Unauthorized } from '../config/errors';
import { fromAttribute } from '../dynamo/attributes';
import type { AccessCheck } from '../expressions';
import { type ContentNeed, keyAllows, permissionFor, roleAllows, roleOf } from '../policy';
import { A } from '../schema/attributes';
import { type Credential, sameHash } from './credentials';
import { verifyJwtClaims } from './jwt';
import { type RequestScope, type Ruled, rulesFor, scopeVerdict, scopedKeyPaths } from './rules';
import type { RuleSet } from '../rules/document';
import {
  HEAD_SK,
  type KeyEntry,
  type KeyRecord,
  type ProjectRef,
  type SessionRecord,
  type StoredKey,
  canonicalName,
  grantEpochOf,
  incarnationOf,
  itemKey,
  itemKeyAttributes,
  keyGrantSk,
  keyPk,
  memberGrantSk,
  projectName,
  projectPk,
  readKeyEntry,
  RULES_SK,
  sessionPk,
} from '../schema/items';

/**
 * Who is calling: an API key, a user (a session, or a JWT with its `sub` and claims; a JWT without a username claim
 * is a user with `username: null`, an app's end user only rules grant anything), or nobody (a content request without
 * Authorization, which only rules can allow). `scope` is what the request touches, for rules and scoped keys.
 */
export type Principal = (
  | { kind: 'key'; keyId: string; keyHash: string }
  | { kind: 'user'; username: string | null; sub?: string | null; claims?: Record<string, unknown> }
  | { kind: 'anonymous' }
) & { scope?: RequestScope };
export type Need = ContentNeed;

/** The 404 refusal for a project that does not exist. */
export const projectNotFound = (project: ProjectRef) =>
  new Refusal('PROJECT_NOT_FOUND', `project ${projectName(project)} does not exist`);

/**
 * Verified sessions, per warm container: a session costs its lookup once a minute at most, so operations stay at
 * one DynamoDB request. An entry never outlives the session's own expiry; at most SESSION_CACHE_SIZE are kept.
 */
const SESSION_CACHE_SECONDS = 60;
const SESSION_CACHE_SIZE = 10_000;
const sessions = new Map<string, { username: string; until: number }>();

async function lookupSession(tokenHash: string): Promise<string> {
  const now = Date.now() / 1000;
  const cached = sessions.get(tokenHash);
  if (cached && cached.until > now) return cached.username;
  sessions.delete(tokenHash);
  const { Item } = await documents.send(
    new GetCommand({ TableName: tableName(), Key: itemKey(sessionPk(tokenHash)), ConsistentRead: true }),
  );
  const session = Item as SessionRecord | undefined;
  if (!session || session.ttl <= now) throw new Unauthorized();
  setBounded(
    sessions,
    tokenHash,
    { username: session.u, until: Math.min(session.ttl, now + SESSION_CACHE_SECONDS) },
    SESSION_CACHE_SIZE,
  );
  return session.u;
}

/** Turns a credential into a principal: API keys as they are (checked against their grant), sessions by lookup. */
export async function resolvePrincipal(credential: Credential): Promise<Principal> {
  switch (credential.kind) {
    case 'key':
      return { kind: 'key', keyId: credential.keyId, keyHash: credential.keyHash };
    case 'session':
      // Canonical even for a session stored before usernames were (they are case-insensitive).
      return { kind: 'user', username: canonicalName(await lookupSession(credential.tokenHash)) };
    case 'jwt':
      return { kind: 'user', ...(await verifyJwtClaims(credential.token)) };
  }
}

function keyValid(entry: KeyEntry | undefined, keyHash: string, now: number): entry is KeyEntry {
  return (
    entry !== undefined &&
    typeof entry.hash === 'string' &&
    sameHash(entry.hash, keyHash) &&
    (entry.expiresAt === undefined || entry.expiresAt > now)
  );
}

/** A key's permissions as stored; an entry written by hand may hold anything, which allows nothing. */
const allows = (entry: KeyEntry, need: Need) => Array.isArray(entry.permissions) && keyAllows(entry.permissions, need);

/** The head's attributes deciding access needs (and the grant items' own, read in the same request). */
const ACCESS_ATTRIBUTES = [
  'pk',
  'sk',
  A.owner,
  A.incarnation,
  A.grantEpoch,
  A.createdAt,
  A.rulesVersion,
  A.rulesSchemas,
] as const;
const GRANT_ATTRIBUTES = [A.keyHash, A.keyPermissions, A.keyExpires, A.keyPaths, A.role, A.rulesDocument] as const;

export interface HeadAndGrant {
  /** The project's head (`P#<p>` / `#`), projected; undefined when the project does not exist. */
  head?: Record<string, AttributeValue>;
  /** The principal's grant item (`K#<keyId>` or `M#<user>`) of this incarnation of the project, if any. */
  grant?: Record<string, AttributeValue>;
}

/**
 * One strongly consistent BatchGetItem of the project's head and the principal's grant (a grant left behind by a
 * deleted incarnation of the project is no grant). `headAttributes` are projected besides what access needs.
 */
export async function readHeadAndGrant(
  project: ProjectRef,
  principal: Principal,
  headAttributes: readonly string[] = [],
): Promise<HeadAndGrant> {
  const pk = projectPk(project);
  // The "grant" of nobody, and of a user without a name (never a member), is the rules document itself: one request
  // reads the head and the rules.
  const sk =
    principal.kind === 'key'
      ? keyGrantSk(principal.keyId)
      : principal.kind === 'user' && principal.username !== null
        ? memberGrantSk(principal.username)
        : RULES_SK;
  const attributes = [...new Set([...ACCESS_ATTRIBUTES, ...GRANT_ATTRIBUTES, ...headAttributes])];
  const names = Object.fromEntries(attributes.map((name, i) => [`#a${i}`, name]));
  const items = await batchGetConsistent([itemKeyAttributes(pk), itemKeyAttributes(pk, sk)], names);
  const head = items.find((item) => item.sk?.S === HEAD_SK);
  const grant = items.find((item) => item.sk?.S === sk);
  const live = head !== undefined && grant !== undefined && grant[A.incarnation]?.S === incarnationOf(head);
  return { head, grant: live ? grant : undefined };
}

/** What a verified credential may do in one project, and the head's state it was verified against. */
export interface Grant {
  /** The project's incarnation and grant epoch at verification. */
  inc: string;
  ge: number;
  /** The content needs the credential satisfies. */
  rights: readonly Need[];
  /** The key's expiry, epoch seconds (checked against the clock on every request); undefined for users and keys that never expire. */
  expiresAt?: number;
  /** When it was verified, epoch seconds. */
  verifiedAt: number;
  /** Set when what it may do depends on the paths a request touches (rules, a scoped key): checked per request. */
  ruled?: Ruled;
  /** The rules, when some have a `validate` schema: every writer's changes are checked against them. */
  schemas?: RuleSet;
}

/**
 * Verified grants, per warm container: `(credential, project) -> Grant`. An entry is only trusted together with a
 * write's condition on the epoch (or a read's comparison), which revocation advances; the ceiling bounds what a
 * Lambda remembers regardless. Only grants that allow something are kept; a refusal is verified afresh each time.
 */
/** The longest a warm Lambda trusts a verified grant without verifying it again, whatever epoch it meets. */
export const GRANT_CACHE_SECONDS = 60;
const GRANT_CACHE_SIZE = 10_000;
const grants = new Map<string, Grant>();

/**
 * One caller, as the caches and per-credential records name it: a key by its id, a user by name, a user without a
 * name by a digest of its `sub` (any length the provider likes), nobody as one.
 */
export const callerId = (principal: Principal): string =>
  principal.kind === 'key'
    ? `k ${principal.keyId}`
    : principal.kind === 'anonymous'
      ? 'a'
      : principal.username !== null
        ? `u ${principal.username}`
        : `s ${digest(principal.sub ?? '')}`;

const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/**
 * A cached grant's key: the caller, with a key's hash (a key re-created under the same id is another credential)
 * and, for a user without a name, its claims (the rules judge it by nothing else: another token is another caller).
 */
const cacheKey = (project: ProjectRef, principal: Principal) => {
  const extra =
    principal.kind === 'key'
      ? ` ${principal.keyHash}`
      : principal.kind === 'user' && principal.username === null
        ? ` ${digest(JSON.stringify(principal.claims ?? {}))}`
        : '';
  return `${callerId(principal)}${extra} ${projectName(project)}`;
};

/** Drops every cached grant (tests that change the table behind the service's back). */
export function forgetGrants(): void {
  grants.clear();
}

/**
 * Decides 401, 404 or 403 in the documented order from the head and the grant (or their absence). An API key the
 * project does not hold is looked up in its key index: valid elsewhere is a 403 (or 404), else a 401. Returns what
 * the credential may do when `need` is among it; throws otherwise.
 */
async function judgeAccess(
  project: ProjectRef,
  principal: Principal,
  need: Need,
  { head, grant }: HeadAndGrant,
  now: number,
): Promise<Pick<Grant, 'rights' | 'expiresAt' | 'ruled'>> {
  if (principal.kind === 'anonymous') {
    // Only rules allow anything without a credential; with none stored (or no project) it is the same 401 as ever.
    const ruled = head ? await rulesFor(project, head, grant, { standing: {}, auth: null }) : undefined;
    if (!ruled) throw new Unauthorized();
    return { rights: ['read', 'write'], ruled };
  }
  if (principal.kind === 'user') {
    if (!head) throw projectNotFound(project);
    const { username } = principal;
    const role = username === null ? undefined : grant?.[A.role]?.S;
    const standing =
      username === null
        ? undefined
        : roleOf({ owner: head[A.owner]?.S, members: role ? { [username]: role } : {} }, username);
    if (!roleAllows(standing, need)) {
      // Rules may add what the role does not give (read only when the head says a document is stored).
      const auth = {
        kind: 'user' as const,
        username: principal.username,
        sub: principal.sub ?? null,
        claims: principal.claims ?? {},
      };
      // A user without a name read the rules item in place of a member grant (readHeadAndGrant).
      const item = username === null ? grant : undefined;
      const ruled = await rulesFor(project, head, item, { standing: { role: standing }, auth });
      if (!ruled) throw new Forbidden();
      return { rights: ['read', 'write'], ruled };
    }
    return { rights: (['read', 'write'] as const).filter((n) => roleAllows(standing, n)) };
  }
  const entry = grant ? readKeyEntry(fromAttribute({ M: grant }) as unknown as StoredKey) : undefined;
  if (keyValid(entry, principal.keyHash, now)) {
    if (!allows(entry, need)) throw new Forbidden(`This API key lacks the ${permissionFor(need)} permission`);
    const rights = (['read', 'write'] as const).filter((n) => allows(entry, n));
    return { rights, expiresAt: entry.expiresAt, ruled: scopedKeyPaths(principal.keyId, entry) };
  }
  const { Item } = await documents.send(
    new GetCommand({ TableName: tableName(), Key: itemKey(keyPk(principal.keyId)), ConsistentRead: true }),
  );
  const record = Item as KeyRecord | undefined;
  // The project's grants are the authority for its own keys; the key index only speaks for other projects.
  if (!keyValid(record && readKeyEntry(record), principal.keyHash, now) || record?.project === projectName(project)) {
    throw new Unauthorized();
  }
  if (!head) throw projectNotFound(project);
  throw new Forbidden('This API key belongs to another project');
}

/** 401 or 404 for a project that cannot exist (a name no project can have): never returns. */
export async function refuseMissingProject(project: ProjectRef, principal: Principal, need: Need): Promise<never> {
  await judgeAccess(project, principal, need, {}, Date.now() / 1000);
  throw projectNotFound(project);
}

/**
 * What `principal` may do in `project`, when it may do `need` (else 401/404/403 in the documented order): from the
 * cache while the entry is under a minute old and the key unexpired, else verified with one BatchGetItem (plus the
 * key index's GetItem for a key the project does not hold). `fresh` says it was verified by this call.
 */
export async function grantFor(
  project: ProjectRef,
  principal: Principal,
  need: Need,
): Promise<Grant & { fresh: boolean }> {
  return verifiedGrant(project, principal, need, { scoped: true });
}

/**
 * The grant without judging the paths the request touches (grantFor's 401/404/403 otherwise): what a write whose
 * rules read `data`/`newData` needs before it can compute them; assertScope then judges it.
 */
export async function grantBeforeScope(
  project: ProjectRef,
  principal: Principal,
  need: Need,
): Promise<Grant & { fresh: boolean }> {
  return verifiedGrant(project, principal, need, { scoped: false });
}

/** Forgets the remembered grant of a caller in a project: its next verification reads afresh. */
export function forgetGrant(project: ProjectRef, principal: Principal): void {
  grants.delete(cacheKey(project, principal));
}

async function verifiedGrant(
  project: ProjectRef,
  principal: Principal,
  need: Need,
  { scoped }: { scoped: boolean },
): Promise<Grant & { fresh: boolean }> {
  const now = Date.now() / 1000;
  const id = cacheKey(project, principal);
  const cached = grants.get(id);
  if (
    cached &&
    now - cached.verifiedAt < GRANT_CACHE_SECONDS &&
    (cached.expiresAt === undefined || cached.expiresAt > now) &&
    cached.rights.includes(need) &&
    // A remembered grant may speak for older rules: it only ever allows (proven by the epoch); a refusal is fresh.
    (!scoped || scopeAllows(principal, cached, need))
  ) {
    return { ...cached, fresh: false };
  }
  grants.delete(id);
  const read = await readHeadAndGrant(project, principal);
  const decided = await judgeAccess(project, principal, need, read, now);
  const head = read.head as Record<string, AttributeValue>;
  const grant: Grant = { ...decided, inc: incarnationOf(head), ge: grantEpochOf(head), verifiedAt: now };
  // Schemas bind every writer, the owner included: read with the grant, and only when the head says there are some.
  if (grant.rights.includes('write') && Number(head[A.rulesSchemas]?.N ?? 0) > 0) {
    const item =
      principal.kind === 'anonymous' || (principal.kind === 'user' && principal.username === null)
        ? read.grant
        : undefined;
    grant.schemas = decided.ruled?.rules ?? (await rulesFor(project, head, item, { standing: {}, auth: null }))?.rules;
  }
  setBounded(grants, id, grant, GRANT_CACHE_SIZE);
  // A write judged on other rules than these (a change since, or a remembered grant's older ones): judged again.
  const judged = principal.scope;
  if (
    judged?.checkedSchemas !== undefined &&
    ((grant.schemas ?? null) !== judged.checkedSchemas ||
      (grant.ruled?.rules ?? null) !== (judged.checkedRules ?? null))
  ) {
    throw new SchemasChanged();
  }
  if (scoped) checkScope(principal, grant, need);
  return { ...grant, fresh: true };
}

/**
 * A grant that depends on paths (rules, a scoped key) allows the request only where it allows every path the request
 * touches; nobody refused is the same 401 as without rules, anybody else a 403.
 */
const scopeAllows = (principal: Principal, grant: Grant, need: Need) =>
  !grant.ruled || scopeVerdict(grant.ruled, principal.scope, need).allowed;

/** Judges the paths the request touches on a grant from grantBeforeScope: 401 for nobody, 403 for anybody else. */
export function checkScope(principal: Principal, grant: Grant, need: Need): void {
  if (!grant.ruled) return;
  const verdict = scopeVerdict(grant.ruled, principal.scope, need);
  if (verdict.allowed) return;
  if (principal.kind === 'anonymous') throw new Unauthorized();
  throw new Forbidden(verdict.message);
}

/**
 * The access proof of one request, for any item that carries the project's grant epoch (today the head, which
 * holds the content; segments later): a write conditions on `check()` (`ge = :ge AND inc = :inc`), a read
 * compares the item with `holdsOn()`. When the item shows another epoch (or is gone), `renew()` forgets the cached
 * grant and verifies afresh: the credential may still do it (the caller retries with the new epoch) or the
 * request ends in 401/403/404.
 */
export class AccessProof {
  private constructor(
    private readonly project: ProjectRef,
    private readonly principal: Principal,
    private readonly need: Need,
    private current: Grant & { fresh: boolean },
  ) {}

  static async of(project: ProjectRef, principal: Principal, need: Need): Promise<AccessProof> {
    return new AccessProof(project, principal, need, await grantFor(project, principal, need));
  }

  /** The grant the request proves; `fresh` when it was verified (not cached) by this request. */
  get grant(): Grant & { fresh: boolean } {
    return this.current;
  }

  /** What a write's condition checks. */
  check(): AccessCheck {
    return { ge: this.current.ge, inc: this.current.inc };
  }

  /** The item (or its projection of `ge` and `inc`) is of the epoch and incarnation the grant was verified at. */
  holdsOn(item: Record<string, AttributeValue> | undefined): boolean {
    return item !== undefined && grantEpochOf(item) === this.current.ge && incarnationOf(item) === this.current.inc;
  }

  async renew(): Promise<void> {
    grants.delete(cacheKey(this.project, this.principal));
    this.current = await grantFor(this.project, this.principal, this.need);
  }
}

/** A write was checked against other `validate` schemas than the rules now hold: it is checked again (nothing landed). */
export class SchemasChanged extends Error {}

/** The head's `ge` and `inc` only, read consistently: what a warm grant is compared with when nothing is written. */
export async function readEpoch(project: ProjectRef): Promise<Record<string, AttributeValue> | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: itemKeyAttributes(projectPk(project)),
      ConsistentRead: true,
      ProjectionExpression: '#ge, #inc, #createdAt',
      ExpressionAttributeNames: { '#ge': A.grantEpoch, '#inc': A.incarnation, '#createdAt': A.createdAt },
    }),
  );
  return Item;
}
