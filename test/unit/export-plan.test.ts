// The pure parts of an export (docs/design/backup.md §2): pointers, pieces of a value in hand, the budgets, the cursor,
// and what the change log says of a member or a container being paged at the export's revision.
import type { Json } from '../../lib/content/json';
import { decodeExportCursor, encodeExportCursor, framePaths } from '../../lib/history/export-cursor';
import {
  exportBudgets,
  pieceBytes,
  piecesOf,
  replacedWhole,
  staleContainer,
  toPointer,
  valueFromLog,
} from '../../lib/history/export-plan';
import { HistoryIncomplete } from '../../lib/history/rewind';
import { diffValues } from '../../lib/storage/feed/changes';
import { Reassembler } from '../support/pieces';

/** A commit's entry from the value before and after it (at `at`), as the stream consumer logs it. */
const entry = (revision: string, before: Json | undefined, after: Json | undefined, at: string[] = []) => ({
  revision,
  changes: diffValues(before, after, at),
  rewindable: true,
});

describe('toPointer', () => {
  it.each([
    [[], ''],
    [['a'], '/a'],
    [['a', '0', 'b'], '/a/0/b'],
    [['a/b'], '/a~1b'],
    [['~1'], '/~01'],
    [['a.b', 'constructor'], '/a.b/constructor'],
    [['~/~'], '/~0~1~0'],
  ])('%j is %j', (path, pointer) => expect(toPointer(path)).toBe(pointer));
});

describe('exportBudgets', () => {
  it.each([
    [1024 * 1024, 256 * 1024],
    [16 * 1024, 4 * 1024],
    [64 * 1024 * 1024, 256 * 1024],
    [3, 1],
  ])('a page of %i bytes has pieces of at most %i', (page, piece) => {
    expect(exportBudgets(page)).toEqual({ page, piece });
  });
});

describe('piecesOf', () => {
  const big = {
    a: Array.from({ length: 30 }, (_, i) => ({ i, s: 'x'.repeat(20) })),
    'b/c': { '~': 'y'.repeat(100), n: [[], {}] },
    s: 'z'.repeat(300),
  };
  it.each([[40], [80], [200], [10_000]])('cuts a value into pieces of at most %i bytes that put it back', (budget) => {
    const pieces = [...piecesOf(['top'], big, budget)];
    for (const piece of pieces) {
      // Only a scalar may be larger than the budget: it cannot be cut.
      if (pieceBytes(piece) > budget) expect(typeof piece.value).toBe('string');
    }
    const whole = new Reassembler();
    whole.add({ path: '', value: {} });
    for (const piece of pieces) whole.add(piece);
    expect(whole.root).toEqual({ top: big });
    if (budget >= 10_000) expect(pieces).toEqual([{ path: '/top', value: big }]);
  });
});

describe('export cursor', () => {
  const cursor = {
    revision: '0000000000000000000000000000000000000042',
    time: 1_790_000_000_000,
    frames: [
      { kind: 'object' as const, after: 'eyJsIjoiIn0' },
      { kind: 'array' as const, step: 'list', next: 12 },
      { kind: 'object' as const, step: '7' },
      { kind: 'hand' as const, step: 'a/b~', sent: 3 },
    ],
  };

  it('decodes what it encodes for the same project, and names each frame by its path', () => {
    expect(decodeExportCursor('inc1', encodeExportCursor('inc1', cursor))).toEqual(cursor);
    expect(framePaths(cursor.frames)).toEqual([[], ['list'], ['list', '7'], ['list', '7', 'a/b~']]);
  });

  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const valid = JSON.parse(Buffer.from(encodeExportCursor('inc1', cursor), 'base64url').toString()) as Record<
    string,
    unknown
  >;
  it.each([
    ['another project', encodeExportCursor('inc2', cursor)],
    ['empty', ''],
    ['not base64url', 'a+b/'],
    ['not JSON', b64('x').slice(2)],
    ['an array', b64([])],
    ['an unknown field', b64({ ...valid, x: 1 })],
    ['a revision that is not digits', b64({ ...valid, r: '12a' })],
    ['a negative time', b64({ ...valid, t: -1 })],
    ['no frames', b64({ ...valid, f: [] })],
    ['a root with a step', b64({ ...valid, f: [['o', 'a', null]] })],
    [
      'a frame without a step below the root',
      b64({
        ...valid,
        f: [
          ['o', null, null],
          ['o', null, null],
        ],
      }),
    ],
    ['an unknown kind', b64({ ...valid, f: [['x', null, 0]] })],
    ['an array frame without its index', b64({ ...valid, f: [['a', null, null]] })],
    ['a fractional index', b64({ ...valid, f: [['a', null, 1.5]] })],
    [
      'a value cut in hand with frames below it',
      b64({
        ...valid,
        f: [
          ['h', null, 0],
          ['o', 'a', null],
        ],
      }),
    ],
    [
      'too many frames',
      b64({ ...valid, f: [['o', null, null], ...Array.from({ length: 40 }, () => ['o', 'a', null])] }),
    ],
    [
      'a step too long',
      b64({
        ...valid,
        f: [
          ['o', null, null],
          ['o', 'k'.repeat(1025), null],
        ],
      }),
    ],
  ])('refuses %s with 400 INVALID_CURSOR', (_, text) => {
    expect(() => decodeExportCursor('inc1', text)).toThrow(expect.objectContaining({ code: 'INVALID_CURSOR' }));
  });
});

describe('valueFromLog', () => {
  it.each<[string, Json | undefined, Json | undefined, string[], { value: Json | undefined } | undefined]>([
    ['nothing changed at or above it', { a: { b: 1 } }, { a: { b: 2 } }, ['a', 'c'], undefined],
    ['a change below it only', { a: { b: 1 } }, { a: { b: 2 } }, ['a'], undefined],
    ['set at it', { a: { b: 1 } }, { a: 5 }, ['a'], { value: { b: 1 } }],
    ['set above it', { a: { b: { c: 1 } } }, { a: 'x' }, ['a', 'b'], { value: { c: 1 } }],
    ['added since', { a: {} }, { a: { big: [1, 2] } }, ['a', 'big'], { value: undefined }],
    ['deleted since', { a: { gone: [1] } }, { a: {} }, ['a', 'gone'], { value: [1] }],
  ])('%s', (_, before, after, path, expected) => {
    expect(valueFromLog(path, [entry('2', before, after)])).toEqual(expected);
  });

  it('undoes the changes below it older than the one at it', () => {
    // r2 changes a.b below a; r3 replaces a: a at the revision is r2's `was` of a.b put back into r3's `was`.
    const entries = [
      entry('3', { a: { b: 2, c: 1 } }, { a: 'x' }),
      entry('2', { a: { b: 1, c: 1 } }, { a: { b: 2, c: 1 } }),
    ];
    expect(valueFromLog(['a'], entries)).toEqual({ value: { b: 1, c: 1 } });
  });

  it('throws HistoryIncomplete at an entry not kept that touched it', () => {
    const lost = { revision: '2', rewindable: false, touched: [['a']] };
    expect(() => valueFromLog(['a', 'b'], [lost])).toThrow(HistoryIncomplete);
    expect(valueFromLog(['z'], [lost])).toBeUndefined();
    expect(() => valueFromLog(['z'], [{ revision: '2', rewindable: false }])).toThrow(HistoryIncomplete);
  });
});

describe('staleContainer', () => {
  const list = Array.from({ length: 5 }, (_, i) => i);
  it.each<[string, Json, Json, string[], RegExp | undefined]>([
    ['a member changed', { o: { a: 1, b: 2 } }, { o: { a: 1, b: 3 } }, ['o'], undefined],
    ['a member added', { o: { a: 1 } }, { o: { a: 1, n: 2 } }, ['o'], undefined],
    ['a change deeper in a member', { o: { a: { x: 1 } } }, { o: { a: { x: 2 } } }, ['o'], undefined],
    ['a change elsewhere', { o: { a: 1 }, p: 1 }, { o: { a: 1 }, p: 2 }, ['o'], undefined],
    ['elements pushed', { l: list }, { l: [...list, 5, 6] }, ['l'], undefined],
    ['an element changed in place', { l: list }, { l: [9, ...list.slice(1)] }, ['l'], undefined],
    ['a member deleted', { o: { a: 1, b: 2 } }, { o: { a: 1 } }, ['o'], /deleted/],
    ['the container rewritten', { o: { a: 1 } }, { o: [1] }, ['o'], /rewritten/],
    ['a container above it rewritten', { o: { a: { b: 1 } } }, { o: 1 }, ['o', 'a'], /rewritten/],
    ['an element removed', { l: list }, { l: list.slice(1) }, ['l'], /rewritten/],
    ['an element inserted', { l: list }, { l: [7, ...list] }, ['l'], /rewritten/],
  ])('%s', (_, before, after, path, expected) => {
    const why = staleContainer(path, [entry('2', before, after)]);
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(expected);
  });

  it('is not stale for a member added and deleted since (it was not there at the revision)', () => {
    const entries = [
      entry('3', { o: { a: 1, n: 2 } }, { o: { a: 1 } }),
      entry('2', { o: { a: 1 } }, { o: { a: 1, n: 2 } }),
    ];
    expect(staleContainer(['o'], entries)).toBeUndefined();
  });

  it('is stale at an entry not kept that touched it or one of its members, not one below them', () => {
    expect(staleContainer(['o'], [{ revision: '2', rewindable: false, touched: [['o', 'a']] }])).toMatch(/not kept/);
    expect(staleContainer(['o'], [{ revision: '2', rewindable: false }])).toMatch(/not kept/);
    expect(staleContainer(['o'], [{ revision: '2', rewindable: false, touched: [['o', 'a', 'b']] }])).toBeUndefined();
  });
});

describe('replacedWhole: a commit since the revision that may have replaced the whole content', () => {
  it.each<[string, Parameters<typeof replacedWhole>[0], string | undefined]>([
    ['none', [], undefined],
    ['changes below the root only', [entry('2', { a: 1, b: 2 }, { a: 3, b: 2 })], undefined],
    ['a member of the root removed', [entry('2', { a: 1, b: 2 }, { b: 2 })], undefined],
    [
      "an import's switch (not kept, every path touched)",
      [{ revision: '3', rewindable: false }],
      'the change at revision 3 was not kept in full',
    ],
    [
      'the root set to another kind',
      [entry('2', { a: 1 }, { b: 2 }), entry('4', { b: 2 }, [1])],
      'the whole content was replaced at revision 4',
    ],
    ['a change not kept whose paths are known', [{ revision: '5', rewindable: false, touched: [['a']] }], undefined],
  ])('%s', (_, entries, why) => expect(replacedWhole(entries)).toBe(why));
});
