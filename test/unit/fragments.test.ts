import { ROOT_KEY, assemble, cut, locate, stubsIn } from '../../lib/content/fragments';
import { type Json, Stub, storedSize } from '../../lib/content/json';
import { toAttribute, fromAttribute } from '../../lib/dynamo/attributes';

let n = 0;
const key = (parent: string) => `${parent}k${n++}/`;
const big = (bytes: number) => 'x'.repeat(bytes);

const reassemble = (pieces: { key: string; fragment: Json }[]) => {
  const byKey = new Map(pieces.map((p) => [p.key, p.fragment]));
  return assemble(pieces[0]!.fragment, (k) => byKey.get(k));
};

describe('cut', () => {
  test('a value within the limit is one piece, unchanged', () => {
    const value = { a: 1, b: { c: 'x' } };
    expect(cut(ROOT_KEY, value, 256, 128, key)).toEqual([{ key: ROOT_KEY, fragment: value }]);
  });

  test('moves the largest members out until the parent is at most the target, and assembles back exactly', () => {
    const value = { small: 1, a: { text: big(200) }, b: { text: big(150) }, list: [big(100), big(100)] };
    const pieces = cut(ROOT_KEY, value, 256, 128, key);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces[0]!.key).toBe(ROOT_KEY);
    for (const piece of pieces) expect(piece.key.startsWith(ROOT_KEY)).toBe(true);
    expect(storedSize(pieces[0]!.fragment)).toBeLessThanOrEqual(128);
    expect(reassemble(pieces)).toEqual(value);
    // The input is not changed.
    expect(value.a).toEqual({ text: big(200) });
  });

  test('cuts nested members recursively; children keys extend their parent key', () => {
    const value = { outer: { inner: { deep: { text: big(300) }, more: big(120) }, side: big(100) } };
    const pieces = cut(ROOT_KEY, value, 256, 128, key);
    for (const piece of pieces) {
      const size = storedSize(piece.fragment);
      if (typeof piece.fragment === 'object' && !Array.isArray(piece.fragment) && size > 256) {
        // Only a piece of scalars or an array may stay over the limit.
        expect(stubsIn(piece.fragment)).toEqual([]);
      }
    }
    const keys = pieces.map((p) => p.key);
    for (const piece of pieces.slice(1)) {
      expect(keys.some((k) => k !== piece.key && piece.key.startsWith(k))).toBe(true);
    }
    expect(reassemble(pieces)).toEqual(value);
  });

  test('arrays and objects of scalars stay whole, whatever their size', () => {
    const list = Array.from({ length: 50 }, (_, i) => ({ i, text: big(20) }));
    expect(cut(ROOT_KEY, list, 256, 128, key)).toEqual([{ key: ROOT_KEY, fragment: list }]);
    const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, big(20)]));
    expect(cut(ROOT_KEY, wide, 256, 128, key)).toHaveLength(1);
  });

  test('existing stubs are kept as leaves', () => {
    const value = { kept: new Stub('/old/'), a: { text: big(300) } };
    const pieces = cut(ROOT_KEY, value, 256, 128, key);
    expect((pieces[0]!.fragment as Record<string, Json>).kept).toBeInstanceOf(Stub);
    expect(stubsIn(pieces[0]!.fragment)).toContain('/old/');
  });
});

describe('locate', () => {
  const fragment = { a: { b: new Stub('/x/') }, list: [{ c: 1 }], s: new Stub('/y/') };
  test.each([
    [['a', 'b', 'c'], true, { at: 'stub', key: '/x/', consumed: 2 }],
    [['a', 'b'], true, { at: 'stub', key: '/x/', consumed: 2 }],
    [['a', 'b'], false, { at: 'here' }],
    [['s'], true, { at: 'stub', key: '/y/', consumed: 1 }],
    [['list', '0', 'c'], true, { at: 'here' }],
    [['list', '-1', 'c'], true, { at: 'here' }],
    [['missing', 'deeper'], true, { at: 'here' }],
    [['a', 'missing'], true, { at: 'here' }],
    // Own properties only: a stub's key is not a member, and prototype names lead nowhere.
    [['s', 'key'], true, { at: 'stub', key: '/y/', consumed: 1 }],
    [['constructor', 'prototype'], true, { at: 'here' }],
  ])('%j (enter the last stub: %s)', (segments, enterLast, expected) => {
    expect(locate(fragment, segments as string[], enterLast as boolean)).toEqual(expected);
  });
});

describe('stubs on disk', () => {
  test('a stub is a binary attribute and reads back as a stub, never as content', () => {
    const attribute = toAttribute({ a: new Stub('/k1/') });
    expect(attribute.M?.a?.B).toBeInstanceOf(Uint8Array);
    const back = fromAttribute(attribute) as Record<string, Json>;
    expect(back.a).toBeInstanceOf(Stub);
    expect((back.a as Stub).key).toBe('/k1/');
  });

  test('assemble reports a stub whose segment is missing', () => {
    expect(() => assemble({ a: new Stub('/gone/') }, () => undefined)).toThrow('segment /gone/ is missing');
  });
});
