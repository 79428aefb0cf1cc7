// Export pieces (docs/design/backup.md §1) put back together as a value, checking their order on the way: each piece
// below the innermost open container still open, an array's elements in index order from 0, no key twice.
import { LosslessNumber, parse } from 'lossless-json';

type Value = unknown;

/** A JSON Pointer as its steps. */
export function pointerSteps(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`not a JSON Pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Puts pieces back into one value, in order; throws on a piece out of the documented order. */
export class Reassembler {
  root: Value = undefined;
  /** The open containers, the root's first: each piece goes below the innermost one that is its ancestor. */
  private open: Array<{ path: string[]; value: Value }> = [];

  add(piece: { path: string; value: Value }): void {
    const path = pointerSteps(piece.path);
    if (path.length === 0) {
      if (this.root !== undefined) throw new Error('a second piece at the root');
      this.root = piece.value;
    } else {
      // Close the containers the piece is not below.
      while (this.open.length > 0) {
        const top = this.open[this.open.length - 1] as { path: string[] };
        if (top.path.length < path.length && top.path.every((s, i) => path[i] === s)) break;
        this.open.pop();
      }
      const parent = this.open[this.open.length - 1];
      if (!parent || parent.path.length !== path.length - 1) throw new Error(`piece ${piece.path} has no open parent`);
      const key = path[path.length - 1] as string;
      if (Array.isArray(parent.value)) {
        if (key !== String(parent.value.length)) throw new Error(`element ${piece.path} out of order`);
        parent.value.push(piece.value);
      } else {
        const object = parent.value as Record<string, Value>;
        if (Object.hasOwn(object, key)) throw new Error(`key ${piece.path} twice`);
        Object.defineProperty(object, key, {
          value: piece.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    if (isContainer(piece.value) && isEmpty(piece.value)) this.open.push({ path, value: piece.value });
  }
}

const isContainer = (v: Value): v is object => typeof v === 'object' && v !== null && !(v instanceof LosslessNumber);
const isEmpty = (v: object) => (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);

/** A response's body with its numbers exact (lossless-json). */
export const exactBody = (text: string): any => parse(text);

/** JSON text with every object's keys sorted and numbers as sent: equal for equal values, whatever the key order. */
export function canonical(value: Value): string {
  if (value instanceof LosslessNumber) return value.value;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isContainer(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, Value>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
