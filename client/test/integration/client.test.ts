// The client against the local API (npm start's stack): every method, every error path, and retries through a
// fault proxy that loses answers after the server applied them (applied once) or answers 503 (retried).
import { type Project, newKey, newProject, newUser, signJwt, unique } from '../../../test/support/api';
import { ContentApiError, type ClientOptions, createClient } from '../../src/index';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy';

const baseUrl = () => process.env.TEST_API_URL as string;
const site = (p: Project, credential: ClientOptions['credential'] = p.key, options: Partial<ClientOptions> = {}) =>
  createClient({ baseUrl: baseUrl(), credential, retryDelay: 10, ...options }).project(`${p.username}/${p.slug}`);
const ETAG = /^"[^"]+"$/;

/** The error a call rejects with, as the fields a program branches on. */
async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ContentApiError);
  const { status, code, index, etag } = error as ContentApiError;
  return { status, code, index, etag };
}

describe('content methods', () => {
  it('apply each operation, and every result carries the new ETag that a read then returns', async () => {
    const p = await newProject();
    const s = site(p);
    const etags: Array<string | null> = [];
    const step = async (result: Promise<{ message: string; etag: string | null }>, message: string) => {
      const r = await result;
      expect(r.message).toBe(message);
      expect(r.etag).toMatch(ETAG);
      etags.push(r.etag);
    };
    await step(s.update({ site: { title: 'x' } }), 'Content updated successfully');
    await step(s.set('site.title', 'Home'), 'Value set successfully');
    await step(s.push('site.pages', { id: 2 }), 'Object pushed successfully');
    await step(s.insert('site.pages', { id: 1 }, 0), 'Value inserted successfully');
    await step(s.increment('site.visits'), 'Value incremented successfully');
    await step(s.increment('site.visits', 10), 'Value incremented successfully');
    await step(s.decrement('site.visits', 0.5), 'Value decremented successfully');
    await step(s.decrement('site.visits'), 'Value decremented successfully');
    await step(s.set('site.draft', null), 'Value set successfully');
    await step(s.delete('site.draft'), 'Value deleted successfully');
    await step(
      s.batch([
        { op: 'test', path: 'site.visits', value: 9.5 },
        { op: 'push', path: 'site.pages', value: { id: 3 } },
        { op: 'test', path: 'site.missing', exists: false },
      ]),
      'Batch applied successfully',
    );
    expect(new Set(etags).size).toBe(etags.length);

    const whole = await s.get();
    expect(whole).toEqual({
      value: { site: { title: 'Home', pages: [{ id: 1 }, { id: 2 }, { id: 3 }], visits: 9.5 } },
      etag: etags.at(-1),
    });
    await expect(s.get('site.pages.-1')).resolves.toEqual({ value: { id: 3 }, etag: etags.at(-1) });
    await expect(s.get('site.title')).resolves.toEqual({ value: 'Home', etag: etags.at(-1) });
  });

  it('get: shallow, array slices and ifNoneMatch (polling) against the API', async () => {
    const p = await newProject();
    const s = site(p);
    await s.update({ a: { b: 1, c: [1] }, log: [0, 1, 2, 3, 4] });
    expect((await s.get(undefined, { shallow: true })).value).toEqual({ a: true, log: true });
    expect((await s.get('log', { shallow: true })).value).toEqual({ length: 5 });
    const last = await s.get('log', { start: -2 });
    expect(last).toEqual({ value: [3, 4], start: 3, length: 5, etag: expect.any(String) });
    expect(await s.get('log', { start: 1, limit: 2 })).toMatchObject({ value: [1, 2], start: 1, length: 5 });
    await expect(s.get('a', { start: 0 })).rejects.toMatchObject({ status: 400, code: 'NOT_AN_ARRAY' });
    await expect(s.get('log', { limit: 0 })).rejects.toMatchObject({ status: 400, code: 'INVALID_LIMIT' });
    await expect(s.get('log', { shallow: true, start: 1 })).rejects.toMatchObject({ code: 'INVALID_QUERY' });
    // Pages of an object's keys: limit, then after with the page's next, until next is null.
    const first = await s.get('a', { shallow: true, limit: 1 });
    expect(first).toEqual({ value: { b: true }, next: expect.any(String), etag: expect.any(String) });
    const rest = await s.get('a', { shallow: true, limit: 1, after: (first as { next: string }).next });
    expect(rest).toMatchObject({ value: { c: true }, next: null });
    await expect(s.get('log', { shallow: true, limit: 1 })).rejects.toMatchObject({ code: 'NOT_AN_OBJECT' });
    // Polling: unchanged is a 304, a write makes it a 200 with the new ETag.
    const { etag } = await s.get('log');
    expect(await s.get('log', { ifNoneMatch: etag! })).toEqual({ notModified: true, etag });
    await s.push('log', 5);
    const changed = await s.get('log', { ifNoneMatch: etag! });
    expect(changed).toEqual({ value: [0, 1, 2, 3, 4, 5], etag: expect.any(String) });
    expect(changed.etag).not.toBe(etag);
  });

  it('patch (JSON Patch) and mergePatch (merge patch) apply to the content; a failed test is a 409 with its index', async () => {
    const p = await newProject();
    const s = site(p);
    await s.update({ a: { b: 1, c: 2 }, list: [1, 2] });
    const patched = await s.patch([
      { op: 'replace', path: '/a/b', value: 10 },
      { op: 'add', path: '/list/-', value: 3 },
      { op: 'move', from: '/a/c', path: '/moved' },
    ]);
    expect(patched).toEqual({ message: 'Content patched successfully', etag: expect.stringMatching(ETAG) });
    const merged = await s.mergePatch({ a: { b: null, d: 'x' }, extra: true });
    expect(merged.message).toBe('Content patched successfully');
    expect((await s.get()).value).toEqual({ a: { d: 'x' }, list: [1, 2, 3], moved: 2, extra: true });
    expect(
      await failure(
        s.patch([
          { op: 'add', path: '/z', value: 1 },
          { op: 'test', path: '/a/d', value: 'y' },
        ]),
      ),
    ).toEqual({ status: 409, code: 'TEST_FAILED', index: 1, etag: null });
    expect((await s.get()).value).toEqual({ a: { d: 'x' }, list: [1, 2, 3], moved: 2, extra: true });
  });

  it('writes with ifMatch only while the version holds; a 412 carries the current ETag', async () => {
    const p = await newProject();
    const s = site(p);
    const { etag } = await s.get();
    const first = await s.set('v', 1, { ifMatch: etag! });
    expect(await failure(s.set('v', 2, { ifMatch: etag! }))).toEqual({
      status: 412,
      code: 'PRECONDITION_FAILED',
      index: undefined,
      etag: first.etag,
    });
    expect((await s.get('v')).value).toBe(1);
  });

  it('a repeated idempotencyKey is applied once; the same key with another body is a 422', async () => {
    const p = await newProject();
    const s = site(p);
    const key = unique('order-');
    const a = await s.push('orders', 7, { idempotencyKey: key });
    const b = await s.push('orders', 7, { idempotencyKey: key });
    expect(b).toEqual(a);
    expect((await s.get('orders')).value).toEqual([7]);
    expect(await failure(s.push('orders', 8, { idempotencyKey: key }))).toMatchObject({
      status: 422,
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
  });
});

describe('errors', () => {
  it.each<[string, (s: ReturnType<typeof site>) => Promise<unknown>, number, string]>([
    ['a missing path', (s) => s.get('nothing.here'), 404, 'PATH_NOT_FOUND'],
    ['an empty segment', (s) => s.set('a..b', 1), 400, 'INVALID_PATH'],
    ['__proto__', (s) => s.set('__proto__', 1), 400, 'RESERVED_KEY'],
    ['an index outside the array', (s) => s.insert('list', 1, 5), 400, 'INDEX_OUT_OF_RANGE'],
    ['a non-number counter', (s) => s.increment('title'), 400, 'NOT_A_NUMBER'],
    ['a push onto a string', (s) => s.push('title', 1), 400, 'NOT_AN_ARRAY'],
    ['an empty batch', (s) => s.batch([]), 400, 'INVALID_BATCH'],
  ])('%s: status and code, content unchanged', async (_name, call, status, code) => {
    const p = await newProject();
    const s = site(p);
    await s.update({ title: 't', list: [] });
    expect(await failure(call(s))).toEqual({ status, code, index: undefined, etag: null });
    expect((await s.get()).value).toEqual({ title: 't', list: [] });
  });

  it('a failed batch names the operation that failed, and nothing changed', async () => {
    const p = await newProject();
    const s = site(p);
    await s.set('n', 3);
    const error = await failure(
      s.batch([
        { op: 'increment', path: 'n' },
        { op: 'test', path: 'n', value: 3 },
      ]),
    );
    expect(error).toMatchObject({ status: 409, code: 'TEST_FAILED', index: 1 });
    const error2 = await failure(
      s.batch([
        { op: 'set', path: 'a', value: 1 },
        { op: 'push', path: 'n', value: 1 },
      ]),
    );
    expect(error2).toMatchObject({ status: 400, code: 'NOT_AN_ARRAY', index: 1 });
    expect((await s.get()).value).toEqual({ n: 3 });
  });

  it('credentials: unknown 401, a read-only key writing 403, a key of another project 403', async () => {
    const p = await newProject();
    const other = await newProject();
    const reader = await newKey(p, ['content:read']);
    expect(await failure(site(p, 'capi_0000000000000000_unknown').get())).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    expect(await failure(site(p, '').get())).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect(await failure(site(p, reader.key).set('a', 1))).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(await failure(site(p, other.key).get())).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect((await site(p, reader.key).get()).value).toEqual({});
  });

  it('a missing project is a 404 PROJECT_NOT_FOUND for its owner', async () => {
    const p = await newProject();
    const missing = createClient({ baseUrl: baseUrl(), credential: p.owner }).project(`${p.username}/nope`);
    expect(await failure(missing.get())).toMatchObject({ status: 404, code: 'PROJECT_NOT_FOUND' });
  });
});

describe('sessions and management', () => {
  it('a credential function is asked per call: a JWT user creates a project and writes to it', async () => {
    const name = unique('jwt');
    let minted = 0;
    const credential = async () => {
      minted++;
      return signJwt({ preferred_username: name });
    };
    const s = createClient({ baseUrl: baseUrl(), credential }).project(`@${name}/site`);
    await expect(s.createProject()).resolves.toMatchObject({ username: `@${name}`, projectSlug: 'site', etag: null });
    await s.set('hello', 'world');
    await expect(s.get('hello')).resolves.toMatchObject({ value: 'world' });
    expect(minted).toBe(3);
  });

  it('projects, keys and members over the owner session', async () => {
    const p = await newProject();
    const owner = site(p, p.owner);
    const slug = unique('s');
    const created = createClient({ baseUrl: baseUrl(), credential: p.owner }).project(`${p.username}/${slug}`);

    await expect(created.createProject()).resolves.toMatchObject({ username: p.username, projectSlug: slug });
    expect(await failure(created.createProject())).toMatchObject({ status: 409, code: 'PROJECT_EXISTS' });
    await expect(created.getProject()).resolves.toMatchObject({
      owner: p.username,
      role: 'owner',
    });

    const key = await created.keys.create({ name: 'ci', permissions: ['content:read', 'content:write'] });
    expect(key).toMatchObject({ name: 'ci', key: expect.stringMatching(/^capi_/), expiresAt: null });
    const ci = createClient({ baseUrl: baseUrl(), credential: key.key }).project(`${p.username}/${slug}`);
    await ci.push('builds', { n: 1 });
    await expect(created.keys.list()).resolves.toMatchObject({ keys: [{ id: key.id, name: 'ci' }] });
    await expect(created.keys.revoke(key.id)).resolves.toMatchObject({ message: expect.any(String) });
    expect(await failure(ci.get())).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    expect(await failure(created.keys.revoke(key.id))).toMatchObject({ status: 404, code: 'KEY_NOT_FOUND' });

    const bob = await newUser();
    await expect(owner.members.put(bob.username, 'viewer')).resolves.toMatchObject({
      member: bob.username,
      role: 'viewer',
    });
    await expect(owner.members.list()).resolves.toMatchObject({
      owner: p.username,
      members: [{ username: bob.username, role: 'viewer' }],
    });
    const asBob = site(p, bob.token);
    await expect(asBob.get()).resolves.toMatchObject({ value: {} });
    expect(await failure(asBob.set('a', 1))).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    await owner.members.remove(bob.username);
    expect(await failure(owner.members.remove(bob.username))).toMatchObject({ status: 404, code: 'MEMBER_NOT_FOUND' });
    expect(await failure(owner.members.put(`@${unique('ghost')}`, 'editor'))).toMatchObject({
      status: 404,
      code: 'USER_NOT_FOUND',
    });
    expect(await failure(owner.members.put(p.username, 'editor'))).toMatchObject({
      status: 400,
      code: 'INVALID_MEMBER',
    });
    expect(await failure(site(p).keys.list())).toMatchObject({ status: 403, code: 'FORBIDDEN' });

    await expect(created.deleteProject()).resolves.toMatchObject({ message: expect.any(String) });
    expect(await failure(created.getProject())).toMatchObject({ status: 404, code: 'PROJECT_NOT_FOUND' });
  });
});

describe('retries through a fault proxy', () => {
  let proxy: FaultProxy;
  beforeEach(async () => {
    proxy = await startFaultProxy(baseUrl());
  });
  afterEach(() => proxy.close());
  const viaProxy = (p: Project, options: Partial<ClientOptions> = {}) =>
    site(p, p.key, { baseUrl: proxy.url, ...options });

  it.each<[string, (s: ReturnType<typeof site>) => Promise<unknown>, unknown]>([
    ['push', (s) => s.push('list', 'x'), { list: ['a', 'x'], n: 1 }],
    ['insert', (s) => s.insert('list', 'x', 0), { list: ['x', 'a'], n: 1 }],
    ['increment', (s) => s.increment('n', 5), { list: ['a'], n: 6 }],
    ['decrement', (s) => s.decrement('n'), { list: ['a'], n: 0 }],
    [
      'batch',
      (s) =>
        s.batch([
          { op: 'push', path: 'list', value: 'x' },
          { op: 'increment', path: 'n' },
        ]),
      {
        list: ['a', 'x'],
        n: 2,
      },
    ],
  ])('%s whose answer is lost after the server applied it is retried and applied once', async (_n, call, expected) => {
    const p = await newProject();
    await site(p).update({ list: ['a'], n: 1 });
    proxy.spoil((n) => (n === 0 ? 'lose-answer' : undefined));
    const result = (await call(viaProxy(p))) as { etag: string };
    expect(result.etag).toMatch(ETAG);
    expect(proxy.seen.map((r) => r.spoiled)).toEqual(['lose-answer', undefined]);
    expect(proxy.seen[0]!.idempotencyKey).toBeDefined();
    expect(proxy.seen[1]!.idempotencyKey).toBe(proxy.seen[0]!.idempotencyKey);
    expect(await site(p).get()).toEqual({ value: expected, etag: result.etag });
  });

  it('a write with ifMatch whose answer is lost gets its own answer on retry, not a 412 from its own write', async () => {
    const p = await newProject();
    const { etag } = await site(p).get();
    proxy.spoil((n) => (n === 0 ? 'lose-answer' : undefined));
    const result = await viaProxy(p).set('title', 'v2', { ifMatch: etag! });
    expect(result).toEqual({ message: 'Value set successfully', etag: expect.stringMatching(ETAG) });
    expect(proxy.seen).toHaveLength(2);
    expect(await site(p).get()).toEqual({ value: { title: 'v2' }, etag: result.etag });
  });

  it('a 503 is retried after its Retry-After', async () => {
    const p = await newProject();
    proxy.spoil((n) => (n < 1 ? 'busy' : undefined));
    const started = Date.now();
    await viaProxy(p).push('list', 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(proxy.seen.map((r) => r.spoiled)).toEqual(['busy', undefined]);
    expect((await site(p).get('list')).value).toEqual([1]);
  });

  it('gives up after the configured retries with the last error, nothing applied', async () => {
    const p = await newProject();
    proxy.spoil(() => 'busy');
    const started = Date.now();
    expect(await failure(viaProxy(p, { retries: 1 }).push('list', 1))).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(proxy.seen).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect((await site(p).get()).value).toEqual({});
  });

  it('an unreachable server is a NETWORK_ERROR after the retries', async () => {
    const p = await newProject();
    const url = proxy.url;
    await proxy.close();
    const error = await failure(site(p, p.key, { baseUrl: url, retries: 2 }).get());
    expect(error).toEqual({ status: 0, code: 'NETWORK_ERROR', index: undefined, etag: null });
  });
});
