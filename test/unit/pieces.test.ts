// Import pieces (docs/design/backup.md §1): a page checked against what the pages before it left open, and the writes
// that build the document, merged where the page opened the container.
import { statusOf } from '../../lib/config/error-codes';
import { type Piece, type PiecesState, NO_PIECES, groupWrites, planPieces } from '../../lib/content/pieces';
import { thrownBy } from './helpers';

const p = (path: string, value: unknown): Piece => ({ path, value: value as never });

/** Runs the pages in turn; returns every write and the final state. */
function run(pages: unknown[][]): { writes: Array<[string[], unknown]>; state: PiecesState } {
  let state = NO_PIECES;
  const writes: Array<[string[], unknown]> = [];
  for (const page of pages) {
    const planned = planPieces(state, page);
    state = planned.state;
    writes.push(...planned.writes.map((w) => [[...w.segments], w.value] as [string[], unknown]));
  }
  return { writes, state };
}

describe('planPieces', () => {
  it.each<[string, unknown[][], Array<[string[], unknown]>]>([
    ['a whole document in one piece', [[p('', { a: 1 })]], [[[], { a: 1 }]]],
    [
      'members of the open root merged into it within a page',
      [[p('', {}), p('/a', 1), p('/b', {}), p('/b/c', [1])]],
      [[[], { a: 1, b: { c: [1] } }]],
    ],
    [
      'members of a container an earlier page opened: one write each',
      [
        [p('', {}), p('/list', [])],
        [p('/list/0', 'x'), p('/list/1', {}), p('/list/1/k', 2), p('/z', 3)],
      ],
      [
        [[], { list: [] }],
        [['list', '0'], 'x'],
        [['list', '1'], { k: 2 }],
        [['z'], 3],
      ],
    ],
    [
      'keys with pointer escapes and prototype names',
      [[p('', {}), p('/~01~1', 1), p('/a.b', 2), p('/constructor', {}), p('/constructor/prototype', 3)]],
      [[[], { '~1/': 1, 'a.b': 2, constructor: { prototype: 3 } }]],
    ],
    [
      'an empty container stays empty when the next piece is not below it',
      [[p('', {})], [p('/e', {}), p('/l', []), p('/after', null)]],
      [
        [[], {}],
        [['e'], {}],
        [['l'], []],
        [['after'], null],
      ],
    ],
    [
      'a container closed by a shallower piece, then a sibling opened',
      [[p('', {}), p('/a', {})], [p('/a/b', {}), p('/a/b/c', 1), p('/a/d', 2), p('/e', [])], [p('/e/0', 0)]],
      [
        [[], { a: {} }],
        [['a', 'b'], { c: 1 }],
        [['a', 'd'], 2],
        [['e'], []],
        [['e', '0'], 0],
      ],
    ],
  ])('%s', (_, pages, expected) => {
    expect(run(pages).writes).toEqual(expected);
  });

  it('keeps only keys, kinds and lengths between pages', () => {
    const { state } = run([[p('', {}), p('/a', []), p('/a/0', {}), p('/a/0/b', 1)]]);
    expect(state).toEqual({
      started: true,
      open: [
        { key: '', kind: 'object', length: 0 },
        { key: 'a', kind: 'array', length: 1 },
        { key: '0', kind: 'object', length: 0 },
      ],
    });
    expect(JSON.stringify(state)).not.toContain('"b"');
  });

  const deep = (n: number) => Array.from({ length: n }, (_, i) => `/k${i}`).join('');
  const nested = (n: number): unknown => (n === 0 ? 1 : { k: nested(n - 1) });

  it.each<[string, unknown[][], RegExp]>([
    ['an empty page', [[]], /at least one piece/],
    ['a first piece not at the root', [[p('/a', 1)]], /first piece is the root/],
    ['a second root', [[p('', {})], [p('', {})]], /comes once/],
    ['a root that is not an object', [[p('', [1])]], /must be an object/],
    ['a member of a container sent whole', [[p('', { a: {} }), p('/a/b', 1)]], /not a member of an open container/],
    ['a member below a container never opened', [[p('', {}), p('/a/b', 1)]], /not a member of an open container/],
    ['a member of a container already closed', [[p('', {}), p('/a', {}), p('/b', 1), p('/a/c', 1)]], /not a member/],
    ['an array element out of order', [[p('', {}), p('/l', []), p('/l/1', 1)]], /expected index 0/],
    ['an array element repeated', [[p('', {}), p('/l', []), p('/l/0', 1), p('/l/0', 1)]], /expected index 1/],
    ['an array element named by a key', [[p('', {}), p('/l', []), p('/l/x', 1)]], /expected index 0/],
    ['__proto__ as a key in a path', [[p('', {}), p('/__proto__', 1)]], /__proto__/],
    ['__proto__ inside a value', [[p('', {}), p('/a', JSON.parse('{"__proto__": 1}'))]], /__proto__/],
    ['an empty key', [[p('', {}), p('/', 1)]], /empty/],
    ['a pointer without a leading slash', [[p('', {}), p('a', 1)]], /JSON Pointer/],
    ['a bad ~ escape', [[p('', {}), p('/a~2', 1)]], /JSON Pointer/],
    ['a path that is not a string', [[{ path: 1, value: 1 }]], /JSON Pointer string/],
    ['a piece without a value', [[{ path: '' }]], /missing/],
    ['a piece with another field', [[{ path: '', value: {}, op: 'add' }]], /only "path" and "value"/],
    ['a piece that is not an object', [['x']], /is an object/],
    ['a number out of range', [[p('', { n: 1e300 })]], /number/i],
    ['a path deeper than content may nest', [[p('', {}), p(deep(32), 1)]], /at most/],
    ['a value deeper than content may nest', [[p('', {}), p('/a', nested(31))]], /at most 32 levels/],
  ])('refuses %s: 400 INVALID_PIECES', (_, pages, message) => {
    const error = thrownBy(() => run(pages));
    expect([statusOf(error.code), error.code]).toEqual([400, 'INVALID_PIECES']);
    expect(error.message).toMatch(message);
  });

  it('refuses more pieces than a page holds', () => {
    const page = [p('', {}), ...Array.from({ length: 10_000 }, (_, i) => p(`/k${i}`, i))];
    expect(thrownBy(() => planPieces(NO_PIECES, page)).code).toBe('INVALID_PIECES');
  });

  it('changes nothing it is given: the same page planned twice plans the same', () => {
    const page = [p('', {}), p('/a', {}), p('/a/b', 1), p('/l', []), p('/l/0', [])];
    const copy = JSON.parse(JSON.stringify(page));
    const once = planPieces(NO_PIECES, page);
    expect(page).toEqual(copy);
    expect(planPieces(NO_PIECES, page)).toEqual(once);
  });

  it('leaves the state it was given as it was when a page is refused', () => {
    const state = run([[p('', {}), p('/l', [])]]).state;
    const copy = JSON.parse(JSON.stringify(state));
    thrownBy(() => planPieces(state, [p('/l/0', 1), p('/l/5', 1)]));
    expect(state).toEqual(copy);
  });
});

describe('groupWrites', () => {
  const w = (path: string, value: unknown) => ({ segments: path === '' ? [] : path.split('/'), value: value as never });
  const shape = (groups: ReturnType<typeof groupWrites>) =>
    groups.map((g) => (g.kind === 'replace' ? 'root' : g.writes.map((x) => x.segments.join('/')).join(',')));

  it.each<[string, ReturnType<typeof w>[], { maxWrites: number; maxBytes: number }, string[]]>([
    [
      'the root alone, then sets by parent',
      [w('', {}), w('a/0', 1), w('a/1', 2), w('b/x', 3)],
      { maxWrites: 10, maxBytes: 1000 },
      ['root', 'a/0,a/1', 'b/x'],
    ],
    [
      'at most maxWrites sets a group',
      [w('a/0', 1), w('a/1', 1), w('a/2', 1)],
      { maxWrites: 2, maxBytes: 1000 },
      ['a/0,a/1', 'a/2'],
    ],
    [
      'at most maxBytes a group (a larger set alone)',
      [w('a/x', 'y'.repeat(50)), w('a/y', 1), w('a/z', 'z'.repeat(200))],
      { maxWrites: 10, maxBytes: 200 },
      ['a/x,a/y', 'a/z'],
    ],
    [
      'a parent met again later is a group of its own',
      [w('a/x', 1), w('b/x', 1), w('a/y', 1)],
      { maxWrites: 10, maxBytes: 1000 },
      ['a/x', 'b/x', 'a/y'],
    ],
    ['nothing', [], { maxWrites: 10, maxBytes: 1000 }, []],
  ])('%s', (_, writes, limits, expected) => {
    expect(shape(groupWrites(writes, limits))).toEqual(expected);
    // The same page groups the same way every time: a page cut short goes on from the group it reached.
    expect(shape(groupWrites(writes, limits))).toEqual(shape(groupWrites([...writes], limits)));
  });
});
