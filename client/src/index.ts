// content-api-client: a typed client on fetch. Mutations carry a generated Idempotency-Key, so the retries of 503,
// 409 WRITE_CONFLICT / IDEMPOTENCY_IN_PROGRESS and lost answers are applied once; every result carries the ETag.
import { ContentApiError, type ErrorCode } from './errors';
import type { Operations } from './generated/api';
import { parseJson } from './json';

export { ContentApiError, type ErrorCode } from './errors';
export { parseJson } from './json';
export { formatPath, parsePath } from './paths';
export type { ErrorBody, Operations } from './generated/api';
export type { ServerErrorCode } from './generated/error-codes';

export interface ClientOptions {
  /** Where the API is served, e.g. `https://api.example.com` (routes are under `/api/`). */
  baseUrl: string;
  /** An API key or session token, or a function returning a fresh one (a JWT that expires): called once per call. */
  credential?: string | (() => string | Promise<string>);
  /** Retries after the first attempt (default 3); 0 turns retrying off. */
  retries?: number;
  /** Backoff (ms, default 200): retry n waits a random time up to min(maxRetryDelay, retryDelay * 2^n). */
  retryDelay?: number;
  /** The backoff's ceiling (ms, default 5000); a longer Retry-After is still honoured. */
  maxRetryDelay?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Parses response bodies (default JSON.parse); pass a lossless parser to keep every digit of exact decimals. */
  parse?: (text: string) => unknown;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export interface WriteOptions extends RequestOptions {
  /** Write only if the content is still at this version (an `etag` from an earlier result); else a 412. */
  ifMatch?: string;
  /** Default: a new UUID per call, the same for its retries. */
  idempotencyKey?: string;
}

export interface GetOptions extends RequestOptions {
  /**
   * An object's keys each with `true`, an array's length as `{length: n}`, a scalar as itself. With `limit` or
   * `after`: a page of an object's keys, the result adding `next` (the cursor of the next page, or null).
   */
  shallow?: boolean;
  /** Slice an array from this index (negative counts from the end); the result adds `start` and `length`. */
  start?: number;
  /** Slice an array: at most this many elements; with `shallow`, keys (1 to 1000; the server's default is 100). */
  limit?: number;
  /** With `shallow`: the `next` of the previous page of keys. */
  after?: string;
  /** Poll: an `etag` from an earlier get of the same read; while it is current, `{ notModified: true, etag }`. */
  ifNoneMatch?: string;
  /** The value as it was just after this revision (from `history()`) or at this ISO-8601 time (within the history kept). */
  at?: string;
}

export interface HistoryOptions extends RequestOptions {
  /** Entries read per page, 1 to 100 (default 20); a page holds those that touched the path. */
  limit?: number;
  /** The `next` of the previous page: older entries. */
  before?: string;
}

/**
 * A piece of a whole-content export or import: `value` goes at `path` (a JSON Pointer, `""` the root); an empty
 * object or array is a container sent open, its members following as pieces below it (docs/design/backup.md).
 */
export type Piece = Operations['exportContent']['response']['pieces'][number];

export interface ImportOptions extends RequestOptions {
  /** The largest page of pieces sent in one request, in bytes of JSON (default 448 KiB; the body limit is 512 KiB). */
  pageBytes?: number;
  /** The most pieces in one page (default 1000): each piece below a container an earlier page opened is one write. */
  pagePieces?: number;
  /** Switch to the imported content only if the content is still at this version (an `etag`); else a 412. */
  ifMatch?: string;
}

/** One entry of the history: who changed what, by which route, when. */
export type HistoryEntry = Operations['getHistory']['response']['entries'][number];

/** A success body with the `ETag` the server sent (the content's version; null on management routes). */
export type WithETag<T> = T & { etag: string | null };

type Result<K extends keyof Operations> = Promise<WithETag<Operations[K]['response']>>;
type Message = Promise<WithETag<{ message: string }>>;
/** get's result: the value (or a slice), or, with `ifNoneMatch` still current, a 304 without one. */
export type GetResult =
  | (WithETag<Operations['getContent']['response']> & { notModified?: false })
  | { notModified: true; etag: string | null; value?: undefined };
export type BatchOperation = Operations['batchContent']['body']['operations'][number];
/** RFC 6902 JSON Patch; `path` is a JSON Pointer. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** `POST import/<session>`: 200 `{sequence, applied}`, or 202 `{sequence, partial}` when cut short (send it again). */
interface PageProgress {
  partial?: unknown;
}

/** `POST import/<session>/commit`: 202 `{copied}` while copying, 200 `{message}` once switched. */
interface CommitProgress {
  copied?: number;
  message?: string;
}

/** read: retried, no key; write: retried with an Idempotency-Key; once: never retried (management writes). */
type Mode = 'read' | 'write' | 'once';

const RETRIED_CONFLICTS = new Set(['WRITE_CONFLICT', 'IDEMPOTENCY_IN_PROGRESS']);

// React Native and insecure browser contexts may lack randomUUID.
const newKey = (): string =>
  globalThis.crypto?.randomUUID?.() ?? Date.now().toString(36) + Math.random().toString(36).slice(2, 12).repeat(2);

/** Retry-After in ms: delay-seconds or an HTTP date. */
function retryAfter(value: string | null): number {
  if (!value) return 0;
  const seconds = Number(value);
  return Number.isFinite(seconds) ? seconds * 1000 : Math.max(0, (Date.parse(value) || 0) - Date.now());
}

export function createClient(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const parse = options.parse ?? JSON.parse;
  const { retries = 3, retryDelay = 200, maxRetryDelay = 5000 } = options;
  // One object for every project of this client: its realtime subscriptions share one WebSocket through it.
  const connection = { baseUrl: base, credential: options.credential };

  async function request<T>(
    method: string,
    path: string,
    body: unknown,
    opts: WriteOptions & { ifNoneMatch?: string; parse?: (text: string) => unknown } = {},
    mode: Mode = 'read',
    type = 'application/json',
  ): Promise<WithETag<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    // Resolved once: an Idempotency-Key is scoped to the credential, so every retry carries the same one.
    const credential = typeof options.credential === 'function' ? await options.credential() : options.credential;
    if (credential) headers.authorization = `Bearer ${credential}`;
    if (body !== undefined) headers['content-type'] = type;
    if (opts.ifMatch !== undefined) headers['if-match'] = opts.ifMatch;
    if (opts.ifNoneMatch !== undefined) headers['if-none-match'] = opts.ifNoneMatch;
    if (mode === 'write') headers['idempotency-key'] = opts.idempotencyKey ?? newKey();
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: opts.signal };

    for (let attempt = 0; ; attempt++) {
      let error: ContentApiError;
      let wait = 0;
      try {
        const res = await send(base + path, init);
        const text = await res.text();
        let data: unknown;
        try {
          data = text ? (opts.parse ?? parse)(text) : {};
        } catch {
          data = undefined;
        }
        const etag = res.headers.get('etag');
        if (res.status === 304) return { notModified: true, etag } as unknown as WithETag<T>;
        const body = (data !== null && typeof data === 'object' ? data : {}) as Record<string, unknown>;
        if (res.ok && body === data) return { ...(body as T), etag };
        const code = typeof body.code === 'string' ? (body.code as ErrorCode) : 'UNEXPECTED_RESPONSE';
        error = new ContentApiError(typeof body.message === 'string' ? body.message : `HTTP ${res.status}`, {
          status: res.status,
          code,
          index: typeof body.index === 'number' ? body.index : undefined,
          etag,
        });
        if (!(res.status === 503 || (res.status === 409 && RETRIED_CONFLICTS.has(code)))) throw error;
        wait = retryAfter(res.headers.get('retry-after'));
      } catch (cause) {
        if (cause instanceof ContentApiError) throw cause;
        if (opts.signal?.aborted) throw cause;
        // No answer, or one cut off: the request may have landed, which its Idempotency-Key makes safe to retry.
        error = new ContentApiError(`no answer from the API: ${(cause as Error)?.message}`, {
          status: 0,
          code: 'NETWORK_ERROR',
          cause,
        });
      }
      if (mode === 'once' || attempt >= retries) throw error;
      // Full jitter, but never sooner than the server asked.
      const backoff = Math.random() * Math.min(maxRetryDelay, retryDelay * 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.max(wait, backoff)));
      opts.signal?.throwIfAborted();
    }
  }

  /** `@alice/site`: its content, and its management routes (session credentials only). */
  function project(name: string) {
    const match = /^@([^/@]+)\/([^/]+)$/.exec(name);
    if (!match) throw new TypeError(`a project is named "@user/slug", not ${JSON.stringify(name)}`);
    const user = (username: string) => `@${encodeURIComponent(username.replace(/^@/, ''))}`;
    const root = `/api/${user(match[1]!)}/${encodeURIComponent(match[2]!)}`;
    const content = `${root}/content`;
    const write = (op: string, body: unknown, opts?: WriteOptions): Message =>
      request('POST', `${content}/${op}`, body, opts, 'write');
    const amount = (path: string, by: number | undefined) => (by === undefined ? { path } : { path, value: by });
    const history = (path?: string, opts: HistoryOptions = {}): Result<'getHistory'> => {
      const query = [
        path === undefined ? '' : `path=${encodeURIComponent(path)}`,
        opts.limit === undefined ? '' : `limit=${opts.limit}`,
        opts.before === undefined ? '' : `before=${encodeURIComponent(opts.before)}`,
      ].filter((p) => p !== '');
      return request('GET', `${content}/history${query.length ? `?${query.join('&')}` : ''}`, undefined, opts);
    };

    return {
      /** The project's name, `@user/slug`. */
      name,
      /** What `subscribe` (`content-api-client/realtime`) connects with. */
      connection,
      /** The whole content, or the value at `path` (shallow, a page of keys, or a slice of an array); a missing path is a 404. */
      get: (path?: string, opts: GetOptions = {}): Promise<GetResult> => {
        const query = [
          path === undefined ? '' : `path=${encodeURIComponent(path)}`,
          opts.shallow ? 'shallow=true' : '',
          opts.start === undefined ? '' : `start=${opts.start}`,
          opts.limit === undefined ? '' : `limit=${opts.limit}`,
          opts.after === undefined ? '' : `after=${encodeURIComponent(opts.after)}`,
          opts.at === undefined ? '' : `at=${encodeURIComponent(opts.at)}`,
        ].filter((p) => p !== '');
        return request('GET', query.length ? `${content}?${query.join('&')}` : content, undefined, opts);
      },
      set: (path: string, value: unknown, opts?: WriteOptions) => write('set', { path, value }, opts),
      insert: (path: string, value: unknown, index: number, opts?: WriteOptions) =>
        write('insert', { path, value, index }, opts),
      push: (path: string, value: unknown, opts?: WriteOptions) => write('push', { path, value }, opts),
      increment: (path: string, by?: number, opts?: WriteOptions) => write('increment', amount(path, by), opts),
      decrement: (path: string, by?: number, opts?: WriteOptions) => write('decrement', amount(path, by), opts),
      delete: (path: string, opts?: WriteOptions) => write('delete', { path }, opts),
      update: (value: Operations['updateContent']['body']['content'], opts?: WriteOptions) =>
        write('update', { content: value }, opts),
      /** All or none; a failed operation's error carries its `index`. */
      batch: (operations: BatchOperation[], opts?: WriteOptions) => write('batch', { operations }, opts),
      /** RFC 6902 JSON Patch (PATCH content; needs a server with the PATCH route). */
      patch: (operations: JsonPatchOperation[], opts?: WriteOptions): Message =>
        request('PATCH', content, operations, opts, 'write', 'application/json-patch+json'),
      /** Who changed what at `path` (or anywhere), newest first: one page; `next` is the next page's `before`. */
      history,
      /** Every history entry at `path`, newest first, page after page (one request per page, never all held). */
      historyEntries: async function* (path?: string, opts: HistoryOptions = {}): AsyncGenerator<HistoryEntry> {
        let before = opts.before;
        do {
          const page = await history(path, { ...opts, before });
          yield* page.entries;
          before = page.next ?? undefined;
        } while (before !== undefined);
      },
      /** Sets `path` (undefined: the whole content) back to its value at `at` (a revision or time), as one write. */
      restore: (path: string | undefined, at: string, opts?: WriteOptions) =>
        write('restore', path === undefined ? { at } : { path, at }, opts),
      /**
       * The whole content as pieces, page after page of `GET export`, all at one revision; a change that cannot be
       * undone meanwhile ends it with 409 `EXPORT_STALE` (start again). Numbers keep every digit (JSON.rawJSON).
       */
      exportPieces: async function* (opts: RequestOptions = {}): AsyncGenerator<Piece> {
        let cursor: string | null = null;
        do {
          const query: string = cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`;
          const page = await request<Operations['exportContent']['response']>(
            'GET',
            `${root}/export${query}`,
            undefined,
            {
              ...opts,
              parse: parseJson,
            },
          );
          yield* page.pieces;
          cursor = page.cursor;
        } while (cursor !== null);
      },
      /**
       * Replaces the whole content with `pieces` (document order), atomically: an import session, pages under
       * `pageBytes` numbered from 1 (a page retried after a lost answer keeps its number), then the commit, repeated
       * until done. Any failure abandons the session (DELETE), leaving the content as it was.
       */
      importPieces: async (pieces: AsyncIterable<Piece> | Iterable<Piece>, opts: ImportOptions = {}): Message => {
        const { signal, ifMatch, pageBytes = 448 * 1024, pagePieces = 1000 } = opts;
        const started = await request<{ session: string }>('POST', `${root}/import`, {}, { signal });
        const session = `${root}/import/${encodeURIComponent(started.session)}`;
        try {
          let page: Piece[] = [];
          let bytes = 0;
          let sequence = 0;
          const utf8 = new TextEncoder();
          // Pages are retried as reads are (no Idempotency-Key): the sequence makes a page's retry a no-op. A page cut
          // short by the server's time answers 202 {partial}: the same page again goes on where it stopped.
          const send = async () => {
            if (page.length === 0) return;
            const body = { sequence: ++sequence, pieces: page };
            while ((await request<PageProgress>('POST', session, body, { signal })).partial !== undefined);
            page = [];
            bytes = 0;
          };
          for await (const piece of pieces) {
            const size = utf8.encode(JSON.stringify(piece)).length + 1;
            if (bytes + size > pageBytes - 64 || page.length >= pagePieces) await send();
            page.push(piece);
            bytes += size;
          }
          await send();
          // 202 {"copied"} while the server copies the document in; 200 once the content switched.
          for (;;) {
            const done = await request<CommitProgress>('POST', `${session}/commit`, {}, { signal, ifMatch });
            if (done.copied === undefined) return done as WithETag<{ message: string }>;
          }
        } catch (error) {
          await request('DELETE', session, undefined, {}, 'once').catch(() => undefined);
          throw error;
        }
      },
      /** RFC 7396 JSON Merge Patch (PATCH content; needs a server with the PATCH route). */
      mergePatch: (doc: Record<string, unknown>, opts?: WriteOptions): Message =>
        request('PATCH', content, doc, opts, 'write', 'application/merge-patch+json'),

      createProject: (opts?: RequestOptions): Result<'createProject'> => request('POST', root, {}, opts, 'once'),
      getProject: (opts?: RequestOptions): Result<'getProject'> => request('GET', root, undefined, opts),
      deleteProject: (opts?: RequestOptions): Result<'deleteProject'> =>
        request('DELETE', root, undefined, opts, 'once'),
      keys: {
        create: (body: Operations['createKey']['body'], opts?: RequestOptions): Result<'createKey'> =>
          request('POST', `${root}/keys`, body, opts, 'once'),
        list: (opts?: RequestOptions): Result<'listKeys'> => request('GET', `${root}/keys`, undefined, opts),
        revoke: (id: string, opts?: RequestOptions): Result<'revokeKey'> =>
          request('DELETE', `${root}/keys/${encodeURIComponent(id)}`, undefined, opts, 'once'),
      },
      members: {
        list: (opts?: RequestOptions): Result<'listMembers'> => request('GET', `${root}/members`, undefined, opts),
        put: (
          member: string,
          role: Operations['putMember']['body']['role'],
          opts?: RequestOptions,
        ): Result<'putMember'> => request('PUT', `${root}/members/${user(member)}`, { role }, opts, 'once'),
        remove: (member: string, opts?: RequestOptions): Result<'removeMember'> =>
          request('DELETE', `${root}/members/${user(member)}`, undefined, opts, 'once'),
      },
      rules: {
        /** The access rules and their `version` (the `etag` is `"<version>"`, for `put`'s `ifMatch`). Any member. */
        get: (opts?: RequestOptions): Result<'getRules'> => request('GET', `${root}/rules`, undefined, opts),
        /** Replaces the rules (owner); `ifMatch: '"3"'` only over version 3. Answers the new `version` and `warnings`. */
        put: (body: Operations['putRules']['body'], opts?: RequestOptions & { ifMatch?: string }): Result<'putRules'> =>
          request('PUT', `${root}/rules`, body, opts, 'once'),
        /** Whether a caller may read or write at a path, by the stored rules or `rules` given (owner). */
        test: (body: Operations['testRules']['body'], opts?: RequestOptions): Result<'testRules'> =>
          request('POST', `${root}/rules/test`, body, opts),
      },
      webhooks: {
        /** The answer carries the signing `secret`, shown this once. */
        create: (body: Operations['createWebhook']['body'], opts?: RequestOptions): Result<'createWebhook'> =>
          request('POST', `${root}/webhooks`, body, opts, 'once'),
        list: (opts?: RequestOptions): Result<'listWebhooks'> => request('GET', `${root}/webhooks`, undefined, opts),
        remove: (id: string, opts?: RequestOptions): Result<'deleteWebhook'> =>
          request('DELETE', `${root}/webhooks/${encodeURIComponent(id)}`, undefined, opts, 'once'),
      },
    };
  }

  return { project };
}

export type Client = ReturnType<typeof createClient>;
export type Project = ReturnType<Client['project']>;
