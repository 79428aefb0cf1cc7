// The client's requests, retries and errors against a fake fetch: exact methods, URLs, headers and bodies, and
// which answers are retried, how long it waits, and what it throws.
import { ContentApiError, createClient } from '../../src/index';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

type Answer = Response | Error | (() => Response | Error);

/** A fetch that records each request and plays the answers in order (the last one repeats). */
function fakeFetch(...answers: Answer[]) {
  const sent: Sent[] = [];
  const fetch = async (url: string | URL | Request, init: RequestInit = {}) => {
    const body = init.body === undefined ? undefined : JSON.parse(String(init.body));
    sent.push({ url: String(url), method: init.method ?? 'GET', headers: { ...(init.headers as object) }, body });
    init.signal?.throwIfAborted();
    let answer = answers[Math.min(sent.length - 1, answers.length - 1)]!;
    if (typeof answer === 'function') answer = answer();
    if (answer instanceof Error) throw answer;
    return answer.clone();
  };
  return { fetch, sent };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const ok = (etag = '"v2"') => json(200, { message: 'Value set successfully' }, { etag });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Every wait the client asks for, run at once. */
let delays: number[];
beforeEach(() => {
  delays = [];
  const realSetTimeout = globalThis.setTimeout;
  jest.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return realSetTimeout(fn, 0);
  }) as typeof setTimeout);
});
afterEach(() => jest.restoreAllMocks());

const site = (fetch: ReturnType<typeof fakeFetch>['fetch'], options: object = {}) =>
  createClient({ baseUrl: 'https://api.example.com/', credential: 'capi_x', fetch, ...options }).project('@Alice/site');

describe('requests', () => {
  const C = 'https://api.example.com/api/@Alice/site/content';
  it.each<[string, (s: ReturnType<typeof site>) => Promise<unknown>, string, string, unknown]>([
    ['get', (s) => s.get(), 'GET', C, undefined],
    ['get a path', (s) => s.get('data.a b&c'), 'GET', `${C}?path=data.a%20b%26c`, undefined],
    ['get shallow', (s) => s.get(undefined, { shallow: true }), 'GET', `${C}?shallow=true`, undefined],
    ['get a path shallow', (s) => s.get('a.b', { shallow: true }), 'GET', `${C}?path=a.b&shallow=true`, undefined],
    ['get shallow: false', (s) => s.get('a', { shallow: false }), 'GET', `${C}?path=a`, undefined],
    ['get a slice', (s) => s.get('log', { start: -10, limit: 5 }), 'GET', `${C}?path=log&start=-10&limit=5`, undefined],
    ['get from start 0', (s) => s.get('log', { start: 0 }), 'GET', `${C}?path=log&start=0`, undefined],
    ['get a limit', (s) => s.get('log', { limit: 50 }), 'GET', `${C}?path=log&limit=50`, undefined],
    [
      'get a page of keys',
      (s) => s.get('docs', { shallow: true, limit: 2, after: 'eyJrIjoiYSJ9' }),
      'GET',
      `${C}?path=docs&shallow=true&limit=2&after=eyJrIjoiYSJ9`,
      undefined,
    ],
    ['set', (s) => s.set('a.b', { x: null }), 'POST', `${C}/set`, { path: 'a.b', value: { x: null } }],
    ['set null', (s) => s.set('a', null), 'POST', `${C}/set`, { path: 'a', value: null }],
    ['insert', (s) => s.insert('list', 'x', -1), 'POST', `${C}/insert`, { path: 'list', value: 'x', index: -1 }],
    ['push', (s) => s.push('list', [1]), 'POST', `${C}/push`, { path: 'list', value: [1] }],
    ['increment', (s) => s.increment('n'), 'POST', `${C}/increment`, { path: 'n' }],
    ['increment by', (s) => s.increment('n', 2.5), 'POST', `${C}/increment`, { path: 'n', value: 2.5 }],
    ['decrement', (s) => s.decrement('n'), 'POST', `${C}/decrement`, { path: 'n' }],
    ['decrement by', (s) => s.decrement('n', 3), 'POST', `${C}/decrement`, { path: 'n', value: 3 }],
    ['delete', (s) => s.delete('a.0'), 'POST', `${C}/delete`, { path: 'a.0' }],
    ['update', (s) => s.update({ a: 1 }), 'POST', `${C}/update`, { content: { a: 1 } }],
    [
      'batch',
      (s) =>
        s.batch([
          { op: 'test', path: 'a', exists: false },
          { op: 'set', path: 'a', value: 1 },
        ]),
      'POST',
      `${C}/batch`,
      {
        operations: [
          { op: 'test', path: 'a', exists: false },
          { op: 'set', path: 'a', value: 1 },
        ],
      },
    ],
    ['patch', (s) => s.patch([{ op: 'remove', path: '/a' }]), 'PATCH', C, [{ op: 'remove', path: '/a' }]],
    ['mergePatch', (s) => s.mergePatch({ a: null, b: 1 }), 'PATCH', C, { a: null, b: 1 }],
  ])('%s', async (_name, call, method, url, body) => {
    const { fetch, sent } = fakeFetch(ok());
    await call(site(fetch));
    expect(sent).toHaveLength(1);
    expect({ method: sent[0]!.method, url: sent[0]!.url, body: sent[0]!.body }).toEqual({ method, url, body });
    expect(sent[0]!.headers.authorization).toBe('Bearer capi_x');
    // Mutations carry a fresh UUID Idempotency-Key; reads carry none.
    if (method === 'GET') expect(sent[0]!.headers['idempotency-key']).toBeUndefined();
    else expect(sent[0]!.headers['idempotency-key']).toMatch(UUID);
  });

  it.each([
    [
      'patch',
      'application/json-patch+json',
      (s: ReturnType<typeof site>) => s.patch([{ op: 'add', path: '/a', value: 1 }]),
    ],
    ['mergePatch', 'application/merge-patch+json', (s: ReturnType<typeof site>) => s.mergePatch({ a: 1 })],
    ['set', 'application/json', (s: ReturnType<typeof site>) => s.set('a', 1)],
  ])('%s sends Content-Type %s', async (_name, type, call) => {
    const { fetch, sent } = fakeFetch(json(200, { message: 'Content patched successfully' }, { etag: '"v3"' }));
    await expect(call(site(fetch))).resolves.toEqual({ message: 'Content patched successfully', etag: '"v3"' });
    expect(sent[0]!.headers['content-type']).toBe(type);
  });

  it.each([
    ['createProject', (s: ReturnType<typeof site>) => s.createProject(), 'POST', '', {}],
    ['getProject', (s: ReturnType<typeof site>) => s.getProject(), 'GET', '', undefined],
    ['deleteProject', (s: ReturnType<typeof site>) => s.deleteProject(), 'DELETE', '', undefined],
    [
      'keys.create',
      (s: ReturnType<typeof site>) =>
        s.keys.create({ name: 'ci', permissions: ['content:write'], expiresInSeconds: 60 }),
      'POST',
      '/keys',
      { name: 'ci', permissions: ['content:write'], expiresInSeconds: 60 },
    ],
    ['keys.list', (s: ReturnType<typeof site>) => s.keys.list(), 'GET', '/keys', undefined],
    ['keys.revoke', (s: ReturnType<typeof site>) => s.keys.revoke('ab/cd'), 'DELETE', '/keys/ab%2Fcd', undefined],
    ['members.list', (s: ReturnType<typeof site>) => s.members.list(), 'GET', '/members', undefined],
    [
      'members.put',
      (s: ReturnType<typeof site>) => s.members.put('@Bob', 'editor'),
      'PUT',
      '/members/@Bob',
      { role: 'editor' },
    ],
    [
      'members.put without @',
      (s: ReturnType<typeof site>) => s.members.put('bob', 'viewer'),
      'PUT',
      '/members/@bob',
      { role: 'viewer' },
    ],
    ['members.remove', (s: ReturnType<typeof site>) => s.members.remove('@bob'), 'DELETE', '/members/@bob', undefined],
  ])('management: %s', async (_name, call, method, suffix, body) => {
    const { fetch, sent } = fakeFetch(json(200, { ok: true }));
    await expect(call(site(fetch))).resolves.toEqual({ ok: true, etag: null });
    expect(sent.map((s) => [s.method, s.url, s.body])).toEqual([
      [method, `https://api.example.com/api/@Alice/site${suffix}`, body],
    ]);
    // Management routes are not idempotent by key: none is sent.
    expect(sent[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('sends If-Match and a given Idempotency-Key, and returns the ETag with the body', async () => {
    const { fetch, sent } = fakeFetch(ok('"v9"'));
    const result = await site(fetch).set('a', 1, { ifMatch: '"v8"', idempotencyKey: 'order-1' });
    expect(result).toEqual({ message: 'Value set successfully', etag: '"v9"' });
    expect(sent[0]!.headers).toMatchObject({ 'if-match': '"v8"', 'idempotency-key': 'order-1' });
  });

  it('get returns the value and the ETag', async () => {
    const { fetch } = fakeFetch(json(200, { value: { a: [1] } }, { etag: '"v1"' }));
    await expect(site(fetch).get()).resolves.toEqual({ value: { a: [1] }, etag: '"v1"' });
  });

  it('get with ifNoneMatch sends If-None-Match; a 304 resolves to notModified with the ETag, not retried', async () => {
    const { fetch, sent } = fakeFetch(new Response(null, { status: 304, headers: { etag: '"v1"' } }));
    await expect(site(fetch).get('a', { ifNoneMatch: '"v1"' })).resolves.toEqual({ notModified: true, etag: '"v1"' });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers['if-none-match']).toBe('"v1"');
    expect(sent[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('get with ifNoneMatch that no longer matches: the value and the new ETag', async () => {
    const { fetch } = fakeFetch(json(200, { value: [3], start: 2, length: 3 }, { etag: '"v2"' }));
    await expect(site(fetch).get('l', { start: -1, ifNoneMatch: '"v1"' })).resolves.toEqual({
      value: [3],
      start: 2,
      length: 3,
      etag: '"v2"',
    });
  });

  it('each call has its own Idempotency-Key', async () => {
    const { fetch, sent } = fakeFetch(ok());
    await site(fetch).push('a', 1);
    await site(fetch).push('a', 1);
    expect(sent[0]!.headers['idempotency-key']).not.toBe(sent[1]!.headers['idempotency-key']);
  });

  it('a credential function is asked once per call, so each call can carry a fresh token', async () => {
    const { fetch, sent } = fakeFetch(json(503, { message: 'busy', code: 'SERVICE_UNAVAILABLE' }), ok());
    let n = 0;
    const credential = async () => `jwt-${++n}`;
    const s = createClient({ baseUrl: 'https://api.example.com', credential, fetch }).project('@a/b');
    await s.set('x', 1);
    await s.get();
    // The retry keeps the first token (an Idempotency-Key is scoped to the credential); the next call gets a new one.
    expect(sent.map((r) => r.headers.authorization)).toEqual(['Bearer jwt-1', 'Bearer jwt-1', 'Bearer jwt-2']);
  });

  it.each(['alice/site', '@alice', '@alice/site/x', '', '@/site', '@alice/'])('refuses the project name %j', (name) => {
    expect(() => createClient({ baseUrl: 'https://x' }).project(name)).toThrow(TypeError);
  });
});

describe('retries', () => {
  const busy = (retryAfter?: string) =>
    json(503, { message: 'busy', code: 'SERVICE_UNAVAILABLE' }, retryAfter ? { 'retry-after': retryAfter } : {});
  const conflict = (code: string) => json(409, { message: 'conflict', code }, { 'retry-after': '1' });

  it.each<[string, Answer]>([
    ['503', busy()],
    ['409 WRITE_CONFLICT', conflict('WRITE_CONFLICT')],
    ['409 IDEMPOTENCY_IN_PROGRESS', conflict('IDEMPOTENCY_IN_PROGRESS')],
    ['a network error', new TypeError('fetch failed')],
    [
      'an answer cut off mid-body',
      () => new Response(new ReadableStream({ start: (c) => c.error(new Error('reset')) })),
    ],
  ])('retries %s with the same Idempotency-Key and body, then succeeds', async (_name, failure) => {
    const { fetch, sent } = fakeFetch(failure, failure, ok('"v5"'));
    await expect(site(fetch).push('orders', { id: 1 })).resolves.toEqual({
      message: 'Value set successfully',
      etag: '"v5"',
    });
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((s) => s.headers['idempotency-key'])).size).toBe(1);
    expect(sent.every((s) => JSON.stringify(s.body) === JSON.stringify({ path: 'orders', value: { id: 1 } }))).toBe(
      true,
    );
  });

  it('retries reads too', async () => {
    const { fetch, sent } = fakeFetch(new TypeError('fetch failed'), json(200, { value: 1 }, { etag: '"v1"' }));
    await expect(site(fetch).get('a')).resolves.toEqual({ value: 1, etag: '"v1"' });
    expect(sent).toHaveLength(2);
  });

  it.each([
    [400, 'INVALID_PATH'],
    [401, 'UNAUTHORIZED'],
    [403, 'FORBIDDEN'],
    [404, 'PATH_NOT_FOUND'],
    [409, 'TEST_FAILED'],
    [409, 'PROJECT_EXISTS'],
    [412, 'PRECONDITION_FAILED'],
    [413, 'CONTENT_TOO_LARGE'],
    [422, 'IDEMPOTENCY_KEY_REUSED'],
    [500, 'INTERNAL_ERROR'],
  ])('does not retry %i %s', async (status, code) => {
    const { fetch, sent } = fakeFetch(json(status, { message: 'no', code }));
    await expect(site(fetch).set('a', 1)).rejects.toMatchObject({ status, code });
    expect(sent).toHaveLength(1);
  });

  it('gives up after `retries` retries and throws the last error', async () => {
    const { fetch, sent } = fakeFetch(busy());
    const error = await site(fetch, { retries: 2 })
      .set('a', 1)
      .catch((e) => e);
    expect(error).toBeInstanceOf(ContentApiError);
    expect({ status: error.status, code: error.code, message: error.message }).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'busy',
    });
    expect(sent).toHaveLength(3);
  });

  it('retries 3 times by default; retries: 0 sends once', async () => {
    const a = fakeFetch(busy());
    await expect(site(a.fetch).set('a', 1)).rejects.toThrow(ContentApiError);
    expect(a.sent).toHaveLength(4);
    const b = fakeFetch(busy());
    await expect(site(b.fetch, { retries: 0 }).set('a', 1)).rejects.toThrow(ContentApiError);
    expect(b.sent).toHaveLength(1);
  });

  it('backs off exponentially with full jitter, capped', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const { fetch } = fakeFetch(busy());
    await site(fetch, { retries: 5, retryDelay: 100, maxRetryDelay: 1000 })
      .set('a', 1)
      .catch(() => undefined);
    // 0.5 x min(1000, 100 x 2^n)
    expect(delays).toEqual([50, 100, 200, 400, 500]);
  });

  it.each([
    ['delay-seconds', '2', 2000],
    ['an HTTP date', () => new Date(Date.now() + 3000).toUTCString(), 2000],
  ])('honours Retry-After as %s', async (_name, header, atLeast) => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const value = typeof header === 'function' ? header() : header;
    const { fetch } = fakeFetch(busy(value), ok());
    await site(fetch).set('a', 1);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(atLeast);
    expect(delays[0]).toBeLessThanOrEqual(3000);
  });

  it.each([
    ['createProject', (s: ReturnType<typeof site>) => s.createProject()],
    ['keys.create', (s: ReturnType<typeof site>) => s.keys.create({ name: 'ci', permissions: ['content:read'] })],
    ['keys.revoke', (s: ReturnType<typeof site>) => s.keys.revoke('id')],
    ['members.put', (s: ReturnType<typeof site>) => s.members.put('@b', 'viewer')],
    ['deleteProject', (s: ReturnType<typeof site>) => s.deleteProject()],
  ])('sends a management write (%s) once: it has no Idempotency-Key to make a retry safe', async (_name, call) => {
    for (const failure of [new TypeError('fetch failed'), busy()]) {
      const { fetch, sent } = fakeFetch(failure, json(200, {}));
      await expect(call(site(fetch))).rejects.toThrow(ContentApiError);
      expect(sent).toHaveLength(1);
    }
  });

  it('stops when the caller aborts, without retrying', async () => {
    const controller = new AbortController();
    controller.abort();
    const { fetch, sent } = fakeFetch(ok());
    await expect(site(fetch).set('a', 1, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(sent).toHaveLength(1);
  });
});

describe('errors', () => {
  it('carry status, code, message, the batch index and the ETag', async () => {
    const { fetch } = fakeFetch(json(409, { message: 'test failed', code: 'TEST_FAILED', index: 2 }, { etag: '"v4"' }));
    const error = await site(fetch)
      .batch([{ op: 'test', path: 'a', value: 1 }])
      .catch((e) => e);
    expect(error).toBeInstanceOf(ContentApiError);
    expect(error).toBeInstanceOf(Error);
    expect({ ...error, message: error.message }).toEqual({
      name: 'ContentApiError',
      status: 409,
      code: 'TEST_FAILED',
      index: 2,
      etag: '"v4"',
      message: 'test failed',
    });
  });

  it('an answer without a code (a gateway page) is UNEXPECTED_RESPONSE with its status', async () => {
    const { fetch } = fakeFetch(new Response('<html>Bad Gateway</html>', { status: 502 }));
    await expect(site(fetch).get()).rejects.toMatchObject({
      status: 502,
      code: 'UNEXPECTED_RESPONSE',
      index: undefined,
    });
  });

  it('no answer is NETWORK_ERROR, status 0, with the cause', async () => {
    const cause = new TypeError('fetch failed');
    const { fetch } = fakeFetch(cause);
    const error = await site(fetch, { retries: 1 })
      .get()
      .catch((e) => e);
    expect({ status: error.status, code: error.code, cause: error.cause }).toEqual({
      status: 0,
      code: 'NETWORK_ERROR',
      cause,
    });
  });

  it('uses the parse option for bodies (a lossless parser keeps exact decimals)', async () => {
    const { fetch } = fakeFetch(new Response('{"value":12345678901234567890}', { status: 200 }));
    const parse = (text: string) => JSON.parse(text.replace(/(\d{16,})/g, '"$1"'));
    await expect(site(fetch, { parse }).get()).resolves.toEqual({ value: '12345678901234567890', etag: null });
  });
});

describe('history, reads at a point and restore', () => {
  it('sends at, limit and before, restores as a write with an Idempotency-Key, and pages history lazily', async () => {
    const seen: Array<{ method: string; url: string; body?: string; key?: string | null }> = [];
    const pages = [
      { entries: [{ revision: '3' }, { revision: '2' }], next: '2' },
      { entries: [{ revision: '1' }], next: null },
    ];
    const fetch = async (url: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      seen.push({
        method: init?.method ?? 'GET',
        url: String(url),
        body: init?.body as string,
        key: headers.get('idempotency-key'),
      });
      const body = String(url).includes('/history')
        ? pages[seen.filter((s) => s.url.includes('/history')).length - 1]
        : {};
      return new Response(JSON.stringify(body), { status: 200 });
    };
    const site = createClient({ baseUrl: 'https://api.example.com', credential: 'k', fetch }).project('@alice/site');
    await site.get('a.b', { at: '2026-11-27T08:00:00Z' });
    expect(seen[0]?.url).toBe('https://api.example.com/api/@alice/site/content?path=a.b&at=2026-11-27T08%3A00%3A00Z');
    await site.restore(undefined, '42');
    expect(seen[1]).toMatchObject({ method: 'POST', body: '{"at":"42"}', key: expect.any(String) });
    const revisions: string[] = [];
    for await (const entry of site.historyEntries('a', { limit: 2 })) revisions.push(entry.revision);
    expect(revisions).toEqual(['3', '2', '1']);
    expect(seen.slice(2).map((s) => s.url)).toEqual([
      'https://api.example.com/api/@alice/site/content/history?path=a&limit=2',
      'https://api.example.com/api/@alice/site/content/history?path=a&limit=2&before=2',
    ]);
  });
});
