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
/**
 * The form of an API key's and a webhook's id (8 random bytes in hex, as made since the first version). An id of
 * any other form names nothing: refused before it reaches DynamoDB, whose key-size limit would make it an error.
 */
export const RECORD_ID = /^[0-9a-f]{16}$/;

/** Whether a username and a slug are well formed (USERNAME, SLUG). */
export const isProjectRef = (username: unknown, slug: unknown): boolean =>
  typeof username === 'string' && typeof slug === 'string' && USERNAME.test(username) && SLUG.test(slug);

/**
 * Usernames and project slugs are case-insensitive: kept, compared and shown in lower case, so `@Alice/Site` is
 * `@alice/site` and no look-alike can exist beside a name. Every name that enters (URL, JWT claim, admin CLI) goes
 * through here; the patterns allow ASCII only, so lower-casing is exact.
 */
export const canonicalName = (name: string) => name.toLowerCase();

/** A project's name: `<username>/<slug>`. */
export const projectName = (p: ProjectRef) => `${p.username}/${p.slug}`;
/** A project's partition key: its head, grants, webhooks and rules. */
export const projectPk = (p: ProjectRef) => `P#${projectName(p)}`;
/** A user's partition key. */
export const userPk = (username: string) => `U#${username}`;
/** A session's partition key, by its token's hash. */
export const sessionPk = (tokenHash: string) => `S#${tokenHash}`;
/** The partition key of an API key's index record. */
export const keyPk = (keyId: string) => `K#${keyId}`;

/** The sort key of every item that is the only one of its partition (users, sessions, key index, project head). */
export const HEAD_SK = '#';
/** Sort keys of a project's grants, beside its head: an API key's and a member's. */
export const KEY_GRANT_PREFIX = 'K#';
export const MEMBER_GRANT_PREFIX = 'M#';
/** Sort keys of a project's webhooks, beside its grants. */
export const WEBHOOK_PREFIX = 'W#';
/** The sort key of a project's rules document, beside its grants (docs/design/rules.md). */
export const RULES_SK = 'R';
/** A webhook's sort key in its project's partition. */
export const webhookSk = (id: string) => `${WEBHOOK_PREFIX}${id}`;
/** An API key's grant's sort key in its project's partition. */
export const keyGrantSk = (keyId: string) => `${KEY_GRANT_PREFIX}${keyId}`;
/** A member's grant's sort key in its project's partition. */
export const memberGrantSk = (username: string) => `${MEMBER_GRANT_PREFIX}${username}`;

/** Every item's key (the table is `pk` + `sk`), for the document client: no code builds a key by hand. */
export const itemKey = (pk: string, sk: string = HEAD_SK) => ({ pk, sk });
/** The same key as attribute values, for the low-level client. */
export const itemKeyAttributes = (pk: string, sk: string = HEAD_SK): Record<string, AttributeValue> => ({
  pk: { S: pk },
  sk: { S: sk },
});

export type Role = 'viewer' | 'editor';

/** An API key as the service reads it (its grant item, its key index record). */
export interface KeyEntry {
  hash: string;
  permissions: Permission[];
  /** Epoch seconds; absent when the key never expires. */
  expiresAt?: number;
  name?: string;
  createdAt?: string;
  /** Dot paths the key is limited to (at and below each); absent: the whole content. */
  paths?: string[];
}

/**
 * An API key on disk, in its grant item (`P#<p>` / `K#<keyId>`) and its key index record (`K#<keyId>` / `#`): short
 * names (A.keyHash, ...). Only this module and the writes see them.
 */
export interface StoredKey {
  h: string;
  p: Permission[];
  e?: number;
  n?: string;
  c?: string;
  kp?: string[];
}

/** Whatever is stored (an entry written by hand may be anything): readers check each field's type. */
export const readKeyEntry = (stored: StoredKey | null | undefined): KeyEntry => ({
  hash: stored?.h as string,
  permissions: stored?.p as Permission[],
  expiresAt: stored?.e,
  name: stored?.n,
  createdAt: stored?.c,
  paths: stored?.kp,
});

/** An API key as stored: its entry under the short attribute names. */
export const storedKey = (key: KeyEntry): StoredKey => ({
  h: key.hash,
  p: key.permissions,
  e: key.expiresAt,
  n: key.name,
  c: key.createdAt,
  ...(key.paths === undefined ? {} : { kp: key.paths }),
});

/** The key index record: lets a key be recognised on any project (401 vs 403). */
export interface KeyRecord extends StoredKey {
  pk: string;
  sk: string;
  project: string;
  /** The incarnation of the project the key was created in. */
  inc: string;
}

export interface SessionRecord {
  pk: string;
  sk: string;
  u: string;
  /** Expiry, epoch seconds; also the table's TTL attribute. */
  ttl: number;
}

/** A project's head as the content store reads it (the content lives in it until segments do). */
export interface ProjectItem {
  content: JsonObject;
  version: number;
  etag: string;
  raw: Record<string, AttributeValue>;
}

/** A project's head item read into its content (an empty object when it holds none), version and ETag. */
export function readProjectItem(raw: Record<string, AttributeValue>): ProjectItem {
  const content = raw[A.content];
  return {
    content: (content ? fromAttribute(content) : {}) as JsonObject,
    version: Number(raw[A.version]?.N ?? 0),
    etag: raw[A.etag]?.S ?? '',
    raw,
  };
}

/** The grant epoch an item carries; NaN when it has none (which equals no epoch). */
export const grantEpochOf = (raw: Record<string, AttributeValue>): number => Number(raw[A.grantEpoch]?.N ?? Number.NaN);

/** The time now, in whole epoch seconds. */
export const epochSeconds = () => Math.floor(Date.now() / 1000);

/** Which creation of the project an item is (projects created before incarnations existed: their creation time). */
export const incarnationOf = (raw: Record<string, AttributeValue>): string =>
  raw[A.incarnation]?.S ?? raw[A.createdAt]?.S ?? '';
