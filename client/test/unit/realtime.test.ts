// The realtime helper's timing and state without a server: a fake WebSocket and fake timers prove the URL, the
// keep-alive, the backoff (growth, ceiling, reset), resuming with `since`, and that stale or foreign frames are ignored.
import { createClient } from '../../src/index';
import { type RealtimeEvent, type SubscribeOptions, subscribe } from '../../src/realtime';

class FakeSocket {
  static all: FakeSocket[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  sent: any[] = [];
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {
    this.closed = true;
  }
  /** Opens, and lets the helper send its subscribe (it awaits the credential). */
  async open() {
    this.onopen?.({});
    await jest.advanceTimersByTimeAsync(0);
  }
  frame(frame: unknown) {
    this.onmessage?.({ data: typeof frame === 'string' ? frame : JSON.stringify(frame) });
  }
  drop() {
    this.onclose?.({});
  }
}

const WebSocket = FakeSocket as unknown as NonNullable<SubscribeOptions['WebSocket']>;
const last = () => FakeSocket.all.at(-1) as FakeSocket;
const site = (baseUrl = 'http://127.0.0.1:4123', credential: string | (() => Promise<string>) = 'capi_k') =>
  createClient({ baseUrl, credential }).project('@alice/site');

beforeEach(() => {
  FakeSocket.all = [];
  jest.useFakeTimers();
  jest.spyOn(Math, 'random').mockReturnValue(0.999999);
});
afterEach(() => {
  jest.useRealTimers();
  jest.restoreAllMocks();
});

/** A subscription whose socket is open and subscribed as `id`. */
async function live(opts: SubscribeOptions = {}, events: RealtimeEvent[] = []) {
  const sub = subscribe(site(), 'data', (e) => events.push(e), { WebSocket, ...opts });
  await last().open();
  last().frame({ type: 'subscribed', id: 's1', path: 'data' });
  return { sub, events };
}

describe('subscribe: the connection', () => {
  it.each([
    ['http://127.0.0.1:4123', {}, 'ws://127.0.0.1:4123/realtime'],
    ['https://api.example.com/', {}, 'wss://api.example.com/realtime'],
    [
      'https://api.example.com',
      { realtimeUrl: 'wss://x.execute-api.eu-west-1.amazonaws.com/prod' },
      'wss://x.execute-api.eu-west-1.amazonaws.com/prod',
    ],
  ])('%s %j connects to %s', (baseUrl, opts, url) => {
    subscribe(site(baseUrl), '', () => {}, { WebSocket, ...opts }).close();
    expect(last().url).toBe(url);
  });

  it('uses the global WebSocket when none is passed', () => {
    const original = (globalThis as { WebSocket?: unknown }).WebSocket;
    (globalThis as { WebSocket?: unknown }).WebSocket = FakeSocket;
    try {
      subscribe(site(), '', () => {}).close();
      expect(FakeSocket.all).toHaveLength(1);
    } finally {
      (globalThis as { WebSocket?: unknown }).WebSocket = original;
    }
  });

  it('without a global WebSocket or opts.WebSocket, refuses at once rather than retrying forever', () => {
    const original = (globalThis as { WebSocket?: unknown }).WebSocket;
    delete (globalThis as { WebSocket?: unknown }).WebSocket;
    try {
      expect(() => subscribe(site(), '', () => {})).toThrow(/opts\.WebSocket/);
    } finally {
      (globalThis as { WebSocket?: unknown }).WebSocket = original;
    }
  });

  it('sends subscribe with the credential, the path (none for the whole content) and since', async () => {
    subscribe(site(), '', () => {}, { WebSocket, since: '0041' });
    await last().open();
    expect(last().sent).toEqual([
      { action: 'subscribe', project: '@alice/site', token: 'capi_k', since: '0041', ref: '1' },
    ]);
  });

  it('pings every 5 minutes by default (API Gateway idles at 10), or every keepAlive ms', async () => {
    await live();
    const socket = last();
    await jest.advanceTimersByTimeAsync(299_999);
    expect(socket.sent).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(socket.sent.at(-1)).toEqual({ action: 'ping' });
    await jest.advanceTimersByTimeAsync(300_000);
    expect(socket.sent.filter((m) => m.action === 'ping')).toHaveLength(2);
  });

  it('close() sends unsubscribe with the id, closes, stops pinging and never reconnects', async () => {
    const { sub } = await live({ keepAlive: 1000 });
    const socket = last();
    sub.close();
    expect(socket.sent.at(-1)).toEqual({ action: 'unsubscribe', id: 's1' });
    expect(socket.closed).toBe(true);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(socket.sent.at(-1)).toEqual({ action: 'unsubscribe', id: 's1' });
    expect(FakeSocket.all).toHaveLength(1);
  });
});

describe('subscribe: events and revisions', () => {
  it('delivers snapshot, change and changed without the id; ignores stale, repeated, foreign and malformed frames', async () => {
    const { sub, events } = await live({ since: '0010' });
    const socket = last();
    socket.frame({ type: 'change', id: 's1', revision: '0009', changes: [{ path: 'data.a', value: 0 }] });
    socket.frame({ type: 'change', id: 's1', revision: '0010', changes: [{ path: 'data.a', value: 0 }] });
    socket.frame({ type: 'change', id: 's1', revision: '0012', changes: [{ path: 'data.a', value: 1 }] });
    socket.frame({ type: 'change', id: 's1', revision: '0012', changes: [{ path: 'data.a', value: 1 }] });
    socket.frame({ type: 'change', id: 'other', revision: '0013', changes: [] });
    socket.frame('not json');
    socket.frame('null');
    socket.frame({ type: 'pong' });
    socket.frame({ type: 'changed', id: 's1', revision: '0014' });
    socket.frame({ type: 'snapshot', id: 's1', revision: '0100', missing: true });
    socket.frame({ type: 'change', id: 's1', revision: '99', changes: [] });
    expect(events).toEqual([
      { type: 'change', revision: '0012', changes: [{ path: 'data.a', value: 1 }] },
      { type: 'changed', revision: '0014' },
      { type: 'snapshot', revision: '0100', missing: true },
    ]);
    expect(sub.revision).toBe('0100');
  });

  it('revoked ends the subscription: no reconnect', async () => {
    const { events } = await live();
    last().frame({ type: 'revoked', id: 's1' });
    expect(events).toEqual([{ type: 'revoked' }]);
    expect(last().closed).toBe(true);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it.each(['UNAUTHORIZED', 'FORBIDDEN', 'PROJECT_NOT_FOUND', 'INVALID_PATH', 'UNKNOWN_FIELD', 'LIMIT_REACHED'])(
    'an error %s ends the subscription (retrying: false)',
    async (code) => {
      const events: RealtimeEvent[] = [];
      subscribe(site(), 'data', (e) => events.push(e), { WebSocket });
      await last().open();
      last().frame({ type: 'error', code, message: 'no' });
      expect(events).toEqual([{ type: 'error', code, message: 'no', retrying: false }]);
      await jest.advanceTimersByTimeAsync(120_000);
      expect(FakeSocket.all).toHaveLength(1);
    },
  );

  it.each(['SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'])('an error %s reconnects (retrying: true)', async (code) => {
    const { events } = await live({ retryDelay: 100 });
    last().frame({ type: 'error', code, message: 'later' });
    expect(events).toEqual([{ type: 'error', code, message: 'later', retrying: true }]);
    await jest.advanceTimersByTimeAsync(100);
    expect(FakeSocket.all).toHaveLength(2);
  });
});

describe('subscribe: reconnecting', () => {
  it('backs off with full jitter, doubling to the ceiling, and resets once subscribed again', async () => {
    let calls = 0;
    const credential = async () => `jwt-${++calls}`;
    const sub = subscribe(site(undefined, credential), 'data', () => {}, {
      WebSocket,
      retryDelay: 100,
      maxRetryDelay: 350,
    });
    await last().open();
    last().frame({ type: 'subscribed', id: 's1', path: 'data' });
    last().frame({ type: 'snapshot', id: 's1', revision: '0005', value: {} });
    // Math.random is ~1: each wait is its bound, 100, 200, 350 (the ceiling), 350.
    for (const wait of [100, 200, 350, 350]) {
      const count = FakeSocket.all.length;
      last().drop();
      await jest.advanceTimersByTimeAsync(wait - 2);
      expect(FakeSocket.all).toHaveLength(count);
      await jest.advanceTimersByTimeAsync(2);
      expect(FakeSocket.all).toHaveLength(count + 1);
      await last().open();
    }
    // Every connect asked the credential afresh and resumed from the last revision.
    expect(FakeSocket.all.map((s) => s.sent[0])).toEqual(
      [1, 2, 3, 4, 5].map((n) => ({
        action: 'subscribe',
        project: '@alice/site',
        token: `jwt-${n}`,
        path: 'data',
        since: n === 1 ? undefined : '0005',
        ref: '1',
      })),
    );
    last().frame({ type: 'subscribed', id: 's2', path: 'data' });
    last().drop();
    await jest.advanceTimersByTimeAsync(100);
    expect(FakeSocket.all).toHaveLength(6);
    expect(sub.revision).toBe('0005');
  });

  it('a socket error or a credential that throws reconnects too', async () => {
    let fail = true;
    const credential = async () => {
      if (fail) throw new Error('token endpoint down');
      return 'jwt';
    };
    subscribe(site(undefined, credential), '', () => {}, { WebSocket, retryDelay: 10 });
    await last().open();
    expect(last().sent).toEqual([]);
    expect(last().closed).toBe(true);
    await jest.advanceTimersByTimeAsync(10);
    fail = false;
    last().onerror?.({});
    await jest.advanceTimersByTimeAsync(20);
    expect(FakeSocket.all).toHaveLength(3);
    await last().open();
    expect(last().sent).toEqual([{ action: 'subscribe', project: '@alice/site', token: 'jwt', ref: '1' }]);
  });
});

describe('one connection per client', () => {
  it('carries every subscription of the client, each named by its ref; answers find theirs in any order', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:4123', credential: 'capi_k' });
    // Two projects of one client.
    const s = client.project('@alice/site');
    const other = client.project('@bob/blog');
    const a: RealtimeEvent[] = [];
    const b: RealtimeEvent[] = [];
    const subA = subscribe(s, 'a', (e) => a.push(e), { WebSocket });
    const subB = subscribe(other, 'a', (e) => b.push(e), { WebSocket });
    await last().open();
    expect(FakeSocket.all).toHaveLength(1);
    expect(last().sent).toEqual([
      { action: 'subscribe', project: '@alice/site', token: 'capi_k', path: 'a', ref: '1' },
      { action: 'subscribe', project: '@bob/blog', token: 'capi_k', path: 'a', ref: '2' },
    ]);
    // Same path, two projects: the refs tell the answers apart, whichever comes first.
    last().frame({ type: 'subscribed', id: 'idB', path: 'a', ref: '2' });
    last().frame({ type: 'subscribed', id: 'idA', path: 'a', ref: '1' });
    last().frame({ type: 'snapshot', id: 'idA', revision: '5', value: 'alice' });
    last().frame({ type: 'snapshot', id: 'idB', revision: '9', value: 'bob' });
    expect(a).toEqual([{ type: 'snapshot', revision: '5', value: 'alice' }]);
    expect(b).toEqual([{ type: 'snapshot', revision: '9', value: 'bob' }]);
    // A third, added while the connection is open, goes on it; a refusal by its ref ends it alone.
    const c: RealtimeEvent[] = [];
    subscribe(s, 'c', (e) => c.push(e), { WebSocket });
    await jest.advanceTimersByTimeAsync(0);
    expect(last().sent.at(-1)).toMatchObject({ action: 'subscribe', path: 'c', ref: '3' });
    last().frame({ type: 'error', code: 'FORBIDDEN', message: 'no', ref: '3' });
    expect(c).toEqual([{ type: 'error', code: 'FORBIDDEN', message: 'no', retrying: false }]);
    expect(last().closed).toBe(false);
    // A dropped connection resumes each with its own revision, on one new connection.
    last().drop();
    await jest.advanceTimersByTimeAsync(1000);
    expect(FakeSocket.all).toHaveLength(2);
    await last().open();
    expect(last().sent).toEqual([
      { action: 'subscribe', project: '@alice/site', token: 'capi_k', path: 'a', since: '5', ref: '1' },
      { action: 'subscribe', project: '@bob/blog', token: 'capi_k', path: 'a', since: '9', ref: '2' },
    ]);
    last().frame({ type: 'subscribed', id: 'idA2', path: 'a', ref: '1' });
    last().frame({ type: 'subscribed', id: 'idB2', path: 'a', ref: '2' });
    // Closing one unsubscribes it and keeps the connection; closing the last closes it.
    subA.close();
    expect(last().sent.at(-1)).toEqual({ action: 'unsubscribe', id: 'idA2' });
    expect(last().closed).toBe(false);
    subB.close();
    expect(last().closed).toBe(true);
    // The client subscribes again later: a new connection.
    subscribe(s, 'd', () => {}, { WebSocket });
    expect(FakeSocket.all).toHaveLength(3);
  });
});
