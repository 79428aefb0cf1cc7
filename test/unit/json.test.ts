import {
  type Json,
  type JsonObject,
  LosslessNumber,
  addNumbers,
  assertStorable,
  isObject,
  negate,
  cloneJson,
  depthOf,
  isStorableNumber,
  jsonText,
  setOwn,
  storedSize,
} from '../../lib/content/json';
import fc from 'fast-check';
import { parse as parseLossless } from 'lossless-json';
import { badRequest, failure } from './helpers';

/** `levels` objects nested in one another around `leaf`: nested(2, 1) is {a: {a: 1}}. */
function nested(levels: number, leaf: Json = 1): Json {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** `levels` arrays nested in one another around `leaf`. */
function nestedArrays(levels: number, leaf: Json = 1): Json {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** A parsed body, where `__proto__` is an own key as JSON.parse makes it. */
const parsed = (text: string) => JSON.parse(text) as unknown;

describe('isStorableNumber', () => {
  it.each([
    [0, true],
    [-0, true],
    [1, true],
    [-1, true],
    [1e-130, true],
    [-1e-130, true],
    [9.999999999999998e125, true],
    [-9.999999999999998e125, true],
    [1.5e-130, true],
    [123.456, true],
    [Number.MAX_SAFE_INTEGER, true],
    [1e126, false],
    [-1e126, false],
    [1e-131, false],
    [-1e-131, false],
    [5e-324, false],
    [Number.MAX_VALUE, false],
    [Infinity, false],
    [-Infinity, false],
    [NaN, false],
  ])('isStorableNumber(%p) is %p', (n, storable) => {
    expect(isStorableNumber(n)).toBe(storable);
  });
});

describe('assertStorable', () => {
  it.each([
    ['null', null, 31],
    ['a string', 'text', 31],
    ['an empty string', '', 31],
    ['a boolean', false, 31],
    ['zero', 0, 31],
    ['the smallest magnitude', 1e-130, 31],
    ['the largest magnitude', -9.999999999999998e125, 31],
    ['an empty object', {}, 31],
    ['an empty array', [], 31],
    ['a scalar with no levels left', 5, 0],
    ['31 nested objects in 31 levels', nested(31), 31],
    ['31 nested arrays in 31 levels', nestedArrays(31), 31],
    ['30 nested objects in 30 levels', nested(30), 30],
    ['an object in 1 level', { a: 1, b: 'x', c: null }, 1],
    ['constructor and prototype keys', { constructor: 1, prototype: { constructor: [] } }, 31],
    ['a 1024-character key', { ['k'.repeat(1024)]: 1 }, 31],
    ['a key that is a dot', { '.': 1, '\\': 2 }, 31],
  ])('accepts %s', (_, value, levels) => {
    expect(() => assertStorable(value, levels)).not.toThrow();
  });

  it.each([
    ['a number too large', 1e126, 'NUMBER_OUT_OF_RANGE'],
    ['a number too small', 1e-131, 'NUMBER_OUT_OF_RANGE'],
    ['a nested number too large', { a: [1, -1e126] }, 'NUMBER_OUT_OF_RANGE'],
    ['Infinity', Infinity, 'NUMBER_OUT_OF_RANGE'],
    ['NaN', NaN, 'NUMBER_OUT_OF_RANGE'],
    ['undefined', undefined, 'INVALID_VALUE'],
    ['a function', () => 1, 'INVALID_VALUE'],
    ['a bigint', 1n, 'INVALID_VALUE'],
    ['a nested undefined', { a: [undefined] }, 'INVALID_VALUE'],
    ['32 nested objects', nested(32), 'VALUE_TOO_DEEP'],
    ['32 nested arrays', nestedArrays(32), 'VALUE_TOO_DEEP'],
    ['objects and arrays mixed 32 deep', nested(16, nestedArrays(16)), 'VALUE_TOO_DEEP'],
    ['an empty key', { '': 1 }, 'EMPTY_KEY'],
    ['a nested empty key', { a: [{ '': 1 }] }, 'EMPTY_KEY'],
    ['a __proto__ key', parsed('{"__proto__": 1}'), 'RESERVED_KEY'],
    ['a nested __proto__ key', parsed('{"a": [{"__proto__": {"polluted": true}}]}'), 'RESERVED_KEY'],
    ['a 1025-character key', { ['k'.repeat(1025)]: 1 }, 'KEY_TOO_LONG'],
  ])('rejects %s with 400 %s', (_, value, code) => {
    expect(failure(() => assertStorable(value, 31))).toEqual(badRequest(code));
  });

  it.each([
    ['an empty object', 0, {}],
    ['an empty array', 0, []],
    ['31 nested objects', 30, nested(31)],
    ['an object holding an object', 1, { a: {} }],
  ])('rejects %s with VALUE_TOO_DEEP when only %d levels are left', (_, levels, value) => {
    expect(failure(() => assertStorable(value, levels))).toEqual(badRequest('VALUE_TOO_DEEP'));
  });

  it('walks a hostile depth without overflowing the stack', () => {
    expect(failure(() => assertStorable(nestedArrays(100_000), 31))).toEqual(badRequest('VALUE_TOO_DEEP'));
  });
});

describe('depthOf', () => {
  it.each([
    ['null', null, 0],
    ['a number', 1, 0],
    ['a string', 'a', 0],
    ['an empty object', {}, 1],
    ['an empty array', [], 1],
    ['an array of scalars', [1, 'a', null], 1],
    ['an object holding an empty array', { a: [] }, 2],
    ['the deepest branch', { a: 1, b: { c: [[]] }, d: [] }, 4],
    ['31 nested objects', nested(31), 31],
  ])('depthOf(%s) is %d', (_, value, depth) => {
    expect(depthOf(value as Json)).toBe(depth);
  });
});

describe('storedSize', () => {
  it.each([
    ['null', null, 1],
    ['true', true, 1],
    ['false', false, 1],
    ['0', 0, 2],
    ['1', 1, 2],
    ['100', 100, 2],
    ['-5', -5, 2],
    ['12', 12, 2],
    ['123', 123, 3],
    ['123.45', 123.45, 4],
    ['0.1 + 0.2', 0.1 + 0.2, 10],
    ['an empty string', '', 0],
    ['an ASCII string', 'abc', 3],
    ['a 2-byte character', 'é', 2],
    ['a 4-byte character', '😀', 4],
    ['an empty array', [], 3],
    ['an array of two', [null, 'ab'], 3 + (1 + 1) + (1 + 2)],
    ['an empty object', {}, 3],
    ['an object', { ab: 1, é: 'x' }, 3 + (1 + 2 + 2) + (1 + 2 + 1)],
    ['a nested value', { a: [{}] }, 3 + (1 + 1 + (3 + (1 + 3)))],
  ])('storedSize(%s) is %d', (_, value, bytes) => {
    expect(storedSize(value as Json)).toBe(bytes);
  });
});

describe('setOwn', () => {
  it('defines __proto__ as an own data property and leaves the prototype alone', () => {
    const object: JsonObject = {};
    setOwn(object, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(Object.keys(object)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(object, '__proto__')).toEqual({
      value: { polluted: true },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([['constructor'], ['prototype'], ['toString'], ['hasOwnProperty']])('defines %s as an own key', (key) => {
    const object: JsonObject = {};
    setOwn(object, key, 1);
    expect(Object.keys(object)).toEqual([key]);
    expect(object[key]).toBe(1);
  });

  it('replaces an existing key in place', () => {
    const object: JsonObject = { a: 1, b: 2 };
    setOwn(object, 'a', 3);
    expect(object).toEqual({ a: 3, b: 2 });
    expect(Object.keys(object)).toEqual(['a', 'b']);
  });
});

describe('cloneJson', () => {
  it.each([
    ['null', null],
    ['a string', 's'],
    ['a number', 1.5],
    ['an array', [1, [2, { a: 3 }]]],
    ['an object', { a: { b: [null, true] }, constructor: { prototype: 1 } }],
  ])('copies %s to an equal value', (_, value) => {
    expect(cloneJson(value as Json)).toEqual(value);
  });

  it('makes a deep copy that shares nothing with the original', () => {
    const original = { a: { b: [1, { c: 2 }] } };
    const copy = cloneJson(original) as typeof original;
    (copy.a.b[1] as { c: number }).c = 9;
    copy.a.b.push(3);
    expect(original).toEqual({ a: { b: [1, { c: 2 }] } });
  });

  it('keeps a __proto__ key as own data in the copy', () => {
    const source: JsonObject = {};
    setOwn(source, '__proto__', { x: 1 });
    const copy = cloneJson(source) as JsonObject;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ x: 1 });
  });
});

describe('exact decimals', () => {
  const exact = (digits: string) => new LosslessNumber(digits);

  it.each<[string, Json, string | undefined]>([
    ['38 digits', exact('1.2345678901234567890123456789012345678e+37'), undefined],
    ['39 digits', exact('1.23456789012345678901234567890123456789e+38'), 'NUMBER_TOO_PRECISE'],
    ['the smallest magnitude', exact('1.0000000000000000000000000000000000001e-130'), undefined],
    ['below the smallest magnitude', exact('9.9999999999999999999999999999999999999e-131'), 'NUMBER_OUT_OF_RANGE'],
    ['the largest magnitude', exact('-9.9999999999999999999999999999999999999e+125'), undefined],
    ['1e400', exact('1e+400'), 'NUMBER_OUT_OF_RANGE'],
    ['1e-400', exact('1e-400'), 'NUMBER_OUT_OF_RANGE'],
    ['nested 39 digits', { a: [1, exact('0.123456789012345678901234567890123456789')] }, 'NUMBER_TOO_PRECISE'],
  ])('assertStorable: %s', (_, value, code) => {
    if (code === undefined) expect(() => assertStorable(value, 31)).not.toThrow();
    else expect(failure(() => assertStorable(value, 31))).toEqual(badRequest(code));
  });

  it('is a scalar to the content model: not an object, copied as itself, sized by its digits', () => {
    const n = exact('12345678901234567890');
    expect(isObject(n)).toBe(false);
    expect(depthOf([n])).toBe(1);
    expect(cloneJson({ a: [n] })).toEqual({ a: [n] });
    expect(storedSize(n)).toBe(11); // 20 digits: 10 bytes + 1
    expect(storedSize(exact('1.2345678901234567890123456789012345678e+37'))).toBe(20);
  });

  it('adds and negates exactly', () => {
    expect(addNumbers(exact('12345678901234567890'), 1)).toEqual(exact('12345678901234567891'));
    expect(addNumbers(0.1, 0.2)).toBe(0.3);
    expect(addNumbers(exact('0.30000000000000001'), exact('-0.00000000000000001'))).toBe(0.3);
    expect(negate(exact('12345678901234567890'))).toEqual(exact('-12345678901234567890'));
  });
});

describe('jsonText (every outgoing body: responses, realtime frames, webhook bodies)', () => {
  const exact = fc
    .tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.integer({ min: 0, max: 9 }))
    .map(([digits, fraction]) => new LosslessNumber(`${digits}.${fraction}5`));
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      exact,
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
    ),
  }));

  /** Every number as the text of its digits (lossless-json reads every number back as a LosslessNumber). */
  const numbersAsText = (x: unknown): unknown => {
    if (x instanceof LosslessNumber) return `n:${x.value}`;
    if (typeof x === 'number') return `n:${JSON.stringify(x)}`;
    if (Array.isArray(x)) return x.map(numbersAsText);
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, numbersAsText(y)]));
    return x;
  };

  it('writes exact decimals as JSON numbers with every digit, wherever they sit', () => {
    fc.assert(
      fc.property(value, (v) => {
        const text = jsonText({ changes: [{ path: 'a', value: v }] });
        expect(text).not.toContain('isLosslessNumber');
        // Read back exactly, it is the same value, digit for digit.
        expect(numbersAsText(parseLossless(text))).toEqual(numbersAsText({ changes: [{ path: 'a', value: v }] }));
      }),
      { numRuns: 200 },
    );
    expect(jsonText({ n: new LosslessNumber('12345678901234567890.5') })).toBe('{"n":12345678901234567890.5}');
  });
});
