// JSON text as the client reads it: exact decimals kept as their text, so a value read and written back is unchanged,
// and object keys read right on every engine.
//
// V8 (Node 24 and 26, current Chrome) can decode an escaped object key wrongly: once a key ending in an escaped
// backslash was parsed, a later key at the same place whose text starts alike and has another escape there
// (`"\n"` after `"\\"`) reads as the earlier key (nodejs/node#63785, crbug 521080746). A backup would then change
// keys silently. So a text with escaped keys is parsed with each of them swapped for a plain placeholder key, and the
// keys decoded on their own (a JSON string, not a key: unaffected) are put back in their places.

/** `JSON.rawJSON` where the platform has it (Node 22+, current browsers): a number written back exactly as given. */
const raw = (JSON as { rawJSON?: (text: string) => unknown }).rawJSON;
const isRaw = (JSON as { isRawJSON?: (value: unknown) => boolean }).isRawJSON;
const RESERVED_KEY = '__proto__';

export interface ParseJsonOptions {
  /** Throw a SyntaxError on a `__proto__` key (where it could later reach a prototype), escaped or not. */
  refuseReservedKey?: boolean;
}

/**
 * The number reviver: a number whose double does not print as written is kept as its text (JSON.parse source text
 * access), which JSON.stringify writes back verbatim.
 */
export const losslessNumber = (_key: string, value: unknown, context?: { source?: string }): unknown =>
  raw && typeof value === 'number' && context?.source && String(value) !== context.source ? raw(context.source) : value;

/** A string token, and the colon that makes it a key. Matched from a token boundary, it meets every string in turn. */
const STRING_TOKEN = /"(?:[^"\\]|\\.)*"(?=(\s*:)?)/gs;

/** The text with each escaped key replaced by a placeholder (a key no text holds), and what each one stands for. */
function placeEscapedKeys(text: string): { text: string; keys: Map<string, string> } | undefined {
  if (!text.includes('\\')) return undefined;
  let prefix = '~k';
  while (text.includes(prefix)) prefix += Math.random().toString(36).slice(2, 6);
  const keys = new Map<string, string>();
  const placed = text.replace(STRING_TOKEN, (token: string, colon: string | undefined) => {
    if (colon === undefined || !token.includes('\\')) return token;
    const placeholder = `${prefix}${keys.size}~`;
    keys.set(placeholder, JSON.parse(token) as string);
    return `"${placeholder}"`;
  });
  return keys.size === 0 ? undefined : { text: placed, keys };
}

/** The object with its placeholder keys back to the keys they stand for, in the same order (the last value wins). */
function restoreKeys(value: Record<string, unknown>, keys: Map<string, string>, options: ParseJsonOptions): unknown {
  const names = Object.keys(value);
  if (!names.some((name) => keys.has(name))) return value;
  const restored: Record<string, unknown> = {};
  for (const name of names) {
    const key = keys.get(name) ?? name;
    if (key === RESERVED_KEY && options.refuseReservedKey) throw new SyntaxError('"__proto__" cannot be used as a key');
    // Defined, never assigned: a `__proto__` key stays an own property, as JSON.parse makes it.
    Object.defineProperty(restored, key, { value: value[name], enumerable: true, writable: true, configurable: true });
  }
  return restored;
}

/**
 * JSON.parse keeping every digit of exact decimals where the platform can (JSON.rawJSON), and every escaped key
 * exact whatever the engine parsed before. Throws a SyntaxError on text that is not JSON.
 */
export function parseJson(text: string, options: ParseJsonOptions = {}): unknown {
  const placed = placeEscapedKeys(text);
  const reviver = (key: string, value: unknown, context?: { source?: string }): unknown => {
    if (key === RESERVED_KEY && options.refuseReservedKey) throw new SyntaxError('"__proto__" cannot be used as a key');
    if (placed && typeof value === 'object' && value !== null && !Array.isArray(value) && !isRaw?.(value))
      return restoreKeys(value as Record<string, unknown>, placed.keys, options);
    return losslessNumber(key, value, context);
  };
  return JSON.parse(placed?.text ?? text, reviver as never);
}
