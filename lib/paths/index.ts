// Paths: parse dot-separated content paths (with `\.` and `\\` escapes) into segments, and format them back.
import { Refusal } from '../config/errors';
import { MAX_CONTAINER_DEPTH, MAX_KEY_LENGTH, MAX_PATH_LENGTH, RESERVED_KEY } from '../config/limits';

/** A parsed path: the raw segment strings, unescaped. */
export type Path = readonly string[];

// An integer segment: no leading zeros, no "-0", and small enough to be an exact array index.
const INTEGER_SEGMENT = /^(?:0|-?[1-9][0-9]{0,14})$/;

/** The segment as an array index when it looks like an integer, else undefined. */
export function asIndex(segment: string): number | undefined {
  return INTEGER_SEGMENT.test(segment) ? Number(segment) : undefined;
}

/**
 * Parses `a.b\.c.0` into ['a', 'b.c', '0']. Rejects what decisions.md rejects: a non-string or empty path,
 * empty segments, unknown escapes, and paths deeper than the content may nest.
 */
export function parsePath(path: unknown): Path {
  if (typeof path !== 'string') throw new Refusal('INVALID_PATH', 'path must be a string');
  if (path.length === 0) throw new Refusal('INVALID_PATH', 'path must not be empty');
  if (path.length > MAX_PATH_LENGTH) {
    throw new Refusal('INVALID_PATH', `path must be at most ${MAX_PATH_LENGTH} characters`);
  }
  const segments: string[] = [];
  let current = '';
  for (let i = 0; i < path.length; i++) {
    const ch = path[i];
    if (ch === '\\') {
      const next = path[i + 1];
      if (next !== '.' && next !== '\\') {
        throw new Refusal('INVALID_PATH', `invalid escape at position ${i}: only \\. and \\\\ are allowed`);
      }
      current += next;
      i++;
    } else if (ch === '.') {
      segments.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  segments.push(current);
  if (segments.some((s) => s.length === 0)) {
    throw new Refusal('INVALID_PATH', 'path must not contain empty segments');
  }
  if (segments.includes(RESERVED_KEY)) throw new Refusal('RESERVED_KEY', '"__proto__" cannot be used as a key');
  if (segments.some((s) => s.length > MAX_KEY_LENGTH)) {
    throw new Refusal('INVALID_PATH', `path segments must be at most ${MAX_KEY_LENGTH} characters`);
  }
  // The root and every segment but the last are containers: a path of n segments needs n container levels.
  if (segments.length > MAX_CONTAINER_DEPTH) {
    throw new Refusal('PATH_TOO_DEEP', `path must have at most ${MAX_CONTAINER_DEPTH} segments`);
  }
  return segments;
}

/** Escapes one segment so that parsePath reads it back unchanged. */
export function escapeSegment(segment: string): string {
  return segment.replace(/\\/g, '\\\\').replace(/\./g, '\\.');
}

/** A path as dot-path text, each segment escaped so that parsePath reads it back. */
export function formatPath(segments: Path): string {
  return segments.map(escapeSegment).join('.');
}

/**
 * RFC 6901: '' is the whole document; otherwise '/' then tokens separated by '/', in which `~1` is '/' and `~0` is
 * '~' (decoded in that order, so `~01` is the key `~1`). A token is any key, so a JSON Pointer reaches keys a dot
 * path spells with escapes (`a.b` is `/a.b`); the same limits and `__proto__` rule as dot paths hold. Whether a
 * token is an array index is decided by the container it meets (see lib/content/patch.ts).
 */
export function parsePointer(pointer: string): Path {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new Refusal('INVALID_PATH', `'${pointer}' is not a JSON Pointer: it must be empty or start with '/'`);
  }
  if (pointer.length > MAX_PATH_LENGTH) {
    throw new Refusal('INVALID_PATH', `a JSON Pointer must be at most ${MAX_PATH_LENGTH} characters`);
  }
  if (/~(?![01])/.test(pointer)) {
    throw new Refusal('INVALID_PATH', `'${pointer}' is not a JSON Pointer: '~' must be followed by 0 or 1`);
  }
  const tokens = pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (tokens.includes(RESERVED_KEY)) throw new Refusal('RESERVED_KEY', '"__proto__" cannot be used as a key');
  if (tokens.some((t) => t.length > MAX_KEY_LENGTH)) {
    throw new Refusal('INVALID_PATH', `pointer tokens must be at most ${MAX_KEY_LENGTH} characters`);
  }
  if (tokens.length > MAX_CONTAINER_DEPTH) {
    throw new Refusal('PATH_TOO_DEEP', `path must have at most ${MAX_CONTAINER_DEPTH} segments`);
  }
  return tokens;
}

/** The JSON Pointer of a list of tokens (parsePointer's inverse). */
export function formatPointer(tokens: Path): string {
  return tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}
