// content-api-client/realtime: subscriptions over the realtime WebSocket (docs/realtime.md), and `onValue`, the whole
// value at a path kept current. Its own entry, so an app that never subscribes bundles none of it. One connection per
// client carries every subscription (its frames name theirs by `id`): it keeps alive with pings, reconnects with
// backoff and jitter resuming each subscription with `since`, and asks the credential afresh on every subscribe.
import { applyChange, applyWrite, valueAt, type WireChange } from './apply';
import type { ErrorCode } from './errors';
import { parsePath } from './paths';
import { shelfOf } from './pending';

export { formatPath, parsePath } from './paths';

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

/** A subscription's options; those of the connection are taken from the client's first subscription. */
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
  /** Unsubscribes (the connection closes with the client's last subscription); no event follows. */
  close(): void;
  /** The last revision delivered (what a reconnect resumes from), or `since` until one arrives. */
  readonly revision: string | undefined;
}

/** What `subscribe` needs of a project: `createClient(...).project(name)` is one. */
export interface Subscribable {
  name: string;
  /** The client's connection settings: one object per client, so its subscriptions share one WebSocket. */
  connection: { baseUrl: string; credential?: string | (() => string | Promise<string>) };
}

/** What `onValue` needs of a project: a `Subscribable` that also reads (for a change too large to send). */
export interface Readable extends Subscribable {
  get(path?: string): Promise<{ value?: unknown }>;
}

/** What an `onValue` callback gets besides the value. */
export interface ValueMeta {
  /** The revision of the server's value shown (undefined before the first snapshot). */
  revision: string | undefined;
  /** Whether queued writes (content-api-client/offline) not yet acknowledged are shown applied. */
  pending: boolean;
}

type Frame = { type?: string; id?: string; ref?: string; path?: string; revision?: unknown } & Record<string, unknown>;

/** One subscription on the client's connection. */
interface Member {
  /** Names it in `subscribe`, so `subscribed` and a refusal find it. */
  ref: string;
  project: string;
  path: string;
  revision: string | undefined;
  id?: string;
  deliver: (event: RealtimeEvent) => void;
  ended: boolean;
}

interface Hub {
  add(member: Member): void;
  remove(member: Member): void;
}

// Only the service's own failures are worth reconnecting for; any other refusal would be refused again.
const RETRIED = new Set(['SERVICE_UNAVAILABLE', 'INTERNAL_ERROR']);
const HUB = Symbol.for('content-api-client.realtime');

const noWebSocket = (): never => {
  throw new TypeError('no global WebSocket here: pass one as opts.WebSocket (e.g. the ws package)');
};

/** Revisions are strings of digits that grow: compare by length, then as strings. */
const isAfter = (revision: string, last: string | undefined) =>
  last === undefined || revision.length > last.length || (revision.length === last.length && revision > last);

/** The one connection of a client, made by its first subscription (whose options it keeps). */
function hubOf(site: Subscribable, opts: SubscribeOptions): Hub {
  const holder = site.connection as { [HUB]?: Hub };
  holder[HUB] ??= createHub(site.connection, opts);
  return holder[HUB];
}

function createHub(connection: Subscribable['connection'], opts: SubscribeOptions): Hub {
  const { keepAlive = 300_000, retryDelay = 1000, maxRetryDelay = 30_000 } = opts;
  const url = opts.realtimeUrl ?? `${connection.baseUrl.replace(/^http/, 'ws')}/realtime`;
  const Socket: new (url: string) => WebSocketLike =
    opts.WebSocket ??
    (globalThis as unknown as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket ??
    noWebSocket();
  const members = new Map<string, Member>();
  const byId = new Map<string, Member>();
  let socket: WebSocketLike | undefined;
  let opened = false;
  let attempt = 0;
  let refs = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pinger: ReturnType<typeof setInterval> | undefined;

  function drop(): void {
    clearTimeout(timer);
    timer = undefined;
    clearInterval(pinger);
    const ws = socket;
    socket = undefined;
    opened = false;
    byId.clear();
    for (const m of members.values()) m.id = undefined;
    if (ws) {
      ws.onclose = ws.onmessage = ws.onerror = null;
      ws.close();
    }
  }

  function reconnect(): void {
    drop();
    // Full jitter: many clients dropped at once do not come back at once.
    if (members.size > 0) {
      timer = setTimeout(connect, Math.random() * Math.min(maxRetryDelay, retryDelay * 2 ** attempt++));
    }
  }

  /** Ends a member the server ended (revoked, refused): no unsubscribe to send. */
  function end(m: Member, event: RealtimeEvent): void {
    m.ended = true;
    members.delete(m.ref);
    if (m.id !== undefined) byId.delete(m.id);
    if (members.size === 0) drop();
    m.deliver(event);
  }

  async function subscribeOn(ws: WebSocketLike, m: Member): Promise<void> {
    const { credential } = connection;
    let token: string | undefined;
    try {
      // Asked on every subscribe: a JWT that expired while disconnected is replaced.
      token = typeof credential === 'function' ? await credential() : credential;
    } catch {
      if (socket === ws) reconnect();
      return;
    }
    if (socket !== ws || m.ended) return;
    const path = m.path || undefined;
    ws.send(JSON.stringify({ action: 'subscribe', project: m.project, token, path, since: m.revision, ref: m.ref }));
  }

  function receive(text: string): void {
    let frame: Frame | null;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame === null || typeof frame !== 'object') return;
    const { type, id } = frame;
    if (type === 'subscribed') {
      // By the `ref` it sent; a server that echoes none: the oldest waiting subscription of the path.
      const m =
        members.get(String(frame.ref)) ??
        [...members.values()].find((x) => x.id === undefined && x.path === (frame as Frame).path);
      if (!m || typeof id !== 'string') return;
      m.id = id;
      byId.set(id, m);
      attempt = 0;
      return;
    }
    if (type === 'error') {
      const code = frame.code as ErrorCode;
      const message = String(frame.message);
      const retrying = RETRIED.has(code);
      // Its subscribe's `ref`, or its `id`; from a server that echoes neither, the oldest subscribe waiting.
      const m =
        members.get(String(frame.ref)) ??
        byId.get(String(id)) ??
        (frame.ref === undefined ? [...members.values()].find((x) => x.id === undefined) : undefined);
      if (retrying) {
        reconnect();
        for (const x of m ? [m] : [...members.values()]) x.deliver({ type: 'error', code, message, retrying });
      } else if (m) end(m, { type: 'error', code, message, retrying });
      return;
    }
    const m = typeof id === 'string' ? byId.get(id) : undefined;
    if (!m) return;
    if (type === 'revoked') {
      end(m, { type: 'revoked' });
      return;
    }
    if (type !== 'snapshot' && type !== 'change' && type !== 'changed') return;
    if (typeof frame.revision !== 'string' || !isAfter(frame.revision, m.revision)) return;
    m.revision = frame.revision;
    const { id: _, ...event } = frame;
    m.deliver(event as RealtimeEvent);
  }

  function connect(): void {
    timer = undefined;
    if (socket || members.size === 0) return;
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
    ws.onopen = () => {
      opened = true;
      for (const m of members.values()) void subscribeOn(ws, m);
      pinger = setInterval(() => ws.send('{"action":"ping"}'), keepAlive);
    };
  }

  return {
    add(m: Member): void {
      m.ref = String(++refs);
      members.set(m.ref, m);
      if (socket && opened) void subscribeOn(socket, m);
      else if (!timer) connect();
    },
    remove(m: Member): void {
      if (!members.delete(m.ref)) return;
      if (m.id !== undefined) {
        byId.delete(m.id);
        socket?.send(JSON.stringify({ action: 'unsubscribe', id: m.id }));
      }
      if (members.size === 0) drop();
    },
  };
}

/**
 * Calls `onEvent` with the value at `path` (`''`: the whole content), then with every committed change under it,
 * until `close()`, a `revoked` or a refused subscription. A dropped connection reconnects and resumes from the last
 * revision, so no change is lost and none is delivered twice. All of a client's subscriptions share one WebSocket.
 */
export function subscribe(
  site: Subscribable,
  path: string,
  onEvent: (event: RealtimeEvent) => void,
  opts: SubscribeOptions = {},
): Subscription {
  const hub = hubOf(site, opts);
  const m: Member = { ref: '', project: site.name, path, revision: opts.since, deliver: onEvent, ended: false };
  hub.add(m);
  return {
    close(): void {
      if (m.ended) return;
      m.ended = true;
      hub.remove(m);
    },
    get revision() {
      return m.revision;
    },
  };
}

/** How long an acknowledged write stays shown while its change is on its way (ms). */
const ACKNOWLEDGED_SHOWN_MS = 5000;

/** Whether one of two paths lies at or below the other. */
const related = (a: readonly string[], b: readonly string[]) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * Calls `callback` with the whole value at `path` (undefined: nothing there) on subscribing and after every change,
 * with its `revision`; the client's queued writes (content-api-client/offline) are shown applied, `pending: true`,
 * until the server's value replaces them. `onEvent` gets the subscription's `revoked` and `error` events.
 */
export function onValue(
  site: Readable,
  path: string,
  callback: (value: unknown, meta: ValueMeta) => void,
  opts: SubscribeOptions & { onEvent?: (event: RealtimeEvent) => void } = {},
): Subscription {
  const base = parsePath(path);
  const shelf = shelfOf(site.connection);
  let server: unknown;
  let revision: string | undefined;
  let received = false;
  /** When (on the shelf's clock) a frame last replaced or changed the server's value. */
  let frameAt = 0;
  /** While a `changed` value is read: the changes that arrive meanwhile, applied again on what it reads. */
  let reading: WireChange[][] | undefined;
  let reads = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let rereading: ReturnType<typeof setTimeout> | undefined;

  function show(): void {
    clearTimeout(timer);
    let root: unknown = base.reduceRight<unknown>((inner, key) => ({ [key]: inner }), server);
    let pending = false;
    let touched = false;
    const now = Date.now();
    for (const write of shelf.writes.get(site.name) ?? []) {
      let segments: string[];
      try {
        segments = parsePath(write.path);
      } catch {
        continue;
      }
      const acked = write.ackedAt !== undefined;
      // Acknowledged before the last frame: the server's value holds it (or soon will, and shows it then).
      if (!related(segments, base) || (acked && (write.ackedAt as number) < frameAt)) continue;
      if (acked && now - (write.ackedTime as number) > ACKNOWLEDGED_SHOWN_MS) continue;
      // Recomputed once its change should have arrived, whether or not it did.
      if (acked) timer = setTimeout(show, ACKNOWLEDGED_SHOWN_MS);
      try {
        root = applyWrite(root ?? {}, write);
        touched = true;
        pending ||= !acked;
      } catch {
        // The server will refuse it too; it is reported when it does.
      }
    }
    if (!received && !touched) return;
    callback(touched ? valueAt(root, base) : server, { revision, pending });
  }

  function apply(changes: WireChange[]): void {
    for (const change of changes) {
      const segments = parsePath(change.path);
      if (related(segments, base) && segments.length >= base.length) {
        server = applyChange(server, segments.slice(base.length), change);
      }
    }
  }

  /** Reads the value a `changed` frame names; the changes that arrive meanwhile wait in `reading`. */
  function read(): void {
    clearTimeout(rereading);
    reading = [];
    void readAs(++reads, 0);
  }

  async function readAs(mine: number, failures: number): Promise<void> {
    let value: unknown;
    try {
      value = (await site.get(path === '' ? undefined : path)).value;
    } catch (error) {
      const { code = 'NETWORK_ERROR', message = String(error) } = error as { code?: ErrorCode; message?: string };
      if (code !== 'PATH_NOT_FOUND') {
        if (mine !== reads) return;
        // Failed past the client's own retries: the last value stays shown (the changes since wait) and the read is
        // tried again, backing off, until it succeeds or a snapshot replaces it.
        opts.onEvent?.({ type: 'error', code, message, retrying: true });
        rereading = setTimeout(() => void readAs(mine, failures + 1), Math.min(30_000, 1000 * 2 ** failures));
        return;
      }
    }
    if (mine !== reads) return;
    server = value;
    received = true;
    // Each change sets or removes a value at a path: applied again, those the read already holds change nothing.
    for (const changes of reading ?? []) apply(changes);
    reading = undefined;
    frameAt = ++shelf.clock;
    show();
  }

  const onShelf = (project: string) => {
    if (project === site.name) show();
  };
  shelf.listeners.add(onShelf);
  const sub = subscribe(
    site,
    path,
    (event) => {
      if (event.type === 'snapshot') {
        server = event.missing ? undefined : event.value;
        reading = undefined;
        reads++;
        clearTimeout(rereading);
      } else if (event.type === 'change') {
        apply(event.changes);
        reading?.push(event.changes);
      } else if (event.type === 'changed') {
        revision = event.revision;
        read();
        return;
      } else {
        if (event.type === 'revoked' || !event.retrying) shelf.listeners.delete(onShelf);
        opts.onEvent?.(event);
        return;
      }
      revision = event.revision;
      received = true;
      frameAt = ++shelf.clock;
      if (reading === undefined) show();
    },
    opts,
  );
  // Queued writes show before the first snapshot (offline from the start).
  show();
  return {
    close(): void {
      shelf.listeners.delete(onShelf);
      clearTimeout(timer);
      clearTimeout(rereading);
      sub.close();
    },
    get revision() {
      return sub.revision;
    },
  };
}
