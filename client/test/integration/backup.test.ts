// Backups through the client and the CLI (issue 31): a content that chunks and buckets exported by exportJson as one
// JSON text, imported into another project by importJson, read back equal to the last digit; the CLI's export and
// import the same way, as CI runs them. Small segments and small export pages, so every path of the format is taken.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Project } from '../../../test/support/api';
import { canonical, exactBody } from '../../../test/support/pieces';
import { type Servers, sendLarge, startServers } from '../../../test/support/servers';
import { exportJson, importJson } from '../../src/backup';
import { ContentApiError, createClient, parseJson } from '../../src/index';

const root = join(__dirname, '../../..');
const PAGE = 16 * 1024;
/** A whole export and import of bigContent: seconds on the embedded engine, more on DynamoDB Local under load. */
const HEAVY = 180_000;

const deep = (levels: number): unknown => (levels === 0 ? 'bottom' : { [`l${levels}`]: deep(levels - 1) });

/** A content that chunks and buckets at 256-byte segments and needs many export pages: every hard case. */
function bigContent(): Record<string, unknown> {
  const members = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`m${i}`, `${i}`.padEnd(40, 'x')]));
  return {
    numbers: ['__N1__', '__N2__', '__N3__', 0, -1.5, 1e-7],
    keys: {
      constructor: 1,
      prototype: { constructor: 'c' },
      'a.b': [1],
      '~1/': { '/': '~', '~0': 0 },
      '\n': 1,
      '\\': 2,
    },
    deep: deep(30),
    empty: { o: {}, a: [], s: '' },
    list: Array.from({ length: 1200 }, (_, i) => (i % 5 === 0 ? { i, s: `e${i}` } : i)),
    wide: members,
    nested: { inner: { ...members, list: Array.from({ length: 100 }, (_, i) => [i, `${i}`]) } },
  };
}

/** The update body with exact numbers in it (30 and more digits: JSON.stringify cannot write them). */
const exactText = (content: unknown) =>
  JSON.stringify({ content })
    .replace('"__N1__"', '12345678901234567890123456789012345678')
    .replace('"__N2__"', '-0.000000000000000000000000000000000001')
    .replace('"__N3__"', '9.87654321098765432109876543210987654e120');

async function text(chunks: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const chunk of chunks) out += chunk;
  return out;
}

describe('backups through the client (small segments, small export pages)', () => {
  let servers: Servers;
  let url: string;
  let bin: string;
  beforeAll(async () => {
    servers = await startServers({
      count: 1,
      env: { SEGMENT_FRAGMENT_BYTES: '256', EXPORT_PAGE_BYTES: String(PAGE) },
    });
    url = servers.urls[0] as string;
    bin = join(mkdtempSync(join(tmpdir(), 'content-api-bin-')), 'cli.mjs');
    const { build } = await import('esbuild');
    await build({
      entryPoints: [join(root, 'client/src/bin.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: bin,
    });
  }, 60_000);
  // The servers' fixtures name their table in this process's environment: the global API's again after them.
  const table = process.env.TABLE_NAME;
  afterAll(async () => {
    await servers?.stop();
    process.env.TABLE_NAME = table;
  });

  const site = (p: Project) =>
    createClient({ baseUrl: url, credential: p.key, parse: parseJson }).project(`${p.username}/${p.slug}`);
  const owner = (p: Project) =>
    createClient({ baseUrl: url, credential: p.owner, parse: parseJson }).project(`${p.username}/${p.slug}`);

  /** The whole content as GET answers it, canonical (keys sorted, numbers as stored). */
  async function content(p: Project): Promise<string> {
    const r = await fetch(`${url}${p.content}`, { headers: { authorization: `Bearer ${p.key}` } });
    expect(r.status).toBe(200);
    return canonical(exactBody(await r.text()).value);
  }

  /**
   * A project holding bigContent, its writes in the change log (an export reads at the newest revision logged). Three
   * writes, not one: at 256-byte segments each is hundreds of items, which DynamoDB Local may not take within one
   * call's 10 s when it is all one write.
   */
  async function loaded(): Promise<Project> {
    const p = await servers.newProject();
    const { list, nested, ...rest } = bigContent();
    const writes = [
      { route: 'update', text: exactText(rest) },
      { route: 'set', text: JSON.stringify({ path: 'list', value: list }), key: `fixture-${p.slug}-list` },
      { route: 'set', text: JSON.stringify({ path: 'nested', value: nested }), key: `fixture-${p.slug}-nested` },
    ];
    for (const write of writes) {
      const r = await sendLarge(url as string, p, write);
      expect({ status: r.status, body: await r.text() }).toMatchObject({ status: 200 });
    }
    for (let i = 0; i < 200 && (await site(p).history()).entries.length < writes.length; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    return p;
  }

  it(
    'exports as one JSON text and imports it into another project: GET equal to the last digit',
    async () => {
      const from = await loaded();
      const exported = await text(exportJson(site(from)));
      const expected = await content(from);
      expect(canonical(exactBody(exported)) === expected).toBe(true);
      expect(exported).toContain('"numbers":[1.2345678901234567890123456789012345678e+37,-1e-36,');

      const into = await servers.newProject();
      expect((await site(into).set('old', { gone: true })).etag).toBeTruthy();
      // Cut as a file arrives, into small pieces and small pages: several pages, several containers sent open.
      const chunks = Array.from({ length: Math.ceil(exported.length / 1000) }, (_, i) =>
        exported.slice(i * 1000, i * 1000 + 1000),
      );
      const pages: number[] = [];
      const counting = createClient({
        baseUrl: url,
        credential: into.key,
        fetch: (input, init) => {
          if (/\/import\/[^/]+$/.test(String(input)) && init?.method === 'POST')
            pages.push(JSON.parse(String(init.body)).sequence);
          return fetch(input, init);
        },
      }).project(`${into.username}/${into.slug}`);
      const done = await importJson(counting, chunks, { pieceBytes: 2048, pageBytes: 8192 });
      expect(done).toEqual({ message: 'Content imported successfully', etag: expect.stringMatching(/^"/) });
      expect(pages.length).toBeGreaterThan(5);
      expect(pages).toEqual(pages.map((_, i) => i + 1));
      expect((await content(into)) === expected).toBe(true);
      imported = { into, expected };
    },
    HEAVY,
  );

  let imported: { into: Project; expected: string } | undefined;
  it(
    'exports the imported project as the same document (its paged objects whole)',
    async () => {
      // The imported content's layout is the import's copy (docs/design/backup.md §3): its export pages its objects.
      const { into, expected } = imported ?? { into: await loaded(), expected: '' };
      const again = canonical(exactBody(await text(exportJson(site(into)))));
      const members = (doc: string, key: string) => Object.keys(exactBody(doc)[key]).length;
      expect({ wide: members(again, 'wide'), list: members(again, 'list') }).toEqual({ wide: 300, list: 1200 });
      expect(again === expected).toBe(true);
    },
    HEAVY,
  );

  it(
    'leaves the content as it was when the document turns out not to be JSON or holds __proto__ after pages were sent',
    async () => {
      const p = await servers.newProject();
      await site(p).set('kept', [1, 2, 3]);
      const before = await content(p);
      const long = Array.from({ length: 200 }, (_, i) => `"k${i}":"${'x'.repeat(100)}"`).join(',');
      for (const bad of [`{${long},"__proto__":{"polluted":true}}`, `{${long},"cut":`]) {
        const error = await importJson(site(p), [bad], { pieceBytes: 512, pageBytes: 4096 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SyntaxError);
        expect(await content(p)).toBe(before);
      }
      // The server refuses what the codec would not catch: an empty key (400, the import abandoned, nothing changed).
      const refused = await importJson(site(p), ['{"a":{"":1}}']).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ContentApiError);
      expect((refused as ContentApiError).status).toBe(400);
      expect(await content(p)).toBe(before);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
    HEAVY,
  );

  /** Runs the CLI with the project's key in its environment. */
  function cli(args: string[], p: Project, credential = p.key) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          CONTENT_API_URL: url,
          CONTENT_API_KEY: credential,
          CONTENT_API_PROJECT: `${p.username}/${p.slug}`,
        },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stderr.on('data', (c) => (stderr += c));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end();
    });
  }

  it(
    'content-api-client export > backup.json, export --out, then import backup.json into another project',
    async () => {
      const from = await loaded();
      const expected = await content(from);
      const dir = mkdtempSync(join(tmpdir(), 'content-api-backup-'));

      const piped = await cli(['export'], from);
      expect({ code: piped.code, stderr: piped.stderr }).toEqual({ code: 0, stderr: '' });
      expect(canonical(exactBody(piped.stdout)) === expected).toBe(true);

      const file = join(dir, 'backup.json');
      const written = await cli(['export', '--out', file], from);
      expect(written.code).toBe(0);
      expect(JSON.parse(written.stdout)).toEqual({ file, bytes: Buffer.byteLength(readFileSync(file)) });
      expect(readFileSync(file, 'utf8')).toBe(piped.stdout);
      expect(readdirSync(dir)).toEqual(['backup.json']); // no partial file left beside it

      const into = await servers.newProject();
      const imported = await cli(['import', file], into);
      expect({ code: imported.code, stderr: imported.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(imported.stdout)).toMatchObject({ message: 'Content imported successfully' });
      expect((await content(into)) === expected).toBe(true);
    },
    HEAVY,
  );

  it('import: a missing file or one that is not JSON exits 1 and changes nothing; a read-only key exits 3', async () => {
    const p = await servers.newProject();
    await site(p).set('kept', 1);
    const before = await content(p);
    const dir = mkdtempSync(join(tmpdir(), 'content-api-backup-'));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"a":1,');
    const missing = await cli(['import', join(dir, 'nope.json')], p);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*nope\.json/);
    const invalid = await cli(['import', broken], p);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/broken\.json is not valid JSON \(unexpected end at position 7/);
    const { key } = await owner(p).keys.create({ name: 'ro', permissions: ['content:read'] });
    writeFileSync(join(dir, 'ok.json'), '{"a":1}');
    const forbidden = await cli(['import', join(dir, 'ok.json')], p, key);
    expect(forbidden.code).toBe(3);
    expect(await content(p)).toBe(before);
    expect(existsSync(join(dir, 'ok.json.partial'))).toBe(false);
  });
});
