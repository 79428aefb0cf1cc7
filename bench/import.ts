// Import (issue 31, docs/design/backup.md §3): a content of IMPORT_BENCH_MIB MiB (default 32) replacing another, through
// the local API as a client sends it: pieces of at most 64 KiB, pages of at most 400 KiB, each page sent again while it
// answers 202, then commit calls until 200. Measures each phase's time, requests and capacity units (as the engine
// reports them through a proxy that adds ReturnConsumedCapacity), the longest page and commit call (a Lambda has 10 s),
// and the switch's transaction size (at most 100 items).
// Run: `npm run bench:import` (embedded engine) or `node scripts/dynamodb-local.mjs -- npm run bench:import`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CapacityTotals } from '../test/support/dynamo-proxy';
import { RESULTS_DIR, baseEnv, engineChoice, machine } from './lib/config';
import { type Child, startApiServer, startEngineProcess } from './lib/procs';

const MIB = Number(process.env.IMPORT_BENCH_MIB ?? 32);
const PIECE_BYTES = 64 * 1024;
const PAGE_BYTES = 400 * 1024;
const log = (line: string) => console.error(line);

type Piece = { path: string; value: unknown };
const pointer = (tokens: string[]) => tokens.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** The document: two thirds in a wide object of 2 KB documents, a third in a long array of small records. */
function documentOf(mib: number) {
  const bytes = mib * 1024 * 1024;
  const body = 'lorem ipsum dolor sit amet '.repeat(80);
  const docs: Record<string, unknown> = {};
  for (let i = 0; i * 2300 < (bytes * 2) / 3; i++)
    docs[`d${i}`] = { title: `Document ${i}`, n: i, body, tags: ['a', 'b'] };
  const records: unknown[] = [];
  for (let i = 0; i * 110 < bytes / 3; i++)
    records.push({ at: 1_700_000_000_000 + i, kind: 'event', seq: i, note: 'x'.repeat(40) });
  return { meta: { name: 'bench', size: mib }, docs, records };
}

/** Pieces as a client cuts a document: a value of at most PIECE_BYTES is one piece, a larger container is sent open. */
function* cut(value: unknown, tokens: string[] = []): Generator<Piece> {
  if (value === null || typeof value !== 'object' || JSON.stringify(value).length <= PIECE_BYTES) {
    yield { path: pointer(tokens), value };
    return;
  }
  if (Array.isArray(value)) {
    yield { path: pointer(tokens), value: [] };
    for (const [i, v] of value.entries()) yield* cut(v, [...tokens, String(i)]);
  } else {
    yield { path: pointer(tokens), value: {} };
    for (const [k, v] of Object.entries(value)) yield* cut(v, [...tokens, k]);
  }
}

function* pagesOf(pieces: Iterable<Piece>): Generator<Piece[]> {
  let page: Piece[] = [];
  let bytes = 0;
  for (const piece of pieces) {
    const size = JSON.stringify(piece).length + 1;
    if (page.length > 0 && bytes + size > PAGE_BYTES) {
      yield page;
      page = [];
      bytes = 0;
    }
    page.push(piece);
    bytes += size;
  }
  if (page.length > 0) yield page;
}

async function main(): Promise<void> {
  const children: Child[] = [];
  const choice = engineChoice();
  const info = machine();
  try {
    const engine = await startEngineProcess(choice.endpoint);
    children.push(engine);
    Object.assign(process.env, baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint }), { PATH: process.env.PATH });
    const fixtures = await import('./lib/fixtures');
    const { startDynamoProxy } = await import('../test/support/dynamo-proxy');
    const { httpClient } = await import('./lib/http');
    const idp = await fixtures.startIdentityProvider();
    await fixtures.createUsers();
    let switchItems = 0;
    const proxy = await startDynamoProxy(engine.endpoint, {
      consumedCapacity: true,
      observe: (request) => {
        if (request.operation !== 'TransactWriteItems') return;
        const items = (JSON.parse(request.body.toString('utf8')) as { TransactItems?: unknown[] }).TransactItems ?? [];
        switchItems = Math.max(switchItems, items.length);
      },
    });
    const server = await startApiServer(proxy.url, idp.env);
    children.push(server);
    const api = httpClient(server.url, 1);
    const project = await fixtures.createBenchProject(`import-${Date.now().toString(36)}`);
    const token = project.key;
    const imports = project.content.replace(/\/content$/, '/import');
    // The content it replaces: a few hundred KB in several segments.
    const old = { old: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'o'.repeat(1000)])) };
    const seeded = await api.call('POST', `${project.content}/update`, { token, body: { content: old } });
    if (seeded.status !== 200) throw new Error(`seed: ${seeded.status}`);

    const doc = documentOf(MIB);
    const textBytes = JSON.stringify(doc).length;
    const phases: Array<{
      what: string;
      ms: number;
      requests: number;
      wcu: number;
      rcu: number;
      calls: number;
      max: number;
    }> = [];
    const measure = async (what: string, run: () => Promise<{ calls: number; max: number }>) => {
      proxy.reset();
      const started = performance.now();
      const { calls, max } = await run();
      const ms = performance.now() - started;
      const capacity = Object.values(proxy.capacity() as Record<string, CapacityTotals>);
      const requests = Object.values(proxy.counts() as Record<string, number>).reduce((a, b) => a + b, 0);
      const row = {
        what,
        ms,
        requests,
        wcu: capacity.reduce((sum, c) => sum + c.writeUnits, 0),
        rcu: capacity.reduce((sum, c) => sum + c.readUnits, 0),
        calls,
        max,
      };
      phases.push(row);
      log(
        `  ${what}: ${(ms / 1000).toFixed(1)} s, ${calls} calls (longest ${max.toFixed(0)} ms), ${requests} requests, ${row.wcu.toFixed(0)} WCU, ${row.rcu.toFixed(0)} RCU`,
      );
    };
    log(`import of ${(textBytes / 1024 / 1024).toFixed(1)} MiB of JSON, ${choice.name}`);
    let session = '';
    let partials = 0;
    await measure('POST import (the session)', async () => {
      const r = await api.call('POST', imports, { token });
      if (r.status !== 201) throw new Error(`start: ${r.status} ${JSON.stringify(r.body)}`);
      session = (r.body as { session: string }).session;
      return { calls: 1, max: 0 };
    });
    let pageCount = 0;
    await measure('pages (POST import/{session})', async () => {
      let calls = 0;
      let max = 0;
      for (const page of pagesOf(cut(doc))) {
        pageCount++;
        for (;;) {
          const started = performance.now();
          const r = await api.call('POST', `${imports}/${session}`, {
            token,
            body: { sequence: pageCount, pieces: page },
          });
          max = Math.max(max, performance.now() - started);
          calls++;
          if (r.status === 200) break;
          if (r.status !== 202) throw new Error(`page ${pageCount}: ${r.status} ${JSON.stringify(r.body)}`);
          partials++;
        }
      }
      return { calls, max };
    });
    let copyCalls = 0;
    await measure('commit (copy, then the switch)', async () => {
      let max = 0;
      for (;;) {
        const started = performance.now();
        const r = await api.call('POST', `${imports}/${session}/commit`, { token });
        max = Math.max(max, performance.now() - started);
        copyCalls++;
        if (r.status === 200) break;
        if (r.status !== 202) throw new Error(`commit: ${r.status} ${JSON.stringify(r.body)}`);
      }
      return { calls: copyCalls, max };
    });
    // Spot checks: the new content is there, the old gone.
    for (const [path, want] of [
      ['meta', doc.meta],
      ['docs.d7', doc.docs.d7],
      [`records.${doc.records.length - 1}`, doc.records[doc.records.length - 1]],
    ] as const) {
      const r = await api.call('GET', `${project.content}?path=${path}`, { token });
      // Members in any order (JSON objects are unordered; storage lists them in its own order).
      const sorted = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.map(sorted)
          : v !== null && typeof v === 'object'
            ? Object.fromEntries(
                Object.keys(v)
                  .sort()
                  .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
              )
            : v;
      const got = JSON.stringify(sorted((r.body as { value: unknown }).value));
      if (got !== JSON.stringify(sorted(want)))
        throw new Error(`GET ${path}: not the import's: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    }
    if ((await api.call('GET', `${project.content}?path=old`, { token })).status !== 404)
      throw new Error('old content still there');

    const total = phases.reduce((sum, p) => ({ ms: sum.ms + p.ms, wcu: sum.wcu + p.wcu, rcu: sum.rcu + p.rcu }), {
      ms: 0,
      wcu: 0,
      rcu: 0,
    });
    const lines = [
      `# Import of ${MIB} MiB: ${choice.name}`,
      '',
      `Generated by \`${choice.slug === 'dynalite' ? '' : 'node scripts/dynamodb-local.mjs -- '}IMPORT_BENCH_MIB=${MIB} npm run bench:import\` on ${new Date().toISOString()} (${info.cpu}, ${info.cores} cores, node ${info.node}).`,
      '',
      `${(textBytes / 1024 / 1024).toFixed(1)} MiB of JSON (a wide object of 2.3 KB documents and an array of small records) replacing a 200 KB content, through the local API: pieces of at most 64 KiB, ${pageCount} pages of at most 400 KiB (${partials} answers 202, a page cut short by its time and sent again), ${copyCalls} commit calls. Default segment size. Units as the engine reports them.`,
      '',
      '| Phase | Time | Calls | Longest call | DynamoDB requests | WCU | RCU |',
      '|---|---|---|---|---|---|---|',
      ...phases.map(
        (p) =>
          `| ${p.what} | ${(p.ms / 1000).toFixed(1)} s | ${p.calls} | ${p.max.toFixed(0)} ms | ${p.requests} | ${p.wcu.toFixed(0)} | ${p.rcu.toFixed(0)} |`,
      ),
      `| **total** | ${(total.ms / 1000).toFixed(1)} s | | | | ${total.wcu.toFixed(0)} | ${total.rcu.toFixed(0)} |`,
      '',
      `The switch: one TransactWriteItems of ${switchItems} items (at most 100). WCU per MiB of JSON: ${(total.wcu / (textBytes / 1024 / 1024)).toFixed(0)}.`,
      '',
    ];
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `import-${choice.slug}.md`);
    writeFileSync(file, lines.join('\n'));
    console.log(lines.join('\n'));
    log(`wrote ${file}`);
    api.close();
    await proxy.close();
    await idp.close();
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  // Sockets of the proxy's and the API's clients may linger: the run is over.
  .finally(() => process.exit());
