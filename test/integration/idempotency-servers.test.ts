// An Idempotency-Key retry across API processes (issue 27, data integrity 1): three servers over one engine, each with
// its own warm memory of where paths live. Server B's write lands but its answer is lost (the client sees a 503: the
// engine applied it, every answer after that is lost, so B cannot tell); the content then moves (a cut, a fold back
// into the parent, a chunk rollover) or many other writes take the segment's request-token slots; server C, which has met the new
// layout, gets the client's retry with the same key. The write must be there exactly once.
import { type DynamoProxy, type ProxyRequest, startDynamoProxy } from '../support/dynamo-proxy';
import type { Project } from '../support/api';
import { type Servers, startServers } from '../support/servers';

interface Reply {
  status: number;
  body: any;
}

/** Padding that makes section `q` the largest member of the root: what a cut moves out first. */
const PAD = 'p'.repeat(100);
/** A scalar that takes the root (with `q`) past a 256-byte segment's budget: written beside `q`, it cuts `q` out. */
const BIG = 'x'.repeat(150);

describe('an Idempotency-Key retry on another server after a lost answer applies once', () => {
  let servers: Servers;
  let proxy: DynamoProxy;
  /** Armed: the next content write the engine applies loses its answer, and so does every one after it. */
  let armed = false;
  let lost = false;
  const A = () => servers.urls[0] as string;
  const B = () => servers.urls[1] as string;
  const C = () => servers.urls[2] as string;

  /** A write to the content's segments (not the idempotency record's, nor the access reads). */
  const contentWrite = (r: ProxyRequest) =>
    (r.operation === 'UpdateItem' || r.operation === 'TransactWriteItems') && r.body.includes('"C#');

  beforeAll(async () => {
    servers = await startServers({
      count: 3,
      env: { SEGMENT_FRAGMENT_BYTES: '256' },
      // Server B talks to the engine through a proxy that can lose answers after the engine applied a write.
      endpointFor: async (index, engine) => {
        if (index !== 1) return engine;
        proxy = await startDynamoProxy(engine, {
          observe: (request, status) => {
            if (armed && contentWrite(request) && status < 300) lost = true;
          },
        });
        proxy.setFaults((request) => {
          if (!armed || !contentWrite(request)) return undefined;
          return lost ? { when: 'after', kind: 'internal' } : { when: 'landed', kind: 'internal' };
        });
        return proxy.url;
      },
    });
  }, 180_000);
  afterAll(async () => {
    await servers?.stop();
    await proxy?.close();
  });

  async function send(
    server: string,
    project: Project,
    route: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const res = await fetch(`${server}${project.content}/${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async function read(server: string, project: Project, path?: string): Promise<unknown> {
    const query = path === undefined ? '' : `?path=${encodeURIComponent(path)}`;
    const res = await fetch(`${server}${project.content}${query}`, {
      headers: { authorization: `Bearer ${project.key}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { value: unknown }).value;
  }

  /** Sends the write to B, which applies it and loses every answer after that: the client sees the 503. */
  async function lostOnB(project: Project, route: string, body: unknown, key: string): Promise<void> {
    armed = true;
    lost = false;
    try {
      const reply = await send(B(), project, route, body, { 'idempotency-key': key });
      expect(reply.status).toBe(503);
      expect(lost).toBe(true);
    } finally {
      armed = false;
    }
  }

  async function ok(reply: Promise<Reply>): Promise<void> {
    const { status, body } = await reply;
    expect({ status, body }).toEqual({ status: 200, body: expect.objectContaining({ message: expect.any(String) }) });
  }

  interface Case {
    name: string;
    initial: Record<string, unknown>;
    route: string;
    body: unknown;
    /** What moves the written path, or takes its slot, between the lost answer and the retry (on server A). */
    between: (project: Project) => Promise<void>;
    /** What server C reads before the retry (it learns where the path lives now). */
    reads: string;
    expected: Record<string, unknown>;
  }

  /** A cut: a large value beside the section moves the section into a segment of its own. */
  const cutOut = async (project: Project) => ok(send(A(), project, 'set', { path: 'blob', value: BIG }));

  const cases: Case[] = [
    {
      name: 'push',
      initial: { q: { list: [1, 2], pad: PAD } },
      route: 'push',
      body: { path: 'q.list', value: 'once' },
      between: cutOut,
      reads: 'q.list',
      expected: { q: { list: [1, 2, 'once'], pad: PAD } },
    },
    {
      name: 'insert',
      initial: { q: { list: [1, 2], pad: PAD } },
      route: 'insert',
      body: { path: 'q.list', value: 'once', index: 1 },
      between: cutOut,
      reads: 'q.list',
      expected: { q: { list: [1, 'once', 2], pad: PAD } },
    },
    {
      name: 'increment',
      initial: { q: { n: 1, list: [1], pad: PAD } },
      route: 'increment',
      body: { path: 'q.n', value: 5 },
      between: cutOut,
      reads: 'q.n',
      expected: { q: { n: 6, list: [1], pad: PAD } },
    },
    {
      // Set is the same value twice, so applying it again shows as a later write undone.
      name: 'set with missing parents',
      initial: { q: { list: [1], pad: PAD } },
      route: 'set',
      body: { path: 'q.a.b', value: 'first' },
      between: async (project) => {
        await ok(send(A(), project, 'set', { path: 'q.a.b', value: 'later' }));
        await cutOut(project);
      },
      reads: 'q',
      expected: { q: { list: [1], a: { b: 'later' }, pad: PAD } },
    },
    {
      name: 'batch',
      initial: { q: { n: 1, list: [1], pad: PAD } },
      route: 'batch',
      body: {
        operations: [
          { op: 'push', path: 'q.list', value: 'once' },
          { op: 'increment', path: 'q.n', value: 5 },
        ],
      },
      between: cutOut,
      reads: 'q',
      expected: { q: { n: 6, list: [1, 'once'], pad: PAD } },
    },
    {
      // A test needs the content read: the retry's plan finds its own increment and refuses (409 TEST_FAILED) before
      // any write could tell; the request's record says it applied.
      name: 'batch with a test its own write made false',
      initial: { q: { n: 1, list: [1], pad: PAD } },
      route: 'batch',
      body: {
        operations: [
          { op: 'test', path: 'q.n', value: 1 },
          { op: 'increment', path: 'q.n' },
        ],
      },
      between: cutOut,
      reads: 'q',
      expected: { q: { n: 2, list: [1], pad: PAD } },
    },
    {
      // The section was cut out first; the write lands in its segment, which a delete then folds back into the root
      // (its request-token slots go with it).
      name: 'push into a section folded back into its parent',
      initial: { q: { list: [1], pad: PAD.repeat(2) }, r: 'r'.repeat(80) },
      route: 'push',
      body: { path: 'q.list', value: 'once' },
      between: async (project) => {
        await ok(send(A(), project, 'delete', { path: 'q.pad' }));
      },
      reads: 'q.list',
      expected: { q: { list: [1, 'once'] }, r: 'r'.repeat(80) },
    },
    {
      // A long array is chunked: pushes after the lost one roll the array's newest elements (ours among them) into a
      // new chunk, which carries only the rolling write's mark.
      name: 'push onto a chunked array, rolled over into a chunk since',
      initial: { log: Array.from({ length: 60 }, (_, i) => i) },
      route: 'push',
      body: { path: 'log', value: 'once' },
      between: async (project) => {
        for (let i = 0; i < 40; i++) await ok(send(A(), project, 'push', { path: 'log', value: `p${i}` }));
      },
      reads: 'log',
      expected: {
        log: [...Array.from({ length: 60 }, (_, i) => i), 'once', ...Array.from({ length: 40 }, (_, i) => `p${i}`)],
      },
    },
    {
      // 300 other writes to the same segment: the retry's request-token slot (one of 32) is taken by another.
      name: 'push after 300 other writes to its segment',
      initial: { q: { list: [1], n: 0 } },
      route: 'push',
      body: { path: 'q.list', value: 'once' },
      between: async (project) => {
        for (let round = 0; round < 30; round++)
          await Promise.all(Array.from({ length: 10 }, () => ok(send(A(), project, 'increment', { path: 'q.n' }))));
      },
      reads: 'q.list',
      expected: { q: { list: [1, 'once'], n: 300 } },
    },
  ];

  // Up to 300 writes through three servers: minutes on DynamoDB Local on a busy 2-core machine, not 30 s.
  it.each(cases.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      const project = await servers.newProject();
      await ok(send(A(), project, 'update', { content: c.initial }));
      // Every server has met the content as it was (each remembers where its paths live).
      for (const server of servers.urls) await read(server, project, c.reads);
      const key = `retry-${c.name.replace(/\W+/g, '-')}-${Date.now()}`;
      await lostOnB(project, c.route, c.body, key);
      await c.between(project);
      await read(C(), project, c.reads);
      await ok(send(C(), project, c.route, c.body, { 'idempotency-key': key }));
      // And once more on A, which has seen the content move itself.
      await ok(send(A(), project, c.route, c.body, { 'idempotency-key': key }));
      const whole = (await read(A(), project)) as Record<string, unknown>;
      delete whole.blob;
      expect(whole).toEqual(c.expected);
    },
    180_000,
  );

  it('a retry whose own write moved the version its If-Match names answers 200, not 412', async () => {
    const project = await servers.newProject();
    await ok(send(A(), project, 'update', { content: { q: { n: 1, pad: PAD } } }));
    const res = await fetch(`${A()}${project.content}?path=q.n`, {
      headers: { authorization: `Bearer ${project.key}` },
    });
    const etag = res.headers.get('etag') as string;
    const key = `retry-if-match-${Date.now()}`;
    const named = { 'idempotency-key': key, 'if-match': etag };
    armed = true;
    lost = false;
    try {
      expect((await send(B(), project, 'increment', { path: 'q.n' }, named)).status).toBe(503);
      expect(lost).toBe(true);
    } finally {
      armed = false;
    }
    await cutOut(project);
    await read(C(), project, 'q.n');
    await ok(send(C(), project, 'increment', { path: 'q.n' }, named));
    // Another request with that ETag is refused as ever: the version moved.
    const other = await send(C(), project, 'increment', { path: 'q.n' }, { 'if-match': etag });
    expect(other.status).toBe(412);
    expect(await read(A(), project, 'q.n')).toBe(2);
  });
});
