// content-api-client/offline: writes that survive going offline. Each write is kept in a store (memory, a file in
// Node, IndexedDB in a browser) with the Idempotency-Key made with it before it is sent, and sent in order until
// the server answers: applied once however often it is resent, across reloads and restarts. `onValue`
// (content-api-client/realtime) shows the queued writes applied until the server's value replaces them.
import type { Write } from './apply';
import { ContentApiError } from './errors';
import { type PendingWrite, type ShownWrite, shelfOf } from './pending';

export type { PendingWrite } from './pending';

/** Where the queue is kept between runs of the app: `memoryStore()`, `indexedDbStore(name)`, or Node's `fileStore`. */
export interface QueueStore {
  /** The writes kept, in order ([] when none). */
  load(): Promise<PendingWrite[]>;
  /** Keeps exactly these writes, replacing what was kept. */
  save(writes: readonly PendingWrite[]): Promise<void>;
}

/** What `offline` needs of a project: `createClient(...).project(name)` is one. */
export interface Writable {
  name: string;
  connection: object;
  set(path: string, value: unknown, opts?: SendOptions): Promise<{ etag: string | null }>;
  push(path: string, value: unknown, opts?: SendOptions): Promise<{ etag: string | null }>;
  insert(path: string, value: unknown, index: number, opts?: SendOptions): Promise<{ etag: string | null }>;
  increment(path: string, by?: number, opts?: SendOptions): Promise<{ etag: string | null }>;
  decrement(path: string, by?: number, opts?: SendOptions): Promise<{ etag: string | null }>;
  delete(path: string, opts?: SendOptions): Promise<{ etag: string | null }>;
}

type SendOptions = { idempotencyKey?: string; ifMatch?: string };

export interface OfflineOptions {
  /** Default: memory (the queue lasts as long as the page or process). */
  store?: QueueStore;
  /** A write the server refused (a 4xx: 412 for a stale `ifMatch`, 400, 403...): dropped, and no longer shown. */
  onRefused?: (write: PendingWrite, error: ContentApiError) => void;
  /** A write the server applied, with the content's new `etag`. */
  onAcknowledged?: (write: PendingWrite, result: { etag: string | null }) => void;
  /** Resending after no answer (ms, default 1000): attempt n waits a random time up to min(max, delay * 2^n). */
  retryDelay?: number;
  /** The backoff's ceiling (ms, default 30000). */
  maxRetryDelay?: number;
}

/** The write methods of a project, queued: each resolves once its write is kept in the store, not when it is sent. */
export interface OfflineWriter {
  set(path: string, value: unknown, opts?: { ifMatch?: string }): Promise<PendingWrite>;
  push(path: string, value: unknown): Promise<PendingWrite>;
  insert(path: string, value: unknown, index: number): Promise<PendingWrite>;
  increment(path: string, by?: number): Promise<PendingWrite>;
  decrement(path: string, by?: number): Promise<PendingWrite>;
  delete(path: string, opts?: { ifMatch?: string }): Promise<PendingWrite>;
  /** The writes not yet answered, oldest first. */
  readonly pending: readonly PendingWrite[];
  /** Sends what is queued; resolves when the queue is empty or the network failed (a retry is then scheduled). */
  flush(): Promise<void>;
  /** Stops sending (what is queued stays in the store for the next run). */
  close(): void;
}

/** How long an acknowledged write stays shown while its change is on its way to `onValue` (ms). */
const ACKNOWLEDGED_SHOWN_MS = 5000;

// React Native and insecure browser contexts may lack randomUUID.
const newKey = (): string =>
  globalThis.crypto?.randomUUID?.() ?? Date.now().toString(36) + Math.random().toString(36).slice(2, 12).repeat(2);

/**
 * Whether a failure is worth sending again: no answer, the service failing, throttled, a conflict that retrying
 * resolves, or a credential to renew (401: refusing the write would lose it). Any other 4xx would be refused again.
 */
const isTransient = (error: unknown) =>
  !(error instanceof ContentApiError) ||
  error.status === 0 ||
  error.status >= 500 ||
  error.status === 401 ||
  error.status === 429 ||
  error.code === 'WRITE_CONFLICT' ||
  error.code === 'IDEMPOTENCY_IN_PROGRESS';

/** A queue kept in memory only: the default. */
export function memoryStore(): QueueStore {
  let kept: PendingWrite[] = [];
  return {
    load: async () => kept.slice(),
    save: async (writes) => {
      kept = writes.slice();
    },
  };
}

// The part of IndexedDB used here, declared so that the package compiles without the DOM types.
interface IdbRequest<T> {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}
interface IdbTransaction {
  objectStore(name: string): { get(key: string): IdbRequest<unknown>; put(value: unknown, key: string): unknown };
  error: unknown;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}
interface IdbDatabase {
  createObjectStore(name: string): unknown;
  transaction(name: string, mode?: 'readwrite'): IdbTransaction;
}
interface IdbFactory {
  open(name: string, version: number): IdbRequest<IdbDatabase> & { onupgradeneeded: (() => void) | null };
}

/**
 * A queue kept in the browser's IndexedDB (database `content-api-client`, one record per `name`); `opts.indexedDB`
 * in place of the global one.
 */
export function indexedDbStore(name: string, opts: { indexedDB?: object } = {}): QueueStore {
  const TABLE = 'queues';
  let db: Promise<IdbDatabase> | undefined;
  const done = <T>(request: IdbRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  const open = () => {
    db ??= (() => {
      const factory = (opts.indexedDB ?? (globalThis as { indexedDB?: object }).indexedDB) as IdbFactory | undefined;
      if (!factory) throw new TypeError('no IndexedDB here: pass one as opts.indexedDB, or use another store');
      const request = factory.open('content-api-client', 1);
      request.onupgradeneeded = () => request.result.createObjectStore(TABLE);
      return done(request);
    })();
    return db;
  };
  return {
    load: async () =>
      ((await done((await open()).transaction(TABLE).objectStore(TABLE).get(name))) ?? []) as PendingWrite[],
    save: async (writes) => {
      const tx = (await open()).transaction(TABLE, 'readwrite');
      tx.objectStore(TABLE).put(writes.slice(), name);
      // Kept once the transaction commits, not when the put is queued.
      await new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = tx.onabort = () => reject(tx.error);
      });
    },
  };
}

/**
 * The project's writes, queued in `store` and sent in order: each with its own Idempotency-Key (made with the
 * write, kept with it), resent until answered, so each is applied exactly once. Keep one per project and store.
 */
export function offline(site: Writable, opts: OfflineOptions = {}): OfflineWriter {
  const { store = memoryStore(), retryDelay = 1000, maxRetryDelay = 30_000 } = opts;
  const shelf = shelfOf(site.connection);
  /** Unanswered writes, oldest first: what the store keeps. */
  let queue: PendingWrite[] = [];
  /** What onValue shows: the queue, and the writes acknowledged a moment ago. */
  let shown: ShownWrite[] = [];
  let closed = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> | undefined;
  let again = false;
  /** The timers that stop showing acknowledged writes. */
  const hiding = new Set<ReturnType<typeof setTimeout>>();
  // Saves one after another, each of the queue as it then is.
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    saving = saving.then(() => store.save(queue));
    return saving;
  };

  const publish = () => {
    shelf.writes.set(site.name, shown);
    for (const listener of shelf.listeners) listener(site.name);
  };
  const loaded = store.load().then((kept) => {
    queue = [...kept, ...queue];
    shown = [...kept, ...shown];
    publish();
  });
  const online = () => void flush();
  (globalThis as { addEventListener?: (type: string, f: () => void) => void }).addEventListener?.('online', online);

  function send(w: PendingWrite) {
    const o: SendOptions = { idempotencyKey: w.key, ifMatch: w.ifMatch };
    switch (w.op) {
      case 'set':
        return site.set(w.path, w.value, o);
      case 'push':
        return site.push(w.path, w.value, o);
      case 'insert':
        return site.insert(w.path, w.value, w.index, o);
      case 'increment':
        return site.increment(w.path, w.by, o);
      case 'decrement':
        return site.decrement(w.path, w.by, o);
      case 'delete':
        return site.delete(w.path, o);
    }
  }

  async function settle(w: PendingWrite, acknowledged: boolean): Promise<void> {
    queue = queue.filter((x) => x !== w);
    await save();
    if (acknowledged) {
      const ackedAt = ++shelf.clock;
      shown = shown.map((x) => (x === w ? { ...x, ackedAt, ackedTime: Date.now() } : x));
      const shownFor = setTimeout(() => {
        hiding.delete(shownFor);
        shown = shown.filter((x) => x.key !== w.key);
        publish();
      }, ACKNOWLEDGED_SHOWN_MS);
      hiding.add(shownFor);
    } else {
      shown = shown.filter((x) => x !== w);
    }
    publish();
  }

  async function run(): Promise<void> {
    await loaded;
    while (queue.length > 0 && !closed) {
      const w = queue[0] as PendingWrite;
      try {
        const result = await send(w);
        await settle(w, true);
        opts.onAcknowledged?.(w, result);
      } catch (error) {
        if (isTransient(error)) {
          clearTimeout(timer);
          timer = setTimeout(flush, Math.random() * Math.min(maxRetryDelay, retryDelay * 2 ** attempt++));
          return;
        }
        await settle(w, false);
        opts.onRefused?.(w, error as ContentApiError);
      }
    }
    attempt = 0;
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    if (flushing) {
      // Asked while a run is under way (whose send may have failed already): run once more after it.
      again = true;
      return flushing;
    }
    flushing = (async () => {
      do {
        again = false;
        await run();
      } while (again && !closed && queue.length > 0);
    })().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  async function enqueue(write: Write, ifMatch?: string): Promise<PendingWrite> {
    const w: PendingWrite = { ...write, key: newKey(), ...(ifMatch === undefined ? {} : { ifMatch }) };
    await loaded;
    queue.push(w);
    shown.push(w);
    // Kept before it is first sent: a restart resends it with the same key.
    await save();
    publish();
    if (!closed) void flush();
    return w;
  }

  return {
    set: (path, value, o = {}) => enqueue({ op: 'set', path, value }, o.ifMatch),
    push: (path, value) => enqueue({ op: 'push', path, value }),
    insert: (path, value, index) => enqueue({ op: 'insert', path, value, index }),
    increment: (path, by) => enqueue({ op: 'increment', path, by }),
    decrement: (path, by) => enqueue({ op: 'decrement', path, by }),
    delete: (path, o = {}) => enqueue({ op: 'delete', path }, o.ifMatch),
    get pending() {
      return queue.slice();
    },
    flush,
    close(): void {
      closed = true;
      clearTimeout(timer);
      for (const t of hiding) clearTimeout(t);
      hiding.clear();
      shown = shown.filter((x) => x.ackedAt === undefined);
      publish();
      (globalThis as { removeEventListener?: (type: string, f: () => void) => void }).removeEventListener?.(
        'online',
        online,
      );
    },
  };
}
