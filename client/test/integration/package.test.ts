// The published package as a user gets it: built and packed (npm pack), installed into a fresh project, imported
// by Node (import and require) and typechecked against its declarations under each module resolution an app uses, its
// bin run, and bundled for the browser with esbuild.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type Project, newProject, state } from '../../../test/support/api';

const root = join(__dirname, '../../..');
// npm's own variables from an enclosing `npm test` would redirect the inner npm (prefix, cache, ...).
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, env: cleanEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let app: string;
let files: string[];
let p: Project;

beforeAll(async () => {
  p = await newProject();
  const out = mkdtempSync(join(tmpdir(), 'content-api-pack-'));
  // prepack builds client/dist (npm run build:client).
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', out], join(root, 'client')));
  files = packed.files.map((f: { path: string }) => f.path).sort();
  app = mkdtempSync(join(tmpdir(), 'content-api-app-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  npm(['install', '--offline', '--no-audit', '--no-fund', join(out, packed.filename)], app);
}, 120_000);

describe('content-api-client as installed from its tarball', () => {
  it('ships the bundles, declarations and the bin, and no sources or tests', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/realtime.js',
        'dist/realtime.d.ts',
        'dist/index.cjs',
        'dist/index.d.cts',
        'dist/realtime.cjs',
        'dist/realtime.d.cts',
        'dist/cli.js',
        'dist/errors.d.ts',
        'dist/offline.js',
        'dist/offline.cjs',
        'dist/offline.d.ts',
        'dist/offline.d.cts',
        'dist/file-store.js',
        'dist/file-store.cjs',
        'dist/file-store.d.ts',
        'dist/file-store.d.cts',
        'dist/backup.js',
        'dist/backup.cjs',
        'dist/backup.d.ts',
        'dist/backup.d.cts',
      ]),
    );
    expect(files.filter((f) => !/^(package\.json|README\.md|LICENSE|dist\/.+\.(c?js|d\.c?ts))$/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/content-api-client/package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('imports in Node (ESM) and talks to the API', () => {
    writeFileSync(
      join(app, 'use.mjs'),
      `import { createClient, ContentApiError } from 'content-api-client';
const site = createClient({ baseUrl: process.env.URL, credential: process.env.KEY }).project(process.env.PROJECT);
const written = await site.set('from', 'node');
const read = await site.get('from');
const missing = await site.get('nope').catch((e) => e);
console.log(JSON.stringify({ read, same: read.etag === written.etag, error: missing instanceof ContentApiError && missing.code }));`,
    );
    const run = spawnSync(process.execPath, ['use.mjs'], {
      cwd: app,
      env: { URL: process.env.TEST_API_URL, KEY: p.key, PROJECT: `${p.username}/${p.slug}` },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      read: { value: 'node', etag: expect.stringMatching(/^"/) },
      same: true,
      error: 'PATH_NOT_FOUND',
    });
  });

  it('imports in a CommonJS app with require(), the same API', () => {
    writeFileSync(
      join(app, 'use.cjs'),
      `const { createClient, ContentApiError } = require('content-api-client');
const { subscribe, onValue } = require('content-api-client/realtime');
const { offline, memoryStore } = require('content-api-client/offline');
const { fileStore } = require('content-api-client/file-store');
const site = createClient({ baseUrl: process.env.URL, credential: process.env.KEY }).project(process.env.PROJECT);
(async () => {
  await site.set('from', 'require');
  const missing = await site.get('nope').catch((e) => e);
  const { value } = await site.get('from');
  const queued = offline(site, { store: fileStore(require('node:path').join(__dirname, 'queue.json')) });
  await queued.push('list', 1);
  await queued.flush();
  queued.close();
  const { value: list } = await site.get('list');
  console.log(JSON.stringify({ value, error: missing instanceof ContentApiError && missing.code, subscribe: typeof subscribe, onValue: typeof onValue, memoryStore: typeof memoryStore, list }));
})();`,
    );
    const run = spawnSync(process.execPath, ['use.cjs'], {
      cwd: app,
      env: { URL: process.env.TEST_API_URL, KEY: p.key, PROJECT: `${p.username}/${p.slug}` },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      value: 'require',
      error: 'PATH_NOT_FOUND',
      subscribe: 'function',
      onValue: 'function',
      memoryStore: 'function',
      list: [1],
    });
  });

  it('runs its bin, content-api-client, as a CI step would, and says its version', async () => {
    const version = spawnSync(join(app, 'node_modules/.bin/content-api-client'), ['--version'], { encoding: 'utf8' });
    const { version: packed } = JSON.parse(readFileSync(join(root, 'client/package.json'), 'utf8'));
    expect(version).toMatchObject({ status: 0, stdout: `content-api-client ${packed}\n`, stderr: '' });
    const run = spawnSync(
      join(app, 'node_modules/.bin/content-api-client'),
      ['push', 'builds', '{"sha":"abc","ok":true}'],
      {
        cwd: app,
        env: {
          PATH: process.env.PATH,
          CONTENT_API_URL: process.env.TEST_API_URL,
          CONTENT_API_KEY: p.key,
          CONTENT_API_PROJECT: `${p.username}/${p.slug}`,
        },
        encoding: 'utf8',
      },
    );
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({ message: 'Object pushed successfully' });
    expect((await state(p)).value.builds).toEqual([{ sha: 'abc', ok: true }]);
  });

  // An app's compiler settings decide which declarations it reads: nodenext (ESM, .d.ts through the `import`
  // condition; needs extensions on relative imports), bundler, and a CommonJS file under nodenext (.d.cts through
  // `require`). Without skipLibCheck, an unresolved import in the declarations is an error, not a silent `any`.
  const resolutions = [
    { name: 'nodenext (ESM)', ext: 'ts', options: ['--module', 'nodenext', '--moduleResolution', 'nodenext'] },
    { name: 'bundler', ext: 'ts', options: ['--module', 'esnext', '--moduleResolution', 'bundler'] },
    { name: 'nodenext (CommonJS)', ext: 'cts', options: ['--module', 'nodenext', '--moduleResolution', 'nodenext'] },
  ];
  it.each(resolutions)(
    'typechecks against its declarations under $name: typed results, operations and error codes',
    ({ ext, options }) => {
      writeFileSync(
        join(app, `typed.${ext}`),
        `import { ContentApiError, type ErrorCode, createClient } from 'content-api-client';
import { formatPath, onValue, parsePath, subscribe } from 'content-api-client/realtime';
import { indexedDbStore, offline } from 'content-api-client/offline';
import { fileStore } from 'content-api-client/file-store';
const site = createClient({ baseUrl: 'https://api.example.com', credential: async () => 'jwt' }).project('@a/b');
export async function use(): Promise<string | null> {
  const { value, etag } = await site.get('a');
  await site.batch([{ op: 'test', path: 'a', exists: false }, { op: 'increment', path: 'n', value: 2 }]);
  const key = await site.keys.create({ name: 'ci', permissions: ['content:read'] });
  const code: ErrorCode = 'WRITE_CONFLICT';
  try { await site.set('a', value); } catch (e) { if (e instanceof ContentApiError && e.code === code) return key.key; }
  return etag;
}
export const sub = subscribe(site, 'a', (e) => {
  if (e.type === 'change') for (const c of e.changes) console.log(c.path, c.deleted ? 'deleted' : c.value);
  if (e.type === 'error' && e.code === 'UNAUTHORIZED' && !e.retrying) console.log(e.message);
}, { since: sub0() });
function sub0(): string | undefined { return undefined; }
export const revision: string | undefined = sub.revision;
export const live = onValue(site, 'a', (value, { revision, pending }) => console.log(value, revision?.length, pending));
export const segments: string[] = parsePath('a.b\\\\.c');
export const path: string = formatPath(segments);
const queue = offline(site, { store: fileStore('queue.json'), onRefused: (w, e) => console.log(w.key, w.path, e.code) });
export const queued: Promise<string> = queue.set('a', 1, { ifMatch: '"1"' }).then((w) => w.key);
export const browserQueue = offline(site, { store: indexedDbStore('app') }).pending.length;
`,
      );
      writeFileSync(
        join(app, `bad.${ext}`),
        `import { createClient, type ErrorCode } from 'content-api-client';
import { onValue, subscribe } from 'content-api-client/realtime';
import { offline } from 'content-api-client/offline';
const site = createClient({ baseUrl: 'x' }).project('@a/b');
export const code: ErrorCode = 'NOT_A_CODE';
export const op = site.batch([{ op: 'update', path: 'a' }]);
export const role = site.members.put('@b', 'admin');
export const sub = subscribe(site, 'a', (e) => e.type === 'error' && e.code === 'NOT_A_CODE');
export const live = onValue(site, 'a', (value, meta) => meta.pending.toFixed());
export const queued = offline(site).increment('n', '2');
`,
      );
      const tsc = (file: string) =>
        spawnSync(
          join(root, 'node_modules/.bin/tsc'),
          ['--noEmit', '--strict', '--target', 'es2022', ...options, '--lib', 'es2023,dom', '--types', '', file],
          { cwd: app, encoding: 'utf8' },
        );
      expect(tsc(`typed.${ext}`)).toMatchObject({ status: 0, stdout: '' });
      const bad = tsc(`bad.${ext}`);
      expect(bad.status).not.toBe(0);
      // Each of the six wrong uses is caught (the types are not `any`), and nothing else is reported.
      expect(bad.stdout.match(/error TS/g)).toHaveLength(6);
      expect(bad.stdout.match(new RegExp(`bad\\.${ext}\\(\\d+,\\d+\\): error`, 'g'))).toHaveLength(6);
    },
  );

  it('bundles for the browser with esbuild, with nothing from Node, under 5 KB gzipped', async () => {
    writeFileSync(
      join(app, 'browser.js'),
      `import { createClient } from 'content-api-client';
window.site = createClient({ baseUrl: location.origin, credential: () => 'jwt' }).project('@a/b');`,
    );
    const { build } = await import('esbuild');
    const result = await build({
      absWorkingDir: app,
      entryPoints: ['browser.js'],
      bundle: true,
      minify: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/node:|require\(|process\./);
    expect(code).toContain('idempotency-key');
    // Realtime is its own entry: an app that does not subscribe ships none of it.
    expect(code).not.toContain('unsubscribe');
    expect(gzipSync(code).length).toBeLessThan(5 * 1024);
  });

  it('imports content-api-client/realtime in Node and in a browser bundle, with nothing from Node', async () => {
    writeFileSync(
      join(app, 'realtime.mjs'),
      `import { createClient } from 'content-api-client';
import { subscribe } from 'content-api-client/realtime';
const site = createClient({ baseUrl: process.env.URL, credential: process.env.KEY }).project(process.env.PROJECT);
const sub = subscribe(site, '', (event) => {
  console.log(JSON.stringify(event));
  sub.close();
});`,
    );
    const run = spawnSync(process.execPath, ['realtime.mjs'], {
      cwd: app,
      env: { URL: process.env.TEST_API_URL, KEY: p.key, PROJECT: `${p.username}/${p.slug}` },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'snapshot', revision: expect.stringMatching(/^\d+$/) });

    writeFileSync(
      join(app, 'browser-realtime.js'),
      `import { createClient } from 'content-api-client';
import { subscribe } from 'content-api-client/realtime';
window.sub = subscribe(createClient({ baseUrl: location.origin }).project('@a/b'), 'data', console.log);`,
    );
    const { build } = await import('esbuild');
    const result = await build({
      absWorkingDir: app,
      entryPoints: ['browser-realtime.js'],
      bundle: true,
      minify: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/node:|require\(|process\./);
    expect(code).toContain('unsubscribe');
    expect(gzipSync(code).length).toBeLessThan(5 * 1024);
  });
  it('bundles onValue with offline writes in IndexedDB for the browser: nothing from Node, core under 3 KB gzipped', async () => {
    writeFileSync(
      join(app, 'browser-offline.js'),
      `import { createClient } from 'content-api-client';
import { onValue } from 'content-api-client/realtime';
import { indexedDbStore, offline } from 'content-api-client/offline';
const site = createClient({ baseUrl: location.origin, credential: () => 'jwt' }).project('@a/b');
window.writer = offline(site, { store: indexedDbStore('app') });
window.live = onValue(site, 'todos', (value, { pending }) => console.log(value, pending));`,
    );
    const { build } = await import('esbuild');
    const bundle = async (entry: string) => {
      const result = await build({
        absWorkingDir: app,
        entryPoints: [entry],
        bundle: true,
        minify: true,
        platform: 'browser',
        format: 'esm',
        write: false,
        logLevel: 'silent',
      });
      return result.outputFiles[0]!.text;
    };
    const code = await bundle('browser-offline.js');
    expect(code).not.toMatch(/node:|require\(|process\./);
    expect(code).toContain('indexedDB');
    expect(gzipSync(code).length).toBeLessThan(7 * 1024);
    // The core alone (createClient and its writes) stays under 3 KB.
    expect(gzipSync(await bundle('browser.js')).length).toBeLessThan(3 * 1024);
  });
});
