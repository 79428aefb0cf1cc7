// Keys named like Object.prototype members (`constructor`, `toString`, `valueOf`, `hasOwnProperty`, ...) are plain
// data for every operation, on both engines: nothing finds them where the content has no such key, and what is
// stored under them reads back. (`__proto__` is the one reserved name: a 400.)
import { call, expectError, newProject, post, type Project } from '../support/api';

// ---- helpers (each integration file carries its own: only test files may be added) ----------------------------
const get = (p: Project, path?: string) =>
  call('GET', path === undefined ? p.content : `${p.content}?path=${encodeURIComponent(path)}`, { token: p.key });
// -----------------------------------------------------------------------------------------------------------------

const NAMES = Object.getOwnPropertyNames(Object.prototype).filter((name) => name !== '__proto__');

describe('keys named like Object.prototype members', () => {
  it('covers every member name', () => {
    expect(NAMES).toEqual(
      expect.arrayContaining([
        'constructor',
        'toString',
        'valueOf',
        'hasOwnProperty',
        'isPrototypeOf',
        '__defineGetter__',
        '__lookupSetter__',
      ]),
    );
  });

  it.each(NAMES)(
    '%s: missing until written, then set, push, insert, increment, decrement, get and delete as any key',
    async (k) => {
      const p = await newProject();
      const ok = async (op: string, body: unknown) =>
        expect({ op, ...(await post(p, op, body)) }).toMatchObject({ op, status: 200 });

      // Nothing there on `{}`: not at the root, not under an object, not under a key of the same name.
      for (const path of [k, `${k}.x`, `o.${k}`]) expectError(await get(p, path), 404, 'PATH_NOT_FOUND');
      await ok('set', { path: 'o', value: {} });
      expectError(await get(p, `o.${k}`), 404, 'PATH_NOT_FOUND');

      await ok('set', { path: `${k}.x`, value: 1 });
      await ok('push', { path: `${k}.l`, value: 'a' });
      await ok('insert', { path: `${k}.l`, value: 'z', index: 0 });
      await ok('increment', { path: `${k}.n`, value: 5 });
      await ok('decrement', { path: `${k}.n`, value: 2 });
      await ok('increment', { path: `o.${k}` });
      await ok('set', { path: `${k}.${k}.${k}`, value: true });
      await ok('push', { path: k === 'constructor' ? 'toString' : 'constructor', value: k });

      const other = k === 'constructor' ? 'toString' : 'constructor';
      const expected = { [k]: { x: 1, l: ['z', 'a'], n: 3, [k]: { [k]: true } }, o: { [k]: 1 }, [other]: [k] };
      expect((await get(p)).body).toEqual({ value: expected });
      for (const [path, value] of [
        [k, expected[k]],
        [`${k}.x`, 1],
        [`${k}.l`, ['z', 'a']],
        [`${k}.l.-1`, 'a'],
        [`${k}.n`, 3],
        [`${k}.${k}.${k}`, true],
        [`o.${k}`, 1],
      ] as Array<[string, unknown]>) {
        expect({ path, ...(await get(p, path)) }).toMatchObject({ path, status: 200, body: { value } });
      }
      expectError(await get(p, `${k}.x.${k}`), 404, 'PATH_NOT_FOUND');
      expectError(await post(p, 'set', { path: `o.${k}.${k}`, value: 1 }), 400, 'NOT_A_CONTAINER');

      await ok('delete', { path: `${k}.l.0` });
      await ok('delete', { path: `${k}.x` });
      expect((await get(p, k)).body).toEqual({ value: { l: ['a'], n: 3, [k]: { [k]: true } } });
      await ok('delete', { path: k });
      await ok('delete', { path: `o.${k}` });
      expect((await get(p)).body).toEqual({ value: { o: {}, [other]: [k] } });
      expectError(await get(p, k), 404, 'PATH_NOT_FOUND');
    },
  );

  it('__proto__ is reserved: a 400 as a segment and as a key, content unchanged', async () => {
    const p = await newProject();
    expectError(await post(p, 'set', { path: '__proto__.x', value: 1 }), 400, 'RESERVED_KEY');
    expectError(await post(p, 'set', { path: 'a', value: JSON.parse('{"__proto__":{"x":1}}') }), 400, 'RESERVED_KEY');
    expect((await get(p)).body).toEqual({ value: {} });
  });
});
