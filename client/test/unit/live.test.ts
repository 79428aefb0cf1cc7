// onValue without a server: a fake WebSocket and a fake project show how queued writes (content-api-client/offline)
// are shown applied with pending: true before the first snapshot and over the server's value, kept while their change
// is on its way once acknowledged, and rolled back at once when refused.
import { ContentApiError } from '../../src/errors';
import { type OfflineWriter, type PendingWrite, memoryStore, offline } from '../../src/offline';
import { type SubscribeOptions, type ValueMeta, onValue } from '../../src/realtime';

class FakeSocket {
  static last: FakeSocket;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  sent: any[] = [];
  constructor(readonly url: string) {
    FakeSocket.last = this;
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {}
  frame(frame: unknown) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
}
const WebSocket = FakeSocket as unknown as NonNullable<SubscribeOptions['WebSocket']>;

/** A project whose writes wait until the test answers them, one at a time, in order. */
function fakeSite() {
  const answers: Array<{ write: string; resolve: () => void; reject: (e: unknown) => void }> = [];
  const write = (name: string) => (path: string) =>
    new Promise<{ etag: string | null }>((resolve, reject) => {
      answers.push({ write: `${name} ${path}`, resolve: () => resolve({ etag: '"1"' }), reject });
    });
  return {
    answers,
    site: {
      name: '@alice/site',
      connection: { baseUrl: 'http://127.0.0.1:1', credential: 'k' },
      get: async (): Promise<{ value?: unknown }> => ({ value: undefined }),
      set: write('set'),
      push: write('push'),
      insert: write('insert'),
      increment: write('increment'),
      decrement: write('decrement'),
      delete: write('delete'),
    },
  };
}

const tick = () => jest.advanceTimersByTimeAsync(0);

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('onValue with queued writes', () => {
  let writer: OfflineWriter;
  afterEach(() => writer.close());

  it('shows them applied, pending, over the server value; an acknowledged one until its change arrives', async () => {
    const { site, answers } = fakeSite();
    const seen: Array<[unknown, ValueMeta]> = [];
    writer = offline(site, { store: memoryStore() });
    onValue(site, 'todos', (value, meta) => seen.push([value, meta]), { WebSocket });
    // Offline from the start: no snapshot yet, the queued push shows on nothing.
    await writer.push('todos', 'milk');
    expect(seen.at(-1)).toEqual([['milk'], { revision: undefined, pending: true }]);

    FakeSocket.last.onopen?.({});
    await tick();
    FakeSocket.last.frame({ type: 'subscribed', id: 's', path: 'todos', ref: '1' });
    FakeSocket.last.frame({ type: 'snapshot', id: 's', revision: '10', value: ['eggs'] });
    expect(seen.at(-1)).toEqual([['eggs', 'milk'], { revision: '10', pending: true }]);

    // Acknowledged: still shown (not pending) until the change it made arrives, then the server's value alone.
    answers.shift()?.resolve();
    await tick();
    expect(seen.at(-1)).toEqual([['eggs', 'milk'], { revision: '10', pending: false }]);
    FakeSocket.last.frame({ type: 'change', id: 's', revision: '11', changes: [{ path: 'todos.1', value: 'milk' }] });
    expect(seen.at(-1)).toEqual([['eggs', 'milk'], { revision: '11', pending: false }]);
    expect(writer.pending).toEqual([]);
  });

  it('rolls a refused write back at once and reports it; the writes after it are still shown, then sent', async () => {
    const { site, answers } = fakeSite();
    const seen: Array<[unknown, ValueMeta]> = [];
    const refused: Array<[PendingWrite, string]> = [];
    writer = offline(site, { onRefused: (w, e) => refused.push([w, e.code]) });
    onValue(site, '', (value, meta) => seen.push([value, meta]), { WebSocket });
    FakeSocket.last.onopen?.({});
    await tick();
    FakeSocket.last.frame({ type: 'subscribed', id: 's', path: '', ref: '1' });
    FakeSocket.last.frame({ type: 'snapshot', id: 's', revision: '3', value: { title: 'A' } });
    const stale = await writer.set('title', 'B', { ifMatch: '"1"' });
    await writer.increment('n', 2);
    expect(seen.at(-1)).toEqual([
      { title: 'B', n: 2 },
      { revision: '3', pending: true },
    ]);
    answers.shift()?.reject(new ContentApiError('changed', { status: 412, code: 'PRECONDITION_FAILED', etag: '"2"' }));
    await tick();
    expect(refused).toEqual([[stale, 'PRECONDITION_FAILED']]);
    expect(seen.at(-1)).toEqual([
      { title: 'A', n: 2 },
      { revision: '3', pending: true },
    ]);
    expect(answers.map((a) => a.write)).toEqual(['increment n']);
  });

  it('keeps a write whose answer never came, and sends it again with the same key', async () => {
    const { site, answers } = fakeSite();
    writer = offline(site, { retryDelay: 1000 });
    const w = await writer.push('list', 1);
    answers.shift()?.reject(new ContentApiError('no answer', { status: 0, code: 'NETWORK_ERROR' }));
    await tick();
    expect(writer.pending).toEqual([w]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(answers.map((a) => a.write)).toEqual(['push list']);
  });
});

describe('onValue and a value too large to send', () => {
  it('reads it; a failed read is reported and tried again, the changes meanwhile applied on what it reads', async () => {
    const { site } = fakeSite();
    const events: unknown[] = [];
    let fails = 2;
    site.get = async () => {
      if (fails-- > 0) throw new ContentApiError('down', { status: 503, code: 'SERVICE_UNAVAILABLE' });
      return { value: { big: 'x', n: 1 } };
    };
    const seen: unknown[] = [];
    onValue(site, 'data', (value) => seen.push(value), { WebSocket, onEvent: (e) => events.push(e) });
    FakeSocket.last.onopen?.({});
    await tick();
    FakeSocket.last.frame({ type: 'subscribed', id: 's', path: 'data', ref: '1' });
    FakeSocket.last.frame({ type: 'snapshot', id: 's', revision: '1', value: { n: 0 } });
    FakeSocket.last.frame({ type: 'changed', id: 's', revision: '2' });
    await tick();
    expect(events).toEqual([{ type: 'error', code: 'SERVICE_UNAVAILABLE', message: 'down', retrying: true }]);
    FakeSocket.last.frame({ type: 'change', id: 's', revision: '3', changes: [{ path: 'data.n', value: 2 }] });
    // Nothing shown from a value not read yet.
    expect(seen).toEqual([{ n: 0 }]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(events).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(2000);
    expect(seen).toEqual([{ n: 0 }, { big: 'x', n: 2 }]);
  });
});
