// Offline writes against the local server: a queue kept in a file across a restart (a write whose answer was lost
// and writes never sent, resent by a new client instance: each once, in order, the content the reference model
// makes), and refused queued writes (a stale ifMatch, a value the server refuses) reported and rolled back in
// onValue while the writes after them land.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import WebSocket from 'ws';
import { type Project, newProject, state } from '../../../test/support/api';
import { type JsonObject, reference, sameJson } from '../../../test/support/model-reference';
import { WAIT_MS } from '../../../test/support/realtime';
import { fileStore } from '../../src/file-store';
import { createClient } from '../../src/index';
import { type PendingWrite, offline } from '../../src/offline';
import { type SubscribeOptions, type Subscription, type ValueMeta, onValue } from '../../src/realtime';

const name = (p: Project) => `${p.username}/${p.slug}`;
const baseUrl = () => process.env.TEST_API_URL as string;
const subscriptions: Subscription[] = [];
afterEach(() => {
  for (const s of subscriptions.splice(0)) s.close();
});

/** What an onValue callback was last given, and a wait for a value that satisfies a test. */
function latest() {
  const seen: Array<{ value: unknown; meta: ValueMeta }> = [];
  return {
    seen,
    callback: (value: unknown, meta: ValueMeta) => {
      seen.push({ value, meta });
    },
    async until(test: (value: unknown, meta: ValueMeta) => boolean): Promise<void> {
      const deadline = Date.now() + WAIT_MS;
      while (!(seen.length > 0 && test(seen.at(-1)!.value, seen.at(-1)!.meta))) {
        if (Date.now() > deadline) throw new Error(`not within ${WAIT_MS} ms; last: ${JSON.stringify(seen.at(-1))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
/** Deep equality, object keys in any order (an engine's reads need not keep the order they were written in). */
const same = (expected: unknown) => (value: unknown) => isDeepStrictEqual(value, expected);

/** The writes of the restart test as the queue takes them and as the API's routes take them (for the model). */
const WRITES: Array<[keyof ReturnType<typeof offline>, unknown[], string, Record<string, unknown>]> = [
  ['push', ['list', 1], 'push', { path: 'list', value: 1 }],
  ['increment', ['n', 2], 'increment', { path: 'n', value: 2 }],
  ['set', ['a.b', 'x'], 'set', { path: 'a.b', value: 'x' }],
  ['push', ['list', 2], 'push', { path: 'list', value: 2 }],
  ['insert', ['list', 0, 0], 'insert', { path: 'list', value: 0, index: 0 }],
  ['decrement', ['n'], 'decrement', { path: 'n' }],
  ['delete', ['a.b'], 'delete', { path: 'a.b' }],
  ['set', ['a.c\\.d', [1, { e: null }]], 'set', { path: 'a.c\\.d', value: [1, { e: null }] }],
  ['push', ['list', 3], 'push', { path: 'list', value: 3 }],
  ['delete', ['list.-1'], 'delete', { path: 'list.-1' }],
];

describe('offline writes', () => {
  it('survive a restart in a file: a lost answer and unsent writes are sent once each, in order, by the next instance', async () => {
    const p = await newProject();
    const file = join(mkdtempSync(join(tmpdir(), 'content-api-offline-')), 'queue.json');
    // First run: the first request reaches the server but its answer is lost; then the network is down.
    let requests = 0;
    const lossy: typeof fetch = async (input, init) => {
      if (requests++ === 0) {
        await fetch(input, init);
        throw new TypeError('connection reset');
      }
      throw new TypeError('network down');
    };
    const first = createClient({ baseUrl: baseUrl(), credential: p.key, fetch: lossy, retries: 0 }).project(name(p));
    const before = offline(first, { store: fileStore(file), retryDelay: 600_000 });
    const made: PendingWrite[] = [];
    for (const [method, args] of WRITES)
      made.push(await (before[method] as (...a: unknown[]) => Promise<PendingWrite>)(...args));
    await before.flush();
    before.close();
    expect(new Set(made.map((w) => w.key)).size).toBe(WRITES.length);
    expect(before.pending).toEqual(made);
    // Kept in the file, keys and all; the first write landed (its answer did not).
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(made);
    expect((await state(p)).value).toEqual({ list: [1] });

    // The restart: a new client instance reading the same file, the network back.
    const sent: string[] = [];
    const counting: typeof fetch = (input, init) => {
      sent.push((init!.headers as Record<string, string>)['idempotency-key']!);
      return fetch(input, init);
    };
    const second = createClient({ baseUrl: baseUrl(), credential: p.key, fetch: counting }).project(name(p));
    const acknowledged: string[] = [];
    const refused: unknown[] = [];
    const after = offline(second, {
      store: fileStore(file),
      onAcknowledged: (w) => acknowledged.push(w.key),
      onRefused: (w, e) => refused.push([w, e]),
    });
    await after.flush();
    after.close();
    expect(refused).toEqual([]);
    expect(sent).toEqual(made.map((w) => w.key));
    expect(acknowledged).toEqual(made.map((w) => w.key));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([]);
    let model: JsonObject = {};
    for (const [, , route, body] of WRITES) model = reference(route as 'set', body, model).content;
    const { value } = await state(p);
    expect(sameJson(value, model)).toBe(true);
    expect(value).toEqual({ list: [0, 1, 2], n: 1, a: { 'c.d': [1, { e: null }] } });
  });

  it('a refused write (a stale ifMatch, a value out of range) is reported and rolled back; the writes after it land', async () => {
    const p = await newProject();
    const other = createClient({ baseUrl: baseUrl(), credential: p.key }).project(name(p));
    const { etag } = await other.set('title', 'A');
    let online = false;
    const gated: typeof fetch = (input, init) =>
      online ? fetch(input, init) : Promise.reject(new TypeError('network down'));
    const s = createClient({ baseUrl: baseUrl(), credential: p.key, fetch: gated, retries: 0 }).project(name(p));
    const view = latest();
    subscriptions.push(
      onValue(s, '', view.callback, { WebSocket: WebSocket as unknown as NonNullable<SubscribeOptions['WebSocket']> }),
    );
    await view.until(same({ title: 'A' }));
    await other.set('title', 'C');
    await view.until(same({ title: 'C' }));

    const refused: Array<[string, string, number]> = [];
    const writer = offline(s, { retryDelay: 600_000, onRefused: (w, e) => refused.push([w.path, e.code, e.status]) });
    await writer.set('title', 'B', { ifMatch: etag! });
    await writer.set('n', 1e200);
    await writer.push('list', 'kept');
    await view.until((value, meta) => meta.pending && same({ title: 'B', n: 1e200, list: ['kept'] })(value));

    online = true;
    await writer.flush();
    writer.close();
    expect(refused).toEqual([
      ['title', 'PRECONDITION_FAILED', 412],
      ['n', expect.any(String), 400],
    ]);
    await view.until((value, meta) => !meta.pending && same({ title: 'C', list: ['kept'] })(value));
    // Someone else's title stays: the stale write was not forced over it.
    expect((await state(p)).value).toEqual({ title: 'C', list: ['kept'] });
    expect(writer.pending).toEqual([]);
  });
});
