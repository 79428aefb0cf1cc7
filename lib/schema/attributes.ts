// Attributes: the names a project's items' attributes have on disk (short where DynamoDB reads them per request).

/** Attribute names of a project's head, its grant items and its content's segments (which carry `ge` and `inc` too). */
export const A = {
  content: 'content',
  version: 'ver',
  etag: 'etag',
  bytes: 'bytes',
  owner: 'owner',
  /**
   * The grant epoch, a number (0 at creation): advanced by every change that takes access away (a key revoked, a
   * member removed or demoted), and checked by every content write's condition and read.
   */
  grantEpoch: 'ge',
  /** A content segment's last write stamp (JSON text: who, which route, when; docs/design/history.md §2). */
  writeStamp: 'wb',
  /** The rules document's version (0 or absent: none), on the head and on the rules item (docs/design/rules.md). */
  rulesVersion: 'rv',
  /** On the head: how many rules have a `validate` schema (absent or 0: no write needs the rules to be checked). */
  rulesSchemas: 'rs',
  /** The rules item's document, as JSON text. */
  rulesDocument: 'doc',
  /** How many key grants and member grants the project has (the caps are checked on these counters). */
  keyCount: 'nk',
  memberCount: 'nm',
  /** How many webhooks the project has (absent on heads older than webhooks: none). */
  webhookCount: 'nw',
  /** A key grant's (and the key index's) secret hash, permissions and expiry. */
  keyHash: 'h',
  keyPermissions: 'p',
  keyExpires: 'e',
  /** A scoped key's paths (dot paths; absent: the whole content). */
  keyPaths: 'kp',
  /** A member grant's role. */
  role: 'r',
  /**
   * Random, set when the project is created: tells a re-created project from the one deleted under its name. Its
   * grants and key index records carry it too.
   */
  incarnation: 'inc',
  /** When the project was created (ISO time); names the incarnation of projects created before `inc` existed. */
  createdAt: 'createdAt',
  /**
   * A segment's stubs by the first key of their path (key → count): a write that replaces or deletes a member
   * without reading first is conditioned on its first key having none, so it never orphans a segment unseen.
   */
  stubsUnder: 'un',
  /**
   * The ClientRequestToken of the last multi-item commit that wrote a segment (its parent and new children alike):
   * the stream consumer groups one commit's records by it (docs/design/realtime.md).
   */
  transaction: 'tx',
  /**
   * On a chunked array's segment: the `tx` of the commit that last rewrote chunks of it in place (an insert or delete
   * before its newest elements). While it equals `tx`, the segment's stream record is that commit's, and the stream
   * consumer reports the whole array (the chunks' own records say nothing). Dropped with `tx` by one-item writes.
   */
  tailCommit: 'rt',
  /**
   * On a segment a commit changed in place beside its top segment (a chunked array's): that commit's `tx`. While it
   * equals `tx`, the stream consumer reports this record's change in the top segment's message (one per commit).
   */
  partnerCommit: 'pa',
  /**
   * On a chunked array's segment: the chunks the last commit that rewrote some in place wrote (`d` their directory,
   * `f`..`t` their starts, `g` the segment's version it left), each of which names that version or a later one in its
   * `pv`. A reader that holds this segment and such a chunk naming less has the chunk from before that commit.
   */
  tailChunks: 'pc',
  /**
   * Partner versions (key → version): on each segment a commit changes in place when it changes more than one so, the
   * version every one of them has after it. A reader of several segments that finds one of them older than another's
   * `pv` says read it half-way through that commit (DynamoDB's Query is read-committed per item), and reads again.
   */
  partners: 'pv',
  /** The root segment's project name (`<username>/<slug>`): the stream consumer's way from an incarnation to its project. */
  project: 'pj',
} as const;

/** Request-token slots: each write records its token in one, so a retried write can tell it already applied. */
export const TOKEN_SLOTS = 32;
/** The attribute that holds request-token slot `slot`. */
export const slotAttribute = (slot: number) => `rq${slot}`;

export type Permission = 'content:read' | 'content:write';
