// content-api-client/realtime: subscribe to a path over the realtime WebSocket (docs/realtime.md). Its own entry, so
// an app that never subscribes bundles none of it. One connection per subscription: it keeps alive with pings,
// reconnects with backoff and jitter resuming with `since`, and asks the credential afresh on every connect.
import type { ErrorCode } from './errors';

/** A committed write's changes inside the subscription: paths absolute, values the new values there. */
export type Change = { path: string; value: unknown; deleted?: undefined } | { path: string; deleted: true };

/** What `onEvent` receives (the server's frames, without their subscription `id`). */
export type RealtimeEvent =
  /** The value at the path (or `missing`) as of `revision`: on subscribing, and on resuming past the change log. */
  | { type: 'snapshot'; revision: string; value?: unknown; missing?: true }
  /** One committed write, in commit order. */
  | { type: 'change'; revision: string; changes: Change[] }
  /** A change or snapshot too large to send (over 128 KB): read the path with `get`. */
  | { type: 'changed'; revision: string }
  /** The credential was revoked or expired, access was lost or the project deleted: the subscription has ended. */
  | { type: 'revoked' }
  /** A refusal; `retrying` false ends the subscription (a 4xx-class code), true reconnects (the service failed). */
  | { type: 'error'; code: ErrorCode; message: string; retrying: boolean };

/** The subset of the WebSocket standard used here (browsers, React Native, Node 22+, the `ws` package). */
export interface WebSocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(): void;
}

export interface SubscribeOptions {
  /** Resume after this revision (one an earlier subscription saw): the changes after it, or a fresh snapshot. */
  since?: string;
  /** Default: `baseUrl` with ws(s) for http(s) and the path `/realtime` (the local server); deployed, the stage's
   * WebSocket API, e.g. `wss://<api-id>.execute-api.<region>.amazonaws.com/<stage>`. */
  realtimeUrl?: string;
  /** A ping every this many ms (default 5 minutes; API Gateway closes a connection idle for 10). */
  keepAlive?: number;
  /** Reconnect backoff (ms, default 1000): attempt n waits a random time up to min(maxRetryDelay, retryDelay * 2^n). */
  retryDelay?: number;
  /** The backoff's ceiling (ms, default 30000). */
  maxRetryDelay?: number;
  /** Default: the global WebSocket (pass one, e.g. the `ws` package's, where there is none). */
  WebSocket?: new (
    url: string,
  ) => WebSocketLike;
}

export interface Subscription {
  /** Unsubscribes and closes the connection; no event follows. */
  close(): void;
  /** The last revision delivered (what a reconnect resumes from), or `since` until one arrives. */
  readonly revision: string | undefined;
}

/** What `subscribe` needs of a project: `createClient(...).project(name)` is one. */
export interface Subscribable {
  name: string;
  connection: { baseUrl: string; credential?: string | (() => string | Promise<string>) };
}

// Only the service's own failures are worth reconnecting for; any other refusal would be refused again.
const RETRIED = new Set(['SERVICE_UNAVAILABLE', 'INTERNAL_ERROR']);

const noWebSocket = (): never => {
  throw new TypeError('no global WebSocket here: pass one as opts.WebSocket (e.g. the ws package)');
};

/** Revisions are strings of digits that grow: compare by length, then as strings. */
const isAfter = (revision: string, last: string | undefined) =>
  last === undefined || revision.length > last.length || (revision.length === last.length && revision > last);

/**
 * Calls `onEvent` with the value at `path` (`''`: the whole content), then with every committed change under it,
 * until `close()`, a `revoked` or a refused subscription. A dropped connection reconnects and resumes from the last
 * revision, so no change is lost and none is delivered twice.
 */
export function subscribe(
  site: Subscribable,
  path: string,
  onEvent: (event: RealtimeEvent) => void,
  opts: SubscribeOptions = {},
): Subscription {
  const { keepAlive = 300_000, retryDelay = 1000, maxRetryDelay = 30_000 } = opts;
  const url = opts.realtimeUrl ?? `${site.connection.baseUrl.replace(/^http/, 'ws')}/realtime`;
  const Socket: new (url: string) => WebSocketLike =
    opts.WebSocket ??
    (globalThis as unknown as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket ??
    noWebSocket();
  let revision = opts.since;
  let socket: WebSocketLike | undefined;
  let id: string | undefined;
  let ended = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pinger: ReturnType<typeof setInterval> | undefined;

  function end(): void {
    ended = true;
    clearTimeout(timer);
    clearInterval(pinger);
    const ws = socket;
    socket = undefined;
    if (ws) {
      ws.onclose = ws.onmessage = ws.onerror = null;
      ws.close();
    }
  }

  function reconnect(): void {
    if (ended) return;
    clearInterval(pinger);
    if (socket) socket.onclose = socket.onmessage = socket.onerror = null;
    socket?.close();
    socket = id = undefined;
    // Full jitter: many clients dropped at once do not come back at once.
    timer = setTimeout(connect, Math.random() * Math.min(maxRetryDelay, retryDelay * 2 ** attempt++));
  }

  function receive(text: string): void {
    let frame: { type?: string; id?: string; revision?: unknown; code: ErrorCode; message: string } | null;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame === null || typeof frame !== 'object') return;
    switch (frame.type) {
      case 'subscribed':
        id = frame.id;
        attempt = 0;
        return;
      case 'snapshot':
      case 'change':
      case 'changed': {
        if (frame.id !== id || typeof frame.revision !== 'string' || !isAfter(frame.revision, revision)) return;
        revision = frame.revision;
        const { id: _, ...event } = frame;
        onEvent(event as RealtimeEvent);
        return;
      }
      case 'revoked':
        if (frame.id !== id) return;
        end();
        onEvent({ type: 'revoked' });
        return;
      case 'error': {
        const { code, message } = frame;
        const retrying = RETRIED.has(code);
        if (retrying) reconnect();
        else end();
        onEvent({ type: 'error', code, message, retrying });
      }
    }
  }

  function connect(): void {
    if (ended) return;
    let ws: WebSocketLike;
    try {
      ws = new Socket(url);
    } catch {
      reconnect();
      return;
    }
    socket = ws;
    ws.onmessage = (event) => receive(String(event.data));
    ws.onclose = reconnect;
    ws.onerror = reconnect;
    ws.onopen = async () => {
      const { credential } = site.connection;
      let token: string | undefined;
      try {
        // Asked on every connect: a JWT that expired while disconnected is replaced.
        token = typeof credential === 'function' ? await credential() : credential;
      } catch {
        if (socket === ws) reconnect();
        return;
      }
      if (socket !== ws) return;
      ws.send(
        JSON.stringify({ action: 'subscribe', project: site.name, token, path: path || undefined, since: revision }),
      );
      pinger = setInterval(() => ws.send('{"action":"ping"}'), keepAlive);
    };
  }

  connect();
  return {
    close(): void {
      if (ended) return;
      if (id) socket?.send(JSON.stringify({ action: 'unsubscribe', id }));
      end();
    },
    get revision() {
      return revision;
    },
  };
}
