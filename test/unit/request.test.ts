import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { LosslessNumber, parseJsonText } from '../../lib/content/json';
import { bodyText, parseIfMatch, parseJsonObject } from '../../lib/http/request';
import { badRequest, failure } from './helpers';

const KiB = 1024;
const LIMIT = 512 * KiB;

/** An HTTP API (payload v2) event: header names arrive in lower case. */
function event(fields: {
  body?: string;
  isBase64Encoded?: boolean;
  headers?: Record<string, string>;
}): APIGatewayProxyEventV2 {
  return { headers: {}, isBase64Encoded: false, ...fields } as unknown as APIGatewayProxyEventV2;
}
const typed = (contentType: string | undefined, body = '{}') =>
  event({ body, headers: contentType === undefined ? {} : { 'content-type': contentType } });

describe('bodyText', () => {
  it.each<[string, string | undefined]>([
    ['no Content-Type', undefined],
    ['an empty Content-Type', ''],
    ['application/json', 'application/json'],
    ['application/json; charset=utf-8', 'application/json; charset=utf-8'],
    ['application/json;charset=UTF-8', 'application/json;charset=UTF-8'],
    ['a quoted charset', 'application/json; charset="utf-8"'],
    ['upper-case type', 'Application/JSON'],
    ['application/merge-patch+json', 'application/merge-patch+json'],
    ['a vendor +json type', 'application/vnd.api+json'],
    ['surrounding spaces', '  application/json  '],
  ])('accepts %s', (_, contentType) => {
    expect(bodyText(typed(contentType, '{"path":"a"}'))).toBe('{"path":"a"}');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['XML', 'application/xml'],
    ['text/json', 'text/json'],
    ['jsonp', 'application/jsonp'],
    ['json-seq', 'application/json-seq'],
    ['another charset', 'application/json; charset=latin1'],
    ['a type with JSON only in a parameter', 'text/plain; format=application/json'],
    ['garbage', 'json'],
  ])('refuses %s with 415', (_, contentType) => {
    expect(failure(() => bodyText(typed(contentType)))).toEqual({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it.each<[string, APIGatewayProxyEventV2, string]>([
    ['a missing body', event({}), ''],
    ['a UTF-8 body', event({ body: '{"v":"é€😀"}' }), '{"v":"é€😀"}'],
    ['a base64 body', event({ body: Buffer.from('{"v":"é"}').toString('base64'), isBase64Encoded: true }), '{"v":"é"}'],
    ['a body of exactly 512 KiB', event({ body: 'a'.repeat(LIMIT) }), 'a'.repeat(LIMIT)],
    [
      'a base64 body of exactly 512 KiB decoded',
      event({ body: Buffer.alloc(LIMIT, 'a').toString('base64'), isBase64Encoded: true }),
      'a'.repeat(LIMIT),
    ],
  ])('reads %s', (_, e, text) => {
    expect(bodyText(e)).toBe(text);
  });

  it.each<[string, APIGatewayProxyEventV2]>([
    ['one byte over 512 KiB', event({ body: 'a'.repeat(LIMIT + 1) })],
    ['512 KiB of characters that take two bytes each', event({ body: 'é'.repeat(LIMIT / 2 + 1) })],
    [
      'a base64 body one byte over 512 KiB decoded',
      event({ body: Buffer.alloc(LIMIT + 1, 'a').toString('base64'), isBase64Encoded: true }),
    ],
    [
      'a large body with a non-JSON type (size first)',
      event({ body: 'a'.repeat(LIMIT + 1), headers: { 'content-type': 'text/plain' } }),
    ],
  ])('refuses %s with 413', (_, e) => {
    expect(failure(() => bodyText(e))).toEqual({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('parseJsonObject', () => {
  it.each<[string, Record<string, unknown>]>([
    ['{}', {}],
    ['{"path":"a","value":null}', { path: 'a', value: null }],
    [' \n{"a":[1,{"b":true}]}\n ', { a: [1, { b: true }] }],
  ])('parses %j', (text, value) => {
    expect(parseJsonObject(text)).toEqual(value);
  });

  it('keeps a __proto__ key as own data', () => {
    const body = parseJsonObject('{"__proto__":{"polluted":true}}');
    expect(Object.keys(body)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['an empty body', '', 'INVALID_JSON'],
    ['truncated JSON', '{"a":', 'INVALID_JSON'],
    ['single quotes', "{'a':1}", 'INVALID_JSON'],
    ['a trailing comma', '{"a":1,}', 'INVALID_JSON'],
    ['an array', '[1]', 'INVALID_BODY'],
    ['null', 'null', 'INVALID_BODY'],
    ['a number', '1', 'INVALID_BODY'],
    ['a string', '"a"', 'INVALID_BODY'],
    ['true', 'true', 'INVALID_BODY'],
  ])('refuses %s with 400 %s', (_, text, code) => {
    expect(failure(() => parseJsonObject(text))).toEqual(badRequest(code));
  });
});

describe('parseIfMatch', () => {
  const ifMatch = (value: string | undefined) => event({ headers: value === undefined ? {} : { 'if-match': value } });

  it.each<[string, string | undefined, string[] | undefined]>([
    ['absent', undefined, undefined],
    ['empty', '', undefined],
    ['blank', '   ', undefined],
    ['*', '*', undefined],
    ['* with spaces', ' * ', undefined],
    ['one quoted tag', '"abc"', ['abc']],
    ['a tag with base64url characters', '"Ab-_9"', ['Ab-_9']],
    ['several tags', '"a", "b","c"', ['a', 'b', 'c']],
    ['empty list items', '"a",, ,"b"', ['a', 'b']],
    [
      'exactly 20 tags',
      Array.from({ length: 20 }, (_, i) => `"t${i}"`).join(','),
      Array.from({ length: 20 }, (_, i) => `t${i}`),
    ],
  ])('reads %s', (_, value, tags) => {
    expect(parseIfMatch(ifMatch(value))).toEqual(tags);
  });

  // Weak and malformed tags stay in the list (so the write is conditional) but can never equal a stored etag.
  it.each([
    ['a weak tag', 'W/"abc"'],
    ['an unquoted tag', 'abc'],
    ['a half-quoted tag', '"abc'],
    ['a tag with an inner quote', '"a"b"'],
    ['* among tags', '*, "x"'],
  ])('keeps %s conditional but never matching', (_, value) => {
    const tags = parseIfMatch(ifMatch(value));
    expect(tags).toBeDefined();
    expect(tags).not.toContain('abc');
    expect(tags).not.toContain('a');
    expect(tags).not.toContain('*');
    for (const tag of (tags ?? []).filter((t) => t !== 'x')) expect(tag.startsWith('invalid:')).toBe(true);
  });

  it('reads a weak tag beside a strong one as one never-matching entry and the strong tag', () => {
    expect(parseIfMatch(ifMatch('W/"a", "b"'))).toEqual(['invalid:W/"a"', 'b']);
  });

  // A header that is only separators names no tag: garbage, so the write stays conditional (and fails with 412).
  // How it then compiles is checked in expressions.test.ts.
  it.each([[','], [', ,'], [' , ']])('keeps %j conditional, not absent', (value) => {
    const tags = parseIfMatch(ifMatch(value));
    expect(tags).toBeDefined();
    expect(tags).not.toContain('');
  });

  it.each([
    ['21 tags', Array.from({ length: 21 }, (_, i) => `"t${i}"`).join(',')],
    ['21 weak tags', Array.from({ length: 21 }, (_, i) => `W/"t${i}"`).join(', ')],
  ])('refuses %s with 400 INVALID_IF_MATCH', (_, value) => {
    expect(failure(() => parseIfMatch(ifMatch(value)))).toEqual(badRequest('INVALID_IF_MATCH'));
  });
});

describe('parseJsonObject: numbers exactly as written', () => {
  const parsedValue = (text: string) => parseJsonObject(`{"value":${text}}`).value;

  it.each<[string, number]>([
    ['0', 0],
    ['-1.5', -1.5],
    ['1.50', 1.5],
    ['1E+2', 100],
    ['0.1', 0.1],
    ['1e-130', 1e-130],
    ['9007199254740992', 2 ** 53],
    ['123456789012345', 123456789012345],
  ])('%s, which a double holds, is the number %p', (text, n) => {
    expect(parsedValue(text)).toBe(n);
  });

  it.each<[string, string]>([
    ['12345678901234567890', '12345678901234567890'],
    ['9007199254740993', '9007199254740993'],
    ['0.30000000000000001', '0.30000000000000001'],
    ['12345678901234567890123456789012345678', '1.2345678901234567890123456789012345678e+37'],
    ['1.0000000000000000000000000000000000001e-130', '1.0000000000000000000000000000000000001e-130'],
    ['1e-400', '1e-400'],
    ['1e400', '1e+400'],
    ['-1234567890123456789.0100', '-1234567890123456789.01'],
  ])('%s is an exact decimal written %s', (text, digits) => {
    const value = parsedValue(text);
    expect(value).toBeInstanceOf(LosslessNumber);
    expect((value as LosslessNumber).value).toBe(digits);
  });

  it('reads a long number inside a string as the string, and keeps the last of duplicate keys (as JSON.parse)', () => {
    expect(parseJsonObject('{"s":"12345678901234567890e5","a":1,"a":12345678901234567890}')).toEqual({
      s: '12345678901234567890e5',
      a: new LosslessNumber('12345678901234567890'),
    });
  });

  it('keeps a __proto__ key as own data on the exact path too', () => {
    const body = parseJsonObject('{"__proto__":{"n":12345678901234567890}}');
    expect(Object.keys(body)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });

  // Both parsers, on the same bodies: the same values (the fast path only for bodies where they cannot differ).
  it('agrees with JSON.parse wherever a double holds every number', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (value) => {
        const text = JSON.stringify(value);
        expect(parseJsonObject(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe('request bodies are UTF-8, every string well-formed', () => {
  const base64 = (bytes: number[]) =>
    event({
      body: Buffer.from(bytes).toString('base64'),
      isBase64Encoded: true,
      headers: { 'content-type': 'application/json' },
    });
  const wrap = (inner: number[]) => [...Buffer.from('{"value":"'), ...inner, ...Buffer.from('"}')];

  it.each<[string, number[]]>([
    ['C3 28', [0xc3, 0x28]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['a lone continuation byte', [0x80]],
    ['a surrogate encoded in UTF-8', [0xed, 0xa0, 0x80]],
    ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('%s: bodyText passes it on and parseJsonObject refuses it with 400 INVALID_JSON', (_, bytes) => {
    const text = bodyText(base64(wrap(bytes)));
    expect(failure(() => parseJsonObject(text))).toEqual(badRequest('INVALID_JSON'));
  });

  it('decodes valid UTF-8 from base64 exactly', () => {
    expect(parseJsonObject(bodyText(base64([...Buffer.from('{"value":"é中😀"}')])))).toEqual({ value: 'é中😀' });
  });

  it.each<[string, string]>([
    ['a lone surrogate escape in a value', '{"value":"\\ud800"}'],
    ['a lone low surrogate', '{"value":"x\\uDC00"}'],
    ['a lone surrogate in a key', '{"value":{"\\ud800":1}}'],
    ['a lone surrogate deep in an array', '{"value":[[{"a":["\\udbff"]}]]}'],
    ['a lone surrogate beside an exact number', '{"value":["\\ud800",12345678901234567890]}'],
    ['a raw lone surrogate in an event string', '{"value":"\ud800"}'],
  ])('%s is a 400 INVALID_JSON', (_, text) => {
    expect(failure(() => parseJsonObject(bodyText(event({ body: text }))))).toEqual(badRequest('INVALID_JSON'));
  });

  it('accepts escaped surrogate pairs', () => {
    expect(parseJsonObject('{"value":"\\ud83d\\ude00"}')).toEqual({ value: '😀' });
  });
});

describe('escaped object keys (V8 in Node 24 can read one as another of the same length: nodejs/node#63785)', () => {
  // Every JSON escape, alone and after a letter, in objects of the same shape parsed one after the other in one
  // process: the way a server reads one client's body after another's.
  const escapes = ['\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u0041', '\\u00e9', '\\ud83d\\ude00'];
  const keysOf = (esc: string) => [esc, `a${esc}`, `${esc}z`];
  const shape = (key: string) => `{"path":"b","value":{"zq7x":0,"${key}":1,"n":{"${key}":[{"${key}":2}]}}}`;
  const expected = (key: string) => JSON.parse(`"${key}"`) as string;

  it.each(escapes.flatMap((a) => escapes.filter((b) => b !== a).map((b) => [a, b] as const)))(
    '%s, then %s',
    (first, second) => {
      for (const parse of [parseJsonObject, parseJsonText]) {
        for (const [k1, k2] of keysOf(first).map((k, i) => [k, keysOf(second)[i] as string] as const)) {
          const a = parse(shape(k1)) as { value: Record<string, any> };
          const b = parse(shape(k2)) as { value: Record<string, any> };
          expect(Object.keys(a.value)).toEqual(['zq7x', expected(k1), 'n']);
          expect(Object.keys(b.value)).toEqual(['zq7x', expected(k2), 'n']);
          expect(Object.keys(b.value.n[expected(k2)][0])).toEqual([expected(k2)]);
        }
      }
    },
  );

  it('keeps numbers, duplicates and __proto__ as JSON.parse would, on the escaped path', () => {
    const value = parseJsonText('{"a\\n":1.5,"d":1,"d":2,"__proto__":{"x":1}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['a\n', 'd', '__proto__']);
    expect(value.d).toBe(2);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect((value as { x?: unknown }).x).toBeUndefined();
  });
});
