// POST content/push: appends to the array at a path; a missing target becomes [value]; a non-array is a 400.
import { expectError, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
const MESSAGE = 'Object pushed successfully';

async function rejected(p: Project, body: unknown, status: number, code: string): Promise<void> {
  const before = await state(p);
  expectError(await post(p, 'push', body), status, code);
  expect(await state(p)).toEqual(before);
}

async function push(p: Project, body: unknown): Promise<Reply> {
  const r = await post(p, 'push', body);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
  expect(r.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  return r;
}
// -----------------------------------------------------------------------------------------------------------------

describe('POST content/push', () => {
  it.each<[string, Record<string, unknown>, string, unknown, Record<string, unknown>]>([
    ['appends to an array', { l: [1, 2] }, 'l', 3, { l: [1, 2, 3] }],
    ['appends to an empty array', { l: [] }, 'l', 'x', { l: ['x'] }],
    ['turns a missing top-level target into [value]', { a: 1 }, 'l', 'x', { a: 1, l: ['x'] }],
    ['creates missing parents as objects', {}, 'a.b.c', 'x', { a: { b: { c: ['x'] } } }],
    ['creates a missing target below an existing object', { a: { k: 1 } }, 'a.l', 'x', { a: { k: 1, l: ['x'] } }],
    ['pushes null (null is a value)', { l: [1] }, 'l', null, { l: [1, null] }],
    ['pushes false', { l: [] }, 'l', false, { l: [false] }],
    ['pushes 0', { l: [] }, 'l', 0, { l: [0] }],
    ['pushes an empty string', { l: [] }, 'l', '', { l: [''] }],
    ['pushes an object', { l: [] }, 'l', { id: 1, tags: ['a'] }, { l: [{ id: 1, tags: ['a'] }] }],
    ['pushes an array as one element', { l: [1] }, 'l', [2, 3], { l: [1, [2, 3]] }],
    ['pushes an empty array as one element', { l: [1] }, 'l', [], { l: [1, []] }],
    ['pushes onto an array inside an array', { m: [[1], [2]] }, 'm.0', 'x', { m: [[1, 'x'], [2]] }],
    ['pushes onto an array addressed by -1', { m: [[1], [2]] }, 'm.-1', 'x', { m: [[1], [2, 'x']] }],
    ['pushes onto an array inside an object inside an array', { m: [{ l: [] }] }, 'm.0.l', 'x', { m: [{ l: ['x'] }] }],
    ['pushes onto an array under an integer key of an object', { o: { '0': [] } }, 'o.0', 'x', { o: { '0': ['x'] } }],
    ['creates an array under an integer key of an object', { o: {} }, 'o.1', 'x', { o: { '1': ['x'] } }],
    ['pushes onto an array under an escaped key', { 'a.b': [] }, 'a\\.b', 'x', { 'a.b': ['x'] }],
  ])('%s', async (_name, initial, path, value, expected) => {
    const p = await project(initial);
    await push(p, { path, value });
    expect((await state(p)).value).toEqual(expected);
  });

  it('successive pushes keep their order', async () => {
    const p = await project();
    for (const value of ['a', 'b', 'c', 'd']) await push(p, { path: 'l', value });
    expect((await state(p)).value).toEqual({ l: ['a', 'b', 'c', 'd'] });
  });

  it.each<[string, Record<string, unknown>, unknown, string]>([
    ['target an object', { l: { a: 1 } }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target an empty object', { l: {} }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target a string', { l: 'abc' }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target an empty string', { l: '' }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target a number', { l: 1 }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target 0', { l: 0 }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target null', { l: null }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target true', { l: true }, { path: 'l', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target a scalar array element', { l: [1] }, { path: 'l.0', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target an object array element by -1', { l: [{}] }, { path: 'l.-1', value: 'x' }, 'NOT_AN_ARRAY'],
    ['target a nested object', { a: { b: { c: 1 } } }, { path: 'a.b', value: 'x' }, 'NOT_AN_ARRAY'],
    ['walking through a scalar', { a: 1 }, { path: 'a.b', value: 'x' }, 'NOT_A_CONTAINER'],
    ['walking through null', { a: null }, { path: 'a.b', value: 'x' }, 'NOT_A_CONTAINER'],
    ['walking through a scalar array element', { l: [1] }, { path: 'l.0.x', value: 'x' }, 'NOT_A_CONTAINER'],
    ['an array index beyond length in the path', { l: [] }, { path: 'l.3', value: 'x' }, 'INDEX_OUT_OF_RANGE'],
    ['a negative index beyond -length in the path', { l: [[1]] }, { path: 'l.-2', value: 'x' }, 'INDEX_OUT_OF_RANGE'],
    ['value missing', { l: [] }, { path: 'l' }, 'MISSING_VALUE'],
    ['path missing', { l: [] }, { value: 'x' }, 'INVALID_PATH'],
    ['path not a string', { l: [] }, { path: ['l'], value: 'x' }, 'INVALID_PATH'],
    ['an unknown field', { l: [] }, { path: 'l', value: 'x', index: 0 }, 'UNKNOWN_FIELD'],
  ])('%s is a 400, content unchanged', async (_name, initial, body, code) => {
    const p = await project(initial);
    await rejected(p, body, 400, code);
  });
});
