// Request parsing: headers, the JSON body (size and type checked before parsing), If-Match, path parameters.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { MAX_BODY_BYTES } from '../config/limits';
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from '../config/errors';

/** Header lookup; API Gateway HTTP APIs (payload v2) deliver header names in lower case. */
export const header = (event: APIGatewayProxyEventV2, name: string): string | undefined => event.headers?.[name];

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** The raw body text after the envelope checks: 413 when too large, 415 when not JSON. */
export function bodyText(event: APIGatewayProxyEventV2): string {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) {
    throw new PayloadTooLarge('PAYLOAD_TOO_LARGE', `the request body must be at most ${MAX_BODY_BYTES} bytes`);
  }
  const type = header(event, 'content-type');
  if (type !== undefined && type.trim() !== '' && !JSON_TYPE.test(type.trim())) throw new UnsupportedMediaType();
  return bytes.toString('utf8');
}

/** Parses the body as a JSON object. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequest('INVALID_JSON', 'the request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequest('INVALID_BODY', 'the request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** If-Match: undefined for absent or `*`, else the opaque tags (weak ones never match a strong comparison). */
export function parseIfMatch(event: APIGatewayProxyEventV2): string[] | undefined {
  const value = header(event, 'if-match')?.trim();
  if (value === undefined || value === '' || value === '*') return undefined;
  const tags = value.split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (tags.length > 20) throw new BadRequest('INVALID_IF_MATCH', 'If-Match may name at most 20 entity tags');
  // Garbage (`,`) names no tag at all: it still must not match, so keep one entry no etag can equal.
  if (tags.length === 0) return [`invalid:${value}`];
  return tags.map((t) => (/^"[^"]*"$/.test(t) ? t.slice(1, -1) : `invalid:${t}`));
}
