import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import Big from 'big.js';
import { type Json, type JsonObject, LosslessNumber, Stub } from '../../lib/content/json';
import { fromAttribute, fromItem, toAttribute } from '../../lib/dynamo/attributes';

describe('toAttribute', () => {
  it.each<[string, Json, AttributeValue]>([
    ['null', null, { NULL: true }],
    ['true', true, { BOOL: true }],
    ['false', false, { BOOL: false }],
    ['an integer', 42, { N: '42' }],
    ['a negative decimal', -1.5, { N: '-1.5' }],
    ['zero', 0, { N: '0' }],
    ['a string', 'text', { S: 'text' }],
    ['an empty string', '', { S: '' }],
    ['an empty list', [], { L: [] }],
    ['a list', [1, 'a', null], { L: [{ N: '1' }, { S: 'a' }, { NULL: true }] }],
    ['an empty map', {}, { M: {} }],
    ['a nested map', { a: { b: [true] } }, { M: { a: { M: { b: { L: [{ BOOL: true }] } } } } }],
    ['keys with dots and integers', { 'a.b': 1, '0': 2 }, { M: { 'a.b': { N: '1' }, '0': { N: '2' } } }],
  ])('converts %s', (_, value, attribute) => {
    expect(toAttribute(value)).toEqual(attribute);
  });

  it('keeps constructor, prototype and __proto__ keys as own map entries', () => {
    const value = JSON.parse(
      '{"constructor": 1, "prototype": {"constructor": "x"}, "__proto__": {"polluted": true}}',
    ) as JsonObject;
    const attribute = toAttribute(value);
    const map = attribute.M as Record<string, AttributeValue>;
    expect(Object.keys(map)).toEqual(['constructor', 'prototype', '__proto__']);
    expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(map, '__proto__')?.value).toEqual({ M: { polluted: { BOOL: true } } });
    expect(map.constructor).toEqual({ N: '1' });
    expect(map.prototype).toEqual({ M: { constructor: { S: 'x' } } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('fromAttribute', () => {
  it.each<[string, AttributeValue, Json]>([
    ['NULL', { NULL: true }, null],
    ['BOOL', { BOOL: false }, false],
    ['N integer', { N: '42' }, 42],
    ['N with exponent', { N: '1E+2' }, 100],
    ['N with trailing zeros', { N: '1.500' }, 1.5],
    ['S', { S: 'x' }, 'x'],
    ['an empty S', { S: '' }, ''],
    ['L', { L: [{ N: '1' }, { L: [] }] }, [1, []]],
    ['M', { M: { a: { M: {} }, b: { NULL: true } } }, { a: {}, b: null }],
  ])('converts %s', (_, attribute, value) => {
    expect(fromAttribute(attribute)).toEqual(value);
  });

  it.each<[string, AttributeValue]>([
    ['a string set', { SS: ['a'] }],
    ['a number set', { NS: ['1'] }],
    ['an empty attribute', {} as AttributeValue],
  ])('refuses %s, which content never holds', (_, attribute) => {
    expect(() => fromAttribute(attribute)).toThrow(Error);
  });

  it('reads a binary as a stub (where the content continues in another segment), never as content', () => {
    const stub = fromAttribute({ B: new TextEncoder().encode('/abc/') });
    expect(stub).toBeInstanceOf(Stub);
    expect((stub as Stub).key).toBe('/abc/');
  });

  it('keeps constructor, prototype and __proto__ keys as own data, never a prototype', () => {
    const map: Record<string, AttributeValue> = { constructor: { S: 'c' }, prototype: { M: {} } };
    Object.defineProperty(map, '__proto__', {
      value: { M: { polluted: { BOOL: true } } },
      enumerable: true,
      writable: true,
      configurable: true,
    });
    const object = fromAttribute({ M: map }) as JsonObject;
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(Object.keys(object)).toEqual(['constructor', 'prototype', '__proto__']);
    expect(object.constructor).toBe('c');
    expect(object.prototype).toEqual({});
    expect(Object.getOwnPropertyDescriptor(object, '__proto__')?.value).toEqual({ polluted: true });
    expect((object as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('round trips', () => {
  it.each<[string, Json]>([
    ['null', null],
    ['a scalar', -0.25],
    ['the extremes of the number range', [1e-130, -9.999999999999998e125, 0]],
    ['unicode', { ключ: 'значение', '😀': ['é'] }],
    ['a deep mix', { a: [1, { b: [null, true, 'x', { c: [] }] }], d: {} }],
    ['keys that look like indexes', { '0': [0], '-1': { '007': 7 } }],
    ['constructor and prototype keys', { constructor: { prototype: { constructor: 1 } } }],
  ])('fromAttribute(toAttribute(%s)) is the same value', (_, value) => {
    expect(fromAttribute(toAttribute(value))).toEqual(value);
  });

  it('round-trips a __proto__ key as own data', () => {
    const value = JSON.parse('{"a": {"__proto__": [1, {"__proto__": null}]}}') as JsonObject;
    const back = fromAttribute(toAttribute(value)) as JsonObject;
    expect(JSON.stringify(back)).toBe('{"a":{"__proto__":[1,{"__proto__":null}]}}');
    expect(Object.getPrototypeOf(back.a)).toBe(Object.prototype);
  });

  it('round-trips arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const json = JSON.parse(JSON.stringify(value)) as Json; // -0 becomes 0, as stored
        expect(fromAttribute(toAttribute(json))).toEqual(json);
      }),
      { numRuns: 500 },
    );
  });
});

describe('fromItem', () => {
  it('reads a whole item as an object', () => {
    expect(fromItem({ pk: { S: 'P#@a/b' }, ver: { N: '3' }, content: { M: { a: { L: [] } } } })).toEqual({
      pk: 'P#@a/b',
      ver: 3,
      content: { a: [] },
    });
  });
});

describe('numbers in and out of DynamoDB exactly', () => {
  it.each<[string, string, Json]>([
    ['a plain N', '42', 42],
    ['a normalised decimal', '1.5', 1.5],
    ['an exponent a double holds', '1E+2', 100],
    ['20 digits', '12345678901234567890', new LosslessNumber('12345678901234567890')],
    [
      '38 digits',
      '12345678901234567890123456789012345678',
      new LosslessNumber('1.2345678901234567890123456789012345678e+37'),
    ],
    ['a tiny one', '1.23456789012345678901E-130', new LosslessNumber('1.23456789012345678901e-130')],
    ['trailing zeros', '12345678901234567890.000', new LosslessNumber('12345678901234567890')],
  ])('reads %s (%s) without Number()', (_, n, value) => {
    expect(fromAttribute({ N: n })).toEqual(value);
  });

  it('writes an exact decimal as its digits', () => {
    expect(toAttribute({ id: new LosslessNumber('12345678901234567890'), l: [new LosslessNumber('1e-130')] })).toEqual({
      M: { id: { N: '12345678901234567890' }, l: { L: [{ N: '1e-130' }] } },
    });
  });

  it('round-trips generated decimals of up to 38 digits across the whole range', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[1-9][0-9]{0,37}$/),
        fc.integer({ min: -167, max: 88 }),
        fc.boolean(),
        (digits, exponent, negative) => {
          const text = `${negative ? '-' : ''}${digits}e${exponent}`;
          const back = fromAttribute(toAttribute(fromAttribute({ N: text })));
          expect(new Big(typeof back === 'number' ? String(back) : (back as LosslessNumber).value).eq(text)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
