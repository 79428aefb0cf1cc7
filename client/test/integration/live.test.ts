// onValue against the local server: one WebSocket carries all of a client's subscriptions (50 here), each showing the
// whole value at its path after every write; a dropped connection resumes each with `since`; a change too large to
// send (`changed`) is read with GET.
import { isDeepStrictEqual } from 'node:util';
import WebSocket from 'ws';
import { type Project, newProject } from '../../../test/support/api';
import { WAIT_MS } from '../../../test/support/realtime';
import { createClient } from '../../src/index';
import { type Subscription, type SubscribeOptions, type ValueMeta, onValue } from '../../src/realtime';

const site = (p: Project) =>
  createClient({ baseUrl: process.env.TEST_API_URL as string, credential: p.key, retryDelay: 10 }).project(
    `${p.username}/${p.slug}`,
  );

/** The `ws` package's WebSocket, remembering every socket and what it sent. */
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

/** What an onValue callback was last given, and a wait for a value that satisfies a test. */
function latest() {
  const seen: Array<{ value: unknown; meta: ValueMeta }> = [];
  return {
    seen,
    callback: (value: unknown, meta: ValueMeta) => {
      seen.push({ value, meta });
    },
    async until(test: (value: unknown, meta: ValueMeta) => boolean): Promise<{ value: unknown; meta: ValueMeta }> {
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const last = seen.at(-1);
        if (last && test(last.value, last.meta)) return last;
        if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms; last: ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

/** Deep equality, object keys in any order (an engine's reads need not keep the order they were written in). */
const same = (expected: unknown) => (value: unknown) => isDeepStrictEqual(value, expected);

const subscriptions: Subscription[] = [];
afterEach(() => {
  for (const s of subscriptions.splice(0)) s.close();
});

describe('onValue against the local server', () => {
  it('50 subscriptions on one WebSocket: each the whole value at its path, after writes inside, above and beside it', async () => {
    const p = await newProject();
    const s = site(p);
    const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
    await s.update({ k: Object.fromEntries(keys.map((k, i) => [k, { n: i, tags: ['a'] }])) });
    const { sockets, WebSocket } = tracked();
    const views = keys.map((k) => {
      const view = latest();
      subscriptions.push(onValue(s, `k.${k}`, view.callback, { WebSocket }));
      return view;
    });
    for (const [i, view] of views.entries()) {
      const { meta } = await view.until(same({ n: i, tags: ['a'] }));
      expect(meta).toEqual({ revision: expect.stringMatching(/^\d+$/), pending: false });
    }
    // Inside one path, the array grown; then one write above all of them; then a key removed.
    await s.push('k.k7.tags', 'b');
    await views[7]!.until(same({ n: 7, tags: ['a', 'b'] }));
    await s.batch(keys.map((k, i) => ({ op: 'increment' as const, path: `k.${k}.n`, value: i })));
    for (const [i, view] of views.entries()) {
      await view.until(same({ n: 2 * i, tags: i === 7 ? ['a', 'b'] : ['a'] }));
    }
    await s.set('k', { k3: 'replaced' });
    await views[3]!.until(same('replaced'));
    await views[4]!.until((value) => value === undefined);
    expect(sockets).toHaveLength(1);
    const subscribes = sockets[0]!.sent.filter((m) => m.action === 'subscribe');
    expect(subscribes.map((m) => m.path)).toEqual(keys.map((k) => `k.${k}`));
    // Each subscription's own ref, so the 50 answers find their callbacks however they interleave.
    expect(new Set(subscribes.map((m) => m.ref)).size).toBe(50);
  });

  it('a dropped connection resumes every subscription with since: changes made meanwhile arrive, nothing twice', async () => {
    const p = await newProject();
    const s = site(p);
    await s.update({ a: { list: [] }, b: 0 });
    const { sockets, WebSocket } = tracked();
    const a = latest();
    const b = latest();
    subscriptions.push(onValue(s, 'a.list', a.callback, { WebSocket, retryDelay: 10 }));
    subscriptions.push(onValue(s, 'b', b.callback, { WebSocket, retryDelay: 10 }));
    await a.until(same([]));
    const { meta } = await b.until(same(0));
    sockets[0]!.terminate();
    await s.push('a.list', 1);
    await s.increment('b', 5);
    await a.until(same([1]));
    await b.until(same(5));
    await s.push('a.list', 2);
    await a.until(same([1, 2]));
    expect(sockets).toHaveLength(2);
    const resumed = sockets[1]!.sent.filter((m) => m.action === 'subscribe');
    expect(resumed).toHaveLength(2);
    for (const m of resumed) expect(m.since).toMatch(/^\d+$/);
    expect(resumed.find((m) => m.path === 'b')!.since).toBe(meta.revision);
    // Every value shown along the way was a value the path had: never a change applied twice.
    expect(a.seen.map((x) => JSON.stringify(x.value))).toEqual(expect.arrayContaining(['[]', '[1]', '[1,2]']));
    expect(new Set(a.seen.map((x) => JSON.stringify(x.value)))).toEqual(new Set(['[]', '[1]', '[1,2]']));
  });

  it('a value too large for a message (changed) is read with GET, then kept by the changes after it', async () => {
    const p = await newProject();
    const s = site(p);
    const big = Array.from({ length: 300 }, (_, i) => `${i}`.padEnd(600, 'x'));
    await s.set('data.big', big);
    const gets = jest.spyOn(s, 'get');
    const view = latest();
    subscriptions.push(onValue(s, 'data', view.callback, { WebSocket: tracked().WebSocket }));
    await view.until(same({ big }));
    // Over 128 KB: the snapshot came as `changed`, and the value was read.
    expect(gets.mock.calls).toEqual([['data']]);
    await s.set('data.small', 1);
    await view.until(same({ big, small: 1 }));
    const bigger = [...big, 'y'.repeat(140_000)];
    await s.set('data.big', bigger);
    await view.until(same({ big: bigger, small: 1 }));
    expect(gets).toHaveBeenCalledTimes(2);
    await s.delete('data.small');
    await view.until(same({ big: bigger }));
  });
});
