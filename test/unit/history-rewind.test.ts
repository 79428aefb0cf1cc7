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
    const awaited = [{ index: 0, was: { x: new Stub('/a0000000/'), y: 1 } as Json }];
    expect(completeAwaited('inc1', changes, awaited)).toBeUndefined();
    carryRemoved('inc1', '/a0000000/', { deep: new Stub('/a0000000/b0000000/') });
    expect(completeAwaited('inc1', changes, awaited)).toBeUndefined();
    // Another incarnation's removed segment of the same key completes nothing here.
    carryRemoved('inc2', '/a0000000/b0000000/', [3]);
    expect(completeAwaited('inc1', changes, awaited)).toBeUndefined();
    carryRemoved('inc1', '/a0000000/b0000000/', [1, 2]);
    expect(completeAwaited('inc1', changes, awaited)).toEqual([
      { path: ['a'], deleted: true, was: { x: { deep: [1, 2] }, y: 1 } },
    ]);
  });
});
