// What a content request touches: each path with the operation it needs there, for rules and scoped keys. Pure.
import type { BatchOperation } from '../content/batch';
import type { ContentOperation } from '../content/model';
import type { Path } from '../paths';
import type { ContentNeed } from '../policy';

/** One path a request touches and what it does there. */
export interface Touch {
  operation: ContentNeed;
  path: Path;
}

const ROOT: Path = [];

/** The paths one operation touches: a change writes at its path, a test reads there, a copy reads its source. */
function touchesOf(op: ContentOperation | BatchOperation): Touch[] {
  switch (op.kind) {
    case 'replace':
    case 'merge':
      return [{ operation: 'write', path: ROOT }];
    case 'invalid':
      return [];
    case 'test':
      return [{ operation: 'read', path: op.segments }];
    case 'patch': {
      if (op.op === 'test') return [{ operation: 'read', path: op.path }];
      const at: Touch = { operation: 'write', path: op.path };
      if (op.from === undefined) return [at];
      return [at, { operation: op.op === 'move' ? 'write' : 'read', path: op.from }];
    }
    default:
      return [{ operation: 'write', path: op.segments }];
  }
}

/** Every path a write request (one operation, or a batch or patch) touches. */
export const requestTouches = (op: ContentOperation | readonly BatchOperation[]): Touch[] =>
  Array.isArray(op) ? op.flatMap(touchesOf) : touchesOf(op as ContentOperation);
