// Hardening tests' own API stack: an embedded engine in the test process, the fault-injecting DynamoDB proxy in
// front of it (then a recorder of what reaches the engine), and `npm start`'s entry point as a child process whose stdout/stderr (its JSON logs) are captured.
// Fixtures are written straight to the engine (never through the proxy), so faults only ever hit the service.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Engine } from '../../lib/local/engine';
import type { Permission } from '../../lib/schema/attributes';
import type { Role } from '../../lib/schema/items';
import { type Project, unique } from './api';
import { type DynamoProxy, startDynamoProxy } from './dynamo-proxy';
import { type Recorder, startRecorder } from './hardening-recorder';
import { startLocalApi, stopProcess } from './local-api';

/** A project of the integration helpers' shape, its content URL absolute: `${url}/api/@user/slug/content`. */
export type StackProject = Project;

export interface Stack {
  /** The API, e.g. http://127.0.0.1:1234 */
  url: string;
  /** The API process (node itself: tsx is loaded with --import), for /proc/<pid>/status. */
  pid: number;
  child: ChildProcess;
  /** Injects faults (test/support/dynamo-proxy.ts); the API's AWS_ENDPOINT_URL_DYNAMODB. */
  proxy: DynamoProxy;
  /** Between the fault proxy and the engine: what really reached the engine, and its real answers. */
  recorder: Recorder;
  engine: Engine;
  table: string;
  /** Everything the API process wrote, line by line, since it started. */
  stdout: string[];
  stderr: string[];
  /** Lines printed before the API was ready (the `npm start` banner). */
  bannerLines: number;
  accounts: typeof import('../../lib/store/accounts');
  newProject(): Promise<StackProject>;
  newKey(
    project: StackProject,
    permissions: Permission[],
    expiresInSeconds?: number,
  ): Promise<{ id: string; key: string }>;
  newUser(project?: StackProject, role?: Role, expiresInSeconds?: number): Promise<{ username: string; token: string }>;
  alive(): boolean;
  /** How the API process ended, if it did (exit code or signal, with the last lines it wrote to stderr). */
  exit(): string | undefined;
  stop(): Promise<void>;
}

function lineCollector(stream: NodeJS.ReadableStream | null, into: string[]): void {
  let partial = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    into.push(...parts);
  });
  stream?.on('end', () => {
    if (partial) into.push(partial);
  });
}

/**
 * Starts engine, proxy and API. `env` is added to the API's environment (e.g. POWERTOOLS_LOG_LEVEL). Sets this test
 * file's process.env.TABLE_NAME to the stack's table (the fixtures' lib/ modules read it on every call).
 */
export async function startStack(options: { env?: Record<string, string> } = {}): Promise<Stack> {
  const { startEngine } = await import('../../lib/local/engine');
  const { ensureTable } = await import('../../lib/local/tables');
  // Under `npm run test:dynamodb-local` the stack fronts DynamoDB Local (a table of its own); else the embedded engine.
  const external = process.env.DYNAMODB_ENGINE === 'dynamodb-local' ? process.env.AWS_ENDPOINT_URL_DYNAMODB : undefined;
  const engine: Engine = external
    ? { endpoint: external, close: async () => undefined }
    : await startEngine({ port: 0 });
  const table = unique('content-api-hardening-');
  const admin = new DynamoDBClient({
    endpoint: engine.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(admin, table);
  admin.destroy();
  const recorder = await startRecorder(engine.endpoint);
  const proxy = await startDynamoProxy(recorder.url);

  // Fixtures: lib/store/accounts with its own DynamoDB client on the engine itself (not the shared test engine).
  process.env.TABLE_NAME = table;
  const previousEndpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  process.env.AWS_ENDPOINT_URL_DYNAMODB = engine.endpoint;
  let accounts!: typeof import('../../lib/store/accounts');
  let client!: typeof import('../../lib/dynamo/client');
  await jest.isolateModulesAsync(async () => {
    accounts = await import('../../lib/store/accounts');
    client = await import('../../lib/dynamo/client');
  });
  if (previousEndpoint === undefined) delete process.env.AWS_ENDPOINT_URL_DYNAMODB;
  else process.env.AWS_ENDPOINT_URL_DYNAMODB = previousEndpoint;

  const stdout: string[] = [];
  const stderr: string[] = [];
  const { child, pid, url } = await startLocalApi({
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: ':memory:',
      TABLE_NAME: table,
      AWS_ENDPOINT_URL_DYNAMODB: proxy.url,
      // Lambda's JSON lines, which the suites read (the local default is a readable line per request).
      LOG_FORMAT: 'json',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    onSpawn: (spawned) => {
      lineCollector(spawned.stdout!, stdout);
      lineCollector(spawned.stderr!, stderr);
    },
    describeExit: () => stderr.join('\n'),
  });
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    exited = `exit code ${code}, signal ${signal}`;
  });
  const deadline = Date.now() + 60_000;
  // The banner ends with the second curl line; wait until it has arrived through the pipe.
  while (stdout.filter((l) => l.startsWith('curl ')).length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const bannerLines = stdout.length;

  const stack: Stack = {
    url,
    pid,
    child,
    proxy,
    recorder,
    engine,
    table,
    stdout,
    stderr,
    bannerLines,
    accounts,
    async newProject() {
      const username = `@${unique('u')}`;
      const slug = unique('p');
      await accounts.createUser(username);
      await accounts.createProject({ username, slug });
      const { token } = await accounts.createSession(username, 3600);
      const { id, key } = await accounts.createApiKey(
        { username, slug },
        { name: 'hardening', permissions: ['content:read', 'content:write'] },
      );
      return { username, slug, content: `${url}/api/${username}/${slug}/content`, owner: token, key, keyId: id };
    },
    newKey: (project, permissions, expiresInSeconds) =>
      accounts.createApiKey(
        { username: project.username, slug: project.slug },
        { name: 'hardening', permissions, expiresInSeconds },
      ),
    async newUser(project, role, expiresInSeconds = 3600) {
      const username = `@${unique('m')}`;
      await accounts.createUser(username);
      if (project && role) await accounts.setMember({ username: project.username, slug: project.slug }, username, role);
      const { token } = await accounts.createSession(username, expiresInSeconds);
      return { username, token };
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    exit: () =>
      exited === undefined ? undefined : `${exited}; last stderr:\n${stderr.slice(-15).join('\n').slice(-6000)}`,
    async stop() {
      await stopProcess(child);
      client.dynamo.destroy();
      await proxy.close();
      await recorder.close();
      await engine.close();
    },
  };
  return stack;
}

export interface Answer {
  status: number;
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: any;
  text: string;
  headers: Headers;
  /** Milliseconds from sending to the whole body received. */
  ms: number;
}

/** One HTTP request with its latency; a request that gets no answer within `timeoutMs` rejects. */
export async function request(
  url: string,
  options: {
    method?: string;
    token?: string;
    body?: unknown;
    rawBody?: string | Buffer;
    headers?: Record<string, string>;
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const started = performance.now();
  const res = await fetch(url, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, text, headers: res.headers, ms };
}

/** The API process's resident set size in KiB (Linux), or undefined when it cannot be read. */
export function rssKiB(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}
