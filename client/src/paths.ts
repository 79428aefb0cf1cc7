// Dot paths as the API reads them (docs/api.md, Paths): segments separated by `.`, where `\.` is a dot inside a key
// and `\\` a backslash. The server's own parser (lib/paths) cannot ship in the client; a unit test holds the two equal.

/** Parses `a.b\.c.0` into `['a', 'b.c', '0']`; `''` is the whole content (`[]`). Throws a TypeError where the API answers 400. */
export function parsePath(path: string): string[] {
  if (path === '') return [];
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i];
    if (ch === '\\') {
      const next = path[++i];
      if (next !== '.' && next !== '\\') throw new TypeError(`invalid escape at position ${i - 1} of path ${path}`);
      current += next;
    } else if (ch === '.') {
      segments.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  segments.push(current);
  if (segments.includes('')) throw new TypeError(`path ${path} has an empty segment`);
  // Never a key here: the server refuses it, and reaching it would reach an object's prototype.
  if (segments.includes('__proto__')) throw new TypeError('"__proto__" cannot be used as a key');
  return segments;
}

/** The path of `segments`, escaped so that `parsePath` reads them back (`[]` is `''`, the whole content). */
export const formatPath = (segments: readonly string[]): string =>
  segments.map((s) => s.replace(/\\/g, '\\\\').replace(/\./g, '\\.')).join('.');
