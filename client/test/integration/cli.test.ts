// The content-api-client command as CI runs it: a child process with the credential in its environment, against the local
// API. Asserts stdout, stderr, the exit code, and the content that results.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Project, newKey, newProject, state } from '../../../test/support/api';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const root = join(__dirname, '../../..');
// The bin bundled once as the build does (tsx would cost a second or two of start-up per command).
const bin = join(mkdtempSync(join(tmpdir(), 'content-api-bin-')), 'cli.mjs');
beforeAll(async () => {
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(root, 'client/src/bin.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bin,
  });
});

/** Runs `content-api-client ...args` with CONTENT_API_* from `env` and `stdin` piped in. */
function cli(args: string[], env: Record<string, string | undefined>, stdin = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const envFor = (p: Project, key = p.key) => ({
  CONTENT_API_URL: process.env.TEST_API_URL,
  CONTENT_API_KEY: key,
  CONTENT_API_PROJECT: `${p.username}/${p.slug}`,
});

describe('content-api-client CLI', () => {
  let p: Project;
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    p = await newProject();
    env = envFor(p);
  });

  it('records a build the way the README CI job does, and prints the result as JSON', async () => {
    const record = JSON.stringify({ sha: 'abc123', branch: 'main', status: 'passed', at: '2026-01-01T00:00:00Z' });
    const run = await cli(['push', 'builds', record], env);
    expect(run).toEqual({ code: 0, stdout: expect.any(String), stderr: '' });
    const out = JSON.parse(run.stdout);
    expect(out).toEqual({ message: 'Object pushed successfully', etag: expect.stringMatching(/^"/) });
    expect(await state(p)).toMatchObject({ value: { builds: [JSON.parse(record)] }, etag: out.etag });
  });

  it('runs every content command, with --project instead of CONTENT_API_PROJECT', async () => {
    const q = await newProject();
    const e = { ...envFor(q), CONTENT_API_PROJECT: undefined };
    const at = ['--project', `${q.username}/${q.slug}`];
    const dir = mkdtempSync(join(tmpdir(), 'content-api-cli-'));
    writeFileSync(join(dir, 'content.json'), '{"site":{"pages":[],"n":1}}');
    writeFileSync(
      join(dir, 'batch.json'),
      '{"operations":[{"op":"test","path":"site.n","value":5},{"op":"delete","path":"site.gone"}]}',
    );
    const steps: Array<[string[], string?]> = [
      [['update', '--file', join(dir, 'content.json')]],
      [['set', 'site.title', 'Home', '--string']],
      [['set', 'site.big', '12345678901234567890.5']],
      [['set', 'site.gone', '-'], '{"x":true}'],
      [['push', 'site.pages', '{"id":2}']],
      [['insert', 'site.pages', '{"id":1}', '--index', '0']],
      [['increment', 'site.n', '--by', '7']],
      [['decrement', 'site.n', '--by=2']],
      [['batch'], '[{"op":"decrement","path":"site.n"}]'],
      [['batch', '--file', join(dir, 'batch.json')]],
    ];
    for (const [args, stdin] of steps) {
      const run = await cli([...args, ...at], e, stdin);
      expect({ args, ...run }).toEqual({
        args,
        code: 0,
        stdout: expect.stringMatching(/^\{"message":".+","etag":"/),
        stderr: '',
      });
    }
    const expected = { site: { pages: [{ id: 1 }, { id: 2 }], n: 5, title: 'Home', big: expect.any(Number) } };
    const read = await cli(['get', ...at], e);
    expect(read.code).toBe(0);
    // Every digit, which a double would lose.
    expect(read.stdout).toContain('"big":12345678901234567890.5');
    expect(JSON.parse(read.stdout)).toEqual({ value: expected, etag: (await state(q)).etag });
    // Exact decimals pass through both ways; --raw prints a bare value (a string without quotes).
    expect(await cli(['get', 'site.big', '--raw', ...at], e)).toEqual({
      code: 0,
      stdout: '12345678901234567890.5\n',
      stderr: '',
    });
    expect(await cli(['get', 'site.title', '--raw', ...at], e)).toEqual({ code: 0, stdout: 'Home\n', stderr: '' });
    expect(await cli(['get', 'site.pages', '--raw', ...at], e)).toEqual({
      code: 0,
      stdout: '[{"id":1},{"id":2}]\n',
      stderr: '',
    });
    // --shallow, --start and --limit.
    // An object's members in any order (DynamoDB keeps no map order).
    const shallow = await cli(['get', 'site', '--shallow', '--raw', ...at], e);
    expect({ ...shallow, stdout: JSON.parse(shallow.stdout) }).toEqual({
      code: 0,
      stdout: { pages: true, n: true, title: true, big: true },
      stderr: '',
    });
    expect(shallow.stdout.endsWith('}\n')).toBe(true);
    // parseArgs takes a negative number only joined to its option.
    expect(await cli(['get', 'site.pages', '--start=-1', '--raw', ...at], e)).toEqual({
      code: 0,
      stdout: '[{"id":2}]\n',
      stderr: '',
    });
    const slice = await cli(['get', 'site.pages', '--start', '0', '--limit', '1', ...at], e);
    expect(JSON.parse(slice.stdout)).toEqual({ value: [{ id: 1 }], start: 0, length: 2, etag: (await state(q)).etag });
    expect(await cli(['get', 'site.title', '--start', '0', ...at], e)).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(/^content-api-client: NOT_AN_ARRAY: .+ \[HTTP 400\]\n$/),
    });
    expect((await cli(['get', 'site.pages', '--limit', 'many', ...at], e)).code).toBe(1);
    const del = await cli(['delete', 'site.pages.0', '--raw', ...at], e);
    expect(del).toEqual({ code: 0, stdout: `${(await state(q)).etag}\n`, stderr: '' });
  });

  it('writes with --if-match and --idempotency-key', async () => {
    const { etag } = await state(p);
    const first = await cli(['set', 'release', '"1.0"', '--if-match', etag!], env);
    expect(first.code).toBe(0);
    const stale = await cli(['set', 'release', '"2.0"', '--if-match', etag!], env);
    expect(stale).toEqual({
      code: 4,
      stdout: '',
      stderr: expect.stringMatching(/^content-api-client: PRECONDITION_FAILED: .+ \[HTTP 412\]\n$/),
    });
    const key = `deploy-${Date.now()}`;
    for (let i = 0; i < 2; i++)
      expect((await cli(['increment', 'deploys', '--idempotency-key', key], env)).code).toBe(0);
    const reused = await cli(['increment', 'deploys', '--by', '2', '--idempotency-key', key], env);
    expect(reused).toMatchObject({ code: 4, stderr: expect.stringContaining('IDEMPOTENCY_KEY_REUSED') });
    expect((await state(p)).value).toMatchObject({ release: '1.0', deploys: 1 });
  });

  it.each<[string, string[], Record<string, string | undefined>, string, number, RegExp]>([
    ['no command', [], {}, '', 1, /no command/],
    ['an unknown command', ['fetch'], {}, '', 1, /unknown command 'fetch'/],
    ['an unknown option', ['get', '--verbose'], {}, '', 1, /unknown option '--verbose' \(.+'--verbose'\)\n/],
    ['a key in the arguments', ['get', '--key', 'capi_x'], {}, '', 1, /CONTENT_API_KEY only/],
    ['a token in the arguments', ['get', '--token=capi_x'], {}, '', 1, /CONTENT_API_KEY only/],
    ['a value that is not JSON', ['set', 'a', 'hello'], {}, '', 1, /not valid JSON \(use --string/],
    ['stdin that is not JSON', ['set', 'a', '-'], {}, 'nope', 1, /not valid JSON/],
    ['missing arguments', ['set', 'a'], {}, '', 1, /set takes <path> <value>/],
    ['insert without --index', ['insert', 'a', '1'], {}, '', 1, /insert needs --index/],
    ['a --by that is not a number', ['increment', 'a', '--by', '"2"'], {}, '', 1, /--by must be a number/],
    ['update of an array', ['update'], {}, '[1]', 1, /update takes a JSON object/],
    ['a missing file', ['batch', '--file', '/nonexistent.json'], {}, '', 1, /cannot read \/nonexistent.json/],
    ['no CONTENT_API_URL', ['get'], { CONTENT_API_URL: undefined }, '', 1, /CONTENT_API_URL is not set/],
    ['no CONTENT_API_KEY', ['get'], { CONTENT_API_KEY: undefined }, '', 1, /CONTENT_API_KEY is not set/],
    ['no project', ['get'], { CONTENT_API_PROJECT: undefined }, '', 1, /no project/],
    ['a bad project name', ['get'], { CONTENT_API_PROJECT: 'site' }, '', 1, /"@user\/slug"/],
    ['a bad path (400)', ['set', 'a..b', '1'], {}, '', 1, /^content-api-client: INVALID_PATH: .+\[HTTP 400\]/],
    ['a missing path (404)', ['get', 'no.such.path'], {}, '', 2, /^content-api-client: PATH_NOT_FOUND: .+\[HTTP 404\]/],
    [
      'an unknown key (401)',
      ['get'],
      { CONTENT_API_KEY: 'capi_0000000000000000_x' },
      '',
      3,
      /^content-api-client: UNAUTHORIZED/,
    ],
    [
      'a failed batch test (409)',
      ['batch'],
      {},
      '[{"op":"test","path":"nothing","exists":true}]',
      4,
      /^content-api-client: TEST_FAILED \(operation 0\): /,
    ],
    [
      'an unreachable server',
      ['get'],
      { CONTENT_API_URL: 'http://127.0.0.1:9' },
      '',
      5,
      /^content-api-client: NETWORK_ERROR: [^[]+\n$/,
    ],
  ])('%s: exit code and message on stderr, nothing on stdout', async (_name, args, overrides, stdin, code, message) => {
    const run = await cli(args, { ...env, ...overrides }, stdin);
    expect(run).toEqual({ code, stdout: '', stderr: expect.stringMatching(message) });
  });

  it('a read-only key writing is forbidden (exit 3), and --help prints the usage (exit 0)', async () => {
    const reader = await newKey(p, ['content:read']);
    const run = await cli(['set', 'a', '1'], envFor(p, reader.key));
    expect(run).toEqual({
      code: 3,
      stdout: '',
      stderr: expect.stringMatching(/^content-api-client: FORBIDDEN: .+\[HTTP 403\]\n$/),
    });
    const help = await cli(['--help'], {});
    expect(help).toEqual({ code: 0, stdout: expect.stringContaining('Exit codes: 0 ok, 1 usage'), stderr: '' });
  });

  it('--version (or -v) prints the command and its package version, with nothing else needed', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8'));
    for (const flag of ['--version', '-v'])
      expect(await cli([flag], {})).toEqual({ code: 0, stdout: `content-api-client ${version}\n`, stderr: '' });
  });

  it('runs from this repository without publishing: npm run -s cli -- <command>', async () => {
    await cli(['set', 'from.repo', '"yes"'], env);
    // npm's own variables from an enclosing `npm test` would redirect the inner npm.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const run = spawnSync('npm', ['run', '-s', 'cli', '--', 'get', 'from.repo', '--raw'], {
      cwd: root,
      env: { ...inherited, ...env },
      encoding: 'utf8',
    });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 0,
      stdout: 'yes\n',
      stderr: '',
    });
  });

  it('rules test: runs a file of cases through the tester, exit code 4 on a mismatch', async () => {
    const q = await newProject();
    const dir = mkdtempSync(join(tmpdir(), 'content-api-rules-'));
    const rules = [{ match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid' }];
    const cases = [
      { auth: { kind: 'user', sub: 'u1' }, operation: 'read', path: 'users.u1.notes', allowed: true },
      { auth: null, operation: 'read', path: 'users.u1', allowed: false },
    ];
    writeFileSync(join(dir, 'good.json'), JSON.stringify({ rules, cases }));
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ rules, cases: [{ ...cases[1], allowed: true }] }));
    const owner = envFor(q, q.owner);
    const good = await cli(['rules', 'test', '--file', join(dir, 'good.json')], owner);
    expect([good.code, JSON.parse(good.stdout), good.stderr]).toEqual([0, { cases: 2, failed: [] }, '']);
    const bad = await cli(['rules', 'test', '--file', join(dir, 'bad.json')], owner);
    expect(bad.code).toBe(4);
    expect(JSON.parse(bad.stdout)).toEqual({
      cases: 1,
      failed: [{ index: 0, ...cases[1], allowed: true, got: false, reason: expect.stringMatching(/is true/) }],
    });
    expect(bad.stderr).toMatch(/1 of 1 rule cases got another verdict/);
    const key = await cli(['rules', 'test', '--file', join(dir, 'good.json')], envFor(q));
    expect([key.code, key.stderr]).toEqual([3, expect.stringMatching(/FORBIDDEN/)]);
  });

  it('history, get --at and restore: a bad update undone from CI', async () => {
    const p = await newProject();
    const env = envFor(p);
    expect((await cli(['set', 'site.title', '"Home"'], env)).code).toBe(0);
    expect((await cli(['update'], env, '{"broken":true}')).code).toBe(0);
    let lines: string[] = [];
    for (let i = 0; i < 100 && lines.length < 2; i++) {
      lines = (await cli(['history'], env)).stdout.trim().split('\n').filter(Boolean);
      if (lines.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [latest, first] = lines.map((l) => JSON.parse(l));
    expect(latest).toMatchObject({ operation: 'update', actor: { kind: 'key', id: p.keyId } });
    expect(first).toMatchObject({ operation: 'set', changes: [{ path: 'site', value: { title: 'Home' } }] });
    expect((await cli(['history', '--limit', '1'], env)).stdout.trim().split('\n')).toHaveLength(1);
    const then = await cli(['get', 'site.title', '--at', first.revision, '--raw'], env);
    expect({ code: then.code, stdout: then.stdout.trim() }).toEqual({ code: 0, stdout: 'Home' });
    expect((await cli(['restore', '--at', first.revision], env)).code).toBe(0);
    expect((await state(p)).value).toEqual({ site: { title: 'Home' } });
    const missing = await cli(['restore', 'site'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--at');
  });
});
