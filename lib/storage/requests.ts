// What the engine's three requests take and answer: a write, a batch, a read (lib/storage/index.ts).
import type { BatchOperation } from '../content/batch';
import type { KeyPageView } from '../content/key-pages';
import type { ContentOperation } from '../content/model';
import type { Path } from '../paths';
import type { Principal } from '../auth/access';
import type { ProjectRef } from '../schema/items';
import type { Grant } from './grant';

export interface WriteRequest {
  project: ProjectRef;
  principal: Principal;
  op: ContentOperation;
  /** Parsed If-Match header; undefined when absent or `*`. */
  ifMatch?: readonly string[];
  /**
   * The write's token (its ETag and slot) when the client named the request (Idempotency-Key): derived from that name,
   * so a retry of a write whose answer was lost recognises it instead of applying it again; the request's record
   * (docs/design/storage.md §8a) is written with its change. Absent: a random token, and no record.
   */
  requestToken?: string;
  /** Who and how (lib/schema/write-stamp.ts): every segment the write changes carries it, for the history. */
  stamp?: string;
  /**
   * Writes into this grant's partition instead of verifying the caller for the project's: an import's shadow content
   * (lib/storage/import.ts), whose caller was verified when the page arrived.
   */
  grant?: Grant;
}

export interface WriteResult {
  etag: string;
}

/** An ETag as its header carries it: in double quotes. */
export const formatEtag = (etag: string) => `"${etag}"`;

export interface BatchWriteRequest extends Omit<WriteRequest, 'op'> {
  /** Applied in order, each seeing the ones before it, all or none. */
  ops: readonly BatchOperation[];
}

export interface ReadRequest {
  project: ProjectRef;
  principal: Principal;
  segments?: Path;
  /**
   * A partial read (shallow, an array slice), of the value as its segment holds it: only that segment is read, and of
   * a chunked array the chunks the slice needs, of a bucketed object (shallow) its buckets.
   */
  view?: ReadView;
}

/**
 * `page`: a page of an object's keys (shallow=true with limit or after; lib/content/key-pages.ts). `values`: with it,
 * the values of the page's members that the segments read hold whole (no stub in them), read at no extra cost.
 */
export type ReadView =
  | { kind: 'shallow'; page?: KeyPageView; values?: boolean }
  | { kind: 'slice'; start: number; limit: number; where: string };
