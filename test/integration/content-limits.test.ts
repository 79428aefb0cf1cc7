// Values and limits: nesting depth of values, numbers DynamoDB can store, keys, the content size (one item) and the
// request body size. The service checks these itself, so every engine must give the same answer at the boundaries.
import { baseUrl, call, expectError, MESSAGES, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
type ValueOp = 'set' | 'push' | 'insert';
const MESSAGE: Record<string, string> = MESSAGES;

const raw = (p: Project, op: string, text: string) =>
  call('POST', `${p.content}/${op}`, { token: p.key, rawBody: text, headers: { 'content-type': 'application/json' } });

async function rejected(p: Project, op: string, body: unknown, status: number, code: string): Promise<void> {
  const before = await state(p);
  expectError(typeof body === 'string' ? await raw(p, op, body) : await post(p, op, body), status, code);
  expect(await state(p)).toEqual(before);
}

async function ok(p: Project, op: string, body: unknown): Promise<Reply> {
  const r = typeof body === 'string' ? await raw(p, op, body) : await post(p, op, body);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
  return r;
}

const bodyFor = (op: ValueOp, path: string, value: unknown) =>
  op === 'insert' ? { path, value, index: 0 } : { path, value };
/** What the content holds at the path after the operation on a missing target. */
const storedFor = (op: ValueOp, value: unknown) => (op === 'set' ? value : [value]);

const segments = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);
const nestKeys = (keys: string[], leaf: unknown): unknown =>
  keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf);
/** n objects nested in one another: depth n ({} is depth 1). */
const objects = (n: number, leaf: unknown = 1): unknown => (n === 0 ? leaf : { d: objects(n - 1, leaf) });
/** n arrays nested in one another: depth n. */
const arrays = (n: number, leaf: unknown = 1): unknown => (n === 0 ? leaf : [arrays(n - 1, leaf)]);
// -----------------------------------------------------------------------------------------------------------------

describe('depth of values: objects and arrays nest at most 31 deep counting the root (32 levels with the leaves)', () => {
  // A value at a path of n segments sits below n containers (the root and n - 1 parents), so for set it may nest
  // 31 - n deep; push and insert wrap it in an array, leaving it one level less.
  const cases: Array<[ValueOp, number, number]> = [
    ['set', 1, 30],
    ['set', 10, 21],
    ['set', 30, 1],
    ['push', 1, 29],
    ['push', 29, 1],
    ['insert', 1, 29],
    ['insert', 29, 1],
  ];

  it.each(cases)('%s at a %i-segment path: a value nesting %i deep is accepted and read back', async (op, n, depth) => {
    for (const value of [objects(depth), arrays(depth)]) {
      const p = await project();
      const path = segments(n).join('.');
      await ok(p, op, bodyFor(op, path, value));
      expect((await state(p)).value).toEqual(nestKeys(segments(n), storedFor(op, value)));
    }
  });

  it.each(cases)(
    '%s at a %i-segment path: a value nesting %i + 1 deep is a 400 VALUE_TOO_DEEP',
    async (op, n, depth) => {
      const p = await project({ keep: 1 });
      const path = segments(n).join('.');
      await rejected(p, op, bodyFor(op, path, objects(depth + 1)), 400, 'VALUE_TOO_DEEP');
      await rejected(p, op, bodyFor(op, path, arrays(depth + 1)), 400, 'VALUE_TOO_DEEP');
      await rejected(p, op, bodyFor(op, path, { a: 1, b: [2, objects(depth)] }), 400, 'VALUE_TOO_DEEP');
    },
  );

  it('set at a 31-segment path: a scalar is accepted, {} and [] are a 400 VALUE_TOO_DEEP', async () => {
    const p = await project();
    const path = segments(31).join('.');
    await rejected(p, 'set', { path, value: {} }, 400, 'VALUE_TOO_DEEP');
    await rejected(p, 'set', { path, value: [] }, 400, 'VALUE_TOO_DEEP');
    await ok(p, 'set', { path, value: 'leaf' });
    expect((await state(p)).value).toEqual(nestKeys(segments(31), 'leaf'));
  });

  it('push at a 30-segment path: a scalar is accepted, {} is a 400 VALUE_TOO_DEEP', async () => {
    const p = await project();
    const path = segments(30).join('.');
    await rejected(p, 'push', { path, value: {} }, 400, 'VALUE_TOO_DEEP');
    await ok(p, 'push', { path, value: 'leaf' });
    expect((await state(p)).value).toEqual(nestKeys(segments(30), ['leaf']));
  });

  it('update: content nesting 31 deep (the root included) is accepted and read back, on both shapes', async () => {
    for (const content of [objects(31) as Record<string, unknown>, { a: arrays(30) }]) {
      const p = await project();
      await ok(p, 'update', { content });
      expect((await state(p)).value).toEqual(content);
    }
  });

  it('update: content nesting 32 deep is a 400 VALUE_TOO_DEEP', async () => {
    const p = await project({ keep: 1 });
    await rejected(p, 'update', { content: objects(32) }, 400, 'VALUE_TOO_DEEP');
    await rejected(p, 'update', { content: { a: arrays(31) } }, 400, 'VALUE_TOO_DEEP');
    await rejected(p, 'update', { content: { a: 1, b: { c: [objects(29)] } } }, 400, 'VALUE_TOO_DEEP');
  });

  it('the depth of the existing content above the path is counted by the path, not by the value alone', async () => {
    // 20 levels exist; setting a 10-deep value at the 21st segment reaches 31 containers: accepted; 11 is not.
    const p = await project(nestKeys(segments(20), {}) as Record<string, unknown>);
    const path = segments(21).join('.');
    await rejected(p, 'set', { path, value: objects(11) }, 400, 'VALUE_TOO_DEEP');
    await ok(p, 'set', { path, value: objects(10) });
    expect((await state(p)).value).toEqual(nestKeys(segments(21), objects(10)));
  });

  it('a hostile depth (10000 levels) is a 400 VALUE_TOO_DEEP, not a crash', async () => {
    const p = await project({ keep: 1 });
    const text = `{"path":"a","value":${'['.repeat(10000)}${']'.repeat(10000)}}`;
    await rejected(p, 'set', text, 400, 'VALUE_TOO_DEEP');
  });
});

describe('numbers: 0, or a magnitude from 1e-130 up to (excluding) 1e126', () => {
  const accepted: Array<[string, string, number]> = [
    ['0', '0', 0],
    ['9.99e125', '9.99e125', 9.99e125],
    ['-9.99e125', '-9.99e125', -9.99e125],
    ['9.99999999999999e125', '9.99999999999999e125', 9.99999999999999e125],
    ['1e-130', '1e-130', 1e-130],
    ['-1e-130', '-1e-130', -1e-130],
    ['1.5e-130', '1.5e-130', 1.5e-130],
    ['1e125', '1e125', 1e125],
    ['123456789012345680000', '123456789012345680000', 123456789012345680000],
    ['0.1', '0.1', 0.1],
    ['-0.000001', '-0.000001', -0.000001],
    ['MAX_SAFE_INTEGER', '9007199254740991', 9007199254740991],
    ['1.7976931348623157e-100', '1.7976931348623157e-100', 1.7976931348623157e-100],
    ['9.999999999999999e125 (16 digits: below 1e126, exactly)', '9.999999999999999e125', 9.999999999999999e125],
  ];
  const rejectedNumbers: Array<[string, string]> = [
    ['1e126', '1e126'],
    ['-1e126', '-1e126'],
    ['1e127', '1e127'],
    ['Number.MAX_VALUE', '1.7976931348623157e308'],
    ['1e-131', '1e-131'],
    ['-1e-131', '-1e-131'],
    ['9.99e-131', '9.99e-131'],
    ['5e-324', '5e-324'],
    ['1e400 (Infinity once parsed)', '1e400'],
    ['-1e400 (-Infinity once parsed)', '-1e400'],
  ];

  it.each(accepted)('set %s is stored and read back', async (_name, literal, value) => {
    const p = await project();
    await ok(p, 'set', `{"path":"n","value":${literal}}`);
    expect((await state(p)).value).toEqual({ n: value });
  });

  it.each(rejectedNumbers)('set %s is a 400 NUMBER_OUT_OF_RANGE', async (_name, literal) => {
    const p = await project({ keep: 1 });
    await rejected(p, 'set', `{"path":"n","value":${literal}}`, 400, 'NUMBER_OUT_OF_RANGE');
  });

  it.each<[string, string]>([
    ['set, nested in an object', '{"path":"a","value":{"b":{"c":1e126}}}'],
    ['set, nested in an array', '{"path":"a","value":[1,2,[3,1e-131]]}'],
    ['push', '{"path":"l","value":1e126}'],
    ['push, nested', '{"path":"l","value":{"n":-1e400}}'],
    ['insert', '{"path":"l","value":1e-131,"index":0}'],
    ['update', '{"content":{"a":[{"b":1e126}]}}'],
  ])('%s: an out-of-range number anywhere in the value is a 400 NUMBER_OUT_OF_RANGE', async (name, text) => {
    const p = await project({ keep: 1 });
    await rejected(p, name.split(',')[0] as string, text, 400, 'NUMBER_OUT_OF_RANGE');
  });
});

describe('object keys', () => {
  it.each<[string, string, string]>([
    ['set: an empty key', '{"path":"a","value":{"":1}}', 'EMPTY_KEY'],
    ['set: a nested empty key', '{"path":"a","value":{"b":[{"":1}]}}', 'EMPTY_KEY'],
    ['push: an empty key', '{"path":"l","value":{"":1}}', 'EMPTY_KEY'],
    ['insert: an empty key', '{"path":"l","value":{"":1},"index":0}', 'EMPTY_KEY'],
    ['update: an empty key', '{"content":{"a":{"":1}}}', 'EMPTY_KEY'],
    ['set: a __proto__ key', '{"path":"a","value":{"__proto__":{"x":1}}}', 'RESERVED_KEY'],
    ['set: a nested __proto__ key', '{"path":"a","value":{"b":{"__proto__":1}}}', 'RESERVED_KEY'],
    ['set: a __proto__ key inside an array', '{"path":"a","value":[1,{"__proto__":[]}]}', 'RESERVED_KEY'],
    ['push: a __proto__ key', '{"path":"l","value":{"__proto__":1}}', 'RESERVED_KEY'],
    ['insert: a __proto__ key', '{"path":"l","value":{"__proto__":1},"index":0}', 'RESERVED_KEY'],
    ['update: a __proto__ key', '{"content":{"__proto__":{"x":1}}}', 'RESERVED_KEY'],
  ])('%s is a 400 %s', async (name, text, code) => {
    const p = await project({ keep: 1 });
    await rejected(p, name.split(':')[0] as string, text, 400, code);
  });

  it('a top-level __proto__ field in the request body is an unknown field, never a prototype', async () => {
    const p = await project({ keep: 1 });
    await rejected(p, 'set', '{"path":"a","value":1,"__proto__":{"path":"b"}}', 400, 'UNKNOWN_FIELD');
  });

  // Not in the docs: the service caps keys at 1024 characters and paths at 2048 characters.
  it('a key of 1024 characters is accepted in a path and in a value', async () => {
    const p = await project();
    const key = 'k'.repeat(1024);
    await ok(p, 'set', { path: key, value: 1 });
    await ok(p, 'set', { path: 'v', value: { [key]: 2 } });
    expect((await state(p)).value).toEqual({ [key]: 1, v: { [key]: 2 } });
  });

  it.each<[string, unknown, string]>([
    ['a path segment of 1025 characters', { path: 'k'.repeat(1025), value: 1 }, 'INVALID_PATH'],
    [
      'a path of 2049 characters',
      { path: `${Array.from({ length: 20 }, () => 'p'.repeat(101)).join('.')}${'x'.repeat(10)}`, value: 1 },
      'INVALID_PATH',
    ],
    ['a value key of 1025 characters', { path: 'v', value: { ['k'.repeat(1025)]: 1 } }, 'KEY_TOO_LONG'],
  ])('%s is a 400 %s', async (_name, body, code) => {
    const p = await project({ keep: 1 });
    await rejected(p, 'set', body, 400, code);
  });

  it('a path of 2048 characters is accepted', async () => {
    const p = await project();
    const path =
      Array.from({ length: 31 }, (_, i) => `${String(i).padStart(2, '0')}${'z'.repeat(62)}`).join('.') +
      'y'.repeat(2048 - 31 * 64 - 30);
    expect(path).toHaveLength(2048);
    await ok(p, 'set', { path, value: 1 });
  });

  it('keys made of a space, a dot, a backslash or digits are ordinary keys', async () => {
    const p = await project();
    const value = { ' ': 1, '.': 2, '\\': 3, '0': 4, 'a.b.c': 5, '\u0000': 6 };
    await ok(p, 'set', { path: 'v', value });
    expect((await state(p)).value).toEqual({ v: value });
  });
});

describe('one value that stays whole (a string, an array element) holds at most 350 KiB (358400 bytes) as DynamoDB counts them; beyond is a 413 that changes nothing; the content around it grows on', () => {
  const LIMIT = 350 * 1024;
  // {"big": "<s>"} counts 3 (map) + 1 (element) + 3 (key "big") + s bytes.
  const fits = LIMIT - 7;

  it('a string member of exactly 358400 bytes (with its object) is accepted; one more byte is a 413 CONTENT_TOO_LARGE', async () => {
    const p = await project();
    await rejected(p, 'set', { path: 'big', value: 'x'.repeat(fits + 1) }, 413, 'CONTENT_TOO_LARGE');
    await ok(p, 'set', { path: 'big', value: 'x'.repeat(fits) });
    expect(((await state(p)).value as { big: string }).big).toHaveLength(fits);
    // The object is bucketed around it: its other members grow the content past what one segment holds.
    await ok(p, 'set', { path: 'more', value: 1 });
    await ok(p, 'push', { path: 'l', value: 'x' });
    await ok(p, 'insert', { path: 'l', value: 'w', index: 0 });
    await ok(p, 'increment', { path: 'n' });
    await ok(p, 'set', { path: 'other', value: 'o'.repeat(fits - 10) });
    await rejected(p, 'set', { path: 'big', value: 'x'.repeat(fits + 1) }, 413, 'CONTENT_TOO_LARGE');
    const { value } = (await state(p)) as { value: Record<string, unknown> };
    expect({ ...value, big: (value.big as string).length, other: (value.other as string).length }).toEqual({
      big: fits,
      more: 1,
      l: ['w', 'x'],
      n: 1,
      other: fits - 10,
    });
    await ok(p, 'delete', { path: 'big' });
    await ok(p, 'delete', { path: 'other' });
    expect((await state(p)).value).toEqual({ more: 1, l: ['w', 'x'], n: 1 });
  });

  it('sizes count UTF-8 bytes, not characters', async () => {
    const p = await project();
    // "é" is 2 bytes: half as many characters as the ASCII limit, plus one, is one byte too many.
    await rejected(p, 'set', { path: 'big', value: 'é'.repeat((fits + 1) / 2) }, 413, 'CONTENT_TOO_LARGE');
    await ok(p, 'set', { path: 'big', value: `${'é'.repeat((fits - 1) / 2)}x` });
    expect(((await state(p)).value as { big: string }).big).toHaveLength((fits - 1) / 2 + 1);
  });

  it('update with a value over the limit is a 413 CONTENT_TOO_LARGE; at the limit it is accepted', async () => {
    const p = await project({ keep: 1 });
    await rejected(p, 'update', { content: { big: 'x'.repeat(fits + 1) } }, 413, 'CONTENT_TOO_LARGE');
    await ok(p, 'update', { content: { big: 'x'.repeat(fits) } });
  });

  // Bodies under the 512 KiB body limit with one value that stays whole and is more than a DynamoDB item (400 KB).
  const oversized: Array<[string, string, () => unknown]> = [
    ...(['set', 'push', 'insert', 'update'] as const).map(
      (op) => [op, 'a 420 KiB string', () => 'x'.repeat(420 * 1024)] as [string, string, () => unknown],
    ),
    // As one array element (push and insert add their value as one element), 59000 small objects stay whole.
    ...(['push', 'insert'] as const).map(
      (op) =>
        [op, 'an element of 59000 small objects', () => Array.from({ length: 59000 }, () => ({ a: 1 }))] as [
          string,
          string,
          () => unknown,
        ],
    ),
  ];
  it.each(oversized)('%s with %s (more than one item holds) is a 413 CONTENT_TOO_LARGE', async (op, _name, make) => {
    const p = await project({ keep: 1 });
    const value = make();
    const body =
      op === 'update'
        ? { content: { v: value } }
        : op === 'insert'
          ? { path: 'v', value, index: 0 }
          : { path: 'v', value };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(512 * 1024);
    await rejected(p, op, body, 413, 'CONTENT_TOO_LARGE');
  });

  it.each(['set', 'update'])(
    '%s with an array of 59000 small objects (more than one item holds) is chunked and read back',
    async (op) => {
      const p = await project({ keep: 1 });
      const value = Array.from({ length: 59000 }, (_, i) => ({ a: i % 10 }));
      await ok(p, op, op === 'update' ? { content: { keep: 1, v: value } } : { path: 'v', value });
      expect((await state(p)).value).toEqual({ keep: 1, v: value });
    },
  );

  it('replacing a large value again and again never counts the old copies', async () => {
    const p = await project();
    for (let i = 0; i < 6; i++) await ok(p, 'set', { path: 'big', value: String(i).repeat(100 * 1024) });
    expect(((await state(p)).value as { big: string }).big).toBe('5'.repeat(100 * 1024));
  });

  it('pushes of 100 KiB elements go on past what one segment holds (the array is chunked); an element over the limit is a 413', async () => {
    const p = await project();
    const chunk = (i: number) => String(i).repeat(100 * 1024);
    for (let i = 0; i < 6; i++) await ok(p, 'push', { path: 'l', value: chunk(i) });
    await rejected(p, 'push', { path: 'l', value: 'z'.repeat(fits + 10) }, 413, 'CONTENT_TOO_LARGE');
    expect(((await state(p)).value as { l: string[] }).l).toEqual(Array.from({ length: 6 }, (_, i) => chunk(i)));
  });
});

describe('request body size: at most 512 KiB', () => {
  const LIMIT = 512 * 1024;
  const padded = (json: string, bytes: number) => json + ' '.repeat(bytes - Buffer.byteLength(json));

  it('a body of exactly 512 KiB is read (here padded with whitespace: accepted)', async () => {
    const p = await project();
    await ok(p, 'set', padded('{"path":"a","value":1}', LIMIT));
    expect((await state(p)).value).toEqual({ a: 1 });
  });

  it.each(['set', 'insert', 'push', 'decrement', 'increment', 'delete', 'update'])(
    '%s: a body of 512 KiB + 1 byte is a 413 PAYLOAD_TOO_LARGE',
    async (op) => {
      const p = await project({ keep: 1 });
      await rejected(p, op, padded('{"path":"a","value":1}', LIMIT + 1), 413, 'PAYLOAD_TOO_LARGE');
    },
  );

  it('a 2 MiB body is a 413 PAYLOAD_TOO_LARGE', async () => {
    const p = await project({ keep: 1 });
    await rejected(
      p,
      'set',
      JSON.stringify({ path: 'a', value: 'z'.repeat(2 * 1024 * 1024) }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('the body size counts bytes: 512 KiB of characters that take 2 bytes each is too large', async () => {
    const p = await project({ keep: 1 });
    const text = JSON.stringify({ path: 'a', value: 'é'.repeat(LIMIT / 2) });
    expect(text.length).toBeLessThan(LIMIT);
    await rejected(p, 'set', text, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a body without a Content-Type is limited the same way', async () => {
    const p = await project({ keep: 1 });
    const before = await state(p);
    const res = await fetch(`${baseUrl()}${p.content}/set`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.key}` },
      body: new TextEncoder().encode(padded('{"path":"a","value":1}', LIMIT + 1)),
    });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 413,
      body: { message: expect.any(String), code: 'PAYLOAD_TOO_LARGE' },
    });
    expect(await state(p)).toEqual(before);
  });
});

describe('content beyond one item, and what one GET returns', () => {
  it('grows past 4 MiB in parts; a GET of more than 4 MiB is a 413 RESPONSE_TOO_LARGE, its parts are read one by one', async () => {
    const p = await project({});
    const part = (i: number) =>
      Object.fromEntries(Array.from({ length: 48 }, (_, k) => [`k${k}`, { i, body: 'x'.repeat(9000) }]));
    // Ten sets of ~430 KB each: about 4.3 MB of content, past what one GET returns.
    for (let i = 0; i < 10; i++) await ok(p, 'set', { path: `p${i}`, value: part(i) });
    const whole = await call('GET', p.content, { token: p.key });
    expectError(whole, 413, 'RESPONSE_TOO_LARGE');
    for (const i of [0, 9]) {
      const r = await call('GET', `${p.content}?path=p${i}`, { token: p.key });
      expect({ status: r.status, value: r.body.value }).toEqual({ status: 200, value: part(i) });
    }
    await ok(p, 'delete', { path: 'p9' });
    await ok(p, 'delete', { path: 'p8' });
    const smaller = await call('GET', p.content, { token: p.key });
    expect(smaller.status).toBe(200);
    expect(Object.keys(smaller.body.value).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
  }, 120_000);
});
