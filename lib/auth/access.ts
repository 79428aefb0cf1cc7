// Access: who the caller is, and the 401 -> 404 -> 403 decision when the fast path's condition did not hold.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documents } from '../dynamo/client';
import { tableName } from '../config/env';
import { Forbidden, NotFound, Unauthorized } from '../config/errors';
import type { AccessCheck } from '../expressions';
import { type ContentNeed, keyAllows, permissionFor, roleAllows, roleOf } from '../policy';
import { type Credential, sameHash } from './credentials';
import { verifyJwt } from './jwt';
import {
  type KeyEntry,
  type KeyRecord,
  type ProjectItem,
  type ProjectRef,
  type SessionRecord,
  canonicalName,
  itemKey,
  keyPk,
  projectName,
  readKeyEntry,
  sessionPk,
} from '../schema/items';

export type Principal = { kind: 'key'; keyId: string; keyHash: string } | { kind: 'user'; username: string };
export type Need = ContentNeed;

export const projectNotFound = (project: ProjectRef) =>
  new NotFound('PROJECT_NOT_FOUND', `project ${projectName(project)} does not exist`);

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
  if (sessions.size >= SESSION_CACHE_SIZE) sessions.delete(sessions.keys().next().value as string);
  sessions.set(tokenHash, { username: session.u, until: Math.min(session.ttl, now + SESSION_CACHE_SECONDS) });
  return session.u;
}

/** Turns a credential into a principal: API keys as they are (checked in the write), sessions by lookup. */
export async function resolvePrincipal(credential: Credential): Promise<Principal> {
  switch (credential.kind) {
    case 'key':
      return { kind: 'key', keyId: credential.keyId, keyHash: credential.keyHash };
    case 'session':
      // Canonical even for a session stored before usernames were (they are case-insensitive).
      return { kind: 'user', username: canonicalName(await lookupSession(credential.tokenHash)) };
    case 'jwt':
      return { kind: 'user', username: await verifyJwt(credential.token) };
  }
}

export function accessCheck(principal: Principal, need: Need, now: number): AccessCheck {
  return principal.kind === 'key'
    ? { kind: 'key', keyId: principal.keyId, keyHash: principal.keyHash, permission: permissionFor(need), now }
    : { kind: 'user', username: principal.username, role: need };
}

function keyValid(entry: KeyEntry | undefined, keyHash: string, now: number): entry is KeyEntry {
  return (
    entry !== undefined && sameHash(entry.hash, keyHash) && (entry.expiresAt === undefined || entry.expiresAt > now)
  );
}

/**
 * Decides 401, 404 or 403 in the documented order, given the project item (or its absence). An API key the
 * project does not hold is looked up in its own record: valid elsewhere is a 403 (or 404), else a 401.
 */
export async function assertAccess(
  project: ProjectRef,
  item: ProjectItem | undefined,
  principal: Principal,
  need: Need,
  now: number,
): Promise<void> {
  if (principal.kind === 'user') {
    if (!item) throw projectNotFound(project);
    if (!roleAllows(roleOf(item, principal.username), need)) throw new Forbidden();
    return;
  }
  const entry = item?.keys[principal.keyId];
  if (keyValid(entry, principal.keyHash, now)) {
    if (!keyAllows(entry.permissions, need)) {
      throw new Forbidden(`This API key lacks the ${permissionFor(need)} permission`);
    }
    return;
  }
  const { Item } = await documents.send(
    new GetCommand({ TableName: tableName(), Key: itemKey(keyPk(principal.keyId)), ConsistentRead: true }),
  );
  const record = Item as KeyRecord | undefined;
  // The project item is the authority for its own keys; the record only speaks for other projects.
  if (!keyValid(record && readKeyEntry(record), principal.keyHash, now) || record?.project === projectName(project)) {
    throw new Unauthorized();
  }
  if (!item) throw projectNotFound(project);
  throw new Forbidden('This API key belongs to another project');
}
