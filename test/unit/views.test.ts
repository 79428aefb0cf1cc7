// GET content's partial reads (pure): shallow views, array slices, the query's validator and If-None-Match.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { DEFAULT_SLICE_LIMIT, MAX_CURSOR_LENGTH, MAX_SLICE_LIMIT } from '../../lib/config/limits';
import { type Json, Stub } from '../../lib/content/json';
import { shallowView, sliceArray } from '../../lib/content/views';
import { notModified } from '../../lib/http/request';
import { validateReadQuery } from '../../lib/http/validators.generated';
import { type Validator, schemaError } from '../../lib/http/validation';

describe('shallowView', () => {
  it.each<[string, Json, Json]>([
    [
      'an object: its keys each with true',
      { a: 1, b: { c: [1] }, l: [], n: null },
      { a: true, b: true, l: true, n: true },
    ],
    ['an empty object', {}, {}],
    ['an array: its length', [1, [2], { x: 1 }], { length: 3 }],
    ['an empty array', [], { length: 0 }],
    ['a string', 'text', 'text'],
    ['a number', 7, 7],
    ['false', false, false],
    ['null', null, null],
  ])('%s', (_, value, view) => {
    expect(shallowView(value)).toEqual(view);
  });

  it('a member held in a child segment (a stub) is present, and never read', () => {
    expect(shallowView({ here: 1, there: new Stub('/abc/') })).toEqual({ here: true, there: true });
  });

  it('keys that are Object.prototype names stay own data keys', () => {
    const view = shallowView({ constructor: 1, toString: 2, hasOwnProperty: 3 }) as Record<string, unknown>;
    expect(Object.keys(view)).toEqual(['constructor', 'toString', 'hasOwnProperty']);
    expect(Object.getPrototypeOf(view)).toBe(Object.prototype);
  });
});

describe('sliceArray', () => {
  it('is Array.prototype.slice from a start (negative from the end, clamped at 0), with the start and length', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer(), { maxLength: 40 }),
        fc.integer({ min: -60, max: 60 }),
        fc.integer({ min: 1, max: MAX_SLICE_LIMIT }),
        (array, start, limit) => {
          const from = start < 0 ? Math.max(0, array.length + start) : start;
          expect(sliceArray(array, start, limit, 'x')).toEqual({
            value: array.slice(from, from + limit),
            start: from,
            length: array.length,
          });
        },
      ),
    );
  });

  it.each<[string, Json]>([
    ['an object', { a: 1 }],
    ['a string', 'abc'],
    ['a number', 3],
    ['null', null],
    ['true', true],
  ])('on %s: 400 NOT_AN_ARRAY naming the path', (_, value) => {
    expect(() => sliceArray(value, 0, 1, "the value at 'a.b'")).toThrow(
      expect.objectContaining({ code: 'NOT_AN_ARRAY', message: expect.stringContaining("'a.b'") }),
    );
  });
});

describe('the GET content query validator', () => {
  const validate = validateReadQuery as Validator;
  const verdict = (query: Record<string, string>) => (validate(query) ? 'valid' : schemaError(validate.errors).code);

  it('limit: every whole number from 1 to MAX_SLICE_LIMIT, nothing else', () => {
    for (let n = 1; n <= MAX_SLICE_LIMIT; n++) expect(verdict({ limit: String(n) })).toBe('valid');
    for (const limit of ['0', String(MAX_SLICE_LIMIT + 1), '-1', '01', '1.0', '', ' 1', '1e2', '10000'])
      expect({ limit, verdict: verdict({ limit }) }).toEqual({ limit, verdict: 'INVALID_LIMIT' });
    expect(DEFAULT_SLICE_LIMIT).toBeLessThanOrEqual(MAX_SLICE_LIMIT);
  });

  it('start: integers as written (no leading zeros, no -0), at most 15 digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(10 ** 15) + 1, max: 10 ** 15 - 1 }), (n) => {
        expect(verdict({ start: String(n) })).toBe('valid');
      }),
    );
    for (const start of ['-0', '01', '+1', '1.5', '1e3', '', 'x', '1000000000000000', '-1000000000000000', '0x1'])
      expect({ start, verdict: verdict({ start }) }).toEqual({ start, verdict: 'INVALID_START' });
  });

  it.each(['true', 'false'])('shallow=%s is valid; anything else INVALID_SHALLOW', (shallow) => {
    expect(verdict({ shallow })).toBe('valid');
    for (const bad of ['', 'TRUE', '1', 'yes', 'true,true'])
      expect({ bad, verdict: verdict({ shallow: bad }) }).toEqual({ bad, verdict: 'INVALID_SHALLOW' });
  });

  it('after: base64url text of 1 to MAX_CURSOR_LENGTH characters; anything else INVALID_CURSOR', () => {
    for (const after of ['a', 'eyJsIjoiIiwiayI6ImEifQ', 'A-_z09', 'x'.repeat(MAX_CURSOR_LENGTH)])
      expect(verdict({ after })).toBe('valid');
    for (const after of ['', 'a+b', 'a/b', 'a=', ' a', 'a,b', 'x'.repeat(MAX_CURSOR_LENGTH + 1)])
      expect({ after: after.slice(0, 20), verdict: verdict({ after }) }).toEqual({
        after: after.slice(0, 20),
        verdict: 'INVALID_CURSOR',
      });
  });

  it('other parameters are ignored', () => {
    expect(verdict({ path: 'a', other: 'x', _: '123' })).toBe('valid');
  });
});

describe('notModified (If-None-Match)', () => {
  const event = (value?: string) =>
    ({ headers: value === undefined ? {} : { 'if-none-match': value } }) as unknown as APIGatewayProxyEventV2;
  const ETAG = '"abc.3"';

  it.each([ETAG, `W/${ETAG}`, ` ${ETAG} `, `"x", ${ETAG}`, `W/"x",W/${ETAG}`, '*', ' * '])('%s matches', (value) => {
    expect(notModified(event(value), ETAG)).toBe(true);
  });

  it.each([undefined, '', 'abc.3', '"abc.3', '"abc.4"', `${ETAG}x`, 'W/', ',', '""', '"*"', 'w/"abc.3"'])(
    '%s does not',
    (value) => {
      expect(notModified(event(value), ETAG)).toBe(false);
    },
  );
});
