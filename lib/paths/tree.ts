// Sets of paths as trees of their steps: whether one path lies above, at or below another, in time proportional to
// the path asked about, not to the number of paths (a merge patch may name tens of thousands of leaves).
import type { Path } from './index';

interface Node {
  /** A path of the set ends here. */
  end: boolean;
  next: Map<string, Node>;
}

const node = (): Node => ({ end: false, next: new Map() });

/** A set of paths: how they meet a given path, each question in the length of that path. */
export class PathTree {
  private readonly root = node();
  /** Whether no path added is a prefix of another (an equal one included). */
  prefixFree = true;

  constructor(paths: Iterable<Path> = []) {
    for (const path of paths) this.add(path);
  }

  add(path: Path): void {
    let at = this.root;
    for (const step of path) {
      if (at.end) this.prefixFree = false;
      let next = at.next.get(step);
      if (next === undefined) {
        next = node();
        at.next.set(step, next);
      }
      at = next;
    }
    if (at.end || at.next.size > 0) this.prefixFree = false;
    at.end = true;
  }

  /** How the paths meet `at`: one is `at` or above it (`over`), one lies strictly below it (`under`). */
  meets(at: Path): { over: boolean; under: boolean } {
    let here = this.root;
    let over = false;
    for (const step of at) {
      over ||= here.end;
      const next = here.next.get(step);
      if (next === undefined) return { over, under: false };
      here = next;
    }
    return { over: over || here.end, under: here.next.size > 0 };
  }
}
