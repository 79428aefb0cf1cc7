// A realtime test client: a real WebSocket (the `ws` package) to the local server's /realtime, the frames it got in
// order, and a mirror of a subscription's value kept the way a client keeps one (snapshot, then each change).
import WebSocket from 'ws';
import { parsePath } from '../../lib/paths';
import { baseUrl } from './api';

/**
 * How long a frame may take: DynamoDB Local's stream is polled, the embedded one pushes; under `test:lag` every stream
 * batch waits, so the records of the suites running beside this one (an export of 20 KB strings) hold a frame back
 * by tens of batches.
 */
export const WAIT_MS =
  process.env.DYNAMODB_ENGINE === 'dynamodb-local' || Number(process.env.LOCAL_STREAM_LAG_MS ?? 0) > 0 ? 15_000 : 8_000;

export const realtimeUrl = () => `${baseUrl().replace(/^http/, 'ws')}/realtime`;

export class Client {
  readonly frames: any[] = [];
  /** The frames' text as sent. */
  readonly texts: string[] = [];
  private waiters: Array<() => void> = [];
  private read = 0;
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.texts.push(String(data));
      this.frames.push(JSON.parse(String(data)));
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Connects to the test server's realtime endpoint, or to another server's (`url`, ws://.../realtime). */
  static async open(url = realtimeUrl()): Promise<Client> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Client(ws);
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next frame not yet read (fails after WAIT_MS). */
  async next(): Promise<any> {
    const deadline = Date.now() + WAIT_MS;
    while (this.read >= this.frames.length) {
      if (Date.now() > deadline)
        throw new Error(`no frame within ${WAIT_MS} ms (read: ${JSON.stringify(this.frames)})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.frames[this.read++];
  }

  /** Every unread frame, read, after waiting `ms` for more. */
  async rest(ms = 300): Promise<any[]> {
    await new Promise((r) => setTimeout(r, ms));
    const rest = this.frames.slice(this.read);
    this.read = this.frames.length;
    return rest;
  }

  /** No unread frame arrives within `ms`. */
  async quiet(ms = 300): Promise<void> {
    expect(await this.rest(ms)).toEqual([]);
  }

  /** Subscribes and returns the subscription's id, after `subscribed` and its snapshot (returned too). */
  async subscribe(fields: Record<string, unknown>): Promise<{ id: string; snapshot: any }> {
    this.send({ action: 'subscribe', ...fields });
    const subscribed = await this.next();
    expect(subscribed).toEqual({ type: 'subscribed', id: expect.any(String), path: (fields.path as string) ?? '' });
    const snapshot = await this.next();
    expect(snapshot).toMatchObject({ type: 'snapshot', id: subscribed.id, revision: expect.stringMatching(/^\d+$/) });
    return { id: subscribed.id, snapshot };
  }

  close(): void {
    this.ws.close();
  }
}

/** Applies a change message to a mirror of the whole content (paths are absolute), as a client does. */
export function applyChanges(
  mirror: Record<string, any>,
  changes: Array<{ path: string; value?: unknown; deleted?: true }>,
) {
  for (const change of changes) {
    const steps = parsePath(change.path);
    let node: any = mirror;
    // A change trimmed to a subscription below missing parents: the parents are objects.
    for (const step of steps.slice(0, -1)) {
      const key = Array.isArray(node) ? Number(step) : step;
      node[key] ??= {};
      node = node[key];
    }
    const last = steps[steps.length - 1] as string;
    if (change.deleted) {
      if (Array.isArray(node)) node.splice(Number(last), 1);
      else delete node[last];
    } else if (Array.isArray(node)) node[Number(last)] = change.value;
    else node[last] = change.value;
  }
  return mirror;
}

/** A test file's (or describe block's) way to open clients: every client it opens is closed after each test. */
export function clientsClosedAfterEach(): () => Promise<Client> {
  const clients: Client[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  return async () => {
    const c = await Client.open();
    clients.push(c);
    return c;
  };
}
