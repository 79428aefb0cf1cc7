// HTTP behaviour shared by every route: response headers, CORS (preflight and actual responses), ETag versions
// and If-Match preconditions.
import { call, expectError, MESSAGES, newUser, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
type Op = 'set' | 'insert' | 'push' | 'decrement' | 'increment' | 'delete' | 'update';
const MESSAGE: Record<Op, string> = MESSAGES;
const OPS = Object.keys(MESSAGE) as Op[];

/** A body that changes INITIAL, for each route, and the content it leads to. */
const CHANGE: Record<Op, [Record<string, unknown>, Record<string, unknown>]> = {
  set: [
    { path: 'a', value: 2 },
    { a: 2, l: [1], n: 5 },
  ],
  insert: [
    { path: 'l', value: 0, index: 0 },
    { a: 1, l: [0, 1], n: 5 },
  ],
  push: [
    { path: 'l', value: 2 },
    { a: 1, l: [1, 2], n: 5 },
  ],
  decrement: [{ path: 'n' }, { a: 1, l: [1], n: 4 }],
  increment: [{ path: 'n' }, { a: 1, l: [1], n: 6 }],
  delete: [{ path: 'a' }, { l: [1], n: 5 }],
  update: [{ content: { z: 1 } }, { z: 1 }],
};
const INITIAL = { a: 1, l: [1], n: 5 };

const ORIGIN = 'https://app.example.com';
const ETAG = /^"[\w-]+"$/;
const headerList = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
// -----------------------------------------------------------------------------------------------------------------

describe('response headers', () => {
  let p: Project;
  let viewer: string;
  beforeAll(async () => {
    p = await project(INITIAL);
    viewer = (await newUser(p, 'viewer')).token;
  });

  const cases: Array<[string, () => Promise<Reply>, number]> = [
    ['GET 200', () => call('GET', p.content, { token: p.key }), 200],
    ['GET ?path 200', () => call('GET', `${p.content}?path=a`, { token: p.key }), 200],
    ['GET 404 PATH_NOT_FOUND', () => call('GET', `${p.content}?path=zz`, { token: p.key }), 404],
    ['GET 400', () => call('GET', `${p.content}?path=a..b`, { token: p.key }), 400],
    ['POST set 200', () => post(p, 'set', { path: 'h', value: 1 }), 200],
    ['POST delete 200', () => post(p, 'delete', { path: 'h' }), 200],
    ['POST 400', () => post(p, 'set', { path: '', value: 1 }), 400],
    ['POST 401', () => post(p, 'set', { path: 'h', value: 1 }, ''), 401],
    ['GET 401', () => call('GET', p.content), 401],
    ['POST 403', () => post(p, 'set', { path: 'h', value: 1 }, viewer), 403],
    [
      'POST 404',
      () =>
        call('POST', `/api/${p.username}/missing-project/content/set`, {
          token: p.owner,
          body: { path: 'h', value: 1 },
        }),
      404,
    ],
    [
      'POST 413',
      () =>
        call('POST', `${p.content}/set`, {
          token: p.key,
          rawBody: ' '.repeat(600 * 1024),
          headers: { 'content-type': 'application/json' },
        }),
      413,
    ],
    [
      'POST 415',
      () =>
        call('POST', `${p.content}/set`, { token: p.key, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
      415,
    ],
    ['POST 412', () => post(p, 'set', { path: 'h', value: 1 }, p.key, { 'if-match': '"stale"' }), 412],
  ];

  it.each(cases)('%s: application/json; charset=utf-8 and nosniff', async (_name, send, status) => {
    const r = await send();
    expect(r.status).toBe(status);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(typeof r.body).toBe('object');
  });

  it('401 responses carry WWW-Authenticate: Bearer', async () => {
    const r = await call('GET', p.content);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('CORS', () => {
  let p: Project;
  beforeAll(async () => {
    p = await project(INITIAL);
  });

  const routes: Array<[string, string, () => string]> = [
    ...OPS.map((op): [string, string, () => string] => [op, 'POST', () => `${p.content}/${op}`]),
    ['get', 'GET', () => p.content],
  ];

  it.each(routes)(
    'preflight for %s from an allowed origin: 204 with the allowed origin, method and headers',
    async (_name, method, url) => {
      const r = await call('OPTIONS', url(), {
        headers: {
          origin: ORIGIN,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type, if-match, idempotency-key',
        },
      });
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(headerList(r.headers.get('access-control-allow-methods'))).toContain(method.toLowerCase());
      expect(headerList(r.headers.get('access-control-allow-headers'))).toEqual(
        expect.arrayContaining(['authorization', 'content-type', 'if-match', 'idempotency-key']),
      );
    },
  );

  it('a preflight needs no credential', async () => {
    const r = await call('OPTIONS', `${p.content}/set`, {
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('a preflight from an origin that is not allowed gets no Access-Control-Allow-Origin', async () => {
    const r = await call('OPTIONS', `${p.content}/set`, {
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    });
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });

  it.each<[string, () => Promise<Reply>, number]>([
    ['a mutation', () => post(p, 'set', { path: 'c', value: 1 }, p.key, { origin: ORIGIN }), 200],
    ['a read', () => call('GET', p.content, { token: p.key, headers: { origin: ORIGIN } }), 200],
    ['an error', () => call('GET', p.content, { headers: { origin: ORIGIN } }), 401],
  ])('%s from the allowed origin allows it and exposes ETag', async (_name, send, status) => {
    const r = await send();
    expect(r.status).toBe(status);
    expect(r.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(headerList(r.headers.get('access-control-expose-headers'))).toContain('etag');
  });

  it('a response to an origin that is not allowed carries no Access-Control-Allow-Origin', async () => {
    const r = await call('GET', p.content, { token: p.key, headers: { origin: 'https://evil.example.com' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('ETag: every write is a new version', () => {
  it('each mutation answers a new ETag, which GET then reports; a rejected one leaves it', async () => {
    const p = await project(INITIAL);
    const seen = new Set<string>([(await state(p)).etag as string]);
    for (const op of OPS) {
      const r = await post(p, op, CHANGE[op][0]);
      expect(r.status).toBe(200);
      const etag = r.headers.get('etag') as string;
      expect(etag).toMatch(ETAG);
      expect(seen.has(etag)).toBe(false);
      seen.add(etag);
      expect((await state(p)).etag).toBe(etag);
      const failed = await post(p, op, { nonsense: true });
      expect(failed.status).toBe(400);
      expect((await state(p)).etag).toBe(etag);
    }
  });
});

describe('If-Match', () => {
  it.each(OPS)('%s with the current ETag applies', async (op) => {
    const p = await project(INITIAL);
    const { etag } = await state(p);
    const r = await post(p, op, CHANGE[op][0], p.key, { 'if-match': etag as string });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
    expect(r.headers.get('etag')).not.toBe(etag);
    expect(await state(p)).toEqual({ value: CHANGE[op][1], etag: r.headers.get('etag') });
  });

  it.each(OPS)(
    '%s with a stale ETag is a 412 PRECONDITION_FAILED with the current ETag, content unchanged',
    async (op) => {
      const p = await project(INITIAL);
      const stale = (await state(p)).etag as string;
      expect((await post(p, 'set', { path: 'other', value: 1 })).status).toBe(200);
      const before = await state(p);
      const r = await post(p, op, CHANGE[op][0], p.key, { 'if-match': stale });
      expectError(r, 412, 'PRECONDITION_FAILED');
      expect(r.headers.get('etag')).toBe(before.etag);
      expect(await state(p)).toEqual(before);
    },
  );

  it.each(OPS)('%s with If-Match: * applies', async (op) => {
    const p = await project(INITIAL);
    const r = await post(p, op, CHANGE[op][0], p.key, { 'if-match': '*' });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
    expect((await state(p)).value).toEqual(CHANGE[op][1]);
  });

  it('the ETag of a 412 lets the client retry successfully', async () => {
    const p = await project(INITIAL);
    const first = await post(p, 'increment', { path: 'n' }, p.key, { 'if-match': '"not-the-etag"' });
    expect(first.status).toBe(412);
    const retry = await post(p, 'increment', { path: 'n' }, p.key, { 'if-match': first.headers.get('etag') as string });
    expect(retry.status).toBe(200);
    expect((await state(p)).value).toEqual({ ...INITIAL, n: 6 });
  });

  it('an ETag used once is stale afterwards (optimistic concurrency)', async () => {
    const p = await project(INITIAL);
    const { etag } = await state(p);
    expect((await post(p, 'increment', { path: 'n' }, p.key, { 'if-match': etag as string })).status).toBe(200);
    const again = await post(p, 'increment', { path: 'n' }, p.key, { 'if-match': etag as string });
    expectError(again, 412, 'PRECONDITION_FAILED');
    expect((await state(p)).value).toEqual({ ...INITIAL, n: 6 });
  });

  it('a list of ETags applies when one of them is current', async () => {
    const p = await project(INITIAL);
    const { etag } = await state(p);
    const r = await post(p, 'set', { path: 'a', value: 9 }, p.key, { 'if-match': `"old-one", ${etag}, "old-two"` });
    expect(r.status).toBe(200);
    expect((await state(p)).value).toEqual({ ...INITIAL, a: 9 });
  });

  it('a list of only stale ETags is a 412', async () => {
    const p = await project(INITIAL);
    const before = await state(p);
    const r = await post(p, 'set', { path: 'a', value: 9 }, p.key, { 'if-match': '"old-one", "old-two"' });
    expectError(r, 412, 'PRECONDITION_FAILED');
    expect(await state(p)).toEqual(before);
  });

  it('a weak ETag never matches (strong comparison): 412', async () => {
    const p = await project(INITIAL);
    const before = await state(p);
    const r = await post(p, 'set', { path: 'a', value: 9 }, p.key, { 'if-match': `W/${before.etag}` });
    expectError(r, 412, 'PRECONDITION_FAILED');
    expect(await state(p)).toEqual(before);
  });

  it('a stale ETag on a delete of a missing path is still a 412', async () => {
    const p = await project(INITIAL);
    const before = await state(p);
    const r = await post(p, 'delete', { path: 'missing' }, p.key, { 'if-match': '"stale"' });
    expectError(r, 412, 'PRECONDITION_FAILED');
    expect(await state(p)).toEqual(before);
  });

  it('request validation (400) comes before the precondition', async () => {
    const p = await project(INITIAL);
    const before = await state(p);
    expectError(
      await post(p, 'set', { path: 'a..b', value: 1 }, p.key, { 'if-match': '"stale"' }),
      400,
      'INVALID_PATH',
    );
    expect(await state(p)).toEqual(before);
  });

  it('a matching If-Match on a path through an array (read-then-write path) applies', async () => {
    const p = await project({ l: [{ a: 1 }, { a: 2 }] });
    const { etag } = await state(p);
    const r = await post(p, 'set', { path: 'l.-1.a', value: 3 }, p.key, { 'if-match': etag as string });
    expect(r.status).toBe(200);
    expect((await state(p)).value).toEqual({ l: [{ a: 1 }, { a: 3 }] });
  });

  it('a stale If-Match on a path through an array (read-then-write path) is a 412', async () => {
    const p = await project({ l: [{ a: 1 }, { a: 2 }] });
    const before = await state(p);
    const r = await post(p, 'insert', { path: 'l', value: 'x', index: -1 }, p.key, { 'if-match': '"stale"' });
    expectError(r, 412, 'PRECONDITION_FAILED');
    expect(r.headers.get('etag')).toBe(before.etag);
    expect(await state(p)).toEqual(before);
  });
});
