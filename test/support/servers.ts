// Several API processes over one DynamoDB engine, as AWS runs many warm Lambdas over one table: each process has its
// own warm memory (where paths live, chunk ranges, buckets, grants), the table is shared. The first process serves the
// embedded engine (its LOCAL_DYNAMODB_PORT) and the others point at it; under `npm run test:dynamodb-local`
// (DYNAMODB_ENGINE names it) all of them point at DynamoDB Local. Fixtures are written straight to the engine with
// lib/ modules of their own.
//
// Realtime: the first process plays API Gateway's WebSocket API and the table's one stream consumer. The embedded
// engine's change stream exists only inside the process that runs it, and on DynamoDB Local a consumer per process
// would handle every record several times (a change-log write and a message each, and a 410 for every connection
// another process holds, which drops the subscription). So the others run no consumer (LOCAL_STREAM_CONSUMER=off)
// and post through the first one's management API. A subscriber connects to `urls[0]` and sees the changes written
// through any process, as a client of API Gateway sees changes written by any Lambda.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ChildProcess } from 'node:child_process';
import { type Project, unique } from './api';
import { startLocalApi, stopProcess } from './local-api';

export interface Servers {
  /** Each process's API, e.g. http://127.0.0.1:1234, in start order; urls[0] also serves the WebSocket API. */
  urls: string[];
  /** The engine they share (the first process's embedded one, or DynamoDB Local). */
  endpoint: string;
  /** The table they share (fresh for these servers). */
  table: string;
  /** A fresh user and project on that table, its content path relative to any of `urls`. */
  newProject(): Promise<Project>;
  stop(): Promise<void>;
}

export interface ServersOptions {
  count: number;
  /** The table they share: a fresh one when absent. */
  table?: string;
  /** Added to every process's environment (SEGMENT_FRAGMENT_BYTES, say). */
  env?: Record<string, string>;
  /**
   * The DynamoDB endpoint process `index` talks to, given the shared engine's (a fault proxy in front of it, say);
   * the engine itself when absent. Not asked for the first process under the embedded engine: it serves it.
   */
  endpointFor?: (index: number, engine: string) => string | Promise<string>;
}

/** Starts `count` API processes over one engine and table; `stop` ends them (the engine's host last). */
export async function startServers(options: ServersOptions): Promise<Servers> {
  const external = process.env.DYNAMODB_ENGINE === 'dynamodb-local' ? process.env.AWS_ENDPOINT_URL_DYNAMODB : undefined;
  const table = options.table ?? unique('content-api-servers-');
  const base: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    DATA_DIR: ':memory:',
    TABLE_NAME: table,
    ...options.env,
  };
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const stop = async () => {
    // The engine's host last: the others may still be finishing a request against it.
    for (const child of [...children].reverse()) await stopProcess(child);
  };
  try {
    let endpoint = external;
    for (let index = 0; index < options.count; index++) {
      const hostsEngine = endpoint === undefined;
      const own = hostsEngine ? undefined : await (options.endpointFor?.(index, endpoint as string) ?? endpoint);
      // Only the first consumes the stream and serves the WebSocket API; the others post through it.
      const realtime = index === 0 ? {} : { LOCAL_STREAM_CONSUMER: 'off', REALTIME_ENDPOINT: urls[0] };
      const env = hostsEngine
        ? { ...base, AWS_ENDPOINT_URL_DYNAMODB: undefined, LOCAL_DYNAMODB_PORT: '0' }
        : { ...base, ...realtime, AWS_ENDPOINT_URL_DYNAMODB: own };
      const api = await startLocalApi({ env, stdio: ['ignore', 'ignore', 'inherit'] });
      children.push(api.child);
      urls.push(api.url);
      endpoint ??= api.endpoint;
    }
    // Account fixtures on first use (a global setup, which has no `jest`, never asks for them).
    let accounts: Promise<typeof import('../../lib/store/accounts')> | undefined;
    return {
      urls,
      endpoint: endpoint as string,
      table,
      stop,
      async newProject() {
        const username = `@${unique('u')}`;
        const slug = unique('p');
        accounts ??= accountsOn(endpoint as string, table);
        const { createUser, createProject, createSession, createApiKey } = await accounts;
        await createUser(username);
        await createProject({ username, slug });
        const { token } = await createSession(username, 3600);
        const { id, key } = await createApiKey(
          { username, slug },
          { name: 'servers', permissions: ['content:read', 'content:write'] },
        );
        return { username, slug, content: `/api/${username}/${slug}/content`, owner: token, key, keyId: id };
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * lib/store/accounts with a DynamoDB client of its own on `endpoint`. lib/ reads TABLE_NAME on every call, so this test
 * file's process.env.TABLE_NAME becomes the servers' table (a test file that starts servers talks to them only).
 */
async function accountsOn(endpoint: string, table: string): Promise<typeof import('../../lib/store/accounts')> {
  const { ensureTable } = await import('../../lib/local/tables');
  const admin = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(admin, table);
  admin.destroy();
  process.env.TABLE_NAME = table;
  const previous = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
  let accounts!: typeof import('../../lib/store/accounts');
  await jest.isolateModulesAsync(async () => {
    accounts = await import('../../lib/store/accounts');
  });
  if (previous === undefined) delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
  else process.env.AWS_ENDPOINT_URL_DYNAMODB = previous;
  return accounts;
}

/**
 * POSTs a large write's text to `<url><content>/<route>` with an Idempotency-Key (`key`, default one per project),
 * sent again as a client does while the answer says to retry (a 503 past its 10 s on a loaded machine, or a 409 while
 * the first try still holds its key), after Retry-After, for up to a minute: retry-safe with its key. Returns the last
 * answer.
 */
export async function sendLarge(
  url: string,
  p: { content: string; key: string; slug: string },
  options: { route: string; text: string; key?: string },
): Promise<Response> {
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await fetch(`${url}${p.content}/${options.route}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${p.key}`,
        'content-type': 'application/json',
        'idempotency-key': options.key ?? `fixture-${p.slug}`,
      },
      body: options.text,
    });
    const code = r.status === 409 ? ((await r.clone().json()) as { code?: string }).code : undefined;
    const retry = r.status === 503 || code === 'IDEMPOTENCY_IN_PROGRESS';
    if (!retry || Date.now() > until) return r;
    await r.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(r.headers.get('retry-after') ?? 1)));
  }
}
