// POST content/insert: inserts into an array at an integer index in -length..length (Python's list.insert, minus
// the clamping: outside the range is a 400); a missing target is an empty array.
import { call, expectError, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
const MESSAGE = 'Value inserted successfully';

async function rejected(p: Project, body: unknown, status: number, code: string): Promise<void> {
  const before = await state(p);
  expectError(await post(p, 'insert', body), status, code);
  expect(await state(p)).toEqual(before);
}

async function rejectedRaw(p: Project, text: string, status: number, code: string): Promise<void> {
  const before = await state(p);
  const r = await call('POST', `${p.content}/insert`, {
    token: p.key,
    rawBody: text,
    headers: { 'content-type': 'application/json' },
  });
  expectError(r, status, code);
  expect(await state(p)).toEqual(before);
}

async function insert(p: Project, body: unknown): Promise<Reply> {
  const r = await post(p, 'insert', body);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
  expect(r.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  return r;
}
// -----------------------------------------------------------------------------------------------------------------

describe('POST content/insert', () => {
  describe('index semantics on [a, b, c] (like Python list.insert)', () => {
    it.each<[number, unknown[]]>([
      [0, ['x', 'a', 'b', 'c']],
      [1, ['a', 'x', 'b', 'c']],
      [2, ['a', 'b', 'x', 'c']],
      [3, ['a', 'b', 'c', 'x']],
      [-1, ['a', 'b', 'x', 'c']],
      [-2, ['a', 'x', 'b', 'c']],
      [-3, ['x', 'a', 'b', 'c']],
    ])('index %p', async (index, expected) => {
      const p = await project({ l: ['a', 'b', 'c'], other: 1 });
      await insert(p, { path: 'l', value: 'x', index });
      expect((await state(p)).value).toEqual({ l: expected, other: 1 });
    });

    it.each([4, 5, 100, -4, -5, -100])('index %p is outside -3..3: 400 INDEX_OUT_OF_RANGE', async (index) => {
      const p = await project({ l: ['a', 'b', 'c'] });
      await rejected(p, { path: 'l', value: 'x', index }, 400, 'INDEX_OUT_OF_RANGE');
    });
  });

  describe('empty and missing targets', () => {
    it('index 0 on an empty array', async () => {
      const p = await project({ l: [] });
      await insert(p, { path: 'l', value: 'x', index: 0 });
      expect((await state(p)).value).toEqual({ l: ['x'] });
    });

    it.each([1, -1])('index %p on an empty array is a 400 INDEX_OUT_OF_RANGE', async (index) => {
      const p = await project({ l: [] });
      await rejected(p, { path: 'l', value: 'x', index }, 400, 'INDEX_OUT_OF_RANGE');
    });

    it.each<[string, Record<string, unknown>, string, Record<string, unknown>]>([
      ['a missing top-level target', {}, 'l', { l: ['x'] }],
      ['a missing target below an object', { a: { keep: 1 } }, 'a.l', { a: { keep: 1, l: ['x'] } }],
      ['a missing target with missing parents', {}, 'a.b.c', { a: { b: { c: ['x'] } } }],
      ['a missing target named by an integer on an object', { o: {} }, 'o.0', { o: { '0': ['x'] } }],
    ])('%s is an empty array: index 0 creates [value]', async (_name, initial, path, expected) => {
      const p = await project(initial);
      await insert(p, { path, value: 'x', index: 0 });
      expect((await state(p)).value).toEqual(expected);
    });

    it.each([1, -1, 5])('index %p on a missing target (an empty array) is a 400 INDEX_OUT_OF_RANGE', async (index) => {
      const p = await project({ a: 1 });
      await rejected(p, { path: 'l', value: 'x', index }, 400, 'INDEX_OUT_OF_RANGE');
    });
  });

  describe('values and nested arrays', () => {
    it.each<[string, unknown]>([
      ['null', null],
      ['false', false],
      ['0', 0],
      ['an empty string', ''],
      ['an object', { k: [1, { m: null }] }],
      ['an array (inserted as one element)', [1, 2]],
      ['an empty array', []],
    ])('inserts %s', async (_name, value) => {
      const p = await project({ l: [1, 2] });
      await insert(p, { path: 'l', value, index: 1 });
      expect((await state(p)).value).toEqual({ l: [1, value, 2] });
    });

    it.each<[string, Record<string, unknown>, string, number, Record<string, unknown>]>([
      ['into an array inside an array', { m: [[1, 2], [3]] }, 'm.0', 1, { m: [[1, 'x', 2], [3]] }],
      [
        'into an array addressed by a negative index',
        { m: [[1, 2], [3]] },
        'm.-1',
        0,
        {
          m: [
            [1, 2],
            ['x', 3],
          ],
        },
      ],
      [
        'at the end of an array inside an object inside an array',
        { m: [{ l: [1] }] },
        'm.0.l',
        1,
        { m: [{ l: [1, 'x'] }] },
      ],
      ['into an array under an integer key of an object', { o: { '0': [1] } }, 'o.0', 0, { o: { '0': ['x', 1] } }],
      [
        'at the end of an array under an integer key of an object',
        { o: { '0': [1] } },
        'o.0',
        1,
        { o: { '0': [1, 'x'] } },
      ],
      [
        'in the middle of an array under an integer key of an object',
        { o: { '1': [1, 2] } },
        'o.1',
        1,
        { o: { '1': [1, 'x', 2] } },
      ],
      ['into an array under an escaped key', { 'a.b': [1] }, 'a\\.b', -1, { 'a.b': ['x', 1] }],
    ])('%s', async (_name, initial, path, index, expected) => {
      const p = await project(initial);
      await insert(p, { path, value: 'x', index });
      expect((await state(p)).value).toEqual(expected);
    });

    it('accepts 1.0 as the integer 1', async () => {
      const p = await project({ l: ['a', 'b'] });
      const r = await call('POST', `${p.content}/insert`, {
        token: p.key,
        rawBody: '{"path":"l","value":"x","index":1.0}',
        headers: { 'content-type': 'application/json' },
      });
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
      expect((await state(p)).value).toEqual({ l: ['a', 'x', 'b'] });
    });

    it('successive inserts keep their relative order', async () => {
      const p = await project({ l: [] });
      for (const [value, index] of [
        ['c', 0],
        ['a', 0],
        ['b', 1],
        ['d', 3],
        ['e', -1],
      ] as const) {
        await insert(p, { path: 'l', value, index });
      }
      expect((await state(p)).value).toEqual({ l: ['a', 'b', 'c', 'e', 'd'] });
    });
  });

  describe('rejections leave the content exactly as it was', () => {
    it.each<[string, Record<string, unknown>, unknown, string]>([
      ['index missing', { l: [1] }, { path: 'l', value: 'x' }, 'INVALID_INDEX'],
      ['index null', { l: [1] }, { path: 'l', value: 'x', index: null }, 'INVALID_INDEX'],
      ['index a numeric string', { l: [1] }, { path: 'l', value: 'x', index: '0' }, 'INVALID_INDEX'],
      ['index a boolean', { l: [1] }, { path: 'l', value: 'x', index: true }, 'INVALID_INDEX'],
      ['index an array', { l: [1] }, { path: 'l', value: 'x', index: [0] }, 'INVALID_INDEX'],
      ['index an object', { l: [1] }, { path: 'l', value: 'x', index: { i: 0 } }, 'INVALID_INDEX'],
      ['index fractional', { l: [1, 2] }, { path: 'l', value: 'x', index: 1.5 }, 'INVALID_INDEX'],
      ['index a negative fraction', { l: [1, 2] }, { path: 'l', value: 'x', index: -0.5 }, 'INVALID_INDEX'],
      ['index a tiny fraction', { l: [1, 2] }, { path: 'l', value: 'x', index: 0.0001 }, 'INVALID_INDEX'],
      ['value missing', { l: [1] }, { path: 'l', index: 0 }, 'MISSING_VALUE'],
      ['path missing', { l: [1] }, { value: 'x', index: 0 }, 'INVALID_PATH'],
      ['path not a string', { l: [1] }, { path: 5, value: 'x', index: 0 }, 'INVALID_PATH'],
      ['an unknown field', { l: [1] }, { path: 'l', value: 'x', index: 0, position: 1 }, 'UNKNOWN_FIELD'],
      ['target an object', { l: { a: 1 } }, { path: 'l', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target an empty object', { l: {} }, { path: 'l', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target a string', { l: 'abc' }, { path: 'l', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target a number', { l: 5 }, { path: 'l', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target null', { l: null }, { path: 'l', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target a boolean', { l: false }, { path: 'l', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target a scalar array element', { l: [1] }, { path: 'l.0', value: 'x', index: 0 }, 'NOT_AN_ARRAY'],
      ['target an object, at a non-zero index', { l: { a: 1 } }, { path: 'l', value: 'x', index: 1 }, 'NOT_AN_ARRAY'],
      [
        'target the root-level object of an array element',
        { m: [{ a: 1 }] },
        { path: 'm.-1', value: 'x', index: 0 },
        'NOT_AN_ARRAY',
      ],
      ['walking through a scalar', { a: 1 }, { path: 'a.b', value: 'x', index: 0 }, 'NOT_A_CONTAINER'],
      ['walking through a string', { a: 's' }, { path: 'a.b.c', value: 'x', index: 0 }, 'NOT_A_CONTAINER'],
      [
        'a missing array element in the path',
        { m: [[1]] },
        { path: 'm.5', value: 'x', index: 0 },
        'INDEX_OUT_OF_RANGE',
      ],
    ])('%s', async (_name, initial, body, code) => {
      const p = await project(initial);
      await rejected(p, body, 400, code);
    });

    it('index 1e400 (Infinity after parsing) is a 400 INVALID_INDEX', async () => {
      const p = await project({ l: [1] });
      await rejectedRaw(p, '{"path":"l","value":"x","index":1e400}', 400, 'INVALID_INDEX');
    });
  });
});
