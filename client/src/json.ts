// JSON text as the client reads it: exact decimals kept as their text, so a value read and written back is unchanged.

/** `JSON.rawJSON` where the platform has it (Node 22+, current browsers): a number written back exactly as given. */
const raw = (JSON as { rawJSON?: (text: string) => unknown }).rawJSON;

/**
 * The reviver of `parseJson`: a number whose double does not print as written is kept as its text (JSON.parse source
 * text access), which JSON.stringify writes back verbatim.
 */
export const losslessNumber = (_key: string, value: unknown, context?: { source?: string }): unknown =>
  raw && typeof value === 'number' && context?.source && String(value) !== context.source ? raw(context.source) : value;

/** JSON.parse keeping every digit of exact decimals where the platform can (JSON.rawJSON); JSON.parse elsewhere. */
export const parseJson = (text: string): unknown => JSON.parse(text, losslessNumber as never);
