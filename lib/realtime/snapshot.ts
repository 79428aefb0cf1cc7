// Snapshot: the value at a subscribed path, read consistently from the root, with the version of every segment read.
import { MissingSegment, ROOT_KEY, assemble, locate, stubsIn } from '../content/fragments';
import type { Json } from '../content/json';
import type { Segments } from '../paths';
import { getSegment, querySubtree } from '../store/segments';
import { valueBelow } from './changes';

export interface Snapshot {
  /** Undefined when nothing is at the path. */
  value?: Json;
  /** Every segment read (key → version): a commit whose segment is not above its version is in the snapshot. */
  versions: Record<string, number>;
}

/**
 * Walks from the root segment (never a cached location: every segment on the way is recorded), then reads the
 * subtrees below the value; a value changed over several segments while it was read is read again.
 */
export async function readSnapshot(inc: string, path: Segments): Promise<Snapshot> {
  for (let attempt = 1; ; attempt++) {
    const versions: Record<string, number> = {};
    let key = ROOT_KEY;
    let depth = 0;
    try {
      for (;;) {
        const segment = await getSegment(inc, key);
        if (!segment) {
          if (key === ROOT_KEY) return { versions };
          throw new MissingSegment(key);
        }
        versions[key] = segment.version;
        const rest = path.slice(depth);
        const located = locate(segment.fragment, rest, true);
        if (located.at === 'stub') {
          key = located.key;
          depth += located.consumed;
          continue;
        }
        const value = valueBelow(segment.fragment, rest);
        if (value === undefined) return { versions };
        const stubs = stubsIn(value);
        if (stubs.length === 0) return { value, versions };
        const subtrees = await Promise.all(stubs.map((stub) => querySubtree(inc, stub)));
        const byKey = new Map<string, Json>();
        for (const subtree of subtrees) {
          for (const s of subtree.values()) {
            versions[s.key] = s.version;
            byKey.set(s.key, s.fragment);
          }
        }
        return { value: assemble(value, (k) => byKey.get(k)), versions };
      }
    } catch (error) {
      if (!(error instanceof MissingSegment) || attempt >= 5) throw error;
    }
  }
}
