// Pages of an object's keys (GET content?shallow=true&limit=&after=, issue 28 item 10): every key exactly once, in
// the documented order (an object held whole: UTF-16 code units; a bucketed one: bucket by bucket, then UTF-16 code
// units), while keys are added and removed and buckets are cut between the pages. At the default segment size and at
// 256 bytes (`npm run test:segments`), on both engines.
import { bucketOf } from '../../lib/storage/layout/bucketed';
import { isBucketKey, isBucketStubKey } from '../../lib/storage/layout/keys';
import { decodeCursor } from '../../lib/content/key-pages';
import { Stub } from '../../lib/content/json';
import type { Segment } from '../../lib/storage/segment';
import { call, expectError, post, project, type Project } from '../support/api';
import { segmentsOf, strays } from '../support/segments';

// ---- helpers (each integration file carries its own: only test files may be added) ----------------------------
const keysPage = (p: Project, path: string, query: Record<string, string | number>) => {
  const q = Object.entries({ path, shallow: 'true', ...query })
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
  return call('GET', `${p.content}?${q}`, { token: p.key });
};

/** Every page of the keys at `path`, `limit` at a time; `between` runs after each page with its cursor. */
async function allPages(
  p: Project,
  path: string,
  limit: number,
  between?: (next: string, page: number) => Promise<void>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const r = await keysPage(p, path, after === undefined ? { limit } : { limit, after });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['next', 'value']);
    const keys = Object.keys(r.body.value);
    expect(Object.values(r.body.value).every((v) => v === true)).toBe(true);
    expect(keys.length).toBeLessThanOrEqual(limit);
    pages.push(keys);
    if (r.body.next === null) return pages;
    expect(typeof r.body.next).toBe('string');
    after = r.body.next as string;
    if (between) await between(after, pages.length);
    if (pages.length > 10_000) throw new Error('paging does not end');
  }
}

/**
 * The pages' keys in the order given, each page's keys put in `order` (a JSON object's members have no order: a
 * client's JSON.parse puts integer-like keys first): equal to `order` when each page is the next run of it.
 */
const inOrder = (pages: string[][], order: readonly string[]) => {
  const at = new Map(order.map((k, i) => [k, i]));
  const rank = (k: string) => at.get(k) ?? Number.POSITIVE_INFINITY;
  return pages.flatMap((page) => [...page].sort((a, b) => rank(a) - rank(b)));
};

/** UTF-16 code unit order (JavaScript's default sort). */
const utf16 = (keys: Iterable<string>) => [...keys].sort();

/** The bucketed object's bucket stub, found in the stored segments (the one bucketed object of the content). */
function bucketStubOf(segments: Segment[]): string {
  const stubs = segments
    .filter((s) => s.fragment instanceof Stub && isBucketStubKey(s.fragment.key) && !isBucketKey(s.key))
    .map((s) => (s.fragment as Stub).key);
  expect(stubs).toHaveLength(1);
  return stubs[0] as string;
}

/** The documented order of a bucketed object's keys, from its stored buckets: by bucket number, cut buckets in place. */
function storedOrder(segments: Segment[]): { order: string[]; cut: number } {
  const byKey = new Map(segments.map((s) => [s.key, s]));
  const order: string[] = [];
  let cut = 0;
  const visit = (stub: string) => {
    const fanout = Number(stub.slice(stub.lastIndexOf('#') + 1));
    for (let r = 0; r < fanout; r++) {
      const bucket = byKey.get(`${stub}/${r}/`) as Segment;
      expect(bucket).toBeDefined();
      if (bucket.fragment instanceof Stub) {
        cut++;
        visit(bucket.fragment.key);
      } else order.push(...utf16(Object.keys(bucket.fragment as object)));
    }
  };
  visit(bucketStubOf(segments));
  return { order, cut };
}

const member = (i: number) => `k${i.toString(36)}`;
/** A wide object: `n` small members (a few thousand: bucketed at any segment size). */
const wideObject = (n: number, from = 0) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [member(from + i), from + i]));
// -----------------------------------------------------------------------------------------------------------------

describe('GET content?shallow=true&limit=&after= on an object held whole', () => {
  // UTF-16 code unit order is not code point order: U+1D4B3 (a surrogate pair, D835 DCB3) comes before U+FF5E.
  const KEYS = ['b', 'a', 'B', '10', '2', '0', 'é', '\u{1D4B3}', '\uFF5E', 'x.y', 'constructor', '-1'];
  let p: Project;
  beforeAll(async () => {
    p = await project({ o: Object.fromEntries(KEYS.map((k, i) => [k, i])), l: [1, 2], n: 1, e: {} });
  });

  it('pages of one key give every key once, in UTF-16 code unit order; the last next is null', async () => {
    const pages = await allPages(p, 'o', 1);
    expect(pages.flat()).toEqual(utf16(KEYS));
    expect(utf16(KEYS).slice(0, 3)).toEqual(['-1', '0', '10']);
    expect(pages.flat().indexOf('\u{1D4B3}')).toBeLessThan(pages.flat().indexOf('\uFF5E'));
    expect(pages.every((page) => page.length === 1)).toBe(true);
  });

  it.each([5, 11, 12, 1000])('limit=%i: pages of that many, next null once all are given', async (limit) => {
    const pages = await allPages(p, 'o', limit);
    expect(inOrder(pages, utf16(KEYS))).toEqual(utf16(KEYS));
    expect(pages.length).toBe(Math.max(1, Math.ceil(KEYS.length / limit)));
  });

  it('an empty object: one empty page; shallow=true without limit answers as before', async () => {
    expect((await keysPage(p, 'e', { limit: 10 })).body).toEqual({ value: {}, next: null });
    expect((await call('GET', `${p.content}?path=e&shallow=true`, { token: p.key })).body).toEqual({ value: {} });
    const whole = await call('GET', `${p.content}?path=o&shallow=true`, { token: p.key });
    expect(whole.body).toEqual({ value: Object.fromEntries(KEYS.map((k) => [k, true])) });
  });

  it('after alone pages with the default limit; the root is an object too', async () => {
    const first = await keysPage(p, 'o', { limit: 3 });
    const rest = await call('GET', `${p.content}?path=o&shallow=true&after=${first.body.next}`, { token: p.key });
    expect(utf16(Object.keys(rest.body.value))).toEqual(utf16(utf16(KEYS).slice(3)));
    expect(rest.body.next).toBeNull();
    const root = await call('GET', `${p.content}?shallow=true&limit=2`, { token: p.key });
    expect(root.body).toEqual({ value: { e: true, l: true }, next: expect.any(String) });
  });

  it('keys added and removed between pages: a key present throughout is given exactly once', async () => {
    const q = await project({ o: Object.fromEntries(KEYS.map((k, i) => [k, i])) });
    const pages = await allPages(q, 'o', 4, async (_, page) => {
      if (page === 1) {
        await post(q, 'set', { path: 'o.0a', value: 1 }); // before the cursor: not given
        await post(q, 'set', { path: 'o.zz', value: 1 }); // after it: given
        await post(q, 'delete', { path: 'o.b' });
      }
    });
    const given = pages.flat();
    expect(new Set(given).size).toBe(given.length);
    for (const k of KEYS.filter((k) => k !== 'b')) expect(given).toContain(k);
    expect(given).toContain('zz');
    expect(given).not.toContain('0a');
  });
});

describe('GET content?shallow=true&limit=&after= on a bucketed object', () => {
  const N = 3000;
  let p: Project;
  let all: string[];
  beforeAll(async () => {
    p = await project({ docs: wideObject(N), meta: { v: 1 } });
    all = Object.keys(wideObject(N));
  });

  it.each([1000, 137])('limit=%i: every key exactly once, in bucket order then UTF-16 order', async (limit) => {
    const { order } = storedOrder(await segmentsOf(p));
    expect(utf16(order)).toEqual(utf16(all));
    const pages = await allPages(p, 'docs', limit);
    expect(inOrder(pages, order)).toEqual(order);
    // Every page but the last is full.
    expect(pages.slice(0, -1).every((page) => page.length === limit)).toBe(true);
  });

  it('in order across buckets cut into buckets of their own', async () => {
    const q = await project({ docs: wideObject(N) });
    // Long members into a few buckets, until some are cut: their keys then follow the buckets they were cut into.
    const stub = bucketStubOf(await segmentsOf(q));
    const target = new Set([`${stub}/0/`, `${stub}/1/`, `${stub}/5/`]);
    let added = 0;
    for (let i = 0; added < 60; i++) {
      const key = `long${i}`;
      if (!target.has(bucketOf(stub, key))) continue;
      expect((await post(q, 'set', { path: `docs.${key}`, value: 'v'.repeat(200) })).status).toBe(200);
      added++;
    }
    const { order, cut } = storedOrder(await segmentsOf(q));
    expect(cut).toBeGreaterThan(0);
    expect(order).toHaveLength(N + 60);
    expect(inOrder(await allPages(q, 'docs', 250), order)).toEqual(order);
    // Without a page: every key, as before.
    const whole = await call('GET', `${q.content}?path=docs&shallow=true`, { token: q.key });
    expect(utf16(Object.keys(whole.body.value))).toEqual(utf16(order));
  });

  it('keys added and removed between pages, and the bucket a cursor is in cut: present throughout, exactly once', async () => {
    const q = await project({ docs: wideObject(N) });
    const stub = bucketStubOf(await segmentsOf(q));
    const removed = new Set<string>();
    const addedKeys = new Set<string>();
    let serial = 0;
    const pages = await allPages(q, 'docs', 200, async (next, page) => {
      // Removed: a key of this Lambda's past and of its future, each page.
      for (const i of [page * 7, N - page * 11]) {
        if (removed.has(member(i))) continue;
        await post(q, 'delete', { path: `docs.${member(i)}` });
        removed.add(member(i));
      }
      // Added: a few new keys anywhere.
      for (let j = 0; j < 3; j++) {
        const key = `new${serial++}`;
        await post(q, 'set', { path: `docs.${key}`, value: j });
        addedKeys.add(key);
      }
      if (page === 3) {
        // The bucket this cursor ends in, grown until it is cut into buckets of its own.
        const cursor = decodeCursor(next);
        const bucket = `${stub}${cursor.bucket}`;
        let grown = 0;
        for (let i = 0; grown < 40; i++) {
          const key = `grow${i}`;
          if (bucketOf(stub, key) !== bucket.slice(0, bucket.indexOf('/', stub.length + 1) + 1)) continue;
          await post(q, 'set', { path: `docs.${key}`, value: 'g'.repeat(200) });
          addedKeys.add(key);
          grown++;
        }
        const cutNow = (await segmentsOf(q)).find((s) => s.key === bucket);
        expect(cutNow?.fragment).toBeInstanceOf(Stub);
      }
    });
    const given = pages.flat();
    expect(new Set(given).size).toBe(given.length);
    const throughout = all.filter((k) => !removed.has(k));
    const missing = throughout.filter((k) => !given.includes(k));
    expect(missing).toEqual([]);
    for (const k of given) expect(all.includes(k) || addedKeys.has(k)).toBe(true);
    expect(await strays(q)).toEqual({ orphans: [], dangling: [] });
  });

  it('a cursor of an object since rewritten whole is a 409 STALE_CURSOR; one of its old layout too', async () => {
    const q = await project({ docs: wideObject(N), small: { a: 1, b: 2 } });
    const first = await keysPage(q, 'docs', { limit: 10 });
    expect(first.status).toBe(200);
    expect((await post(q, 'update', { content: { docs: wideObject(N), small: { a: 1, b: 2 } } })).status).toBe(200);
    expectError(await keysPage(q, 'docs', { limit: 10, after: first.body.next }), 409, 'STALE_CURSOR');
    // A cursor of an object held whole, on a bucketed one, and the other way round.
    const held = await keysPage(q, 'small', { limit: 1 });
    expectError(await keysPage(q, 'docs', { limit: 10, after: held.body.next }), 409, 'STALE_CURSOR');
    const again = await keysPage(q, 'docs', { limit: 10 });
    expectError(await keysPage(q, 'small', { limit: 1, after: again.body.next }), 409, 'STALE_CURSOR');
  });
});

describe('GET content?shallow=true&limit=&after=: validation', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ l: [1, 2, 3], o: { a: 1, b: 2 }, n: 5, s: 'x' });
  });
  const b64 = (text: string) => Buffer.from(text).toString('base64url');

  it.each<[string, number, string]>([
    ['path=o&after=x', 400, 'INVALID_QUERY'],
    ['path=l&start=0&after=x', 400, 'INVALID_QUERY'],
    ['path=o&shallow=false&after=x', 400, 'INVALID_QUERY'],
    ['path=o&shallow=true&start=0', 400, 'INVALID_QUERY'],
    ['path=o&shallow=true&start=0&limit=5', 400, 'INVALID_QUERY'],
    ['path=o&shallow=true&limit=0', 400, 'INVALID_LIMIT'],
    ['path=o&shallow=true&limit=1001', 400, 'INVALID_LIMIT'],
    ['path=o&shallow=true&limit=01', 400, 'INVALID_LIMIT'],
    ['path=o&shallow=true&after=', 400, 'INVALID_CURSOR'],
    ['path=o&shallow=true&after=a%2Bb', 400, 'INVALID_CURSOR'],
    ['path=o&shallow=true&after=a&after=b', 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('not json')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('[]')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":""}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":"","k":5}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":"","k":"a","x":1}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":"","k":"a","b":"/1/"}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":"AAAAAAAAAAAAAAAA","k":"a"}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":"AAAAAAAAAAAAAAAA","b":"/../","k":"a"}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"__proto__":{"l":""},"k":"a"}')}`, 400, 'INVALID_CURSOR'],
    [`path=o&shallow=true&after=${b64('{"l":"AAAAAAAAAAAAAAAA","b":"/1/","k":"a"}')}`, 409, 'STALE_CURSOR'],
    ['path=l&shallow=true&limit=5', 400, 'NOT_AN_OBJECT'],
    [`path=n&shallow=true&after=${b64('{"l":"","k":"a"}')}`, 400, 'NOT_AN_OBJECT'],
    ['path=s&shallow=true&limit=1', 400, 'NOT_AN_OBJECT'],
    ['path=missing&shallow=true&limit=1', 404, 'PATH_NOT_FOUND'],
  ])('?%s is a %i %s', async (query, status, code) => {
    expectError(await call('GET', `${p.content}?${query}`, { token: p.key }), status, code);
  });

  it('after longer than 8,192 characters is a 400 INVALID_CURSOR', async () => {
    const r = await call('GET', `${p.content}?path=o&shallow=true&after=${'a'.repeat(8193)}`, { token: p.key });
    expectError(r, 400, 'INVALID_CURSOR');
  });

  it('a cursor that names a key no longer there still pages on from where it was', async () => {
    const after = b64(JSON.stringify({ l: '', k: 'a0' }));
    const r = await call('GET', `${p.content}?path=o&shallow=true&after=${after}`, { token: p.key });
    expect(r.body).toEqual({ value: { b: true }, next: null });
  });

  it('the credential is checked first: a bad cursor without one is a 401', async () => {
    expectError(await call('GET', `${p.content}?path=o&shallow=true&after=!`), 401, 'UNAUTHORIZED');
  });
});
