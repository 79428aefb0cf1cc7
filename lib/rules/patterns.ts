// Rule patterns: a dot path in the content's path syntax where a `{name}` segment captures one segment and a last
// `**` matches the path itself and everything below it. Pure; parsing refuses what could never match sensibly.
import { type Path, parsePath } from '../paths';

/** One segment of a pattern: a literal key, or a capture of any one segment under a name. */
export type PatternSegment = { literal: string } | { capture: string };

/** A parsed pattern: its segments before any `**`, and whether it ends in `**`. */
export interface Pattern {
  source: string;
  segments: readonly PatternSegment[];
  deep: boolean;
}

/** Names a capture may not take: the CEL environment's own. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['auth', 'path', 'now', 'data', 'newData']);
const CAPTURE = /^\{([A-Za-z_][A-Za-z0-9_]{0,63})\}$/;
/** CEL's reserved words, which no variable can be named. */
const CEL_KEYWORDS = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** Why a pattern is refused, as a sentence; thrown by parsePattern. */
export class PatternError extends Error {}

/** Parses a pattern; throws PatternError saying what is wrong. */
export function parsePattern(source: unknown): Pattern {
  if (typeof source !== 'string') throw new PatternError('match must be a string');
  if (source === '**') return { source, segments: [], deep: true };
  let raw: Path;
  try {
    raw = parsePath(source);
  } catch (error) {
    throw new PatternError(`match is not a path: ${(error as Error).message}`);
  }
  const deep = raw[raw.length - 1] === '**';
  const body = deep ? raw.slice(0, -1) : raw;
  const names = new Set<string>();
  const segments = body.map((segment): PatternSegment => {
    if (segment === '**') throw new PatternError('** may only be the last segment');
    if (segment.includes('{') || segment.includes('}')) {
      const name = CAPTURE.exec(segment)?.[1];
      if (name === undefined) throw new PatternError(`'${segment}' is not a capture: write {name}, a whole segment`);
      if (RESERVED_NAMES.has(name) || CEL_KEYWORDS.has(name)) throw new PatternError(`'${name}' is a reserved name`);
      if (names.has(name)) throw new PatternError(`'${name}' is captured twice`);
      names.add(name);
      return { capture: name };
    }
    return { literal: segment };
  });
  return { source, segments, deep };
}

/** The names a pattern captures, in order. */
export const capturesOf = (pattern: Pattern): string[] =>
  pattern.segments.flatMap((s) => ('capture' in s ? [s.capture] : []));

/** Matches the first `segments.length` steps of `path` against the pattern's segments; the captures, or undefined. */
function matchPrefix(segments: readonly PatternSegment[], path: Path): Record<string, string> | undefined {
  const captures: Record<string, string> = Object.create(null);
  for (const [i, segment] of segments.entries()) {
    const step = path[i];
    if (step === undefined) return undefined;
    if ('capture' in segment) captures[segment.capture] = step;
    else if (segment.literal !== step) return undefined;
  }
  return captures;
}

/**
 * Whether the pattern covers `path` (matches it exactly, or an ancestor of it through a trailing `**`), with the
 * captures; undefined when it does not.
 */
export function coveringMatch(pattern: Pattern, path: Path): Record<string, string> | undefined {
  const n = pattern.segments.length;
  if (pattern.deep ? path.length < n : path.length !== n) return undefined;
  return matchPrefix(pattern.segments, path);
}

/** How a pattern without `**` relates to a written path: it names the path, an ancestor, a descendant, or neither. */
export type Relation = 'self' | 'ancestor' | 'descendant';

/** The relation of an exact pattern's nodes to `path` (for `validate`), or undefined when they are apart. */
export function relationTo(pattern: Pattern, path: Path): Relation | undefined {
  const n = pattern.segments.length;
  const common = Math.min(n, path.length);
  if (matchPrefix(pattern.segments.slice(0, common), path.slice(0, common)) === undefined) return undefined;
  return n === path.length ? 'self' : n < path.length ? 'ancestor' : 'descendant';
}

/**
 * Whether every path `inner` covers is covered by `outer` (a `**` pattern over it): used to warn about rules that
 * can never change a decision. Conservative: a capture in `outer` covers anything, a literal only itself.
 */
export function subsumes(outer: Pattern, inner: Pattern): boolean {
  if (!outer.deep || inner.segments.length < outer.segments.length) return false;
  return outer.segments.every((segment, i) => {
    const other = inner.segments[i];
    return 'capture' in segment || (other !== undefined && 'literal' in other && other.literal === segment.literal);
  });
}
