// Item sizes by AWS's rules, for the benches that build items of a given size: attribute names and values in UTF-8,
// numbers 1 byte per 2 significant digits + 1, lists and maps 3 bytes + 1 per element.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

export function valueSize(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) {
    const digits = v.N.replace(/^-/, '')
      .replace('.', '')
      .replace(/^0+|0+$/g, '');
    return Math.ceil(digits.length / 2) + 1;
  }
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.L !== undefined) return 3 + v.L.reduce((s, e) => s + 1 + valueSize(e), 0);
  if (v.M !== undefined) {
    return 3 + Object.entries(v.M).reduce((s, [k, e]) => s + 1 + Buffer.byteLength(k) + valueSize(e), 0);
  }
  if (v.SS !== undefined) return v.SS.reduce((s, e) => s + Buffer.byteLength(e), 0);
  if (v.NS !== undefined) return v.NS.reduce((s, e) => s + valueSize({ N: e }), 0);
  throw new Error(`no size rule for ${JSON.stringify(v)}`);
}

export const itemSize = (item: Record<string, AttributeValue>): number =>
  Object.entries(item).reduce((s, [k, v]) => s + Buffer.byteLength(k) + valueSize(v), 0);
