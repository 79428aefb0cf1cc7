// Paths across every route: syntax (escapes, empty segments), type of the path field, depth, reserved keys,
// and keys that look like object prototype members.
import { call, expectError, MESSAGES, post, type Project, project, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
const PATH_OPS = ['set', 'insert', 'push', 'decrement', 'increment', 'delete'] as const;
type PathOp = (typeof PATH_OPS)[number];
const MESSAGE: Record<PathOp, string> = MESSAGES;

/** A minimal valid body for the operation around a path value (which may be anything, to test validation). */
const bodyFor = (op: PathOp, path: unknown): Record<string, unknown> => {
  switch (op) {
    case 'set':
    case 'push':
      return { path, value: 1 };
    case 'insert':
      return { path, value: 1, index: 0 };
    default:
      return { path };
  }
};

async function rejected(p: Project, op: string, body: unknown, status: number, code: string): Promise<void> {
  const before = await state(p);
  expectError(await post(p, op, body), status, code);
  expect(await state(p)).toEqual(before);
}

async function ok(p: Project, op: PathOp, body: unknown): Promise<void> {
  const r = await post(p, op, body);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
}

const get = (p: Project, path: string) =>
  call('GET', `${p.content}?path=${encodeURIComponent(path)}`, { token: p.key });

const segments = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);
/** {k0: {k1: ... {k(n-1): leaf}}} */
const nested = (keys: string[], leaf: unknown): unknown =>
  keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf);
// -----------------------------------------------------------------------------------------------------------------

const INITIAL = { a: { b: 1 }, l: [1, 2] };

describe('invalid paths are a 400 INVALID_PATH on every route, content unchanged', () => {
  const invalid: Array<[string, unknown]> = [
    ['missing', undefined],
    ['null', null],
    ['a number', 1],
    ['a boolean', true],
    ['an array', ['a', 'b']],
    ['an object', { a: 1 }],
    ['empty', ''],
    ['a single dot', '.'],
    ['an empty middle segment (a..b)', 'a..b'],
    ['a leading empty segment (.a)', '.a'],
    ['a trailing empty segment (a.)', 'a.'],
    ['only dots', '...'],
    ['an unknown escape (a\\x)', 'a\\x'],
    ['an escaped letter at the start (\\a)', '\\a'],
    ['an escaped digit (a\\1)', 'a\\1'],
    ['a trailing lone backslash (a\\)', 'a\\'],
    ['a lone backslash', '\\'],
    ['an escaped dot leaving an empty segment (a.\\..)', 'a.\\..'],
  ];
  const cases = PATH_OPS.flatMap((op) => invalid.map(([name, path]) => [op, name, path] as const));
  let p: Project;
  beforeAll(async () => {
    p = await project(INITIAL);
  });
  it.each(cases)('%s: path %s', async (op, _name, path) => {
    const body = bodyFor(op, path);
    if (path === undefined) delete body.path;
    await rejected(p, op, body, 400, 'INVALID_PATH');
  });
});

describe('GET ?path= with an invalid path is a 400', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project(INITIAL);
  });
  it.each<[string, string, string]>([
    ['empty', '', 'INVALID_PATH'],
    ['a..b', 'a..b', 'INVALID_PATH'],
    ['.a', '.a', 'INVALID_PATH'],
    ['a.', 'a.', 'INVALID_PATH'],
    ['a\\x', 'a\\x', 'INVALID_PATH'],
    ['a\\', 'a\\', 'INVALID_PATH'],
    ['__proto__', '__proto__', 'RESERVED_KEY'],
    ['a.__proto__', 'a.__proto__', 'RESERVED_KEY'],
    ['32 segments', segments(32).join('.'), 'PATH_TOO_DEEP'],
  ])('%s', async (_name, path, code) => {
    expectError(await get(p, path), 400, code);
  });
});

describe('escapes: \\. is a literal dot and \\\\ a literal backslash, on every route', () => {
  it.each<[PathOp, string, Record<string, unknown>, Record<string, unknown>]>([
    ['set', 'a\\.b', {}, { 'a.b': 1 }],
    ['insert', 'a\\.b', {}, { 'a.b': [1] }],
    ['push', 'a\\.b', {}, { 'a.b': [1] }],
    ['increment', 'a\\.b', {}, { 'a.b': 1 }],
    ['decrement', 'a\\.b', {}, { 'a.b': -1 }],
    ['delete', 'a\\.b', { 'a.b': 1, a: { b: 2 } }, { a: { b: 2 } }],
    ['delete', 'a.b', { 'a.b': 1, a: { b: 2 } }, { 'a.b': 1, a: {} }],
    ['set', 'x\\\\y', {}, { 'x\\y': 1 }],
    ['push', 'x\\\\y', {}, { 'x\\y': [1] }],
    ['increment', 'x\\\\.y', {}, { 'x\\': { y: 1 } }],
    ['delete', 'x\\\\y', { 'x\\y': 1, xy: 2 }, { xy: 2 }],
    ['set', 'a\\.b\\\\c.d\\.', {}, { 'a.b\\c': { 'd.': 1 } }],
    ['set', '\\.', {}, { '.': 1 }],
    ['set', '\\\\', {}, { '\\': 1 }],
  ])('%s %s', async (op, path, initial, expected) => {
    const p = await project(initial);
    await ok(p, op, bodyFor(op, path));
    expect((await state(p)).value).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['a\\.b', 1],
    ['x\\\\y', 2],
    ['n.c\\.d', 3],
  ])('GET ?path=%s reads the escaped key', async (path, value) => {
    const p = await project({ 'a.b': 1, a: { b: 'wrong' }, 'x\\y': 2, n: { 'c.d': 3 } });
    expect((await get(p, path)).body).toEqual({ value });
  });
});

describe('integer segments are ordinary keys on objects, also in the middle of a path, on every route', () => {
  // {o: {'0': {...}}}: the segment 0 names the key "0" of an object, never an array index.
  it.each<[PathOp, string, Record<string, unknown>, Record<string, unknown>]>([
    ['set', 'o.0.k', { o: { '0': { k: 1 } } }, { o: { '0': { k: 1 } } }],
    ['set', 'o.0.new', { o: { '0': { k: 1 } } }, { o: { '0': { k: 1, new: 1 } } }],
    ['set', 'o.0', { o: { '0': 'old', '1': 'keep' } }, { o: { '0': 1, '1': 'keep' } }],
    ['push', 'o.0.l', { o: { '0': { l: [0] } } }, { o: { '0': { l: [0, 1] } } }],
    ['push', 'o.0', { o: { '0': [0] } }, { o: { '0': [0, 1] } }],
    ['insert', 'o.0.l', { o: { '0': { l: [0] } } }, { o: { '0': { l: [1, 0] } } }],
    ['increment', 'o.0.n', { o: { '0': { n: 1 } } }, { o: { '0': { n: 2 } } }],
    ['increment', 'o.0', { o: { '0': 1 } }, { o: { '0': 2 } }],
    ['decrement', 'o.0.n', { o: { '0': { n: 1 } } }, { o: { '0': { n: 0 } } }],
    ['delete', 'o.0.n', { o: { '0': { n: 1, m: 2 } } }, { o: { '0': { m: 2 } } }],
    ['delete', 'o.0', { o: { '0': 1, '1': 2 } }, { o: { '1': 2 } }],
    ['delete', 'o.1', { o: { '0': 1, '1': 2 } }, { o: { '0': 1 } }],
    ['set', 'l.0.1.k', { l: [{ '1': { k: 0 } }] }, { l: [{ '1': { k: 1 } }] }],
    ['delete', 'l.0.1', { l: [{ '1': 'x', '2': 'y' }] }, { l: [{ '2': 'y' }] }],
  ])('%s %s', async (op, path, initial, expected) => {
    const p = await project(initial);
    await ok(p, op, bodyFor(op, path));
    expect((await state(p)).value).toEqual(expected);
  });
});

describe('depth: at most 31 path segments (32 levels counting the root and the leaf)', () => {
  it.each(['set', 'increment', 'decrement'] as const)('%s: a 31-segment path with a scalar is accepted', async (op) => {
    const p = await project();
    const keys = segments(31);
    await ok(p, op, bodyFor(op, keys.join('.')));
    const leaf = op === 'decrement' ? -1 : 1;
    expect((await state(p)).value).toEqual(nested(keys, leaf));
    expect((await get(p, keys.join('.'))).body).toEqual({ value: leaf });
  });

  it('delete: a 31-segment path is accepted and removes the leaf', async () => {
    const keys = segments(31);
    const p = await project(nested(keys, 1) as Record<string, unknown>);
    await ok(p, 'delete', { path: keys.join('.') });
    expect((await state(p)).value).toEqual(nested(keys.slice(0, 30), {}));
  });

  it.each(['insert', 'push'] as const)(
    '%s: a 30-segment path is accepted (the array is the 31st container)',
    async (op) => {
      const p = await project();
      const keys = segments(30);
      await ok(p, op, bodyFor(op, keys.join('.')));
      expect((await state(p)).value).toEqual(nested(keys, [1]));
    },
  );

  it.each(['insert', 'push'] as const)(
    '%s: a 31-segment path is a 400 VALUE_TOO_DEEP (the array would be a 32nd container)',
    async (op) => {
      const p = await project();
      await rejected(p, op, bodyFor(op, segments(31).join('.')), 400, 'VALUE_TOO_DEEP');
    },
  );

  it.each(PATH_OPS)('%s: a 32-segment path is a 400 PATH_TOO_DEEP', async (op) => {
    const p = await project({ k0: { k1: 1 } });
    await rejected(p, op, bodyFor(op, segments(32).join('.')), 400, 'PATH_TOO_DEEP');
  });

  it.each(PATH_OPS)('%s: a 100-segment path is a 400 PATH_TOO_DEEP', async (op) => {
    const p = await project();
    await rejected(p, op, bodyFor(op, segments(100).join('.')), 400, 'PATH_TOO_DEEP');
  });

  it('escaped dots do not count as separators (31 segments with escaped dots in them)', async () => {
    const p = await project();
    const keys = segments(31).map((k) => `${k}\\.x`);
    await ok(p, 'set', { path: keys.join('.'), value: 1 });
    expect((await state(p)).value).toEqual(
      nested(
        segments(31).map((k) => `${k}.x`),
        1,
      ),
    );
  });

  it('GET with a 31-segment path reads the leaf', async () => {
    const keys = segments(31);
    const p = await project(nested(keys, 'deep') as Record<string, unknown>);
    expect((await get(p, keys.join('.'))).body).toEqual({ value: 'deep' });
  });
});

describe('__proto__ is a 400 RESERVED_KEY as a path segment, on every route', () => {
  const paths = ['__proto__', 'a.__proto__', '__proto__.a', 'a.__proto__.b', 'l.__proto__'];
  const cases = PATH_OPS.flatMap((op) => paths.map((path) => [op, path] as const));
  let p: Project;
  beforeAll(async () => {
    p = await project(INITIAL);
  });
  it.each(cases)('%s %s', async (op, path) => {
    await rejected(p, op, bodyFor(op, path), 400, 'RESERVED_KEY');
  });

  it('an escaped __proto__\\. segment is an ordinary key', async () => {
    const q = await project();
    await ok(q, 'set', { path: '__proto__\\.x', value: 1 });
    expect((await state(q)).value).toEqual({ '__proto__.x': 1 });
  });
});

describe('keys named like prototype members are ordinary keys on every route', () => {
  it.each<[PathOp, string, Record<string, unknown>, Record<string, unknown>]>([
    ['set', 'constructor', {}, { constructor: 1 }],
    ['set', 'constructor.prototype', {}, { constructor: { prototype: 1 } }],
    ['push', 'constructor', {}, { constructor: [1] }],
    ['push', 'toString', {}, { toString: [1] }],
    ['insert', 'valueOf', {}, { valueOf: [1] }],
    ['increment', 'toString', {}, { toString: 1 }],
    ['decrement', 'hasOwnProperty', {}, { hasOwnProperty: -1 }],
    ['increment', 'a.constructor', { a: {} }, { a: { constructor: 1 } }],
    ['delete', 'constructor', { constructor: 1, b: 2 }, { b: 2 }],
    ['delete', 'toString', { a: 1 }, { a: 1 }],
    ['set', 'prototype.constructor.x', {}, { prototype: { constructor: { x: 1 } } }],
  ])('%s %s', async (op, path, initial, expected) => {
    const p = await project(initial);
    await ok(p, op, bodyFor(op, path));
    expect((await state(p)).value).toEqual(expected);
  });

  it.each(['constructor', 'toString', 'hasOwnProperty', 'prototype', 'a.constructor', 'a.toString'])(
    'GET ?path=%s on content without that key is a 404 PATH_NOT_FOUND',
    async (path) => {
      const p = await project({ a: {} });
      expectError(await get(p, path), 404, 'PATH_NOT_FOUND');
    },
  );

  it('a __proto__ attempt never pollutes Object.prototype in later requests', async () => {
    const p = await project();
    await post(p, 'set', { path: '__proto__.polluted', value: 'yes' });
    await call('POST', `${p.content}/set`, {
      token: p.key,
      rawBody: '{"path":"a","value":{"__proto__":{"polluted":"yes"}}}',
      headers: { 'content-type': 'application/json' },
    });
    await ok(p, 'set', { path: 'x', value: {} });
    expectError(await get(p, 'x.polluted'), 404, 'PATH_NOT_FOUND');
    expect((await state(p)).value).toEqual({ x: {} });
  });
});
