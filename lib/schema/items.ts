// Items: the keys and shapes of the records in the table, and reading a project item into plain fields.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { JsonObject } from '../content/json';
import { fromAttribute } from '../dynamo/attributes';
import { A, type Permission } from './attributes';

export interface ProjectRef {
  username: string;
  slug: string;
}

export const USERNAME = /^@[A-Za-z0-9][A-Za-z0-9_.-]{0,38}$/;
export const SLUG = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

export const isProjectRef = (username: unknown, slug: unknown): boolean =>
  typeof username === 'string' && typeof slug === 'string' && USERNAME.test(username) && SLUG.test(slug);

/**
 * Usernames and project slugs are case-insensitive: kept, compared and shown in lower case, so `@Alice/Site` is
 * `@alice/site` and no look-alike can exist beside a name. Every name that enters (URL, JWT claim, admin CLI) goes
 * through here; the patterns allow ASCII only, so lower-casing is exact.
 */
export const canonicalName = (name: string) => name.toLowerCase();

export const projectName = (p: ProjectRef) => `${p.username}/${p.slug}`;
export const projectPk = (p: ProjectRef) => `P#${projectName(p)}`;
export const userPk = (username: string) => `U#${username}`;
export const sessionPk = (tokenHash: string) => `S#${tokenHash}`;
export const keyPk = (keyId: string) => `K#${keyId}`;

/** The sort key of every item that is the only one of its partition (users, sessions, key index, project head). */
export const HEAD_SK = '#';
/** Sort keys of a project's grants, beside its head: an API key's and a member's. */
export const KEY_GRANT_PREFIX = 'K#';
export const MEMBER_GRANT_PREFIX = 'M#';
export const keyGrantSk = (keyId: string) => `${KEY_GRANT_PREFIX}${keyId}`;
export const memberGrantSk = (username: string) => `${MEMBER_GRANT_PREFIX}${username}`;

/** Every item's key (the table is `pk` + `sk`), for the document client: no code builds a key by hand. */
export const itemKey = (pk: string, sk: string = HEAD_SK) => ({ pk, sk });
/** The same key as attribute values, for the low-level client. */
export const itemKeyAttributes = (pk: string, sk: string = HEAD_SK): Record<string, AttributeValue> => ({
  pk: { S: pk },
  sk: { S: sk },
});

export type Role = 'viewer' | 'editor';

/** An API key as the service reads it (ProjectItem.keys, the key record). */
export interface KeyEntry {
  hash: string;
  permissions: Permission[];
  /** Epoch seconds; absent when the key never expires. */
  expiresAt?: number;
  name?: string;
  createdAt?: string;
}

/**
 * An API key on disk, in the project item's `keys` map and its own record: short names, as the condition
 * expression checks them (A.keyHash, ...) in every request. Only this module and the writes see them.
 */
export interface StoredKey {
  h: string;
  p: Permission[];
  /** The hash again, only in the project item's entry of a key with content:write (the fast write's check). */
  w?: string;
  e?: number;
  n?: string;
  c?: string;
}

/** Whatever is stored (an entry written by hand may be anything): readers check each field's type. */
export const readKeyEntry = (stored: StoredKey | null | undefined): KeyEntry => ({
  hash: stored?.h as string,
  permissions: stored?.p as Permission[],
  expiresAt: stored?.e,
  name: stored?.n,
  createdAt: stored?.c,
});

export const storedKey = (key: KeyEntry): StoredKey => ({
  h: key.hash,
  p: key.permissions,
  e: key.expiresAt,
  n: key.name,
  c: key.createdAt,
});

/** The key record beside the project: lets a key be recognised on any project (401 vs 403) and listed. */
export interface KeyRecord extends StoredKey {
  pk: string;
  sk: string;
  project: string;
}

export interface SessionRecord {
  pk: string;
  sk: string;
  u: string;
  /** Expiry, epoch seconds; also the table's TTL attribute. */
  ttl: number;
}

export interface ProjectItem {
  content: JsonObject;
  version: number;
  etag: string;
  owner?: string;
  members: Record<string, string>;
  keys: Record<string, KeyEntry>;
  raw: Record<string, AttributeValue>;
}

export function readProjectItem(raw: Record<string, AttributeValue>): ProjectItem {
  const field = (name: string) => (raw[name] ? fromAttribute(raw[name]) : undefined);
  return {
    content: (field(A.content) ?? {}) as JsonObject,
    version: Number(raw[A.version]?.N ?? 0),
    etag: raw[A.etag]?.S ?? '',
    owner: raw[A.owner]?.S,
    members: (field(A.members) ?? {}) as Record<string, string>,
    keys: Object.fromEntries(
      Object.entries((field(A.keys) ?? {}) as unknown as Record<string, StoredKey>).map(([id, key]) => [
        id,
        readKeyEntry(key),
      ]),
    ),
    raw,
  };
}

export const epochSeconds = () => Math.floor(Date.now() / 1000);

/** Which creation of the project an item is (projects created before incarnations existed: their creation time). */
export const incarnationOf = (raw: Record<string, AttributeValue>): string =>
  raw[A.incarnation]?.S ?? raw[A.createdAt]?.S ?? '';
