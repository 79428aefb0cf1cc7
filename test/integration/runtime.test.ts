// The local runtime as a user runs it: the admin CLI, and the embedded engine's durability across kill -9.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_EXPIRES_IN_SECONDS } from '../../lib/config/limits';
import { unique } from '../support/api';
import { startLocalApi, stopProcess } from '../support/local-api';

function admin(args: string[], env: Record<string, string | undefined> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'lib/local/admin.ts', ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The CLI without blocking the event loop (HTTP keep-alive sockets of the same test stay serviced). */
function adminAsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'lib/local/admin.ts', ...args],
      { env: process.env, encoding: 'utf8' },
      (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

/** Runs the CLI and returns the one JSON object it printed. */
function adminJson(args: string[], env?: Record<string, string | undefined>): any {
  const result = admin(args, env);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

describe('admin CLI', () => {
  const alice = `@${unique('alice')}`;
  const bob = `@${unique('bob')}`;

  it('creates users, a project, a session, keys and members, printing one JSON object each', async () => {
    expect(adminJson(['user', 'create', alice])).toEqual({ username: alice });
    expect(adminJson(['user', 'create', bob])).toEqual({ username: bob });
    expect(adminJson(['project', 'create', `${alice}/site`])).toEqual({ username: alice, projectSlug: 'site' });
    expect(adminJson(['session', 'create', alice, '--expires-in', '600'])).toEqual({
      token: expect.stringMatching(/^csess_[\w-]{43}$/),
    });
    const key = adminJson(['key', 'create', `${alice}/site`, '--permissions', 'content:read,content:write']);
    expect(key).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      key: expect.stringMatching(/^capi_[0-9a-f]{16}_[\w-]{43}$/),
    });
    expect(adminJson(['member', 'add', `${alice}/site`, bob, '--role', 'viewer'])).toEqual({
      member: bob,
      role: 'viewer',
    });

    const api = process.env.TEST_API_URL as string;
    const set = await fetch(`${api}/api/${alice}/site/content/set`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'a', value: 1 }),
    });
    expect(set.status).toBe(200);
    expect(adminJson(['key', 'revoke', `${alice}/site`, key.id])).toEqual({ revoked: true });
    const after = await fetch(`${api}/api/${alice}/site/content`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(after.status).toBe(401);
  });

  it.each([
    [['user', 'create', 'alice'], 2, /username like @alice/],
    [['project', 'create', '@nobody-here/site'], 1, /user @nobody-here does not exist/],
    [['key', 'create', '@a/b', '--permissions', 'content:admin'], 2, /--permissions/],
    [['member', 'add', '@a/b', '@c', '--role', 'owner'], 2, /--role/],
    [['session', 'create', '@a', '--expires-in', '-5'], 2, /--expires-in/],
    [['frobnicate'], 2, /unknown command/],
    [['user', 'create', '@a', '--frob'], 2, /unknown option --frob/],
    [['key', 'create', '@a/b', '--permissions'], 2, /--permissions needs a value/],
    [['session', 'create', '@a', '--expires-in', '-5'], 2, /--expires-in=<value>/],
    [['session', 'create', '@a', '--expires-in=-5'], 2, /--expires-in must be a whole number of seconds from 1/],
  ])('fails %j with exit %i and a message on stderr only', (args, status, message) => {
    const result = admin(args);
    expect(result.status).toBe(status);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it.each([[['--help']], [['-h']], [['user', 'create', '--help']]])(
    '%j prints the usage on stdout and exits 0',
    (args) => {
      const result = admin(args);
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
      expect(result.stdout).toMatch(/^usage: npm run -s admin -- <command>/);
      expect(result.stdout).toContain('key create @alice/site --permissions');
    },
  );

  it('npm run -s admin -- --help: the usage, exit 0', () => {
    const result = spawnSync('npm', ['run', '-s', 'admin', '--', '--help'], { encoding: 'utf8', env: process.env });
    expect({ status: result.status, usage: result.stdout.startsWith('usage: npm run -s admin') }).toEqual({
      status: 0,
      usage: true,
    });
  });

  // The same bound as the API's expiresInSeconds (1 s to 10 years), for sessions and keys alike.
  // One parser serves both commands: every value against sessions, the out-of-range ones against keys too.
  const session = ['session', 'create', alice];
  const key = ['key', 'create', `${alice}/site`, '--permissions', 'content:read'];
  const TOO_LONG = [String(MAX_EXPIRES_IN_SECONDS + 1), '9000000000000', '1e308'];
  const BAD_LIFETIMES = [
    ...['0', '-5', '1.5', '1e3', '', 'abc', ...TOO_LONG].map((value) => [value, session] as const),
    ...TOO_LONG.map((value) => [value, key] as const),
  ];
  it.each(BAD_LIFETIMES)(
    'refuses --expires-in %j (%j) with exit 2 before touching the engine',
    async (value, command) => {
      // `=` form: a value starting with a dash would otherwise be read as an option (its own usage error).
      const result = await adminAsync([...command, `--expires-in=${value}`]);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/--expires-in must be a whole number of seconds from 1 to 315360000 \(10 years\)/);
    },
  );

  it('accepts --expires-in up to 10 years, and the key list shows the expiry', async () => {
    const lifetime = ['--expires-in', String(MAX_EXPIRES_IN_SECONDS)];
    const [created, signedIn] = await Promise.all([
      adminAsync([...key, ...lifetime]),
      adminAsync([...session, ...lifetime]),
    ]);
    expect([created.status, created.stderr, signedIn.status, signedIn.stderr]).toEqual([0, '', 0, '']);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const { token } = JSON.parse(signedIn.stdout) as { token: string };
    const listed = await fetch(`${process.env.TEST_API_URL}/api/${alice}/site/keys`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    const entry = ((await listed.json()) as { keys: Array<{ id: string; expiresAt: string }> }).keys.find(
      (k) => k.id === id,
    );
    expect(Math.abs(Date.parse(entry!.expiresAt) - (Date.now() + MAX_EXPIRES_IN_SECONDS * 1000))).toBeLessThan(60_000);
  });

  it('takes usernames and slugs in any case and keeps them in lower case', async () => {
    const json = async (args: string[]) => {
      const result = await adminAsync(args);
      expect([args, result.status, result.stderr]).toEqual([args, 0, '']);
      return JSON.parse(result.stdout);
    };
    const carol = `@${unique('carol')}`;
    const dave = `@${unique('dave')}`;
    expect(await json(['user', 'create', carol.toUpperCase()])).toEqual({ username: carol });
    const again = await adminAsync(['user', 'create', carol]);
    expect([again.status, again.stdout]).toEqual([1, '']);
    expect(again.stderr).toMatch(/already exists/);
    expect(await json(['user', 'create', dave])).toEqual({ username: dave });
    expect(await json(['project', 'create', `${carol.toUpperCase()}/Site`])).toEqual({
      username: carol,
      projectSlug: 'site',
    });
    const { token } = await json(['session', 'create', `${carol[0]}${carol[1]!.toUpperCase()}${carol.slice(2)}`]);
    const { key } = await json(['key', 'create', `${carol}/SITE`, '--permissions', 'content:read,content:write']);
    expect(
      await json(['member', 'add', `${carol.toUpperCase()}/sItE`, dave.toUpperCase(), '--role', 'viewer']),
    ).toEqual({ member: dave, role: 'viewer' });
    const api = process.env.TEST_API_URL as string;
    const set = await fetch(`${api}/api/${carol}/site/content/set`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'a', value: 1 }),
    });
    expect(set.status).toBe(200);
    const members = await fetch(`${api}/api/${carol}/site/members`, { headers: { authorization: `Bearer ${token}` } });
    expect(await members.json()).toEqual({ owner: carol, members: [{ username: dave, role: 'viewer' }] });
  }, 90_000);

  it('reports an existing user as an error', () => {
    const result = admin(['user', 'create', alice]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/already exists/);
  });
});

/** Starts `npm start`'s entry point on free ports with its own data folder; resolves once it is serving. */
async function startApi(dataDir: string, table: string) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    LOCAL_DYNAMODB_PORT: '0',
    DATA_DIR: dataDir,
    TABLE_NAME: table,
  };
  // On the embedded engine, test the embedded engine's own persistence; on DynamoDB Local, the same flow.
  if (process.env.DYNAMODB_ENGINE !== 'dynamodb-local') delete env.AWS_ENDPOINT_URL_DYNAMODB;
  return startLocalApi({ env });
}

const kill9 = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('npm start', () => {
  it('creates a demo project on first start, and acknowledged writes survive kill -9 and a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'content-api-data-'));
    const table = `content-api-${unique('t')}`;
    try {
      const first = await startApi(dataDir, table);
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
        username: string;
        projectSlug: string;
        key: string;
      };
      const base = `${first.url}/api/${demo.username}/${demo.projectSlug}/content`;
      const auth = { authorization: `Bearer ${demo.key}`, 'content-type': 'application/json' };
      for (let i = 0; i < 20; i++) {
        const reply = await fetch(`${base}/push`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ path: 'log', value: i }),
        });
        expect(reply.status).toBe(200);
      }
      await kill9(first.child);

      const second = await startApi(dataDir, table);
      try {
        const read = await fetch(`${second.url}/api/${demo.username}/${demo.projectSlug}/content?path=log`, {
          headers: auth,
        });
        expect(read.status).toBe(200);
        expect(await read.json()).toEqual({ value: Array.from({ length: 20 }, (_, i) => i) });
        // The same demo key still works: the first start's demo is reused, not recreated.
        expect(JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')).key).toBe(demo.key);
      } finally {
        await kill9(second.child);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const until = async (done: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return done();
};

describe('HOST: the interface npm start listens on (default loopback)', () => {
  const reachable = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, host);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });

  // 127.0.0.2 is loopback too on Linux, but another address: listening there and only there proves HOST is used.
  it('HOST=127.0.0.2: serves there, says so, and not on 127.0.0.1', async () => {
    const api = await startLocalApi({
      env: { ...process.env, HOST: '127.0.0.2', PORT: '0', LOCAL_DYNAMODB_PORT: '0', DATA_DIR: ':memory:' },
    });
    try {
      const { hostname, port } = new URL(api.url);
      expect(hostname).toBe('127.0.0.2');
      expect((await fetch(`${api.url}/openapi.json`)).status).toBe(200);
      expect(await reachable('127.0.0.1', Number(port))).toBe(false);
    } finally {
      await stopProcess(api.child);
    }
  }, 90_000);

  it('no HOST: loopback only', async () => {
    const env: Record<string, string | undefined> = { ...process.env, PORT: '0', LOCAL_DYNAMODB_PORT: '0' };
    env.DATA_DIR = ':memory:';
    delete env.HOST;
    const api = await startLocalApi({ env });
    try {
      const { hostname, port } = new URL(api.url);
      expect(hostname).toBe('127.0.0.1');
      expect(await reachable('127.0.0.2', Number(port))).toBe(false);
    } finally {
      await stopProcess(api.child);
    }
  }, 90_000);
});

describe('npm start under a process manager', () => {
  // npm runs the script through sh, which dies of a TERM without passing it on: the server has to be exec'd.
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to the npm process stops the server: its process ends and its port closes',
    async (signal) => {
      const readyFile = join(tmpdir(), `content-api-ready-${unique('npm')}.json`);
      const npm = spawn('npm', ['start'], {
        env: { ...process.env, PORT: '0', LOCAL_DYNAMODB_PORT: '0', DATA_DIR: ':memory:', LOCAL_READY_FILE: readyFile },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => npm.once('exit', resolve));
      expect(await until(() => existsSync(readyFile) || npm.exitCode !== null, 90_000)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as { url: string; pid: number };
      rmSync(readyFile, { force: true });
      try {
        expect((await fetch(`${ready.url}/openapi.json`)).status).toBe(200);
        npm.kill(signal);
        await exited;
        expect(await until(() => !alive(ready.pid), 10_000)).toBe(true);
        const { port } = new URL(ready.url);
        const refused = await new Promise<boolean>((resolve) => {
          const socket = connect(Number(port), '127.0.0.1');
          socket.once('connect', () => {
            socket.destroy();
            resolve(false);
          });
          socket.once('error', () => resolve(true));
        });
        expect(refused).toBe(true);
      } finally {
        if (alive(ready.pid)) process.kill(ready.pid, 'SIGKILL');
      }
    },
    120_000,
  );
});

describe('the local server, for requests Node cannot hand to a route', () => {
  /** Writes raw bytes and returns what came back until the server closed the connection. */
  const raw = (bytes: string) =>
    new Promise<{ status: number; headers: string; body: any }>((resolve, reject) => {
      const { hostname, port } = new URL(process.env.TEST_API_URL as string);
      const socket = connect(Number(port), hostname, () => socket.write(bytes));
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head = '', body = ''] = text.split('\r\n\r\n');
        resolve({
          status: Number(head.split(' ')[1]),
          headers: head.toLowerCase(),
          body: body ? JSON.parse(body) : undefined,
        });
      });
    });
  const SET = 'POST /api/@demo/site/content/set HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n';

  it.each([
    [
      "headers over Node's limit",
      `GET /openapi.json HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'HEADERS_TOO_LARGE',
    ],
    ['a malformed chunk size', `${SET}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400, 'BAD_REQUEST'],
    [
      'Content-Length with Transfer-Encoding',
      `${SET}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      400,
      'BAD_REQUEST',
    ],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400, 'BAD_REQUEST'],
  ])('%s: a JSON error with the security headers, then the connection closes', async (_, bytes, status, code) => {
    const reply = await raw(bytes);
    expect({ status: reply.status, body: reply.body }).toEqual({ status, body: { message: expect.any(String), code } });
    expect(reply.headers).toContain('content-type: application/json; charset=utf-8');
    expect(reply.headers).toContain('x-content-type-options: nosniff');
    expect(reply.headers).toContain('connection: close');
  });

  it('a body that never arrives: a JSON 408 once the function timeout has passed', async () => {
    const started = Date.now();
    const reply = await raw(`${SET}Content-Length: 50\r\n\r\n{"path"`);
    expect({ status: reply.status, body: reply.body }).toEqual({
      status: 408,
      body: { message: expect.any(String), code: 'REQUEST_TIMEOUT' },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
  }, 30_000);
});
