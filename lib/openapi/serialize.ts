// The document's one text form (two-space JSON, trailing newline), shared by docs/openapi.json and GET /openapi.json.

/** Keys keep the order the builder writes them in, which is fixed by code, so the text only changes with the API. */
export const serializeDocument = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;
