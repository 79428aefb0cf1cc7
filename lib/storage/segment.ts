// A segment as read: the item codec, its request-token slots, its ETag, and the reader's side of the torn-read
// protocol (`pv`/`pc`: docs/design/storage.md §3a).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { MissingSegment } from './layout/stubs';
import { ROOT_KEY, chunkStart, isChunkKey, contentPk } from './layout/keys';
import type { Json } from '../content/json';
import { fromAttribute } from '../dynamo/attributes';
import { A, slotAttribute } from '../schema/attributes';

/** A segment as read: where it is, its fragment, and what conditions compare. */
export interface Segment {
  key: string;
  fragment: Json;
  version: number;
  etag: string;
  epoch: number;
  raw: Record<string, AttributeValue>;
}

/** The key of a segment's item, in the content's partition. */
export const segmentItemKey = (inc: string, key: string) => ({ pk: { S: contentPk(inc) }, sk: { S: key } });

/** A segment as its item holds it. */
export function readSegment(raw: Record<string, AttributeValue>): Segment {
  return {
    key: raw.sk?.S ?? ROOT_KEY,
    fragment: raw[A.content] ? fromAttribute(raw[A.content] as AttributeValue) : {},
    version: Number(raw[A.version]?.N ?? 0),
    etag: raw[A.etag]?.S ?? '',
    epoch: Number(raw[A.grantEpoch]?.N ?? 0),
    raw,
  };
}

/** What a segment's request-token slot holds, if anything. */
export const tokenIn = (segment: Segment, slot: number) => segment.raw[slotAttribute(slot)]?.S;

/**
 * Segments read by separate items of a Query, or by separate requests, are each as some commit left them, not
 * necessarily the same one: DynamoDB isolates a transaction from a Query only item by item. A commit that changes
 * several segments in place (a batch's top segment and a chunked array's) records in each of them every one's new
 * version (`pv`), so a read that holds one of them older than another names it is half of that commit: a
 * MissingSegment, which every reader answers by reading again. Segments of a commit written under new keys or deleted
 * need no record: a reader finds them missing, or not named, when it mixes states.
 */
export function assertSnapshot(read: readonly Segment[]): void {
  const older = olderThanPartners(read);
  if (older !== undefined) throw new MissingSegment(older);
}

/**
 * A segment read at a version below what another segment read says a commit gave it (see assertSnapshot): below a
 * partner's `pv` entry for it, or, for a chunk, below the version its array's segment's `pc` says the last commit
 * that rewrote it left (the chunk then names less than that in its own `pv`).
 */
export function olderThanPartners(read: readonly Segment[]): string | undefined {
  const versions = new Map(read.map((s) => [s.key, s.version]));
  const named = (segment: Segment, key: string) => Number(segment.raw[A.partners]?.M?.[key]?.N ?? 0);
  for (const segment of read) {
    for (const [key, version] of Object.entries(segment.raw[A.partners]?.M ?? {})) {
      const seen = versions.get(key);
      if (seen !== undefined && seen < Number(version.N)) return key;
    }
    const tail = segment.raw[A.tailChunks]?.M;
    if (!tail) continue;
    const [dir, from, to, generation] = [tail.d?.S ?? '', Number(tail.f?.N), Number(tail.t?.N), Number(tail.g?.N)];
    for (const chunk of read) {
      if (!chunk.key.startsWith(dir) || !isChunkKey(chunk.key)) continue;
      const start = chunkStart(chunk.key);
      if (start >= from && start <= to && named(chunk, segment.key) < generation) return chunk.key;
    }
  }
  return undefined;
}

/** The ETag of a value read from these segments: the one segment's own, or a digest of every segment's. */
export function etagOf(segments: readonly Segment[]): string {
  if (segments.length === 1) return (segments[0] as Segment).etag;
  const hash = createHash('sha256');
  for (const s of [...segments].sort((a, b) => (a.key < b.key ? -1 : 1))) hash.update(`${s.key}\u0000${s.etag}\u0000`);
  return `m.${hash.digest('base64url').slice(0, 22)}`;
}
