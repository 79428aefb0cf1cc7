// Import (issue 31, docs/design/backup.md §3): a whole content replaced atomically at any size through a session of
// pages of pieces and a commit. Round trip exact to every digit and key; readers see the old content until the
// switch; pages apply once and in order; only the owner or an unscoped writing key may import; an import cut at any
// step leaves the old content and, after the sweeper, nothing behind. Run at a small SEGMENT_FRAGMENT_BYTES (npm run
// test:segments) the document chunks and buckets.
import { type AttributeValue, QueryCommand } from '@aws-sdk/client-dynamodb';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Big from 'big.js';
import { LosslessNumber, parse, stringify } from 'lossless-json';
import { handler as sweepHandler } from '../../functions/sweep';
import { dynamo } from '../../lib/dynamo/client';
import { parseJson } from '../../lib/http/request';
import { withDeadline } from '../../lib/dynamo/deadline';
import { applyImportPage, commitImport } from '../../lib/storage';
import { IMPORT_PREFIX } from '../../lib/storage/io/import-session';
import { MARKER_PREFIX } from '../../lib/storage/io/markers';
import { contentPk, shadowIncarnation } from '../../lib/storage/layout/keys';
import { type Project, call, expectError, newKey, newUser, project, state } from '../support/api';
import { Client } from '../support/realtime';
import { incarnationOf, strays } from '../support/segments';

type Piece = { path: string; value: unknown };

const pointer = (tokens: string[]) => tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * The document cut into pieces as a client does (docs/design/backup.md §1): a value whose JSON is at most
 * `pieceBytes` is one piece; a larger container is sent open, then its members.
 */
function* cut(value: unknown, tokens: string[] = [], pieceBytes = 2048): Generator<Piece> {
  const isContainer = value !== null && typeof value === 'object' && !(value instanceof LosslessNumber);
  if (!isContainer || (stringify(value) as string).length <= pieceBytes) {
    yield { path: pointer(tokens), value };
    return;
  }
  if (Array.isArray(value)) {
    yield { path: pointer(tokens), value: [] };
    for (const [i, v] of value.entries()) yield* cut(v, [...tokens, String(i)], pieceBytes);
  } else {
    yield { path: pointer(tokens), value: {} };
    for (const [k, v] of Object.entries(value as object)) yield* cut(v, [...tokens, k], pieceBytes);
  }
}

/** Pieces in pages of at most `pageBytes` of JSON. */
function pages(pieces: Iterable<Piece>, pageBytes = 48 * 1024): Piece[][] {
  const all: Piece[][] = [];
  let page: Piece[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    const size = (stringify(piece) as string).length;
    if (page.length > 0 && bytes + size > pageBytes) {
      all.push(page);
      page = [];
      bytes = 0;
    }
    page.push(piece);
    bytes += size;
  }
  if (page.length > 0) all.push(page);
  return all;
}

/** A value with every object's keys in one order: two contents compare as JSON, whatever order storage lists. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  // Numbers by their exact decimal value (9e+30 and 9000…0 are one number), every digit kept.
  if (value instanceof LosslessNumber || typeof value === 'number')
    return new LosslessNumber(new Big(String(value instanceof LosslessNumber ? value.value : value)).toFixed());
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort())
    Object.defineProperty(sorted, k, { value: canonical((value as any)[k]), enumerable: true });
  return sorted;
}
const exactText = (value: unknown) => stringify(canonical(value)) as string;

/** Two long JSON texts equal; when not, the failure shows where they part, not megabytes of both. */
function expectSameText(got: string, want: string): void {
  let i = 0;
  while (i < got.length && got[i] === want[i]) i++;
  expect(got.slice(Math.max(0, i - 200), i + 200)).toBe(want.slice(Math.max(0, i - 200), i + 200));
  expect(got.length).toBe(want.length);
}

/** The project's whole content as exact JSON text (numbers with every digit), and its ETag. */
async function exactContent(p: Project): Promise<{ text: string; etag: string | null }> {
  const r = await call('GET', p.content, { token: p.key });
  expect(r.status).toBe(200);
  return { text: exactText((parse(r.text) as any).value), etag: r.headers.get('etag') };
}

const importPath = (p: Project) => p.content.replace(/\/content$/, '/import');
const send = (
  p: Project,
  method: string,
  suffix: string,
  body?: unknown,
  token = p.key,
  headers?: Record<string, string>,
) =>
  call(method, `${importPath(p)}${suffix}`, {
    token,
    ...(body === undefined
      ? {}
      : { rawBody: stringify(body) as string, headers: { 'content-type': 'application/json', ...headers } }),
    ...(body === undefined && headers ? { headers } : {}),
  });

async function start(p: Project, token = p.key): Promise<string> {
  const r = await send(p, 'POST', '', undefined, token);
  expect(r.status).toBe(201);
  expect(r.body.session).toMatch(/^[A-Za-z0-9_-]{16}$/);
  return r.body.session;
}

/** Sends the pages in order, each again while it answers 202 (cut short by its time), as a client does. */
async function sendPages(p: Project, session: string, all: Piece[][], token = p.key, first = 1): Promise<void> {
  for (const [i, page] of all.entries()) {
    const sequence = first + i;
    let r = await send(p, 'POST', `/${session}`, { sequence, pieces: page }, token);
    while (r.status === 202) r = await send(p, 'POST', `/${session}`, { sequence, pieces: page }, token);
    expect([r.status, r.body]).toEqual([200, { sequence, applied: true }]);
  }
}

/** Commits until done; returns how many 202s came first, and the ETag the switch answered. */
async function commit(p: Project, session: string, token = p.key, headers?: Record<string, string>) {
  for (let progress = 0; ; progress++) {
    const r = await send(p, 'POST', `/${session}/commit`, undefined, token, headers);
    if (r.status === 200) {
      expect(r.body).toEqual({ message: 'Content imported successfully' });
      // The switch answers the content's new version, as a write does.
      const etag = r.headers.get('etag');
      expect(etag).toMatch(/^"[A-Za-z0-9_.-]+"$/);
      return { progress, etag };
    }
    expect([r.status, typeof r.body.copied]).toEqual([202, 'number']);
  }
}

const big = (digits: string) => new LosslessNumber(digits);
const nested = (levels: number): unknown => (levels === 0 ? 'bottom' : { d: nested(levels - 1) });

/** A document with every hard case of the brief: exact numbers, prototype-named and escaped keys, 32 levels, empties, wide containers. */
function document(tag: string) {
  return {
    numbers: [
      big('123456789012345678901234567890'),
      big('-0.000000000000000000000000000012345678901234567890'),
      big('1e-130'),
      0,
      -1.5,
    ],
    constructor: { prototype: { constructor: tag } },
    prototype: [],
    'a.b': { '~1/': 'tilde one slash', 'x/y': { '~0': true } },
    '~1/': null,
    // 32 levels counting the root and the value at the bottom.
    deep: nested(30),
    empty: { object: {}, array: [], nested: [{}, [], [[]]] },
    list: Array.from({ length: 2000 }, (_, i) =>
      i % 100 === 0 ? { i, tag, n: big(`9${'0'.repeat(29)}${i}`) } : `${tag}-${i}`,
    ),
    wide: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`m${i}`, i % 7 === 0 ? { i } : `${tag}${i}`])),
  };
}

async function importDocument(p: Project, doc: unknown, token = p.key): Promise<string> {
  const session = await start(p, token);
  await sendPages(p, session, pages(cut(doc)), token);
  await commit(p, session, token);
  return session;
}

/** Items of the table under a partition, by sort-key prefix. */
async function countItems(pk: string, prefix = ''): Promise<number> {
  let count = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: process.env.TABLE_NAME,
        KeyConditionExpression: prefix === '' ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': { S: pk }, ...(prefix === '' ? {} : { ':prefix': { S: prefix } }) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/** What an import may leave: nothing in its shadow, no unreachable segment, no session, no marker. */
async function leftBehind(p: Project, session: string) {
  const inc = await incarnationOf(p);
  return {
    shadow: await countItems(contentPk(shadowIncarnation(inc, session))),
    strays: await strays(p),
    sessions: await countItems(contentPk(inc), IMPORT_PREFIX),
    markers: await countItems(contentPk(inc), MARKER_PREFIX),
  };
}
const nothing = { shadow: 0, strays: { orphans: [], dangling: [] }, sessions: 0, markers: 0 };

/** One run of the sweeper that settles what is older than now, not what other suites are doing this instant. */
async function sweepNow() {
  await new Promise((resolve) => setTimeout(resolve, 20));
  const before = process.env.SWEEP_AFTER_MS;
  process.env.SWEEP_AFTER_MS = '10';
  try {
    return await sweepHandler();
  } finally {
    if (before === undefined) delete process.env.SWEEP_AFTER_MS;
    else process.env.SWEEP_AFTER_MS = before;
  }
}

const OLD = { keep: 'me', list: [1, 2, 3], n: big('1.00000000000000000000000000001') };

describe('import: a whole content replaced atomically', () => {
  const clients: Client[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  it('round-trips exactly (digits, keys, 32 levels, empties, 2,000-wide): a new ETag, one realtime message, one history entry', async () => {
    const p = await project({ old: 'content', list: [1, 2] });
    const before = await exactContent(p);
    // A webhook of the whole content, to a receiver here: it is told to read the content, once.
    const deliveries: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        deliveries.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const hook = await call('POST', `/api/${p.username}/${p.slug}/webhooks`, {
      token: p.owner,
      body: { url: hookUrl },
    });
    expect(hook.status).toBe(201);
    const c = await Client.open();
    clients.push(c);
    await c.subscribe({ project: `${p.username}/${p.slug}`, token: p.key });
    const doc = document('t');
    const all = pages(cut(doc));
    expect(all.length).toBeGreaterThan(2);
    const session = await start(p);
    await sendPages(p, session, all);
    const { progress } = await commit(p, session);
    expect(progress).toBeGreaterThanOrEqual(0);
    const after = await exactContent(p);
    expectSameText(after.text, exactText(doc));
    expect(after.etag).not.toBe(before.etag);
    // One message at the root for the whole import, and nothing else.
    const message = await c.next();
    expect(message).toMatchObject({ type: 'changed', revision: expect.stringMatching(/^\d+$/) });
    await c.quiet(1000);
    // One history entry, by the key, `import`, too large to keep.
    let entries: any[] = [];
    for (let i = 0; i < 100 && entries.length === 0; i++) {
      const h = await call('GET', `${p.content}/history`, { token: p.key });
      entries = h.body.entries.filter((e: any) => e.operation === 'import');
      if (entries.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(entries).toEqual([expect.objectContaining({ actor: { kind: 'key', id: p.keyId }, changes: 'changed' })]);
    // (The project's first write may reach the webhook too: a polled stream delivers it after the webhook exists.)
    const ofImport = () => deliveries.map((d) => JSON.parse(d)).filter((d) => d.revision === message.revision);
    for (let i = 0; i < 300 && ofImport().length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    receiver.close();
    expect(ofImport()).toEqual([{ project: `${p.username}/${p.slug}`, revision: message.revision, truncated: true }]);
    expect(await leftBehind(p, session)).toEqual(nothing);
    // Every member reads at its own path (found by a bench: members of an imported bucketed object were looked for in
    // the bucket the copied stub's key hashes to, and answered 404), and the content takes ordinary writes anywhere.
    for (const path of ['wide.m0', 'wide.m5', 'wide.m1999', 'list.0', 'list.1999', 'deep.d.d.d', 'a\\.b.~1/'])
      expect((await call('GET', `${p.content}?path=${encodeURIComponent(path)}`, { token: p.key })).status).toBe(200);
    const write = await call('POST', `${p.content}/push`, { token: p.key, body: { path: 'list', value: 'more' } });
    expect(write.status).toBe(200);
    for (const [path, value] of [
      ['wide.m5', 5],
      ['wide.m1998', 'changed'],
      ['wide.added', true],
    ] as const) {
      const set = await call('POST', `${p.content}/set`, { token: p.key, body: { path, value } });
      expect(set.status).toBe(200);
      expect((await call('GET', `${p.content}?path=${path}`, { token: p.key })).body.value).toEqual(value);
    }
    expect((await call('GET', `${p.content}?path=list.2000`, { token: p.key })).body.value).toBe('more');
    const wide = (await call('GET', `${p.content}?path=wide`, { token: p.key })).body.value;
    expect(Object.keys(wide)).toHaveLength(2001);
    expect([wide.m5, wide.m1998, wide.added]).toEqual([5, 'changed', true]);
  });

  it('is atomic: between pages and during the copy every GET answers the old content', async () => {
    const p = await project(OLD);
    const old = await exactContent(p);
    const doc = document('atomic');
    const session = await start(p);
    for (const [i, page] of pages(cut(doc)).entries()) {
      await sendPages(p, session, [page], p.key, i + 1);
      expect(await exactContent(p)).toEqual(old);
    }
    // Commit calls with almost no time left copy a little each and answer with their progress; the content is the
    // old one after each.
    const seen: number[] = [];
    let done = false;
    for (let i = 0; i < 200 && !done; i++) {
      // A call's budget is its deadline less 2.5 s: from 20 ms, a little more each time, until some copying happens.
      const r = await withDeadline(Date.now() + 2_520 + 10 * i, () => commitImport(ownerCaller(p), session, {}));
      done = r.done;
      if (r.done) break;
      seen.push(r.copied);
      expect(await exactContent(p)).toEqual(old);
    }
    expect(seen.some((copied) => copied > 0)).toBe(true);
    if (!done) await commit(p, session);
    expectSameText((await exactContent(p)).text, exactText(doc));
  });

  it('goes on with a page cut short by its time when it comes again; another page, or a commit, is refused until then', async () => {
    const p = await project(OLD);
    const old = await exactContent(p);
    const doc = document('resumed');
    const [first, second, ...rest] = pages(cut(doc));
    const session = await start(p);
    await sendPages(p, session, [first as Piece[]]);
    // The second page with no time to write anything: it keeps how far it got (nothing) and answers so.
    // (Its pieces as the route reads them from a body: the page's digest is over what the server parsed.)
    const parsed = parseJson(stringify(second) as string) as unknown[];
    const cutShort = await withDeadline(Date.now() + 2_500, () =>
      applyImportPage(ownerCaller(p), session, { sequence: 2, pieces: parsed }),
    );
    expect(cutShort).toEqual({ partial: { done: 0, of: expect.any(Number) } });
    expect(await exactContent(p)).toEqual(old);
    expectError(await send(p, 'POST', `/${session}`, { sequence: 2, pieces: first }), 409, 'IMPORT_OUT_OF_ORDER');
    expectError(await send(p, 'POST', `/${session}`, { sequence: 3, pieces: rest[0] }), 409, 'IMPORT_OUT_OF_ORDER');
    expectError(await send(p, 'POST', `/${session}/commit`), 409, 'IMPORT_OUT_OF_ORDER');
    await sendPages(p, session, [second as Piece[], ...rest], p.key, 2);
    await commit(p, session);
    expectSameText((await exactContent(p)).text, exactText(doc));
  });

  it('applies a retried page once, refuses pages out of order (409) and bad pieces (400)', async () => {
    const p = await project(OLD);
    const session = await start(p);
    const page1 = [
      { path: '', value: {} },
      { path: '/list', value: [] },
      { path: '/list/0', value: 'a' },
    ];
    expect((await send(p, 'POST', `/${session}`, { sequence: 1, pieces: page1 })).body).toEqual({
      sequence: 1,
      applied: true,
    });
    // The same page again (its answer lost): 200, nothing applied again.
    expect((await send(p, 'POST', `/${session}`, { sequence: 1, pieces: page1 })).body).toEqual({
      sequence: 1,
      applied: false,
    });
    expectError(
      await send(p, 'POST', `/${session}`, { sequence: 3, pieces: [{ path: '/x', value: 1 }] }),
      409,
      'IMPORT_OUT_OF_ORDER',
    );
    for (const bad of [
      [{ path: '/list/2', value: 'gap' }],
      [{ path: '/list/x', value: 'key on an array' }],
      [{ path: '/nope/a', value: 'below no open container' }],
      [{ path: '', value: {} }],
      [{ path: '/__proto__', value: 1 }],
      '[{"path": "/a", "value": {"b": {"__proto__": 1}}}]',
      [{ path: '/', value: 'empty key' }],
      [{ path: 'a', value: 'not a pointer' }],
      [{ path: '/a~2', value: 'bad escape' }],
      [{ path: '/a' }],
      [{ path: '/a', value: 1, extra: true }],
      [{ path: '/a', value: nested(31) }],
      [],
    ]) {
      const pieces = typeof bad === 'string' ? bad : JSON.stringify(bad);
      const r = await call('POST', `${importPath(p)}/${session}`, {
        token: p.key,
        rawBody: `{"sequence": 2, "pieces": ${pieces}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectError(r, 400, 'INVALID_PIECES');
    }
    // Nothing of a refused page applied: page 2 is still the next, and builds on page 1.
    expect(
      (await send(p, 'POST', `/${session}`, { sequence: 2, pieces: [{ path: '/list/1', value: 'b' }] })).status,
    ).toBe(200);
    expect((await commit(p, session)).progress).toBeGreaterThanOrEqual(0);
    expect((await state(p)).value).toEqual({ list: ['a', 'b'] });
    // Done: the session is gone.
    expectError(
      await send(p, 'POST', `/${session}`, { sequence: 3, pieces: [{ path: '/z', value: 1 }] }),
      404,
      'IMPORT_NOT_FOUND',
    );
    expectError(await send(p, 'POST', '/AAAAAAAAAAAAAAAA/commit'), 404, 'IMPORT_NOT_FOUND');
    expectError(await send(p, 'POST', '/not-a-session/commit'), 404, 'IMPORT_NOT_FOUND');
  });

  it("is the owner's or an unscoped writing key's: members, scoped or read-only keys 403, nobody 401", async () => {
    const p = await project(OLD);
    const scoped = await newKey(p, ['content:read', 'content:write']);
    const { key: scopedKey } = await (await import('../../lib/store/accounts')).createApiKey(
      { username: p.username, slug: p.slug },
      { name: 'scoped', permissions: ['content:read', 'content:write'], paths: ['keep'] },
    );
    const reader = await newKey(p, ['content:read']);
    const editor = await newUser(p, 'editor');
    const viewer = await newUser(p, 'viewer');
    for (const token of [scopedKey, reader.key, editor.token, viewer.token])
      expectError(await send(p, 'POST', '', undefined, token), 403, 'FORBIDDEN');
    expect((await call('POST', importPath(p))).status).toBe(401);
    // The owner's session and a whole-content writing key import.
    await importDocument(p, { by: 'owner' }, p.owner);
    expect((await state(p)).value).toEqual({ by: 'owner' });
    await importDocument(p, { by: 'key' }, scoped.key);
    expect((await state(p)).value).toEqual({ by: 'key' });
    // Another's session is refused to a member as its start was.
    const session = await start(p);
    expectError(await send(p, 'POST', `/${session}/commit`, undefined, editor.token), 403, 'FORBIDDEN');
    expectError(await send(p, 'DELETE', `/${session}`, undefined, editor.token), 403, 'FORBIDDEN');
  });

  describe('cut at any step: the old content intact, and after the sweeper nothing behind', () => {
    const doc = document('cut');
    const all = pages(cut(doc));

    it.each<[string, (p: Project, session: string) => Promise<void>]>([
      ['after its start', async () => {}],
      ['after some pages', async (p, session) => sendPages(p, session, all.slice(0, 2))],
      [
        'in the middle of the copy',
        async (p, session) => {
          await sendPages(p, session, all);
          // Calls with little time until some items are copied (not all: the copy is then cut there).
          for (let i = 0; ; i++) {
            const r = await withDeadline(Date.now() + 2_520 + 5 * i, () => commitImport(ownerCaller(p), session, {}));
            expect(r.done).toBe(false);
            if (!r.done && r.copied > 0) break;
          }
        },
      ],
      [
        'at a switch refused by If-Match',
        async (p, session) => {
          await sendPages(p, session, all);
          const r = await send(p, 'POST', `/${session}/commit`, undefined, p.key, { 'if-match': '"stale"' });
          // Copied first (202s), then refused at the switch.
          expect([202, 412]).toContain(r.status);
          for (let i = 0; i < 100; i++) {
            const again = await send(p, 'POST', `/${session}/commit`, undefined, p.key, { 'if-match': '"stale"' });
            if (again.status === 412) return;
            expect(again.status).toBe(202);
          }
        },
      ],
      [
        'abandoned with DELETE',
        async (p, session) => {
          await sendPages(p, session, all.slice(0, 1));
          const r = await send(p, 'DELETE', `/${session}`);
          expect(r.status).toBe(200);
          expectError(await send(p, 'POST', `/${session}/commit`), 404, 'IMPORT_NOT_FOUND');
        },
      ],
    ])('%s', async (_, step) => {
      const p = await project(OLD);
      const old = await exactContent(p);
      const session = await start(p);
      await step(p, session);
      expect(await exactContent(p)).toEqual(old);
      await sweepNow();
      expect(await leftBehind(p, session)).toEqual(nothing);
      expect(await exactContent(p)).toEqual(old);
      expectError(await send(p, 'POST', `/${session}/commit`), 404, 'IMPORT_NOT_FOUND');
    });
  });

  it("a commit with the content's ETag in If-Match switches, answering the new one; its copy is never swept after", async () => {
    const p = await project(OLD);
    const { etag } = await state(p);
    const session = await start(p);
    await sendPages(p, session, pages(cut({ fresh: true })));
    const switched = await commit(p, session, p.key, { 'if-match': etag as string });
    // The ETag it answers is the new content's: a write conditioned on it lands.
    expect(await state(p)).toEqual({ value: { fresh: true }, etag: switched.etag });
    const next = await call('POST', `${p.content}/set`, {
      token: p.key,
      body: { path: 'fresh', value: false },
      headers: { 'if-match': switched.etag as string },
    });
    expect(next.status).toBe(200);
    await sweepNow();
    expect((await state(p)).value).toEqual({ fresh: false });
    expect(await leftBehind(p, session)).toEqual(nothing);
  });
});

/** The project's owner as the engine's caller (for commit calls made in this process, with a deadline of their own). */
function ownerCaller(p: Project) {
  return {
    project: { username: p.username, slug: p.slug },
    principal: { kind: 'user' as const, username: p.username },
  };
}
