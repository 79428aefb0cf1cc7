import type { Json } from '../../lib/content/json';
import { operations } from '../../lib/content/operations';
import { badRequest, failure } from './helpers';

/** `levels` objects nested in one another around 1. */
function nested(levels: number): Json {
  let value: Json = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** A path of `n` segments. */
const pathOf = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`).join('.');
const segmentsOf = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);

describe('operations', () => {
  it.each<[keyof typeof operations, Record<string, unknown>, unknown]>([
    ['set', { path: 'a.b', value: 1 }, { kind: 'set', segments: ['a', 'b'], value: 1 }],
    ['set', { path: 'a\\.b', value: null }, { kind: 'set', segments: ['a.b'], value: null }],
    ['set', { path: 'a', value: { b: [1, 'x'] } }, { kind: 'set', segments: ['a'], value: { b: [1, 'x'] } }],
    ['push', { path: 'list', value: [1] }, { kind: 'push', segments: ['list'], value: [1] }],
    ['push', { path: 'list', value: null }, { kind: 'push', segments: ['list'], value: null }],
    ['insert', { path: 'l', value: 'x', index: 0 }, { kind: 'insert', segments: ['l'], value: 'x', index: 0 }],
    ['insert', { path: 'l', value: 'x', index: -3 }, { kind: 'insert', segments: ['l'], value: 'x', index: -3 }],
    ['insert', { path: 'l', value: 'x', index: 2.0 }, { kind: 'insert', segments: ['l'], value: 'x', index: 2 }],
    ['increment', { path: 'n' }, { kind: 'add', segments: ['n'], amount: 1 }],
    ['increment', { path: 'n', value: 2.5 }, { kind: 'add', segments: ['n'], amount: 2.5 }],
    ['increment', { path: 'n', value: -2 }, { kind: 'add', segments: ['n'], amount: -2 }],
    ['decrement', { path: 'n' }, { kind: 'add', segments: ['n'], amount: -1 }],
    ['decrement', { path: 'n', value: 3 }, { kind: 'add', segments: ['n'], amount: -3 }],
    ['decrement', { path: 'n', value: -3 }, { kind: 'add', segments: ['n'], amount: 3 }],
    ['increment', { path: 'n', value: 1e-130 }, { kind: 'add', segments: ['n'], amount: 1e-130 }],
    ['delete', { path: 'a.0' }, { kind: 'delete', segments: ['a', '0'] }],
    ['update', { content: {} }, { kind: 'replace', content: {} }],
    ['update', { content: { a: [1, { b: null }] } }, { kind: 'replace', content: { a: [1, { b: null }] } }],
    // Depth: a path of n segments leaves 31 - n container levels for the value.
    ['set', { path: 'a', value: nested(30) }, { kind: 'set', segments: ['a'], value: nested(30) }],
    ['set', { path: pathOf(30), value: { a: 1 } }, { kind: 'set', segments: segmentsOf(30), value: { a: 1 } }],
    ['set', { path: pathOf(31), value: 'leaf' }, { kind: 'set', segments: segmentsOf(31), value: 'leaf' }],
    ['push', { path: 'a', value: nested(29) }, { kind: 'push', segments: ['a'], value: nested(29) }],
    ['push', { path: pathOf(30), value: 1 }, { kind: 'push', segments: segmentsOf(30), value: 1 }],
    [
      'insert',
      { path: pathOf(30), value: 1, index: 0 },
      { kind: 'insert', segments: segmentsOf(30), value: 1, index: 0 },
    ],
    ['update', { content: nested(31) }, { kind: 'replace', content: nested(31) }],
  ])('%s %j', (name, body, op) => {
    expect(operations[name](body)).toEqual(op);
  });

  it.each<[string, keyof typeof operations, Record<string, unknown>, string]>([
    ['an empty path', 'set', { path: '', value: 1 }, 'INVALID_PATH'],
    ['an empty segment', 'push', { path: 'a..b', value: 1 }, 'INVALID_PATH'],
    ['a bad escape', 'delete', { path: 'a\\b' }, 'INVALID_PATH'],
    ['a non-string path', 'increment', { path: 1 }, 'INVALID_PATH'],
    ['a __proto__ segment', 'set', { path: 'a.__proto__', value: 1 }, 'RESERVED_KEY'],
    [
      'a __proto__ key in the value',
      'set',
      { path: 'a', value: JSON.parse('{"__proto__": {"x": 1}}') },
      'RESERVED_KEY',
    ],
    ['a __proto__ key in pushed value', 'push', { path: 'a', value: JSON.parse('[{"__proto__": 1}]') }, 'RESERVED_KEY'],
    ['a __proto__ key in content', 'update', { content: JSON.parse('{"a": {"__proto__": 1}}') }, 'RESERVED_KEY'],
    ['an empty key in the value', 'insert', { path: 'a', value: { '': 1 }, index: 0 }, 'EMPTY_KEY'],
    ['32 segments', 'delete', { path: pathOf(32) }, 'PATH_TOO_DEEP'],
    ['32 segments on set', 'set', { path: pathOf(32), value: 1 }, 'PATH_TOO_DEEP'],
    ['a number out of range', 'set', { path: 'a', value: [1e126] }, 'NUMBER_OUT_OF_RANGE'],
    ['a tiny number', 'push', { path: 'a', value: 1e-131 }, 'NUMBER_OUT_OF_RANGE'],
    ['a number out of range in content', 'update', { content: { a: -1e130 } }, 'NUMBER_OUT_OF_RANGE'],
    ['a value too deep for its path', 'set', { path: 'a', value: nested(31) }, 'VALUE_TOO_DEEP'],
    ['a container at 31 segments', 'set', { path: pathOf(31), value: {} }, 'VALUE_TOO_DEEP'],
    ['a value too deep for set at 30 segments', 'set', { path: pathOf(30), value: { a: {} } }, 'VALUE_TOO_DEEP'],
    ['a pushed value too deep', 'push', { path: 'a', value: nested(30) }, 'VALUE_TOO_DEEP'],
    ['a push at 31 segments', 'push', { path: pathOf(31), value: 1 }, 'VALUE_TOO_DEEP'],
    ['an inserted value too deep', 'insert', { path: 'a', value: nested(30), index: 0 }, 'VALUE_TOO_DEEP'],
    ['an insert at 31 segments', 'insert', { path: pathOf(31), value: 1, index: 0 }, 'VALUE_TOO_DEEP'],
    ['content too deep', 'update', { content: nested(32) }, 'VALUE_TOO_DEEP'],
    ['a fractional index', 'insert', { path: 'a', value: 1, index: 1.5 }, 'INVALID_INDEX'],
    ['a missing index', 'insert', { path: 'a', value: 1 }, 'INVALID_INDEX'],
    ['a string index', 'insert', { path: 'a', value: 1, index: '1' }, 'INVALID_INDEX'],
    ['a null index', 'insert', { path: 'a', value: 1, index: null }, 'INVALID_INDEX'],
    ['an unsafe integer index', 'insert', { path: 'a', value: 1, index: 2 ** 53 }, 'INVALID_INDEX'],
    ['an infinite index', 'insert', { path: 'a', value: 1, index: Infinity }, 'INVALID_INDEX'],
    ['a string amount', 'increment', { path: 'n', value: '1' }, 'INVALID_AMOUNT'],
    ['a null amount', 'decrement', { path: 'n', value: null }, 'INVALID_AMOUNT'],
    ['a boolean amount', 'increment', { path: 'n', value: true }, 'INVALID_AMOUNT'],
    ['an amount out of range', 'increment', { path: 'n', value: 1e126 }, 'INVALID_AMOUNT'],
    ['a tiny amount', 'decrement', { path: 'n', value: -1e-131 }, 'INVALID_AMOUNT'],
    ['an infinite amount', 'decrement', { path: 'n', value: Infinity }, 'INVALID_AMOUNT'],
    ['a NaN amount', 'increment', { path: 'n', value: NaN }, 'INVALID_AMOUNT'],
  ])('rejects %s (%s) with 400 %s', (_, name, body, code) => {
    expect(failure(() => operations[name](body))).toEqual(badRequest(code));
  });
});
