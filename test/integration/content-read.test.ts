// Reading large content (issue 14) and polling (issue 16) on GET content: shallow=true, array slices (start/limit),
// the query's validation, and If-None-Match (304). Shapes in one segment and over many (segments of 256 bytes under
// `npm run test:segments`).
import { DEFAULT_SLICE_LIMIT, MAX_SLICE_LIMIT } from '../../lib/config/limits';
import { call, expectError, post, project, type Project } from '../support/api';
import { segmentsOf } from '../support/segments';

// ---- helpers (each integration file carries its own: only test files may be added) ----------------------------
const read = (p: Project, query: Record<string, string | number | boolean>, headers?: Record<string, string>) => {
  const q = Object.entries(query)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
  return call('GET', q ? `${p.content}?${q}` : p.content, { token: p.key, headers });
};
/** Array.prototype.slice as the API documents it: negative from the end, clamped at 0; the page's resolved start. */
const page = (array: unknown[], start: number, limit: number) => {
  const from = start < 0 ? Math.max(0, array.length + start) : start;
  return { value: array.slice(from, from + limit), start: from, length: array.length };
};
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const text = (n: number, c = 'x') => c.repeat(n);
/** A content of objects of long strings: at any segment size, its sections move to segments of their own. */
const wide = (sections: number) =>
  Object.fromEntries(
    range(sections).map((s) => [`s${s}`, { n: s, ...Object.fromEntries(range(4).map((f) => [`f${f}`, text(300)])) }]),
  );
// -----------------------------------------------------------------------------------------------------------------

const CONTENT = {
  a: { b: { c: 'deep' }, n: 0, f: false, nil: null, s: '', e: {}, l: [] },
  l: [10, { k: 'v', m: [1, 2] }, [30, 31], 'last'],
  o: { '0': 'zero', '-1': 'minus one', 'x.y': 'dotted', constructor: 'own', toString: 'own too' },
  n: 7,
  s: 'text',
  t: true,
  z: null,
};

describe('GET content?shallow=true', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project(CONTENT);
  });

  it.each<[string | undefined, unknown]>([
    [undefined, { a: true, l: true, o: true, n: true, s: true, t: true, z: true }],
    ['a', { b: true, n: true, f: true, nil: true, s: true, e: true, l: true }],
    ['a.b', { c: true }],
    ['a.e', {}],
    ['o', { '0': true, '-1': true, 'x.y': true, constructor: true, toString: true }],
    ['l', { length: 4 }],
    ['a.l', { length: 0 }],
    ['l.1', { k: true, m: true }],
    ['l.1.m', { length: 2 }],
    ['l.-2', { length: 2 }],
    ['n', 7],
    ['s', 'text'],
    ['t', true],
    ['z', null],
    ['a.b.c', 'deep'],
    ['a.n', 0],
    ['a.f', false],
    ['a.s', ''],
    ['o.x\\.y', 'dotted'],
  ])('?path=%s: an object its keys each with true, an array {"length": n}, a scalar itself', async (path, value) => {
    const r = await read(p, path === undefined ? { shallow: true } : { path, shallow: true });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value } });
    expect(r.headers.get('etag')).toMatch(/^"[\w.-]+"$/);
  });

  it.each(['missing', 'a.missing', 'l.4', 'n.x', 'o.valueOf'])(
    '?path=%s that does not exist is a 404',
    async (path) => {
      expectError(await read(p, { path, shallow: true }), 404, 'PATH_NOT_FOUND');
    },
  );

  it('shallow=false is the whole value', async () => {
    const r = await read(p, { path: 'a', shallow: false });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value: CONTENT.a } });
  });

  it('over many segments: members held in child segments are keys like any other, at every level', async () => {
    const content = { ...wide(12), small: { x: 1 }, list: range(5) };
    const q = await project(content);
    expect((await segmentsOf(q)).length).toBeGreaterThan(1);
    const root = await read(q, { shallow: true });
    expect(root.body).toEqual({ value: Object.fromEntries(Object.keys(content).map((k) => [k, true])) });
    for (const s of ['s0', 's7', 's11']) {
      const r = await read(q, { path: s, shallow: true });
      expect({ status: r.status, body: r.body }).toEqual({
        status: 200,
        body: { value: { n: true, f0: true, f1: true, f2: true, f3: true } },
      });
      expect((await read(q, { path: `${s}.n`, shallow: true })).body).toEqual({ value: Number(s.slice(1)) });
    }
    expect((await read(q, { path: 'list', shallow: true })).body).toEqual({ value: { length: 5 } });
    // The full reads still give every value.
    expect((await read(q, {})).body).toEqual({ value: content });
  });
});

describe('GET content?start=&limit= (array slices)', () => {
  let p: Project;
  const LENGTHS = [0, 1, 5, DEFAULT_SLICE_LIMIT + 50];
  const arrays = Object.fromEntries(LENGTHS.map((n) => [`n${n}`, range(n)]));
  beforeAll(async () => {
    p = await project({
      ...arrays,
      mixed: [{ id: 1, tags: ['a'] }, [1, [2]], 'three', 4.5, null, true, {}],
      nested: { deeper: { log: range(12).map((i) => ({ i })) } },
      obj: { a: 1 },
      s: 'text',
      n: 3,
      z: null,
    });
  });

  // Every start from before the first element to past the end, with limits from 1 to past the length.
  it.each(LENGTHS)('an array of %i: every start and limit pages like Array.prototype.slice', async (n) => {
    const array = range(n);
    const starts = [...new Set([-n - 2, -n - 1, -n, -n + 1, -1, 0, 1, Math.floor(n / 2), n - 1, n, n + 1, 10 ** 14])];
    for (const start of starts) {
      for (const limit of [1, 2, n + 1, MAX_SLICE_LIMIT]) {
        const r = await read(p, { path: `n${n}`, start, limit });
        expect({ start, limit, status: r.status, body: r.body }).toEqual({
          start,
          limit,
          status: 200,
          body: page(array, start, limit),
        });
      }
    }
  });

  it('limit left out: the documented default; start left out: 0', async () => {
    const array = range(DEFAULT_SLICE_LIMIT + 50);
    const path = `n${DEFAULT_SLICE_LIMIT + 50}`;
    expect((await read(p, { path, start: 10 })).body).toEqual(page(array, 10, DEFAULT_SLICE_LIMIT));
    expect((await read(p, { path, limit: 3 })).body).toEqual(page(array, 0, 3));
    expect((await read(p, { path, start: -10 })).body).toEqual({
      value: array.slice(-10),
      start: array.length - 10,
      length: array.length,
    });
  });

  it('pages through an array to its end with start + value.length', async () => {
    const array = range(DEFAULT_SLICE_LIMIT + 50);
    const seen: unknown[] = [];
    for (let start = 0, length = Number.POSITIVE_INFINITY; start < length; ) {
      const r = await read(p, { path: `n${array.length}`, start, limit: 40 });
      expect(r.status).toBe(200);
      seen.push(...r.body.value);
      ({ length } = r.body);
      start = r.body.start + r.body.value.length;
    }
    expect(seen).toEqual(array);
  });

  it.each<[string, number, number, unknown]>([
    ['mixed', 0, 2, [{ id: 1, tags: ['a'] }, [1, [2]]]],
    ['mixed', -3, 2, [null, true]],
    ['mixed', 6, 5, [{}]],
    ['nested.deeper.log', -2, 5, [{ i: 10 }, { i: 11 }]],
    ['mixed.1', 1, 1, [[2]]],
  ])('?path=%s&start=%i&limit=%i: elements of any shape come whole', async (path, start, limit, value) => {
    const r = await read(p, { path, start, limit });
    expect({ status: r.status, body: r.body.value }).toEqual({ status: 200, body: value });
  });

  it.each([
    ['obj', { start: 0 }],
    ['s', { start: 0 }],
    ['n', { limit: 1 }],
    ['z', { start: 0, limit: 1 }],
    ['mixed.0', { start: 0 }],
    [undefined, { start: 0 }],
    [undefined, { limit: 5 }],
  ])('?path=%s: a slice of something that is no array is a 400 NOT_AN_ARRAY', async (path, query) => {
    expectError(await read(p, path === undefined ? query : { path, ...query }), 400, 'NOT_AN_ARRAY');
  });

  it.each(['missing', 'n5.9', 'obj.a.b'])('?path=%s that does not exist is a 404', async (path) => {
    expectError(await read(p, { path, start: 0 }), 404, 'PATH_NOT_FOUND');
  });

  it('an array under a member held in a child segment is sliced from that segment', async () => {
    const q = await project({ ...wide(8), deep: { pad: text(400), log: range(30) } });
    expect((await segmentsOf(q)).length).toBeGreaterThan(1);
    expect((await read(q, { path: 'deep.log', start: -5, limit: 2 })).body).toEqual(page(range(30), -5, 2));
    expect((await read(q, { path: 's3', start: 0 })).status).toBe(400);
  });
});

describe('GET content: query validation', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ l: [1, 2, 3], o: { a: 1 } });
  });

  it.each<[string, string]>([
    ['shallow=yes', 'INVALID_SHALLOW'],
    ['shallow=', 'INVALID_SHALLOW'],
    ['shallow', 'INVALID_SHALLOW'],
    ['shallow=TRUE', 'INVALID_SHALLOW'],
    ['shallow=1', 'INVALID_SHALLOW'],
    ['shallow=true&shallow=true', 'INVALID_SHALLOW'],
    ['start=', 'INVALID_START'],
    ['start=01', 'INVALID_START'],
    ['start=-0', 'INVALID_START'],
    ['start=%2B1', 'INVALID_START'],
    ['start=1.5', 'INVALID_START'],
    ['start=1.0', 'INVALID_START'],
    ['start=1e2', 'INVALID_START'],
    ['start=abc', 'INVALID_START'],
    ['start=%201', 'INVALID_START'],
    ['start=0x10', 'INVALID_START'],
    ['start=1234567890123456', 'INVALID_START'],
    ['start=-1234567890123456', 'INVALID_START'],
    ['start=1&start=2', 'INVALID_START'],
    ['limit=0', 'INVALID_LIMIT'],
    [`limit=${MAX_SLICE_LIMIT + 1}`, 'INVALID_LIMIT'],
    ['limit=-1', 'INVALID_LIMIT'],
    ['limit=', 'INVALID_LIMIT'],
    ['limit=01', 'INVALID_LIMIT'],
    ['limit=1.0', 'INVALID_LIMIT'],
    ['limit=9999', 'INVALID_LIMIT'],
    ['limit=ten', 'INVALID_LIMIT'],
    ['shallow=true&start=0', 'INVALID_QUERY'],
    ['shallow=true&start=-1&limit=5', 'INVALID_QUERY'],
    ['start=0&after=x', 'INVALID_QUERY'],
    // shallow=true with limit pages an object's keys (content-keys.test.ts): an array has none.
    ['shallow=true&limit=5', 'NOT_AN_OBJECT'],
    ['shallow=true&after=!', 'INVALID_CURSOR'],
    ['path=l..x&start=0', 'INVALID_PATH'],
    ['path=l.__proto__&shallow=true', 'RESERVED_KEY'],
  ])('?path=l&%s is a 400 %s', async (query, code) => {
    const prefix = query.startsWith('path=') ? '' : 'path=l&';
    expectError(await call('GET', `${p.content}?${prefix}${query}`, { token: p.key }), 400, code);
  });

  it.each(['1', '-3', '0', `${MAX_SLICE_LIMIT}`])('the boundaries are inclusive: limit=%s', async (limit) => {
    const r = await call('GET', `${p.content}?path=l&limit=${limit}`, { token: p.key });
    expect(r.status).toBe(limit === '1' || limit === `${MAX_SLICE_LIMIT}` ? 200 : 400);
  });

  it('shallow=false goes with a slice; unrelated parameters are ignored', async () => {
    const r = await call('GET', `${p.content}?path=l&shallow=false&start=1&other=x`, { token: p.key });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value: [2, 3], start: 1, length: 3 } });
  });

  it('the credential is checked first: a bad query without one is a 401, with a stranger one a 403', async () => {
    expectError(await call('GET', `${p.content}?shallow=maybe`), 401, 'UNAUTHORIZED');
    const other = await project();
    expectError(await call('GET', `${p.content}?start=x`, { token: other.owner }), 403, 'FORBIDDEN');
  });
});

describe('GET content with If-None-Match (polling)', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ l: [1, 2, 3], o: { a: 1 } });
  });

  const etagOf = async (query: Record<string, string | number | boolean>) => {
    const r = await read(p, query);
    expect(r.status).toBe(200);
    return r.headers.get('etag') as string;
  };

  it.each<[string, Record<string, string | number | boolean>]>([
    ['the whole content', {}],
    ['a path', { path: 'o' }],
    ['a shallow read', { path: 'o', shallow: true }],
    ['a slice', { path: 'l', start: -2 }],
  ])('%s: its own ETag answers 304 with the ETag and no body; any other a 200', async (_, query) => {
    const etag = await etagOf(query);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, `W/"x" ,W/${etag}`, '*']) {
      const r = await read(p, query, { 'if-none-match': header });
      expect({ header, status: r.status, text: r.text, etag: r.headers.get('etag') }).toEqual({
        header,
        status: 304,
        text: '',
        etag,
      });
    }
    for (const header of ['"other"', etag.slice(1, -1), `${etag}x`, 'W/', ',', '""']) {
      const r = await read(p, query, { 'if-none-match': header });
      expect({ header, status: r.status, etag: r.headers.get('etag') }).toEqual({ header, status: 200, etag });
      expect(r.body).toEqual((await read(p, query)).body);
    }
  });

  it('after a write changes the value: a 200 with the new value and ETag, then 304 on that one', async () => {
    const q = await project({ l: [1], o: { a: 1 } });
    const first = await read(q, { path: 'o' });
    expect((await post(q, 'set', { path: 'o.b', value: 2 })).status).toBe(200);
    const after = await read(q, { path: 'o' }, { 'if-none-match': first.headers.get('etag') as string });
    expect({ status: after.status, body: after.body }).toEqual({ status: 200, body: { value: { a: 1, b: 2 } } });
    expect(after.headers.get('etag')).not.toBe(first.headers.get('etag'));
    const again = await read(q, { path: 'o' }, { 'if-none-match': after.headers.get('etag') as string });
    expect({ status: again.status, text: again.text }).toEqual({ status: 304, text: '' });
    // A slice and a shallow read see a push, too.
    const slice = await read(q, { path: 'l', start: -1 });
    const shallow = await read(q, { path: 'l', shallow: true });
    expect((await post(q, 'push', { path: 'l', value: 9 })).status).toBe(200);
    const slice2 = await read(q, { path: 'l', start: -1 }, { 'if-none-match': slice.headers.get('etag') as string });
    expect({ status: slice2.status, body: slice2.body }).toEqual({
      status: 200,
      body: { value: [9], start: 1, length: 2 },
    });
    const shallow2 = await read(q, { path: 'l', shallow: true }, { 'if-none-match': shallow.headers.get('etag')! });
    expect({ status: shallow2.status, body: shallow2.body }).toEqual({ status: 200, body: { value: { length: 2 } } });
  });

  it('over many segments: a write to another segment leaves a value ETag as it is (304), one below it does not', async () => {
    const q = await project(wide(12));
    expect((await segmentsOf(q)).length).toBeGreaterThan(1);
    const s3 = await read(q, { path: 's3' });
    const whole = await read(q, {});
    expect((await post(q, 'set', { path: 's9.n', value: 90 })).status).toBe(200);
    expect((await read(q, { path: 's3' }, { 'if-none-match': s3.headers.get('etag')! })).status).toBe(304);
    expect((await read(q, {}, { 'if-none-match': whole.headers.get('etag')! })).status).toBe(200);
    expect((await post(q, 'set', { path: 's3.f1', value: 'changed' })).status).toBe(200);
    const changed = await read(q, { path: 's3' }, { 'if-none-match': s3.headers.get('etag')! });
    expect({ status: changed.status, f1: changed.body.value.f1 }).toEqual({ status: 200, f1: 'changed' });
  });

  it('* on a missing path is the GET: 404; If-None-Match never hides a 400', async () => {
    expectError(await read(p, { path: 'missing' }, { 'if-none-match': '*' }), 404, 'PATH_NOT_FOUND');
    expectError(await read(p, { path: 'l', start: 'x' }, { 'if-none-match': '*' }), 400, 'INVALID_START');
  });
});
