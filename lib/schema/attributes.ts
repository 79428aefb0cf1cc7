// Attributes: the names a project item's attributes have on disk (short where DynamoDB reads them per request).

/** Attribute names of a project item. */
export const A = {
  content: 'content',
  version: 'ver',
  etag: 'etag',
  bytes: 'bytes',
  owner: 'owner',
  members: 'members',
  keys: 'keys',
  keyHash: 'h',
  keyPermissions: 'p',
  keyExpires: 'e',
  /** The key's hash again, present only on keys with content:write: one comparison proves the key and the right. */
  keyWriteHash: 'w',
  /** Random, set when the project is created: tells a re-created project from the one deleted under its name. */
  incarnation: 'inc',
  /** When the project was created (ISO time); names the incarnation of projects created before `inc` existed. */
  createdAt: 'createdAt',
  /** The grant epoch: advanced by every revocation; a segment written at an older one refuses the write. */
  grantEpoch: 'ge',
  /**
   * A segment's stubs by the first key of their path (key → count): a write that replaces or deletes a member
   * without reading first is conditioned on its first key having none, so it never orphans a segment unseen.
   */
  stubsUnder: 'un',
} as const;

/** Request-token slots: each write records its token in one, so a retried write can tell it already applied. */
export const TOKEN_SLOTS = 32;
export const slotAttribute = (slot: number) => `rq${slot}`;

export type Permission = 'content:read' | 'content:write';
