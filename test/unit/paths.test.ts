import fc from 'fast-check';
import { asIndex, escapeSegment, formatPath, parsePath } from '../../lib/paths';
import { PathTree } from '../../lib/paths/tree';
import { badRequest, failure } from './helpers';

describe('parsePath', () => {
  it.each([
    ['a', ['a']],
    ['data.item.name', ['data', 'item', 'name']],
    ['a\\.b', ['a.b']],
    ['a\\\\b', ['a\\b']],
    ['a\\\\.b', ['a\\', 'b']],
    ['a\\\\\\.b', ['a\\.b']],
    ['\\.', ['.']],
    ['\\\\', ['\\']],
    ['items.0', ['items', '0']],
    ['items.-1', ['items', '-1']],
    ['0', ['0']],
    ['constructor', ['constructor']],
    ['a.prototype', ['a', 'prototype']],
    ['a.constructor.prototype', ['a', 'constructor', 'prototype']],
    ['__proto', ['__proto']],
    ['a b.ü.€', ['a b', 'ü', '€']],
    [Array.from({ length: 31 }, (_, i) => `k${i}`).join('.'), Array.from({ length: 31 }, (_, i) => `k${i}`)],
    ['x'.repeat(1024), ['x'.repeat(1024)]],
  ])('parses %j into %j', (path, segments) => {
    expect(parsePath(path)).toEqual(segments);
  });

  it.each([
    ['a non-string', 42, 'INVALID_PATH'],
    ['null', null, 'INVALID_PATH'],
    ['undefined', undefined, 'INVALID_PATH'],
    ['an array', ['a'], 'INVALID_PATH'],
    ['an empty path', '', 'INVALID_PATH'],
    ['an empty middle segment', 'a..b', 'INVALID_PATH'],
    ['a leading dot', '.a', 'INVALID_PATH'],
    ['a trailing dot', 'a.', 'INVALID_PATH'],
    ['a single dot', '.', 'INVALID_PATH'],
    ['an unknown escape', 'a\\b', 'INVALID_PATH'],
    ['an escaped letter n', 'a\\n', 'INVALID_PATH'],
    ['a trailing backslash', 'a\\', 'INVALID_PATH'],
    ['a lone backslash', '\\', 'INVALID_PATH'],
    ['__proto__ as the only segment', '__proto__', 'RESERVED_KEY'],
    ['__proto__ as a later segment', 'a.__proto__.b', 'RESERVED_KEY'],
    ['__proto__ as the last segment', 'a.__proto__', 'RESERVED_KEY'],
    ['32 segments', Array.from({ length: 32 }, () => 'a').join('.'), 'PATH_TOO_DEEP'],
    ['a segment over 1024 characters', `a.${'x'.repeat(1025)}`, 'INVALID_PATH'],
    ['a path over 2048 characters', 'x'.repeat(2049), 'INVALID_PATH'],
  ])('rejects %s with 400 %s', (_, path, code) => {
    expect(failure(() => parsePath(path))).toEqual(badRequest(code));
  });
});

describe('asIndex', () => {
  it.each([
    ['0', 0],
    ['1', 1],
    ['12', 12],
    ['-1', -1],
    ['-12', -12],
    ['999999999999999', 999999999999999],
    ['-999999999999999', -999999999999999],
  ])('reads %j as the index %d', (segment, index) => {
    expect(asIndex(segment)).toBe(index);
  });

  it.each([
    ['-0'],
    ['007'],
    ['00'],
    ['01'],
    ['+1'],
    [' 1'],
    ['1 '],
    ['1.0'],
    ['1e3'],
    ['0x1'],
    ['a'],
    [''],
    ['-'],
    ['1234567890123456'],
  ])('reads %j as a key, not an index', (segment) => {
    expect(asIndex(segment)).toBeUndefined();
  });
});

describe('escapeSegment and formatPath', () => {
  it.each([
    ['a', 'a'],
    ['a.b', 'a\\.b'],
    ['a\\b', 'a\\\\b'],
    ['a\\.b', 'a\\\\\\.b'],
    ['.', '\\.'],
    ['\\', '\\\\'],
  ])('escapes %j as %j', (segment, escaped) => {
    expect(escapeSegment(segment)).toBe(escaped);
  });

  it.each([
    [['a'], 'a'],
    [['data', 'item', 'name'], 'data.item.name'],
    [['a.b', 'c\\d', '0'], 'a\\.b.c\\\\d.0'],
    [[], ''],
  ])('formats %j as %j', (segments, path) => {
    expect(formatPath(segments)).toBe(path);
  });

  it.each([[['a.b', 'c']], [['a\\', '.b']], [['\\.', '\\\\', '..']], [['x.', '-1', 'é.\\']]])(
    'round-trips %j through formatPath and parsePath',
    (segments) => {
      expect(parsePath(formatPath(segments))).toEqual(segments);
    },
  );
});

describe('formatPath property', () => {
  it('parsePath reads back any segments formatPath writes', () => {
    const segment = fc.string({ unit: fc.constantFrom('a', '.', '\\', '0', '-', 'é'), minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 31 }), (segments) => {
        expect(parsePath(formatPath(segments))).toEqual(segments);
      }),
    );
  });
});

describe('PathTree: how a set of paths meets a path, against comparing every pair', () => {
  const step = fc.constantFrom('a', 'b', '0', 'c.d');
  const pathArb = fc.array(step, { maxLength: 4 });
  const isPrefix = (a: readonly string[], b: readonly string[]) =>
    a.length <= b.length && a.every((s, i) => s === b[i]);

  it('prefixFree and meets agree with the pairwise definitions', () => {
    fc.assert(
      fc.property(fc.array(pathArb, { maxLength: 8 }), pathArb, (paths, at) => {
        const tree = new PathTree(paths);
        const pairwise = paths.every((a, i) => paths.every((b, j) => i === j || !isPrefix(a, b)));
        expect(tree.prefixFree).toBe(pairwise);
        expect(tree.meets(at)).toEqual({
          over: paths.some((p) => isPrefix(p, at)),
          under: paths.some((p) => p.length > at.length && isPrefix(at, p)),
        });
      }),
    );
  });

  it('answers for 40,000 paths in time proportional to them', () => {
    const tree = new PathTree(Array.from({ length: 40_000 }, (_, i) => [`z${i}`]));
    expect(tree.prefixFree).toBe(true);
    expect(tree.meets(['z7'])).toEqual({ over: true, under: false });
    expect(tree.meets([])).toEqual({ over: false, under: true });
  });
});
