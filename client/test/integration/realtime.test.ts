// The realtime helper against the local server's /realtime: snapshot then changes, a dropped connection resumed with
// `since` (a change made while it was down arrives once), the credential asked again on reconnect, and the ends
// (revoked, a refused subscription, close) after which it never reconnects.
import WebSocket from 'ws';
import { call, newKey, newProject, type Project } from '../../../test/support/api';
import { WAIT_MS } from '../../../test/support/realtime';
import { type ClientOptions, createClient } from '../../src/index';
import { type RealtimeEvent, type SubscribeOptions, subscribe } from '../../src/realtime';

const site = (p: Project, credential: ClientOptions['credential'] = p.key) =>
  createClient({ baseUrl: process.env.TEST_API_URL as string, credential, retryDelay: 10 }).project(
    `${p.username}/${p.slug}`,
  );

/** The `ws` package's WebSocket (injected as `opts.WebSocket`), remembering every socket and what it sent. */
function tracked() {
  const sockets: Array<WebSocket & { sent: any[] }> = [];
  class Tracked extends WebSocket {
    sent: any[] = [];
    constructor(url: string) {
      super(url);
      sockets.push(this as Tracked);
    }
    override send(data: any): void {
      this.sent.push(JSON.parse(String(data)));
      super.send(data);
    }
  }
  return { sockets, WebSocket: Tracked as unknown as NonNullable<SubscribeOptions['WebSocket']> };
}

/** A subscription's events in order, read one at a time. */
function recorder() {
  const events: RealtimeEvent[] = [];
  let read = 0;
  let wake: (() => void) | undefined;
  return {
    events,
    onEvent: (event: RealtimeEvent) => {
      events.push(event);
      wake?.();
    },
    async next(): Promise<RealtimeEvent> {
      const deadline = Date.now() + WAIT_MS;
      while (read >= events.length) {
        if (Date.now() > deadline) throw new Error(`no event within ${WAIT_MS} ms (got ${JSON.stringify(events)})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 50);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      return events[read++] as RealtimeEvent;
    },
    /** Nothing more arrives within `ms`. */
    async quiet(ms = 400) {
      await new Promise((r) => setTimeout(r, ms));
      expect(events.slice(read)).toEqual([]);
    },
  };
}

const subscriptions: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of subscriptions.splice(0)) s.close();
});

describe('subscribe against the local server', () => {
  it('delivers the snapshot, then a change after a write through the client', async () => {
    const p = await newProject();
    const s = site(p);
    await s.set('data.title', 'Home');
    const { sockets, WebSocket } = tracked();
    const r = recorder();
    const sub = subscribe(s, 'data', r.onEvent, { WebSocket });
    subscriptions.push(sub);
    const snapshot = await r.next();
    expect(snapshot).toEqual({ type: 'snapshot', revision: expect.stringMatching(/^\d+$/), value: { title: 'Home' } });
    expect(sub.revision).toBe((snapshot as { revision: string }).revision);
    await s.push('data.items', { id: 1 });
    const change = await r.next();
    expect(change).toEqual({
      type: 'change',
      revision: expect.stringMatching(/^\d+$/),
      changes: [{ path: 'data.items', value: [{ id: 1 }] }],
    });
    expect(sub.revision).toBe((change as { revision: string }).revision);
    // Derived from baseUrl: http → ws, path /realtime; the credential in the message, not the URL.
    expect(sockets[0]!.url).toBe(`${(process.env.TEST_API_URL as string).replace(/^http/, 'ws')}/realtime`);
    expect(sockets[0]!.sent[0]).toEqual({ action: 'subscribe', project: s.name, token: p.key, path: 'data', ref: '1' });
  });

  it('a missing path is a snapshot with missing: true; the whole content is path ""', async () => {
    const p = await newProject();
    const s = site(p);
    const missing = recorder();
    const whole = recorder();
    subscriptions.push(subscribe(s, 'nothing.here', missing.onEvent, { WebSocket: tracked().WebSocket }));
    subscriptions.push(subscribe(s, '', whole.onEvent, { WebSocket: tracked().WebSocket }));
    expect(await missing.next()).toEqual({ type: 'snapshot', revision: expect.any(String), missing: true });
    expect(await whole.next()).toEqual({ type: 'snapshot', revision: expect.any(String), value: {} });
  });

  it('after a dropped connection, reconnects with a fresh credential and since: a change made meanwhile arrives once', async () => {
    const p = await newProject();
    const writer = site(p);
    let calls = 0;
    let whileDown: Promise<unknown> = Promise.resolve();
    // Called on every connect; on the reconnect it first writes, so that change lands while the client is away.
    const credential = async () => {
      calls++;
      if (calls === 2) await whileDown;
      return p.key;
    };
    await writer.update({ data: {} });
    const { sockets, WebSocket } = tracked();
    const r = recorder();
    subscriptions.push(subscribe(site(p, credential), 'data', r.onEvent, { WebSocket, retryDelay: 10 }));
    const snapshot = (await r.next()) as { revision: string };
    expect(snapshot).toMatchObject({ type: 'snapshot', value: {} });
    await writer.set('data.a', 1);
    const first = (await r.next()) as { revision: string };
    expect(first).toMatchObject({ type: 'change', changes: [{ path: 'data.a', value: 1 }] });

    whileDown = writer.set('data.b', 2);
    sockets[0]!.terminate();
    const missed = await r.next();
    expect(missed).toMatchObject({ type: 'change', changes: [{ path: 'data.b', value: 2 }] });
    expect(calls).toBe(2);
    expect(sockets).toHaveLength(2);
    expect(sockets[1]!.sent[0]).toEqual({
      action: 'subscribe',
      project: `${p.username}/${p.slug}`,
      token: p.key,
      path: 'data',
      since: first.revision,
      ref: '1',
    });
    // The new connection keeps delivering, and nothing came twice.
    await writer.set('data.c', 3);
    expect(await r.next()).toMatchObject({ type: 'change', changes: [{ path: 'data.c', value: 3 }] });
    await r.quiet();
    expect(r.events.map((e) => e.type)).toEqual(['snapshot', 'change', 'change', 'change']);
  });

  it('a revoked key gets revoked, and no reconnect follows', async () => {
    const p = await newProject();
    const second = await newKey(p, ['content:read']);
    const { sockets, WebSocket } = tracked();
    const r = recorder();
    subscriptions.push(subscribe(site(p, second.key), '', r.onEvent, { WebSocket, retryDelay: 10 }));
    expect(await r.next()).toMatchObject({ type: 'snapshot' });
    const revoke = await call('DELETE', `/api/${p.username}/${p.slug}/keys/${second.id}`, { token: p.owner });
    expect(revoke.status).toBe(200);
    expect(await r.next()).toEqual({ type: 'revoked' });
    await site(p).set('after', 1);
    await r.quiet();
    expect(sockets).toHaveLength(1);
    // CLOSING (2) or CLOSED (3): the helper closed it.
    expect(sockets[0]!.readyState).toBeGreaterThanOrEqual(2);
  });

  it.each([
    ['an unknown key', (p: Project) => ({ credential: 'capi_unknown', path: '' }), 'UNAUTHORIZED'],
    ['no credential', (_p: Project) => ({ credential: undefined, path: '' }), 'UNAUTHORIZED'],
    [
      'a key without content:read',
      async (p: Project) => ({ credential: (await newKey(p, ['content:write'])).key, path: '' }),
      'FORBIDDEN',
    ],
    ['a bad path', (p: Project) => ({ credential: p.key, path: 'a..b' }), 'INVALID_PATH'],
    ['a reserved key', (p: Project) => ({ credential: p.key, path: 'a.__proto__' }), 'RESERVED_KEY'],
  ])('%s: an error event that does not retry, and no reconnect', async (_, setup, code) => {
    const p = await newProject();
    const { credential, path } = await setup(p);
    const { sockets, WebSocket } = tracked();
    const r = recorder();
    const s = createClient({ baseUrl: process.env.TEST_API_URL as string, credential }).project(
      `${p.username}/${p.slug}`,
    );
    subscriptions.push(subscribe(s, path, r.onEvent, { WebSocket, retryDelay: 10 }));
    expect(await r.next()).toEqual({ type: 'error', code, message: expect.any(String), retrying: false });
    await r.quiet();
    expect(sockets).toHaveLength(1);
  });

  it('a project that does not exist: PROJECT_NOT_FOUND, no reconnect', async () => {
    const p = await newProject();
    const { sockets, WebSocket } = tracked();
    const r = recorder();
    const missing = createClient({ baseUrl: process.env.TEST_API_URL as string, credential: p.owner }).project(
      `${p.username}/no-such-project`,
    );
    subscriptions.push(subscribe(missing, '', r.onEvent, { WebSocket, retryDelay: 10 }));
    expect(await r.next()).toMatchObject({ type: 'error', code: 'PROJECT_NOT_FOUND', retrying: false });
    await r.quiet();
    expect(sockets).toHaveLength(1);
  });

  it('close() unsubscribes and closes: later writes deliver nothing', async () => {
    const p = await newProject();
    const { sockets, WebSocket } = tracked();
    const r = recorder();
    const sub = subscribe(site(p), '', r.onEvent, { WebSocket });
    expect(await r.next()).toMatchObject({ type: 'snapshot' });
    sub.close();
    expect(sockets[0]!.sent.at(-1)).toEqual({ action: 'unsubscribe', id: expect.any(String) });
    await site(p).set('x', 1);
    await r.quiet();
    expect(sockets).toHaveLength(1);
  });
});
