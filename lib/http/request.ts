// Request parsing: headers, the JSON body (size and type checked before parsing), If-Match, path parameters.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parse as parseLossless } from 'lossless-json';
import { MAX_BODY_BYTES } from '../config/limits';
import { jsonNumber, parseJsonText } from '../content/json';
import { Refusal } from '../config/errors';

/** Header lookup; API Gateway HTTP APIs (payload v2) deliver header names in lower case. */
export const header = (event: APIGatewayProxyEventV2, name: string): string | undefined => event.headers?.[name];

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/**
 * What a body that is not UTF-8 reads as: a lone surrogate, which no decoded text holds and parseJsonObject refuses
 * (its 400 comes after the credential and access checks, like any other bad body).
 */
const NOT_UTF8 = '\ud800';

/** A Content-Type a JSON body may have (absent or empty reads as JSON); 415 otherwise. */
function assertJsonType(type: string | undefined): void {
  if (type !== undefined && type.trim() !== '' && !JSON_TYPE.test(type.trim()))
    throw new Refusal('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON (Content-Type: application/json)');
}

/** The raw body text after the envelope checks: 413 when too large, 415 when `checkType` refuses the Content-Type. */
export function bodyText(
  event: APIGatewayProxyEventV2,
  checkType: (type: string | undefined) => void = assertJsonType,
): string {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : undefined;
  if ((bytes?.length ?? Buffer.byteLength(raw, 'utf8')) > MAX_BODY_BYTES) {
    throw new Refusal('PAYLOAD_TOO_LARGE', `the request body must be at most ${MAX_BODY_BYTES} bytes`);
  }
  checkType(header(event, 'content-type'));
  if (bytes === undefined) return raw;
  try {
    return UTF8.decode(bytes);
  } catch {
    return NOT_UTF8;
  }
}

/** A number token a double may not hold: 16 or more digits (a dot among them), or an exponent. */
const LONG_OR_EXPONENT = /\d[eE]|\d[\d.]{15}/;

/**
 * JSON with its numbers read exactly (see jsonNumber). Bodies with no number a double could change (no token of
 * 16+ digits, none with an exponent; a match inside a string only costs the slower parser) take parseJsonText.
 */
function parseJsonExactly(text: string, onDuplicate?: (key: string) => never): unknown {
  // No long number: JSON's own numbers are exact (parseJsonText also minds V8's escaped keys).
  if (onDuplicate === undefined && !LONG_OR_EXPONENT.test(text)) return parseJsonText(text);
  // Like JSON.parse, the last of duplicate keys wins, unless the caller refuses them.
  return parseLossless(text, null, {
    parseNumber: jsonNumber,
    onDuplicateKey: ({ key, newValue }) => (onDuplicate === undefined ? newValue : onDuplicate(key)),
  });
}

/** Every string and key is well-formed UTF-16 (an escaped lone surrogate, `"\ud800"`, is not: DynamoDB refuses it). */
function wellFormed(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        if (!key.isWellFormed()) return false;
        stack.push(item);
      }
    }
  }
  return true;
}

/**
 * Parses the body as JSON: UTF-8 text, numbers exact, every string well-formed. `onDuplicate` refuses an object
 * member named twice (its error is thrown as is); without it the last one wins.
 */
export function parseJson(text: string, onDuplicate?: (key: string) => never): unknown {
  let value: unknown;
  try {
    if (!text.isWellFormed()) throw new SyntaxError('not UTF-8');
    value = parseJsonExactly(text, onDuplicate);
  } catch (error) {
    if (error instanceof Refusal) throw error;
    // The exact parser recurses: nesting thousands deep overflows its stack (content may nest 32 levels anyway).
    if (error instanceof RangeError) throw new Refusal('INVALID_JSON', 'the request body nests too deep to be read');
    throw new Refusal('INVALID_JSON', 'the request body is not valid JSON');
  }
  // Lone surrogates can only come from \u escapes: the text itself is well-formed.
  if (text.includes('\\u') && !wellFormed(value)) {
    throw new Refusal('INVALID_JSON', 'the request body has a string with a lone surrogate (\\ud800-\\udfff)');
  }
  return value;
}

/** Parses the body as a JSON object (parseJson). */
export function parseJsonObject(text: string): Record<string, unknown> {
  const value = parseJson(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Refusal('INVALID_BODY', 'the request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * If-None-Match against the ETag a GET would answer with (RFC 9110, 13.1.2): `*`, or any listed tag by weak
 * comparison (`W/` ignored). An entry that is no tag matches nothing, so the GET is answered in full.
 */
export function notModified(event: APIGatewayProxyEventV2, etag: string): boolean {
  const value = header(event, 'if-none-match')?.trim();
  if (value === undefined || value === '') return false;
  if (value === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** If-Match: undefined for absent or `*`, else the opaque tags (weak ones never match a strong comparison). */
export function parseIfMatch(event: APIGatewayProxyEventV2): string[] | undefined {
  const value = header(event, 'if-match')?.trim();
  if (value === undefined || value === '' || value === '*') return undefined;
  const tags = value
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (tags.length > 20) throw new Refusal('INVALID_IF_MATCH', 'If-Match may name at most 20 entity tags');
  // Garbage (`,`) names no tag at all: it still must not match, so keep one entry no etag can equal.
  if (tags.length === 0) return [`invalid:${value}`];
  return tags.map((t) => (/^"[^"]*"$/.test(t) ? t.slice(1, -1) : `invalid:${t}`));
}
