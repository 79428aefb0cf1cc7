import { ROOT_KEY, bucketKeys, isBucketStubKey, isChunkKey } from '../../lib/storage/layout/keys';
import { assemble, fragmentsOf, locate, reachableFrom, stubsIn } from '../../lib/storage/layout/stubs';
import { bucketOf, hash32 } from '../../lib/storage/layout/bucketed';
import { chunkStubOf, logicalLength } from '../../lib/storage/layout/chunked';
import { cut } from '../../lib/storage/layout/cut';
import { type Json, Stub, storedSize } from '../../lib/content/json';
import { toAttribute, fromAttribute } from '../../lib/dynamo/attributes';

let n = 0;
const id = () => `k${n++}`;
const big = (bytes: number) => 'x'.repeat(bytes);

const reassemble = (pieces: { key: string; fragment: Json }[]) => assemble(pieces[0]!.fragment, fragmentsOf(pieces));

describe('cut', () => {
  test('a value within the limit is one piece, unchanged', () => {
    const value = { a: 1, b: { c: 'x' } };
    expect(cut(ROOT_KEY, value, { limit: 256, target: 128, newId: id })).toEqual([{ key: ROOT_KEY, fragment: value }]);
  });

  test('moves the largest members out until the parent is at most the target, and assembles back exactly', () => {
    const value = { small: 1, a: { text: big(200) }, b: { text: big(150) }, list: [big(100), big(100)] };
    const pieces = cut(ROOT_KEY, value, { limit: 256, target: 128, newId: id });
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
    const pieces = cut(ROOT_KEY, value, { limit: 256, target: 128, newId: id });
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

  test('a large array is chunked: its oldest elements in chunks keyed by their first index, its newest behind a chunk stub', () => {
    const list = Array.from({ length: 50 }, (_, i) => ({ i, text: big(20) }));
    const pieces = cut('/a/', list, { limit: 256, target: 128, newId: id });
    const [head, ...chunks] = pieces;
    expect(chunkStubOf(head!.fragment)).toBeInstanceOf(Stub);
    expect(storedSize(head!.fragment)).toBeLessThanOrEqual(128);
    expect(logicalLength(head!.fragment as Json[])).toBe(50);
    for (const chunk of chunks) {
      expect(isChunkKey(chunk.key) && chunk.key.startsWith('/a/')).toBe(true);
      expect(storedSize(chunk.fragment)).toBeLessThanOrEqual(256);
      expect(chunkStubOf(chunk.fragment)).toBeUndefined();
    }
    expect(reassemble(pieces)).toEqual(list);
    // An element: in a chunk (its logical index), or in the array's segment (its position there).
    expect(locate(head!.fragment, ['0', 'i'], { enterLast: true })).toEqual({
      at: 'chunk',
      dir: expect.any(String),
      index: 0,
    });
    expect(locate(head!.fragment, ['-1'], { enterLast: true })).toEqual({ at: 'here', position: -1 });
    expect(locate(head!.fragment, ['49'], { enterLast: true })).toEqual({
      at: 'here',
      position: (head!.fragment as Json[]).length - 1,
    });
    expect(locate(head!.fragment, ['-50'], { enterLast: true })).toEqual({
      at: 'chunk',
      dir: expect.any(String),
      index: 0,
    });
    // Pushed past its budget again: the newest move into one more chunk, after the others.
    const grown = [
      ...(head!.fragment as Json[]),
      ...Array.from({ length: 10 }, (_, i) => ({ i: 50 + i, text: big(20) })),
    ];
    const again = cut('/a/', grown, { limit: 256, target: 128, newId: id });
    expect(again.slice(1).every((p) => !chunks.some((c) => c.key === p.key))).toBe(true);
    expect(reassemble([...again, ...chunks])).toEqual([
      ...list,
      ...Array.from({ length: 10 }, (_, i) => ({ i: 50 + i, text: big(20) })),
    ]);
  });

  test('an object of many small members is bucketed by a hash of each member; a bucket stub stands for the object', () => {
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, big(20)]));
    const pieces = cut('/o/', wide, { limit: 256, target: 128, newId: id });
    const stub = pieces[0]!.fragment as Stub;
    expect(isBucketStubKey(stub.key)).toBe(true);
    for (const piece of pieces.slice(1)) expect(storedSize(piece.fragment)).toBeLessThanOrEqual(256);
    // A member is in the bucket its hash names, or, when that bucket was itself over the limit and bucketed (the
    // stub key is random, so which bucket fills up varies), in the bucket its hash names below that one.
    const holder = (bucket: string, m: string): Json | undefined => {
      const fragment = pieces.find((p) => p.key === bucketOf(bucket, m))?.fragment;
      return fragment instanceof Stub && isBucketStubKey(fragment.key) ? holder(fragment.key, m) : fragment;
    };
    for (const m of ['k0', 'k77', 'k199']) expect(holder(stub.key, m)).toMatchObject({ [m]: big(20) });
    expect(reassemble(pieces)).toEqual(wide);
    expect(locate(pieces[0]!.fragment, ['k7', 'x'], { enterLast: true })).toEqual({
      at: 'stub',
      key: bucketOf(stub.key, 'k7'),
      consumed: 0,
      bucket: stub.key,
    });
    // The object itself is read whole: its stub is assembled, not followed.
    expect(locate({ o: stub }, ['o'], { enterLast: true })).toEqual({ at: 'here' });
  });

  test('an object of large scalars is bucketed too; a single member over the limit stays whole', () => {
    const wide = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, big(200)]));
    const pieces = cut(ROOT_KEY, wide, { limit: 256, target: 128, newId: id });
    expect(isBucketStubKey((pieces[0]!.fragment as Stub).key)).toBe(true);
    expect(reassemble(pieces)).toEqual(wide);
    expect(cut(ROOT_KEY, { only: big(1000) }, { limit: 256, target: 128, newId: id })).toHaveLength(1);
  });

  // Members that cannot share a segment are split apart by bucketing again below a bucket they meet in. The hash is
  // seeded by a new id each time, so this runs the class (2 to 9 such members, 300 id sequences each): every level
  // holds fewer of them than the one above, whatever the ids, so no two meet level after level.
  test.each([2, 3, 4, 5, 9])('%i members that cannot share a segment are spread in fewer levels than that', (m) => {
    const wide = Object.fromEntries(Array.from({ length: m }, (_, i) => [`m${i}`, big(300)]));
    const count = (value: Json) => (value instanceof Stub ? 0 : Object.keys(value as Record<string, Json>).length);
    for (let seed = 0; seed < 300; seed++) {
      let next = 0;
      const pieces = cut('/o/', wide, { limit: 256, target: 128, newId: () => `s${seed}i${next++}` });
      expect(reassemble(pieces)).toEqual(wide);
      const fragments = fragmentsOf(pieces);
      const whole = (key: string) => assemble(fragments(key) as Json, fragments);
      const depth = (key: string): number => {
        const fragment = fragments(key);
        if (!(fragment instanceof Stub) || !isBucketStubKey(fragment.key)) return 0;
        const buckets = bucketKeys(fragment.key);
        for (const b of buckets) expect(count(whole(b))).toBeLessThan(count(whole(key)));
        return 1 + Math.max(...buckets.map(depth));
      };
      expect(depth('/o/')).toBeLessThanOrEqual(m - 1);
      // Each member alone in its segment; the rest are bucket stubs and empty buckets.
      expect(pieces.filter((p) => count(p.fragment) === 1)).toHaveLength(m);
    }
  });

  test('existing stubs are kept as leaves', () => {
    const value = { kept: new Stub('/old/'), a: { text: big(300) } };
    const pieces = cut(ROOT_KEY, value, { limit: 256, target: 128, newId: id });
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
    expect(locate(fragment, segments as string[], { enterLast: enterLast as boolean })).toEqual(expected);
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

describe('reachableFrom: the segments committed stubs lead to', () => {
  it('follows segment, chunk and bucket stubs, and leaves out what no stub names', () => {
    const content = {
      a: { t: 'x'.repeat(400) },
      log: Array.from({ length: 60 }, (_, i) => `e${i}`.padEnd(30, 'x')),
      m: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i])),
    };
    const pieces = cut(ROOT_KEY, content, { limit: 256, newId: id });
    const read = new Map(pieces.map((p) => [p.key, p]));
    // An interrupted change's child under the root's prefix: no stub names it.
    read.set('/zzzzzzzz/', { key: '/zzzzzzzz/', fragment: { left: 'behind' } });
    const reached = reachableFrom([ROOT_KEY], read);
    expect([...reached].sort()).toEqual(pieces.map((p) => p.key).sort());
    expect(assemble(read.get(ROOT_KEY)?.fragment as never, fragmentsOf(pieces))).toEqual(content);
  });
});

describe('hash32 (MurmurHash3 x86 32-bit over UTF-16 code units, seed 0)', () => {
  // Reference values: MurmurHash3_x86_32 of the same bytes (little-endian UTF-16), seed 0.
  it.each<[string, number]>([
    ['', 0],
    ['a', 0x6f49d11a],
    ['ab', 0x165860ca],
    ['abc', 0x42b016c3],
  ])('%j', (text, expected) => {
    expect(hash32(text)).toBe(expected);
  });

  it('spreads 10,000 members over 64 buckets within 25% of even', () => {
    const counts = new Array<number>(64).fill(0);
    for (let i = 0; i < 10_000; i++) counts[hash32(`/s/\u0000member-${i}`) % 64]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan((10_000 / 64) * 0.75);
    expect(Math.max(...counts)).toBeLessThan((10_000 / 64) * 1.25);
  });
});
