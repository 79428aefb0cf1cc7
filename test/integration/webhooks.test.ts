// Webhooks: the routes over HTTP (create, list, delete, limits, validation, order of checks), and deliveries through
// the local queue and the sender's code to a local receiver that verifies each signature with `standardwebhooks`.
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { fragmentBytes } from '../../lib/config/env';
import { MAX_WEBHOOKS_PER_PROJECT } from '../../lib/config/limits';
import { documents } from '../../lib/dynamo/client';
import { type LocalFifoQueue, installLocalWebhookQueue } from '../../lib/local/webhook-queue';
import { readProjectMeta } from '../../lib/store/accounts';
import { enqueueWebhookDeliveries } from '../../lib/webhooks/deliveries';
import { type DeliveryOutcome, post } from '../../lib/webhooks/sender';
import fc from 'fast-check';
import { type Project, call, expectError, newProject, newUser, unique } from '../support/api';
import { decimal } from '../support/model-generators';

const hooks = (p: { username: string; slug: string }, rest = '') => `/api/${p.username}/${p.slug}/webhooks${rest}`;
const PUBLIC_URL = 'https://93.184.215.14/hook';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local receiver: records every request, answers what `answer` says for it (default 200). */
async function receiver(answer: (request: Received, count: number) => number = () => 200) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body };
      received.push(request);
      res.writeHead(answer(request, received.filter((r) => r.path === request.path).length)).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return { received, url, close: () => new Promise((done) => server.close(done)) };
}

async function createHook(project: Project, body: Record<string, unknown>) {
  const reply = await call('POST', hooks(project), { token: project.owner, body });
  expect([reply.status, reply.body.code]).toEqual([201, undefined]);
  return reply.body as { id: string; url: string; path: string | null; secret: string; createdAt: string };
}

const incOf = async (p: Project) => (await readProjectMeta({ username: p.username, slug: p.slug }))!.inc;

describe('webhook routes', () => {
  it('creates a webhook with its secret shown once, lists it without, deletes it (204, then 404)', async () => {
    const project = await newProject();
    const created = await createHook(project, { url: PUBLIC_URL, path: 'data.items' });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      url: PUBLIC_URL,
      path: 'data.items',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const whole = await createHook(project, { url: `${PUBLIC_URL}?all=1` });
    expect(whole.path).toBeNull();
    const listed = await call('GET', hooks(project), { token: project.owner });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      webhooks: [
        {
          id: created.id,
          url: PUBLIC_URL,
          path: 'data.items',
          createdAt: created.createdAt,
          dropped: 0,
          lastDropped: null,
        },
        { id: whole.id, url: whole.url, path: null, createdAt: whole.createdAt, dropped: 0, lastDropped: null },
      ],
    });
    expect(listed.text).not.toContain('whsec_');
    const removed = await call('DELETE', hooks(project, `/${created.id}`), { token: project.owner });
    expect([removed.status, removed.text]).toEqual([204, '']);
    expectError(
      await call('DELETE', hooks(project, `/${created.id}`), { token: project.owner }),
      404,
      'WEBHOOK_NOT_FOUND',
    );
    expectError(await call('DELETE', hooks(project, '/nosuchid'), { token: project.owner }), 404, 'WEBHOOK_NOT_FOUND');
    expect(
      (await call('GET', hooks(project), { token: project.owner })).body.webhooks.map((w: { id: string }) => w.id),
    ).toEqual([whole.id]);
  });

  it('checks 401, then 404, then 403 (API keys, members who are not the owner), then 400', async () => {
    const project = await newProject();
    const editor = await newUser(project, 'editor');
    const viewer = await newUser(project, 'viewer');
    const stranger = await newUser();
    const missing = { username: project.username, slug: unique('gone') };
    const bad = { url: 'ftp://example.com' };
    for (const [method, rest, body] of [
      ['POST', '', bad],
      ['GET', '', undefined],
      ['DELETE', '/0123456789abcdef', undefined],
    ] as const) {
      expectError(await call(method, hooks(missing, rest), { body }), 401, 'UNAUTHORIZED');
      expectError(
        await call(method, hooks(project, rest), { body, token: 'csess_' + 'a'.repeat(43) }),
        401,
        'UNAUTHORIZED',
      );
      expectError(await call(method, hooks(missing, rest), { body, token: stranger.token }), 404, 'PROJECT_NOT_FOUND');
      expectError(await call(method, hooks(missing, rest), { body, token: project.owner }), 404, 'PROJECT_NOT_FOUND');
      expectError(await call(method, hooks(project, rest), { body, token: project.key }), 403, 'FORBIDDEN');
      for (const user of [editor, viewer, stranger])
        expectError(await call(method, hooks(project, rest), { body, token: user.token }), 403, 'FORBIDDEN');
    }
    expectError(await call('POST', hooks(project), { body: bad, token: project.owner }), 400, 'INVALID_WEBHOOK_URL');
    expect((await call('GET', hooks(project), { token: project.owner })).body).toEqual({ webhooks: [] });
  });

  it.each([
    ['no url', { path: 'data' }, 'INVALID_WEBHOOK_URL'],
    ['a url that is not a string', { url: 42 }, 'INVALID_WEBHOOK_URL'],
    ['an empty url', { url: '' }, 'INVALID_WEBHOOK_URL'],
    ['a relative url', { url: '/hook' }, 'INVALID_WEBHOOK_URL'],
    ['not a url', { url: 'hooks example com' }, 'INVALID_WEBHOOK_URL'],
    ['another scheme', { url: 'ftp://93.184.215.14/hook' }, 'INVALID_WEBHOOK_URL'],
    ['a javascript: url', { url: 'javascript:alert(1)' }, 'INVALID_WEBHOOK_URL'],
    [
      'http to a public host (only loopback may be http, locally)',
      { url: 'http://93.184.215.14/hook' },
      'INVALID_WEBHOOK_URL',
    ],
    ['credentials in the url', { url: 'https://user:pw@93.184.215.14/hook' }, 'INVALID_WEBHOOK_URL'],
    ['a fragment', { url: `${PUBLIC_URL}#x` }, 'INVALID_WEBHOOK_URL'],
    ['a url over 2048 characters', { url: `${PUBLIC_URL}?${'a'.repeat(2048)}` }, 'INVALID_WEBHOOK_URL'],
    ['an empty path', { url: PUBLIC_URL, path: '' }, 'INVALID_PATH'],
    ['an empty segment', { url: PUBLIC_URL, path: 'a..b' }, 'INVALID_PATH'],
    ['a bad escape', { url: PUBLIC_URL, path: 'a\\b' }, 'INVALID_PATH'],
    ['a path that is not a string', { url: PUBLIC_URL, path: 3 }, 'INVALID_PATH'],
    ['a negative index in the path', { url: PUBLIC_URL, path: 'data.items.-1' }, 'INVALID_PATH'],
    ['__proto__ in the path', { url: PUBLIC_URL, path: 'a.__proto__' }, 'RESERVED_KEY'],
    ['a path too deep', { url: PUBLIC_URL, path: Array(32).fill('a').join('.') }, 'PATH_TOO_DEEP'],
    ['an unknown field', { url: PUBLIC_URL, secret: 'mine' }, 'UNKNOWN_FIELD'],
    ['a host that does not resolve', { url: 'https://no-such-host.invalid/hook' }, 'FORBIDDEN_DESTINATION'],
  ])('refuses %s with 400, creating nothing', async (_, body, code) => {
    const project = await newProject();
    expectError(await call('POST', hooks(project), { token: project.owner, body }), 400, code);
    expect((await call('GET', hooks(project), { token: project.owner })).body).toEqual({ webhooks: [] });
  });

  it.each([
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::ffff:169.254.169.254]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    'https://[::ffff:10.0.0.1]/hook',
    'https://192.168.1.20/hook',
    'https://172.16.0.1/hook',
    'https://100.64.0.1/hook',
    'https://0.0.0.0/hook',
    'https://[::]/hook',
    'https://224.0.0.1/hook',
    'https://255.255.255.255/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://[ff02::1]/hook',
    'https://0xa9fea9fe/hook',
    'https://2852039166/hook',
  ])('refuses a destination that is not public: %s (400 FORBIDDEN_DESTINATION)', async (url) => {
    const project = await newProject();
    const reply = await call('POST', hooks(project), { token: project.owner, body: { url } });
    expectError(reply, 400, 'FORBIDDEN_DESTINATION');
    expect((await call('GET', hooks(project), { token: project.owner })).body).toEqual({ webhooks: [] });
  });

  it('keeps the per-project limit exact under concurrent registrations, and frees a place on deletion', async () => {
    const project = await newProject();
    const replies = await Promise.all(
      Array.from({ length: MAX_WEBHOOKS_PER_PROJECT + 6 }, (_, i) =>
        call('POST', hooks(project), { token: project.owner, body: { url: `${PUBLIC_URL}/${i}` } }),
      ),
    );
    const created = replies.filter((r) => r.status === 201);
    expect(created).toHaveLength(MAX_WEBHOOKS_PER_PROJECT);
    for (const refused of replies.filter((r) => r.status !== 201)) expectError(refused, 409, 'LIMIT_REACHED');
    const listed = await call('GET', hooks(project), { token: project.owner });
    expect(listed.body.webhooks).toHaveLength(MAX_WEBHOOKS_PER_PROJECT);
    expectError(
      await call('POST', hooks(project), { token: project.owner, body: { url: PUBLIC_URL } }),
      409,
      'LIMIT_REACHED',
    );
    expect((await call('DELETE', hooks(project, `/${created[0]!.body.id}`), { token: project.owner })).status).toBe(
      204,
    );
    await createHook(project, { url: PUBLIC_URL });
    expectError(
      await call('POST', hooks(project), { token: project.owner, body: { url: PUBLIC_URL } }),
      409,
      'LIMIT_REACHED',
    );
  });

  it('deletes the webhooks with the project: a project re-created under the name has none', async () => {
    const project = await newProject();
    await createHook(project, { url: PUBLIC_URL });
    await createHook(project, { url: PUBLIC_URL, path: 'a' });
    expect((await call('DELETE', `/api/${project.username}/${project.slug}`, { token: project.owner })).status).toBe(
      200,
    );
    const { Items } = await documents.send(
      new QueryCommand({
        TableName: process.env.TABLE_NAME,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `P#${project.username}/${project.slug}` },
        ConsistentRead: true,
      }),
    );
    expect(Items).toEqual([]);
    expect((await call('POST', `/api/${project.username}/${project.slug}`, { token: project.owner })).status).toBe(201);
    expect((await call('GET', hooks(project), { token: project.owner })).body).toEqual({ webhooks: [] });
    await createHook(project, { url: PUBLIC_URL });
  });
});

describe('webhook deliveries', () => {
  let queue: LocalFifoQueue;
  const outcomes: DeliveryOutcome[] = [];
  const scale = process.env.WEBHOOK_BACKOFF_SCALE;

  beforeAll(() => {
    queue = installLocalWebhookQueue((outcome) => outcomes.push(outcome));
  });
  afterAll(() => {
    queue.close();
    if (scale === undefined) delete process.env.WEBHOOK_BACKOFF_SCALE;
    else process.env.WEBHOOK_BACKOFF_SCALE = scale;
  });
  beforeEach(() => {
    // The schedule scaled by 0.01: the first steps 150-300 ms, then 300-600 ms (the 24 h window: 864 s).
    process.env.WEBHOOK_BACKOFF_SCALE = '0.01';
    process.env.WEBHOOKS_ALLOW_LOOPBACK = 'true';
  });

  const name = (p: Project) => `${p.username}/${p.slug}`;

  it('tells every webhook, whatever its path, to read the content when the whole content changed unread (an import)', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      const inc = await incOf(project);
      await createHook(project, { url: target.url('/deep'), path: 'a.b' });
      await createHook(project, { url: target.url('/all') });
      const queued = await enqueueWebhookDeliveries({
        inc,
        project: name(project),
        revision: 'r9',
        changes: [],
        unread: true,
      });
      expect(queued).toBe(2);
      await queue.idle();
      for (const path of ['/deep', '/all'])
        expect(target.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body))).toEqual([
          { project: name(project), revision: 'r9', truncated: true },
        ]);
    } finally {
      await target.close();
    }
  });

  it('POSTs each change under the path, signed the Standard Webhooks way; a tampered body fails verification', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      const inc = await incOf(project);
      const hook = await createHook(project, { url: target.url('/data'), path: 'data' });
      const all = await createHook(project, { url: target.url('/all') });
      const other = await createHook(project, { url: target.url('/other'), path: 'other.deep' });
      const queued = await enqueueWebhookDeliveries({
        inc,
        project: name(project),
        revision: 'r1',
        changes: [
          { path: 'data.items.3', value: { id: 3 } },
          { path: 'elsewhere', value: 1 },
          { path: 'data.items.0', deleted: true },
          { path: '', value: { data: { x: 1 }, other: 2 } },
        ],
      });
      expect(queued).toBe(3);
      await queue.idle();
      const at = (path: string) => target.received.filter((r) => r.path === path);
      expect(at('/data')).toHaveLength(1);
      const delivery = at('/data')[0]!;
      expect(JSON.parse(delivery.body)).toEqual({
        project: name(project),
        revision: 'r1',
        changes: [
          { path: 'data.items.3', value: { id: 3 } },
          { path: 'data.items.0', deleted: true },
          { path: 'data', value: { x: 1 } },
        ],
      });
      expect(JSON.parse(at('/all')[0]!.body).changes).toHaveLength(4);
      expect(JSON.parse(at('/other')[0]!.body).changes).toEqual([{ path: 'other.deep', deleted: true }]);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
      expect(Number(delivery.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
      expect(delivery.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      const headers = delivery.headers as Record<string, string>;
      expect(new Webhook(hook.secret).verify(delivery.body, headers)).toEqual(JSON.parse(delivery.body));
      expect(() => new Webhook(hook.secret).verify(delivery.body.replace('"id":3', '"id":4'), headers)).toThrow(
        /No matching signature/,
      );
      expect(() => new Webhook(all.secret).verify(delivery.body, headers)).toThrow(/No matching signature/);
      expect(() =>
        new Webhook(other.secret).verify(at('/other')[0]!.body, at('/other')[0]!.headers as Record<string, string>),
      ).not.toThrow();
      // Nothing under any webhook's path: nothing queued.
      expect(
        await enqueueWebhookDeliveries({
          inc,
          project: name(project),
          revision: 'r2',
          changes: [{ path: 'z', value: 1 }],
        }),
      ).toBe(1);
      expect(await enqueueWebhookDeliveries({ inc, project: name(project), revision: 'r3', changes: [] })).toBe(0);
      await queue.idle();
      expect(at('/all').map((r) => JSON.parse(r.body).revision)).toEqual(['r1', 'r2']);
      expect(at('/data')).toHaveLength(1);
    } finally {
      await target.close();
    }
  });

  it('retries a failing delivery with backoff (500, 500, then 200), in order: the next change waits behind it', async () => {
    const target = await receiver((request, count) =>
      JSON.parse(request.body).revision === 'r1' && count <= 2 ? 500 : 200,
    );
    const other = await receiver();
    try {
      const project = await newProject();
      const inc = await incOf(project);
      const hook = await createHook(project, { url: target.url('/hook'), path: 'data' });
      await createHook(project, { url: other.url('/other'), path: 'data' });
      const started = Date.now();
      for (const revision of ['r1', 'r2', 'r3'])
        await enqueueWebhookDeliveries({
          inc,
          project: name(project),
          revision,
          changes: [{ path: 'data.n', value: revision }],
        });
      // The same revision handed over again (a retried Streams batch) is delivered once.
      await enqueueWebhookDeliveries({
        inc,
        project: name(project),
        revision: 'r1',
        changes: [{ path: 'data.n', value: 'r1' }],
      });
      await queue.idle();
      const revisions = target.received.map((r) => JSON.parse(r.body).revision);
      expect(revisions).toEqual(['r1', 'r1', 'r1', 'r2', 'r3']);
      // The other webhook was not held back by the failures.
      expect(other.received.map((r) => JSON.parse(r.body).revision)).toEqual(['r1', 'r2', 'r3']);
      // One delivery id on every attempt, each attempt signed afresh.
      const ids = new Set(target.received.slice(0, 3).map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      for (const r of target.received)
        expect(() => new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      // Backoff (scaled by 0.01): at least 150 ms after the first failure and 300 ms after the second.
      expect(Date.now() - started).toBeGreaterThanOrEqual(450);
      const mine = outcomes.filter((o) => o.webhook === hook.id && o.revision === 'r1');
      expect(mine.map((o) => [o.attempt, o.result, o.outcome])).toEqual([
        [1, '500', 'retry'],
        [2, '500', 'retry'],
        [3, '200', 'delivered'],
      ]);
    } finally {
      await target.close();
      await other.close();
    }
  });

  it('drops a delivery after the retry window (24 h, scaled), recording its attempts on the webhook', async () => {
    const target = await receiver(() => 503);
    // Scaled by 0.00005: the 24 h window is 4.3 s, the steps 0.75 ms doubling to 180 ms.
    process.env.WEBHOOK_BACKOFF_SCALE = '0.00005';
    try {
      const project = await newProject();
      const inc = await incOf(project);
      const hook = await createHook(project, { url: target.url('/down') });
      await enqueueWebhookDeliveries({
        inc,
        project: name(project),
        revision: 'r9',
        changes: [{ path: 'a', value: 1 }],
      });
      await queue.idle();
      expect(target.received.length).toBeGreaterThanOrEqual(2);
      const listed = await call('GET', hooks(project), { token: project.owner });
      expect(listed.body.webhooks[0]).toEqual({
        id: hook.id,
        url: hook.url,
        path: null,
        createdAt: hook.createdAt,
        dropped: 1,
        lastDropped: { revision: 'r9', attempts: target.received.length, lastResult: '503', at: expect.any(String) },
      });
    } finally {
      await target.close();
    }
  });

  it('connects only to the addresses it checked: a host name resolving to loopback is refused before connecting', async () => {
    const target = await receiver();
    try {
      const port = new URL(target.url('/')).port;
      process.env.WEBHOOKS_ALLOW_LOOPBACK = 'false';
      // https passes the URL's form; the lookup the socket uses refuses localhost's addresses, so nothing connects.
      expect(await post(`https://localhost:${port}/x`, {}, '{}')).toBe('error: FORBIDDEN_DESTINATION');
      expect(await post(`https://127.0.0.1:${port}/x`, {}, '{}')).toBe('refused: 127.0.0.1 is loopback');
      expect(await post(`https://[::ffff:127.0.0.1]:${port}/x`, {}, '{}')).toMatch(/^refused: .* is loopback$/);
      expect(await post(`http://localhost:${port}/x`, {}, '{}')).toMatch(/^refused: url must be an https URL/);
      expect(target.received).toEqual([]);
      process.env.WEBHOOKS_ALLOW_LOOPBACK = 'true';
      expect(await post(target.url('/ok'), { 'webhook-id': 'msg_x' }, '{"a":1}')).toBe('200');
      expect(target.received.map((r) => [r.path, r.body, r.headers['webhook-id']])).toEqual([
        ['/ok', '{"a":1}', 'msg_x'],
      ]);
    } finally {
      await target.close();
    }
  });

  it('queues nothing for a deleted webhook, and delivers nothing to loopback when the local flag is off', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      const inc = await incOf(project);
      const gone = await createHook(project, { url: target.url('/gone') });
      const loop = await createHook(project, { url: target.url('/loop'), path: 'x' });
      await call('DELETE', hooks(project, `/${gone.id}`), { token: project.owner });
      process.env.WEBHOOKS_ALLOW_LOOPBACK = 'false';
      process.env.WEBHOOK_BACKOFF_SCALE = '0.00005';
      await enqueueWebhookDeliveries({
        inc,
        project: name(project),
        revision: 'r1',
        changes: [{ path: 'x', value: 1 }],
      });
      await queue.idle();
      expect(target.received).toEqual([]);
      const refused = outcomes.filter((o) => o.webhook === loop.id);
      expect(refused.length).toBeGreaterThanOrEqual(2);
      expect(refused.every((o) => o.result.startsWith('refused'))).toBe(true);
      expect(refused.at(-1)!.outcome).toBe('dropped');
    } finally {
      await target.close();
    }
  });
});

describe('webhooks end to end: a write through the API reaches the receiver through the stream consumer', () => {
  it('a committed change under the path is POSTed, signed, with the revision; one outside it is not', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      const hook = await createHook(project, { url: target.url('/e2e'), path: 'data' });
      const content = `/api/${project.username}/${project.slug}/content`;
      const write = (path: string, value: unknown) =>
        call('POST', `${content}/set`, { token: project.key, body: { path, value } });
      expect((await write('elsewhere', 1)).status).toBe(200);
      expect((await write('data', {})).status).toBe(200);
      expect((await write('data.x', { n: 1 })).status).toBe(200);
      expect((await write('data.y', 2)).status).toBe(200);
      for (let i = 0; i < 200 && target.received.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
      const bodies = target.received.map((r) => JSON.parse(r.body));
      expect(bodies).toEqual([
        {
          project: `${project.username}/${project.slug}`,
          revision: expect.stringMatching(/^\d+$/),
          changes: [{ path: 'data', value: {} }],
        },
        {
          project: `${project.username}/${project.slug}`,
          revision: expect.stringMatching(/^\d+$/),
          changes: [{ path: 'data.x', value: { n: 1 } }],
        },
        {
          project: `${project.username}/${project.slug}`,
          revision: expect.stringMatching(/^\d+$/),
          changes: [{ path: 'data.y', value: 2 }],
        },
      ]);
      expect(bodies[0].revision < bodies[1].revision && bodies[1].revision < bodies[2].revision).toBe(true);
      for (const r of target.received) {
        expect(new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(
          JSON.parse(r.body),
        );
      }
    } finally {
      await target.close();
    }
  });

  it('a change below a segment whose parent folded away (its stub held higher up) is POSTed too', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      await createHook(project, { url: target.url('/folded'), path: 'sub.n.s20' });
      const B = fragmentBytes();
      const blob = (n: number) => 'x'.repeat(Math.ceil(B * n));
      const content = `/api/${project.username}/${project.slug}/content`;
      const send = (route: string, body: unknown) => call('POST', `${content}/${route}`, { token: project.key, body });
      const sub = { n: { s20: { f0: blob(0.4), f1: blob(0.4) }, a: blob(0.3), b: blob(0.3) }, pad: blob(0.3) };
      expect((await send('update', { content: { sub } })).status).toBe(200);
      expect((await send('delete', { path: 'sub.n.a' })).status).toBe(200);
      expect((await send('delete', { path: 'sub.n.b' })).status).toBe(200);
      expect(
        (await send('set', { path: 'other', value: { x: blob(0.45), y: blob(0.45), z: blob(0.45) } })).status,
      ).toBe(200);
      expect((await send('set', { path: 'sub.n.s20.f0', value: 1 })).status).toBe(200);
      for (let i = 0; i < 200 && target.received.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
      expect(target.received.map((r) => JSON.parse(r.body).changes)).toEqual([
        [{ path: 'sub.n.s20', value: sub.n.s20 }],
        [{ path: 'sub.n.s20.f0', value: 1 }],
      ]);
    } finally {
      await target.close();
    }
  });
});

describe('webhook bodies carry exact numbers as GET gives them', () => {
  // Every route that writes a value (set, batch, JSON Patch, merge patch, increment): the receiver gets a JSON number
  // with every digit, never lossless-json's object.
  it('a 20-digit decimal through set, batch, patch and increment arrives as that JSON number', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      await createHook(project, { url: target.url('/exact'), path: 'n' });
      const content = `/api/${project.username}/${project.slug}/content`;
      const send = (method: string, path: string, rawBody: string, type = 'application/json') =>
        call(method, `${content}${path}`, { token: project.key, rawBody, headers: { 'content-type': type } });
      const big = '12345678901234567890.5';
      const writes = [
        () => send('POST', '/set', `{"path":"n.set","value":${big}}`),
        () => send('POST', '/batch', `{"operations":[{"op":"set","path":"n.batch","value":${big}}]}`),
        () => send('PATCH', '', `[{"op":"add","path":"/n/patch","value":${big}}]`, 'application/json-patch+json'),
        () => send('PATCH', '', `{"n":{"merge":${big}}}`, 'application/merge-patch+json'),
        () => send('POST', '/increment', `{"path":"n.set","value":1}`),
      ];
      for (const write of writes) expect((await write()).status).toBe(200);
      for (let i = 0; i < 200 && target.received.length < writes.length; i++)
        await new Promise((r) => setTimeout(r, 50));
      const changes = target.received.map((r) => r.body.slice(r.body.indexOf('"changes":')));
      expect(changes).toEqual([
        `"changes":[{"path":"n","value":{"set":${big}}}]}`,
        `"changes":[{"path":"n.batch","value":${big}}]}`,
        `"changes":[{"path":"n.patch","value":${big}}]}`,
        `"changes":[{"path":"n.merge","value":${big}}]}`,
        `"changes":[{"path":"n.set","value":12345678901234567891.5}]}`,
      ]);
      // GET prints the same digits.
      const read = await call('GET', `${content}?path=n.set`, { token: project.key });
      expect(read.text).toBe('{"value":12345678901234567891.5}');
    } finally {
      await target.close();
    }
  });
});

describe('webhook bodies: any exact decimal, through any writing route, arrives as GET prints it', () => {
  it('generated decimals (up to 38 digits, 1e-130 to 1e126) through set, batch, JSON Patch and merge patch', async () => {
    const target = await receiver();
    try {
      const project = await newProject();
      await createHook(project, { url: target.url('/gen'), path: 'g' });
      const content = `/api/${project.username}/${project.slug}/content`;
      expect(
        (await call('POST', `${content}/set`, { token: project.key, body: { path: 'g', value: {} } })).status,
      ).toBe(200);
      let n = 0;
      const route = fc.constantFrom('set', 'batch', 'json-patch', 'merge-patch');
      await fc.assert(
        fc.asyncProperty(decimal, route, async (number, via) => {
          const name = `k${n++}`;
          const text = number.value;
          const [method, tail, type, body] = {
            set: ['POST', '/set', 'application/json', `{"path":"g.${name}","value":${text}}`],
            batch: [
              'POST',
              '/batch',
              'application/json',
              `{"operations":[{"op":"set","path":"g.${name}","value":${text}}]}`,
            ],
            'json-patch': [
              'PATCH',
              '',
              'application/json-patch+json',
              `[{"op":"add","path":"/g/${name}","value":${text}}]`,
            ],
            'merge-patch': ['PATCH', '', 'application/merge-patch+json', `{"g":{"${name}":${text}}}`],
          }[via] as [string, string, string, string];
          const write = await call(method, `${content}${tail}`, {
            token: project.key,
            rawBody: body,
            headers: { 'content-type': type },
          });
          expect(write.status).toBe(200);
          // Deliveries come in revision order; the one of this write names its path.
          const find = () => target.received.find((r) => r.body.includes(`"path":"g.${name}"`))?.body;
          for (let i = 0; i < 200 && find() === undefined; i++) await new Promise((r) => setTimeout(r, 25));
          const delivered = find() ?? '';
          const read = await call('GET', `${content}?path=g.${name}`, { token: project.key });
          // GET: {"value":<digits>}; the webhook: ...,"changes":[{"path":"g.kN","value":<digits>}]}
          const got = read.text.slice('{"value":'.length, -1);
          expect(delivered.slice(delivered.indexOf(`"path":"g.${name}","value":`))).toBe(
            `"path":"g.${name}","value":${got}}]}`,
          );
        }),
        { numRuns: Number(process.env.PROPERTY_RUNS ?? 20) },
      );
    } finally {
      await target.close();
    }
  }, 120_000);
});
