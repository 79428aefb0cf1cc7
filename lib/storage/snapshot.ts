// Snapshot: the value at a subscribed path, read consistently from the root, with the version of every segment read.
import { SNAPSHOT_ATTEMPTS } from './retry';
import { MissingSegment, assemble, fragmentsOf, stubsIn } from './layout/stubs';
import { ROOT_KEY } from './layout/keys';
import { type Json, storedSize } from '../content/json';
import type { Path } from '../paths';
import { type Segment, assertSnapshot } from './segment';
import { SubtreeTooLarge, getSegment, querySubtree } from './io/read';
import { valueBelow } from './feed/changes';
import { type Stamp, stampOfItem } from '../schema/write-stamp';

import { enterChunk, step } from './walk';

/** The write stamps the segments read carry (a segment without one, or with a malformed one, adds none). */
export const stampsOf = (read: readonly Segment[]): Stamp[] =>
  read.flatMap((s) => stampOfItem(s.raw as Record<string, { S?: string }>) ?? []);

export interface Snapshot {
  /** Undefined when nothing is at the path. */
  value?: Json;
  /** Every segment read (key → version): a commit whose segment is not above its version is in the snapshot. */
  versions: Record<string, number>;
  /** The value is larger than `maxBytes`: reading stopped there (the client is told to fetch it). */
  tooLarge?: true;
  /**
   * The write stamps of the segments read (they tell a read at a revision what to wait for); of a value too large, those
   * read before the read stopped: the path's from the root among them.
   */
  stamps?: readonly Stamp[];
}

/**
 * Walks from the root segment (never a cached location: every segment on the way is recorded), then reads the
 * subtrees below the value, stopping once they pass `maxBytes` (a message's limit: a larger value is sent as
 * `changed`, so reading it whole would be wasted); a value changed over several segments while it was read is read
 * again.
 */
export async function readSnapshot(inc: string, path: Path, maxBytes: number): Promise<Snapshot> {
  for (let attempt = 1; ; attempt++) {
    const versions: Record<string, number> = {};
    /** The segments on the way, then those below the value: one state of the content, or read again. */
    const read: Segment[] = [];
    let key = ROOT_KEY;
    let depth = 0;
    try {
      for (;;) {
        const segment = await getSegment(inc, key);
        if (!segment) {
          if (key === ROOT_KEY) return { versions, stamps: stampsOf(read) };
          throw new MissingSegment(key);
        }
        versions[key] = segment.version;
        read.push(segment);
        // Never from memory, and teaching it nothing: every segment on the way is read and recorded.
        const next = step(segment, path, { key, depth }, { enterLast: true });
        if ('to' in next) {
          ({ key, depth } = next.to);
          continue;
        }
        if ('chunk' in next) {
          // An older element of a chunked array: in the chunk that holds it (elements hold no stubs).
          const entered = await enterChunk(inc, segment, { key, depth }, next.chunk);
          if (typeof entered !== 'object') throw new MissingSegment(next.chunk.dir);
          const { chunk } = entered;
          versions[chunk.key] = chunk.version;
          const value = valueBelow(chunk.fragment, [entered.at.first as string, ...path.slice(depth + 1)]);
          read.push(chunk);
          return value === undefined
            ? { versions, stamps: stampsOf(read) }
            : { value, versions, stamps: stampsOf(read) };
        }
        const value = valueBelow(segment.fragment, next.here);
        if (value === undefined) return { versions, stamps: stampsOf(read) };
        const stubs = stubsIn(value);
        if (stubs.length === 0) return { value, versions, stamps: stampsOf(read) };
        let budget = maxBytes - storedSize(value);
        for (const stub of stubs) {
          if (budget < 0) return { versions, tooLarge: true, stamps: stampsOf(read) };
          const subtree = await querySubtree(inc, stub, { maxBytes: budget }).catch((error: unknown) => {
            if (error instanceof SubtreeTooLarge) return undefined;
            throw error;
          });
          if (!subtree) return { versions, tooLarge: true, stamps: stampsOf(read) };
          for (const s of subtree.values()) {
            versions[s.key] = s.version;
            read.push(s);
            budget -= storedSize(s.fragment);
          }
        }
        if (budget < 0) return { versions, tooLarge: true, stamps: stampsOf(read) };
        assertSnapshot(read);
        return { value: assemble(value, fragmentsOf(read)), versions, stamps: stampsOf(read) };
      }
    } catch (error) {
      if (!(error instanceof MissingSegment) || attempt >= SNAPSHOT_ATTEMPTS) throw error;
    }
  }
}
