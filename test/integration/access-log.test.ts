// Access logs under overlapping requests: the local server runs invocations concurrently in one process (as Lambda
// does with AWS_LAMBDA_MAX_CONCURRENCY), so each access line must carry its own request's id, route and function.
import type { ChildProcess } from 'node:child_process';
import { loadRoutes } from '../../lib/local/server';
import { startLocalApi, stopProcess } from '../support/local-api';

const FUNCTION_OF_ROUTE = new Map(loadRoutes().map((r) => [`${r.method} ${r.path}`, r.functionName]));

describe('access log lines under concurrency', () => {
  let child: ChildProcess;
  let url: string;
  /** stdout and stderr (Powertools writes ERROR lines there), line by line. */
  const output: string[] = [];

  beforeAll(async () => {
    const collect = (stream: NodeJS.ReadableStream) => {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop() ?? '';
        output.push(...parts);
      });
    };
    const api = await startLocalApi({
      // The suite's engine and table (the API's own embedded one otherwise); the demo project's key from the banner.
      env: {
        ...process.env,
        PORT: '0',
        LOCAL_DYNAMODB_PORT: '0',
        DATA_DIR: ':memory:',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        // Lambda's lines, as deployed: the local default is one readable line per request (below).
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      onSpawn: (spawned) => {
        collect(spawned.stdout!);
        collect(spawned.stderr!);
      },
    });
    child = api.child;
    url = api.url;
  }, 90_000);
  afterAll(() => stopProcess(child));

  it('32 overlapping requests on five routes: one line each, with its own request id and its own function', async () => {
    // The ready file is written before the banner's last lines reach this process: wait for the key's line.
    const banner = Date.now() + 10_000;
    while (!/API key capi_/.test(output.join('\n')) && Date.now() < banner) await new Promise((r) => setTimeout(r, 20));
    const key = output.join('\n').match(/API key (capi_\S+)/)?.[1] as string;
    expect(key).toBeDefined();
    const content = `${url}/api/@demo/site/content`;
    const auth = { authorization: `Bearer ${key}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const run = `r${Date.now()}`;
    const requests: Array<{ fn: string; send: () => Promise<Response> }> = [];
    for (let i = 0; i < 32; i++) {
      const path = `${run}.n${i % 8}`;
      const post = (op: string, body: unknown) => () =>
        fetch(`${content}/${op}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
      const pick = [
        { fn: 'set', send: post('set', { path: `${run}.s${i}`, value: i }) },
        { fn: 'increment', send: post('increment', { path }) },
        { fn: 'decrement', send: post('decrement', { path }) },
        { fn: 'push', send: post('push', { path: `${run}.l`, value: i }) },
        { fn: 'get', send: () => fetch(`${content}?path=${run}`, { headers: auth }) },
      ][i % 5]!;
      requests.push(pick);
    }
    const before = output.length;
    const replies = await Promise.all(requests.map(async (r) => ({ fn: r.fn, status: (await r.send()).status })));
    // Whatever each answered (a busy machine may answer a 503), it answered, and its line says with which status.
    const count = (items: Array<{ fn: string; status: number }>) =>
      items.reduce<Record<string, number>>(
        (acc, { fn, status }) => ({ ...acc, [`${fn} ${status}`]: (acc[`${fn} ${status}`] ?? 0) + 1 }),
        {},
      );

    const accessLines = async () =>
      output
        .slice(before)
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.message === 'request');
    const deadline = Date.now() + 5000;
    while ((await accessLines()).length < requests.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const lines = await accessLines();

    expect(lines).toHaveLength(requests.length);
    const ids = lines.map((l) => l.function_request_id);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(requests.length);
    for (const line of lines) {
      expect({ route: line.route, function_name: line.function_name }).toEqual({
        route: line.route,
        function_name: FUNCTION_OF_ROUTE.get(line.route),
      });
    }
    expect(count(lines.map((l) => ({ fn: l.function_name, status: l.status })))).toEqual(count(replies));
  });
});

describe('npm start without LOG_FORMAT: one readable line per request, no JSON lines', () => {
  let child: ChildProcess;
  let url: string;
  const stdout: string[] = [];
  const stderr: string[] = [];
  const collect = (stream: NodeJS.ReadableStream, into: string[]) => {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      into.push(...parts);
    });
  };

  beforeAll(async () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: '0',
      LOCAL_DYNAMODB_PORT: '0',
      DATA_DIR: ':memory:',
    };
    delete env.LOG_FORMAT;
    delete env.POWERTOOLS_LOG_LEVEL;
    const api = await startLocalApi({
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      onSpawn: (spawned) => {
        collect(spawned.stdout!, stdout);
        collect(spawned.stderr!, stderr);
      },
    });
    child = api.child;
    url = api.url;
  }, 90_000);
  afterAll(() => stopProcess(child));

  it('method, path, status, time and the DynamoDB requests and capacity of each', async () => {
    const banner = Date.now() + 10_000;
    while (!/^curl -s http/m.test(stdout.join('\n')) && Date.now() < banner)
      await new Promise((r) => setTimeout(r, 20));
    const key = stdout.join('\n').match(/API key (capi_\S+)/)?.[1] as string;
    const before = stdout.length;
    const stderrBefore = stderr.length;
    const content = `${url}/api/@demo/site/content`;
    const auth = { authorization: `Bearer ${key}` };
    const sent = [
      await fetch(`${content}/set`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ path: 'lines.a', value: 1 }),
      }),
      await fetch(`${content}?path=lines`, { headers: auth }),
      await fetch(`${content}?path=lines`),
      await fetch(`${url}/no/such/route`),
    ].map((r) => r.status);
    expect(sent).toEqual([200, 200, 401, 404]);
    const deadline = Date.now() + 5000;
    while (stdout.length - before < sent.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    const lines = stdout.slice(before).filter((l) => l.trim() !== '');
    const dynamo = String.raw` · DynamoDB \d+ requests?(?: \(\d+ retried\))?, \d+(?:\.\d)? RCU, \d+(?:\.\d)? WCU`;
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^POST /api/@demo/site/content/set 200 \\d+ ms${dynamo}$`)),
      expect.stringMatching(new RegExp(`^GET /api/@demo/site/content\\?path=lines 200 \\d+ ms${dynamo}$`)),
      expect.stringMatching(new RegExp(`^GET /api/@demo/site/content\\?path=lines 401 \\d+ ms${dynamo}$`)),
      expect.stringMatching(/^GET \/no\/such\/route 404 \d+ ms$/),
    ]);
    // The write asked DynamoDB for something, and wrote.
    expect(lines[0]).toMatch(/DynamoDB [1-9]\d* requests?.*, [1-9][\d.]* WCU$/);
    expect(stderr.slice(stderrBefore).filter((l) => l.trim() !== '')).toEqual([]);
  });
});
