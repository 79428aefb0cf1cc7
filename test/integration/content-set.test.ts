// POST content/set: writes a value at a path, creating missing parents as objects; array indexes replace or append.
import { call, expectError, newProject, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
const MESSAGE = 'Value set successfully';

/** Sends the request, expects the error, and checks that content and version are exactly as before. */
async function rejected(p: Project, body: unknown, status: number, code: string): Promise<Reply> {
  const before = await state(p);
  const r = await post(p, 'set', body);
  expectError(r, status, code);
  expect(await state(p)).toEqual(before);
  return r;
}

async function set(p: Project, body: unknown): Promise<Reply> {
  const r = await post(p, 'set', body);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
  expect(r.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  return r;
}
// -----------------------------------------------------------------------------------------------------------------

describe('POST content/set', () => {
  it('answers exactly {"message": "Value set successfully"} with a new ETag that GET then reports', async () => {
    const p = await project();
    const before = await state(p);
    const r = await set(p, { path: 'data.item.name', value: 'x' });
    expect(Object.keys(r.body)).toEqual(['message']);
    expect(r.headers.get('etag')).not.toBe(before.etag);
    expect(await state(p)).toEqual({ value: { data: { item: { name: 'x' } } }, etag: r.headers.get('etag') });
  });

  it('a new project starts with {} as its content', async () => {
    const p = await newProject();
    expect((await state(p)).value).toEqual({});
  });

  describe('values: any JSON value is stored and read back unchanged', () => {
    it.each<[string, unknown]>([
      ['null (null is a value)', null],
      ['true', true],
      ['false', false],
      ['zero', 0],
      ['a negative integer', -42],
      ['a decimal', 3.14159],
      ['a large integer', 9007199254740991],
      ['a small exponent number', 1.5e-20],
      ['a large exponent number', 1.5e100],
      ['an empty string', ''],
      ['a unicode string', 'héllo wörld ✓ 🚀 日本語'],
      ['a string with JSON-ish characters', '{"a": [1, 2]} \\ " \n \t'],
      ['an empty array', []],
      ['an empty object', {}],
      ['an array of mixed values', [1, 'two', null, true, { three: 3 }, [4, [5]]]],
      ['a nested object', { a: { b: { c: [1, 2, { d: null }] } }, e: '' }],
      [
        'an object with odd keys',
        { 'a.b': 1, 'c\\d': 2, '0': 3, '-1': 4, ' ': 5, constructor: 6, prototype: 7, toString: 8 },
      ],
    ])('%s', async (_name, value) => {
      const p = await project();
      await set(p, { path: 'v', value });
      expect((await state(p)).value).toEqual({ v: value });
      const got = await call('GET', `${p.content}?path=v`, { token: p.key });
      expect(got.body).toEqual({ value });
    });
  });

  describe('semantics', () => {
    it.each<[string, Record<string, unknown>, string, unknown, Record<string, unknown>]>([
      ['creates a top-level key', {}, 'a', 1, { a: 1 }],
      ['creates every missing parent as an object', {}, 'data.item.name', 'x', { data: { item: { name: 'x' } } }],
      [
        'creates missing parents below an existing object',
        { a: { keep: 1 } },
        'a.b.c',
        2,
        { a: { keep: 1, b: { c: 2 } } },
      ],
      ['replaces a scalar', { a: 1, b: 2 }, 'a', 'new', { a: 'new', b: 2 }],
      ['replaces an object with a scalar', { a: { b: 1 } }, 'a', 5, { a: 5 }],
      ['replaces a scalar with an object', { a: 1 }, 'a', { b: [1] }, { a: { b: [1] } }],
      ['replaces an array as a whole', { a: [1, 2, 3] }, 'a', [9], { a: [9] }],
      ['adds a sibling, keeping the others', { a: { b: 1 } }, 'a.c', 2, { a: { b: 1, c: 2 } }],
      ['stores null over a value', { a: { b: 1 } }, 'a.b', null, { a: { b: null } }],
      ['replaces an array element by index', { l: [1, 2, 3] }, 'l.1', 'x', { l: [1, 'x', 3] }],
      ['replaces index 0', { l: [1, 2, 3] }, 'l.0', 'x', { l: ['x', 2, 3] }],
      ['replaces the last element with -1', { l: [1, 2, 3] }, 'l.-1', 'x', { l: [1, 2, 'x'] }],
      ['replaces the first element with -length', { l: [1, 2, 3] }, 'l.-3', 'x', { l: ['x', 2, 3] }],
      ['appends when index == length', { l: [1, 2, 3] }, 'l.3', 'x', { l: [1, 2, 3, 'x'] }],
      ['appends to an empty array with index 0', { l: [] }, 'l.0', 'x', { l: ['x'] }],
      [
        'appends a created object when index == length and the path goes on',
        { l: [1] },
        'l.1.k',
        'v',
        { l: [1, { k: 'v' }] },
      ],
      ['sets a key of an object inside an array', { l: [{ a: 1 }, { a: 2 }] }, 'l.1.a', 3, { l: [{ a: 1 }, { a: 3 }] }],
      ['sets through a negative index', { l: [{ a: 1 }, { a: 2 }] }, 'l.-2.b', 0, { l: [{ a: 1, b: 0 }, { a: 2 }] }],
      ['sets in nested arrays', { m: [[1, 2], [3]] }, 'm.1.0', 9, { m: [[1, 2], [9]] }],
      ['sets in nested arrays with negative indexes', { m: [[1, 2], [3]] }, 'm.-2.-1', 9, { m: [[1, 9], [3]] }],
      ['treats an integer segment on an object as a key', { o: { x: 1 } }, 'o.0', 'zero', { o: { x: 1, '0': 'zero' } }],
      [
        'treats a negative integer segment on an object as a key',
        { o: { '1': 'a' } },
        'o.-1',
        'x',
        { o: { '1': 'a', '-1': 'x' } },
      ],
      [
        'replaces an existing integer key of an object',
        { o: { '0': 'a', '1': 'b' } },
        'o.1',
        'x',
        { o: { '0': 'a', '1': 'x' } },
      ],
      ['treats an integer first segment as a key of the root', {}, '5', 1, { '5': 1 }],
      ['creates a missing parent named by an integer as an object', {}, 'a.0.b', 'x', { a: { '0': { b: 'x' } } }],
      ['treats a non-canonical integer segment on an object as a key', { o: {} }, 'o.01', 1, { o: { '01': 1 } }],
      ['reads \\. as a literal dot', {}, 'a\\.b', 1, { 'a.b': 1 }],
      ['reads \\. inside a longer path', { x: {} }, 'x.a\\.b.c', 1, { x: { 'a.b': { c: 1 } } }],
      ['reads \\\\ as a literal backslash', {}, 'a\\\\b', 1, { 'a\\b': 1 }],
      ['reads \\\\. as a backslash then a separator', {}, 'a\\\\.b', 1, { 'a\\': { b: 1 } }],
      ['keeps constructor an ordinary key', {}, 'constructor', 1, { constructor: 1 }],
      ['keeps prototype an ordinary key', {}, 'prototype.x', 1, { prototype: { x: 1 } }],
      ['does not see inherited members (toString) as existing', {}, 'toString.x', 1, { toString: { x: 1 } }],
      ['does not see inherited members (hasOwnProperty) as existing', {}, 'hasOwnProperty', 1, { hasOwnProperty: 1 }],
      ['accepts unicode and spaces in keys', {}, 'é ü.日本', 1, { 'é ü': { 日本: 1 } }],
    ])('%s', async (_name, initial, path, value, expected) => {
      const p = await project(initial);
      await set(p, { path, value });
      expect((await state(p)).value).toEqual(expected);
    });

    it('repeated sets of the same value keep the content the same but bump the version', async () => {
      const p = await project({ a: 1 });
      const first = await set(p, { path: 'a', value: 1 });
      const second = await set(p, { path: 'a', value: 1 });
      expect(second.headers.get('etag')).not.toBe(first.headers.get('etag'));
      expect(await state(p)).toEqual({ value: { a: 1 }, etag: second.headers.get('etag') });
    });
  });

  describe('rejections leave the content exactly as it was', () => {
    it.each<[string, Record<string, unknown>, unknown, number, string]>([
      ['an index beyond length', { l: [1, 2] }, { path: 'l.3', value: 'x' }, 400, 'INDEX_OUT_OF_RANGE'],
      ['an index far beyond length', { l: [1, 2] }, { path: 'l.100', value: 'x' }, 400, 'INDEX_OUT_OF_RANGE'],
      ['a negative index beyond -length', { l: [1, 2] }, { path: 'l.-3', value: 'x' }, 400, 'INDEX_OUT_OF_RANGE'],
      ['-1 on an empty array', { l: [] }, { path: 'l.-1', value: 'x' }, 400, 'INDEX_OUT_OF_RANGE'],
      [
        'an index beyond length with a longer path',
        { l: [] },
        { path: 'l.1.a', value: 'x' },
        400,
        'INDEX_OUT_OF_RANGE',
      ],
      ['walking through a number', { a: 5 }, { path: 'a.b', value: 1 }, 400, 'NOT_A_CONTAINER'],
      ['walking through a string', { a: 'text' }, { path: 'a.b', value: 1 }, 400, 'NOT_A_CONTAINER'],
      ['walking through a string with an index', { a: 'text' }, { path: 'a.0', value: 'x' }, 400, 'NOT_A_CONTAINER'],
      ['walking through null', { a: null }, { path: 'a.b', value: 1 }, 400, 'NOT_A_CONTAINER'],
      ['walking through true', { a: true }, { path: 'a.b', value: 1 }, 400, 'NOT_A_CONTAINER'],
      ['walking through false', { a: false }, { path: 'a.b.c', value: 1 }, 400, 'NOT_A_CONTAINER'],
      ['walking through 0', { a: 0 }, { path: 'a.b', value: 1 }, 400, 'NOT_A_CONTAINER'],
      [
        'walking through a deep scalar',
        { a: { b: { c: 1 } } },
        { path: 'a.b.c.d.e', value: 1 },
        400,
        'NOT_A_CONTAINER',
      ],
      ['walking through a scalar array element', { l: [1, 2] }, { path: 'l.0.x', value: 1 }, 400, 'NOT_A_CONTAINER'],
      [
        'walking through a scalar by a negative index',
        { l: [1, 2] },
        { path: 'l.-1.x', value: 1 },
        400,
        'NOT_A_CONTAINER',
      ],
      // Not settled by the docs: a non-integer segment on an array; the service answers INVALID_PATH.
      ['a non-integer segment on an array', { l: [1, 2] }, { path: 'l.x', value: 1 }, 400, 'INVALID_PATH'],
      ['a non-canonical integer (01) on an array', { l: [1, 2] }, { path: 'l.01', value: 1 }, 400, 'INVALID_PATH'],
      ['a value absent', { a: 1 }, { path: 'a' }, 400, 'MISSING_VALUE'],
      ['a path absent', { a: 1 }, { value: 1 }, 400, 'INVALID_PATH'],
      ['an unknown field', { a: 1 }, { path: 'a', value: 2, extra: true }, 400, 'UNKNOWN_FIELD'],
      ['an unknown field named index', { a: 1 }, { path: 'a', value: 2, index: 0 }, 400, 'UNKNOWN_FIELD'],
    ])('%s', async (_name, initial, body, status, code) => {
      const p = await project(initial);
      await rejected(p, body, status, code);
    });
  });
});
