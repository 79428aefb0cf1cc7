// Rewinding a value through history entries (lib/history/rewind.ts) and completing old values (lib/storage/feed).
import { HistoryIncomplete, rewind } from '../../lib/history/rewind';
import { diffValues } from '../../lib/storage/feed/changes';
import type { Json } from '../../lib/content/json';

const entry = (revision: string, before: Json | undefined, after: Json | undefined, at: string[] = []) => ({
  revision,
  changes: diffValues(before, after, at),
  rewindable: true,
});

describe('rewind', () => {
  const states: Json[] = [
    { a: { b: 1 } },
    { a: { b: 1, list: ['x'] } },
    { a: { b: 1, list: ['x', 'y', 'z'] } },
    { a: { b: { deep: [1, 2] }, list: ['y'] }, c: null },
    { c: 'z' },
  ];
  const entries = states
    .slice(1)
    .map((s, i) => entry(String(i + 2), states[i], s))
    .reverse();

  it('undoes every later entry, at the root and at any path', () => {
    for (let i = 0; i < states.length; i++) {
      const later = entries.slice(0, states.length - 1 - i);
      expect(rewind(states.at(-1), [], later)).toEqual(states[i]);
      const a = (states[i] as Record<string, Json>).a;
      expect(rewind(undefined, ['a'], later)).toEqual(a);
      const list = a === undefined ? undefined : (a as Record<string, Json>).list;
      expect(rewind(undefined, ['a', 'list'], later)).toEqual(list);
    }
  });

  it('refuses to cross an entry not kept in full at an overlapping path, and skips it elsewhere', () => {
    const lost = { revision: '9', rewindable: false, touched: [['a', 'b']] };
    expect(() => rewind({ a: { b: 2 } }, ['a'], [lost])).toThrow(HistoryIncomplete);
    expect(() => rewind(2, ['a', 'b', 'c'], [lost])).toThrow(HistoryIncomplete);
    expect(rewind({ q: 1 }, ['c'], [lost])).toEqual({ q: 1 });
    expect(() => rewind(1, ['c'], [{ revision: '8', rewindable: false }])).toThrow(HistoryIncomplete);
  });

  it('keeps prototype-named keys as plain data', () => {
    const before = JSON.parse('{"__proto__x":1,"constructor":{"v":1}}') as Json;
    const after = JSON.parse('{"constructor":{"v":2},"toString":3}') as Json;
    expect(rewind(after, [], [entry('2', before, after)])).toEqual(before);
    expect(({} as Record<string, unknown>).v).toBeUndefined();
  });
});

describe('completeAwaited', () => {
  it('completes old values from segments removed in later records, and waits while one is missing', async () => {
    const { carryRemoved, completeAwaited } = await import('../../lib/storage/feed/old-values');
    const { Stub } = await import('../../lib/content/json');
    const changes = [{ path: ['a'], deleted: true as const }];
    const partial = { x: new Stub('/a0000000/'), y: 1 } as Json;
    const awaited = [{ index: 0, side: 'was' as const, partial, known: [], waitsFor: [] }];
    expect(completeAwaited('inc1', changes, awaited)).toBe('waiting');
    carryRemoved('inc1', '/a0000000/', { deep: new Stub('/a0000000/b0000000/') });
    expect(completeAwaited('inc1', changes, awaited)).toBe('waiting');
    // Another incarnation's removed segment of the same key completes nothing here.
    carryRemoved('inc2', '/a0000000/b0000000/', [3]);
    expect(completeAwaited('inc1', changes, awaited)).toBe('waiting');
    carryRemoved('inc1', '/a0000000/b0000000/', [1, 2]);
    expect(completeAwaited('inc1', changes, awaited)).toEqual([
      { path: ['a'], deleted: true, was: { x: { deep: [1, 2] }, y: 1 } },
    ]);
  });

  it('completes a value and an old value from the records of segments the commit changed in place', async () => {
    const { completeAwaited } = await import('../../lib/storage/feed/old-values');
    const { keepImages } = await import('../../lib/storage/feed/commit-images');
    const { Stub } = await import('../../lib/content/json');
    const changes = [{ path: ['a'], value: { p: new Stub('/p0000000/') } as Json }];
    const awaited = [
      { index: 0, side: 'value' as const, partial: changes[0]!.value, known: [], tx: 't1', waitsFor: ['/p0000000/'] },
      {
        index: 0,
        side: 'was' as const,
        partial: { p: new Stub('/p0000000/') },
        known: [],
        tx: 't1',
        waitsFor: ['/p0000000/'],
      },
    ];
    expect(completeAwaited('inc1', changes, awaited)).toBe('waiting');
    // Another commit's record of the same segment completes nothing.
    keepImages('t0', '/p0000000/', { before: 0, after: 1 });
    expect(completeAwaited('inc1', changes, awaited)).toBe('waiting');
    keepImages('t1', '/p0000000/', { before: 1, after: 2 });
    expect(completeAwaited('inc1', changes, awaited)).toEqual([{ path: ['a'], value: { p: 2 }, was: { p: 1 } }]);
    // Every record came and a part still names a segment it has not: never (the entry stays as first logged).
    const gone = [{ ...awaited[1]!, partial: { q: new Stub('/q0000000/') } }];
    expect(completeAwaited('inc1', changes, gone)).toBe('never');
  });
});
