// Snapshot: the value at a subscribed path, read consistently from the root, with the version of every segment read.
import { MissingSegment, ROOT_KEY, assemble, chunkStart, fragmentsOf, locate, stubsIn } from '../content/fragments';
import { type Json, storedSize } from '../content/json';
import type { Segments } from '../paths';
import { type Segment, SubtreeTooLarge, assertSnapshot, getChunk, getSegment, querySubtree } from '../store/segments';
import { valueBelow } from './changes';

export interface Snapshot {
  /** Undefined when nothing is at the path. */
  value?: Json;
  /** Every segment read (key → version): a commit whose segment is not above its version is in the snapshot. */
  versions: Record<string, number>;
  /** The value is larger than `maxBytes`: reading stopped there (the client is told to fetch it). */
  tooLarge?: true;
  /** The segments read, when the read completed (their stamps tell a read at a revision what to wait for). */
  read?: readonly Segment[];
}

/**
 * Walks from the root segment (never a cached location: every segment on the way is recorded), then reads the
 * subtrees below the value, stopping once they pass `maxBytes` (a message's limit: a larger value is sent as
 * `changed`, so reading it whole would be wasted); a value changed over several segments while it was read is read
 * again.
 */
export async function readSnapshot(inc: string, path: Segments, maxBytes: number): Promise<Snapshot> {
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
          if (key === ROOT_KEY) return { versions, read };
          throw new MissingSegment(key);
        }
        versions[key] = segment.version;
        read.push(segment);
        const rest = path.slice(depth);
        const located = locate(segment.fragment, rest, true);
        if (located.at === 'stub') {
          key = located.key;
          depth += located.consumed;
          continue;
        }
        if (located.at === 'chunk') {
          // An older element of a chunked array: in the chunk that holds it (elements hold no stubs).
          const chunk = await getChunk(inc, located.dir, located.index);
          if (!chunk) throw new MissingSegment(located.dir);
          assertSnapshot([segment, chunk]);
          versions[chunk.key] = chunk.version;
          const value = valueBelow(chunk.fragment, [String(located.index - chunkStart(chunk.key)), ...rest.slice(1)]);
          read.push(chunk);
          return value === undefined ? { versions, read } : { value, versions, read };
        }
        const at = located.position === undefined ? rest : [String(located.position), ...rest.slice(1)];
        const value = valueBelow(segment.fragment, at);
        if (value === undefined) return { versions, read };
        const stubs = stubsIn(value);
        if (stubs.length === 0) return { value, versions, read };
        let budget = maxBytes - storedSize(value);
        for (const stub of stubs) {
          if (budget < 0) return { versions, tooLarge: true };
          const subtree = await querySubtree(inc, stub, false, budget).catch((error: unknown) => {
            if (error instanceof SubtreeTooLarge) return undefined;
            throw error;
          });
          if (!subtree) return { versions, tooLarge: true };
          for (const s of subtree.values()) {
            versions[s.key] = s.version;
            read.push(s);
            budget -= storedSize(s.fragment);
          }
        }
        if (budget < 0) return { versions, tooLarge: true };
        assertSnapshot(read);
        return { value: assemble(value, fragmentsOf(read)), versions, read };
      }
    } catch (error) {
      if (!(error instanceof MissingSegment) || attempt >= 5) throw error;
    }
  }
}
