// Export of a large content (issue 31): EXPORT_BENCH_MIB (default 32) MiB of records of about 1 KiB, written as
// objects of 256 records (`docs.p<n>`, one `set` each) at the default segment size, then exported page by page
// through the local API (GET export?cursor=). For the whole export: pages, pieces, time, the DynamoDB requests by
// operation and the read units the engine reports (a proxy adds `ReturnConsumedCapacity: TOTAL`); and that the pieces
// put back hold every record once.
// Run: `npm run bench:export` (embedded engine) or `node scripts/dynamodb-local.mjs -- npm run bench:export`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CapacityTotals } from '../test/support/dynamo-proxy';
import { RESULTS_DIR, baseEnv, engineChoice, machine } from './lib/config';
import { type Child, startApiServer, startEngineProcess } from './lib/procs';

const MIB = Number(process.env.EXPORT_BENCH_MIB ?? 32);
/** `parts`: objects of 256 records, each sent whole; `wide`: one object of every record, read member by member. */
const SHAPE = process.env.EXPORT_BENCH_SHAPE === 'wide' ? 'wide' : 'parts';
/** Concurrent writers of the wide shape (one `set` per record: a batch of many would rewrite too many buckets). */
const WRITERS = 4;
const PER_PART = 256;
const RECORD_BYTES = 1024;
const log = (line: string) => console.error(line);

const record = (part: number, i: number) => ({
  id: part * PER_PART + i,
  title: `document ${part}-${i}`,
  body: 'b'.repeat(RECORD_BYTES - 60),
});

/** The ids of the records in a piece's value. */
function recordIds(value: unknown): number[] {
  if (typeof value !== 'object' || value === null) return [];
  const v = value as Record<string, unknown>;
  if (typeof v.id === 'number' && typeof v.title === 'string') return [v.id];
  return Object.values(v).flatMap(recordIds);
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
    const proxy = await startDynamoProxy(engine.endpoint, { consumedCapacity: true });
    const server = await startApiServer(proxy.url, idp.env);
    children.push(server);
    const api = httpClient(server.url, WRITERS);
    const project = await fixtures.createBenchProject(`export-${Date.now().toString(36)}`);
    const token = project.key;

    const parts = Math.ceil((MIB * 1024) / PER_PART);
    log(`writing ${parts * PER_PART} records of ~${RECORD_BYTES} B (${MIB} MiB, ${SHAPE}), ${choice.name}`);
    const t0 = performance.now();
    let next = 0;
    const writer = async () => {
      for (let i = next++; SHAPE === 'wide' && i < parts * PER_PART; i = next++) {
        const r = await api.call('POST', `${project.content}/set`, {
          token,
          body: { path: `docs.r${i}`, value: record(0, i) },
        });
        if (r.status !== 200) throw new Error(`set ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        if (i % 2048 === 0) log(`  ${i} records in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    for (let part = 0; SHAPE === 'parts' && part < parts; part++) {
      const value = Object.fromEntries(Array.from({ length: PER_PART }, (_, i) => [`r${i}`, record(part, i)]));
      const r = await api.call('POST', `${project.content}/set`, { token, body: { path: `docs.p${part}`, value } });
      if (r.status !== 200) throw new Error(`set p${part}: ${r.status} ${JSON.stringify(r.body)}`);
      if (part % 16 === 15) log(`  ${part + 1} objects in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    const writeSeconds = (performance.now() - t0) / 1000;
    // The change log holds every write (the export's first page starts at the newest revision logged).
    for (let i = 0; i < 600; i++) {
      const r = await api.call('GET', `${project.content}/history?limit=1`, { token });
      if (r.status === 200 && r.body.entries.length > 0 && i > 10) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    proxy.reset();
    const started = performance.now();
    let cursor: string | null = null;
    let pages = 0;
    let pieces = 0;
    let bytes = 0;
    let slowest = 0;
    let retried = 0;
    const records = new Set<number>();
    do {
      const pageStarted = performance.now();
      const url = `/api/${project.username}/${project.slug}/export${cursor ? `?cursor=${cursor}` : ''}`;
      let r = await api.call('GET', url, { token });
      // Retry-safe, as a client retries it.
      for (let retry = 0; r.status === 503 && retry < 3; retry++, retried++) r = await api.call('GET', url, { token });
      slowest = Math.max(slowest, performance.now() - pageStarted);
      if (r.status !== 200) throw new Error(`page ${pages + 1}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      const body = r.body as { pieces: Array<{ path: string; value: unknown }>; cursor: string | null };
      for (const piece of body.pieces) {
        bytes += Buffer.byteLength(JSON.stringify(piece));
        // Records sent one by one, or inside an object of them sent whole.
        for (const id of recordIds(piece.value)) {
          if (records.has(id)) throw new Error(`record ${id} twice`);
          records.add(id);
        }
      }
      pieces += body.pieces.length;
      cursor = body.cursor;
      pages++;
      if (pages % 8 === 0) log(`  ${pages} pages, ${records.size} records`);
    } while (cursor);
    const seconds = (performance.now() - started) / 1000;
    if (records.size !== parts * PER_PART) throw new Error(`${records.size} records, ${parts * PER_PART} expected`);
    const counts = proxy.counts();
    const capacity = Object.values(proxy.capacity() as Record<string, CapacityTotals>);
    const rcu = capacity.reduce((sum, c) => sum + c.readUnits, 0);
    const requests = Object.entries(counts)
      .map(([op, n]) => `${n}× ${op}`)
      .join(' + ');

    const lines = [
      `# Export of ${MIB} MiB: ${choice.name}`,
      '',
      `Generated by \`${choice.slug === 'dynalite' ? '' : 'node scripts/dynamodb-local.mjs -- '}npm run bench:export\` on ${new Date().toISOString()} (${info.cpu}, ${info.cores} cores, node ${info.node}).`,
      '',
      `\`docs\`: ${SHAPE === 'wide' ? `one object of ${parts * PER_PART} records of about ${RECORD_BYTES} bytes, one \`set\` each, ${WRITERS} writers` : `${parts} objects of ${PER_PART} records of about ${RECORD_BYTES} bytes (${parts * PER_PART} records), one \`set\` each`} (${writeSeconds.toFixed(0)} s) at the default segment size, then exported page by page (default budgets: 1 MiB of pieces, 100 reads a page). Requests and read units as the engine reports them (\`ReturnConsumedCapacity: TOTAL\` added by the proxy).`,
      '',
      "| Pages | Pieces | Pieces' JSON | Time | Slowest page | DynamoDB requests | RCU |",
      '|---|---|---|---|---|---|---|',
      `| ${pages} | ${pieces} | ${(bytes / 1024 / 1024).toFixed(1)} MiB | ${seconds.toFixed(1)} s | ${slowest.toFixed(0)} ms | ${requests} | ${rcu.toFixed(0)} |`,
      '',
      `Every record exported exactly once; ${retried} page(s) answered 503 and were asked again.`,
      '',
    ];
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `export-${SHAPE}-${choice.slug}.md`);
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

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
