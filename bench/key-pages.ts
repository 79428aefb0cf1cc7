// Pages of a wide object's keys (issue 28, item 10): an object of 32,768 members of about 1 KiB each (32 MiB,
// bucketed) is grown member by member through the local API at the default segment size, then listed with
// `shallow=true` whole and page by page (`limit=1000`, `limit=100`). For each read: the DynamoDB requests by operation
// and the read units the engine reports (a second proxy adds `ReturnConsumedCapacity: TOTAL` to every request, as the
// bench's cost part does), and that the pages give every key exactly once.
// Run: `npm run bench:key-pages` (embedded engine) or `node scripts/dynamodb-local.mjs -- npm run bench:key-pages`.
// KEY_PAGES_MEMBERS (default 32768), KEY_PAGES_MEMBER_BYTES (default 1024), KEY_PAGES_SHAPE (`record`: an object of a
// few fields, moved out of its bucket into a segment of its own like any container of 1 KiB; `text`: a string, which
// stays in its bucket), KEY_PAGES_WRITERS (concurrent writers while growing, default 4).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CapacityTotals } from '../test/support/dynamo-proxy';
import { RESULTS_DIR, baseEnv, engineChoice, machine } from './lib/config';
import { type Child, startApiServer, startEngineProcess } from './lib/procs';

const MEMBERS = Number(process.env.KEY_PAGES_MEMBERS ?? 32_768);
const MEMBER_BYTES = Number(process.env.KEY_PAGES_MEMBER_BYTES ?? 1024);
const SHAPE = process.env.KEY_PAGES_SHAPE === 'text' ? 'text' : 'record';
const WRITERS = Number(process.env.KEY_PAGES_WRITERS ?? 4);
const log = (line: string) => console.error(line);

const memberKey = (i: number) => `doc${String(i).padStart(6, '0')}`;
const memberValue = (i: number) =>
  SHAPE === 'text'
    ? 't'.repeat(MEMBER_BYTES)
    : {
        id: i,
        title: `document ${i}`,
        status: i % 5 === 0 ? 'draft' : 'published',
        body: 'b'.repeat(MEMBER_BYTES - 60),
      };

interface Measured {
  what: string;
  status: number;
  keys: number;
  requests: string;
  rcu: number;
  ms: number;
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
    const project = await fixtures.createBenchProject(`keys-${Date.now().toString(36)}`);
    const token = project.key;

    log(`growing docs to ${MEMBERS} members of ~${MEMBER_BYTES} B (${SHAPE}), ${WRITERS} writers, ${choice.name}`);
    const t0 = performance.now();
    let next = 0;
    const writer = async () => {
      for (let i = next++; i < MEMBERS; i = next++) {
        const r = await api.call('POST', `${project.content}/set`, {
          token,
          body: { path: `docs.${memberKey(i)}`, value: memberValue(i) },
        });
        if (r.status !== 200) throw new Error(`set ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        if (i > 0 && i % 2048 === 0) log(`  ${i} members in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    const growSeconds = (performance.now() - t0) / 1000;
    log(`grown in ${growSeconds.toFixed(0)} s`);

    const rows: Measured[] = [];
    const measure = async (what: string, query: string) => {
      proxy.reset();
      const started = performance.now();
      const r = await api.call('GET', `${project.content}?path=docs&${query}`, { token });
      const ms = performance.now() - started;
      const counts = proxy.counts();
      const capacity = Object.values(proxy.capacity() as Record<string, CapacityTotals>);
      const value = (r.body as { value?: Record<string, unknown> })?.value;
      const row: Measured = {
        what,
        status: r.status,
        keys: r.status === 200 && value ? Object.keys(value).length : 0,
        requests: Object.entries(counts)
          .map(([op, n]) => (n > 1 ? `${n}× ${op}` : op))
          .join(' + '),
        rcu: capacity.reduce((sum, c) => sum + c.readUnits, 0),
        ms,
      };
      rows.push(row);
      log(`  ${what}: ${row.status}, ${row.keys} keys, ${row.requests}, ${row.rcu} RCU, ${ms.toFixed(0)} ms`);
      return r;
    };

    // Warm: the key verified and the object's location learnt, as in a Lambda in use.
    await api.call('GET', `${project.content}?path=docs.${memberKey(0)}`, { token });
    // First, a page in a Lambda that never walked the object (it guesses 8 keys a bucket at every depth of cuts).
    await measure('page 1 of limit=1000, first walk of this Lambda', 'shallow=true&limit=1000');
    await measure('shallow=true (every key at once)', 'shallow=true');
    const seen = new Set<string>();
    let after: string | null | undefined;
    let pages = 0;
    let pageRcu = 0;
    let pageRequests = 0;
    let pagesSummed = 0;
    proxy.reset();
    do {
      const query = `shallow=true&limit=1000${after ? `&after=${after}` : ''}`;
      const r =
        pages === 0 || pages === 16
          ? await measure(`page ${pages + 1} of limit=1000${pages ? ' (after)' : ''}`, query)
          : await api.call('GET', `${project.content}?path=docs&${query}`, { token });
      if (r.status !== 200) throw new Error(`page ${pages + 1}: ${r.status} ${JSON.stringify(r.body)}`);
      const body = r.body as { value: Record<string, true>; next: string | null };
      for (const k of Object.keys(body.value)) {
        if (seen.has(k)) throw new Error(`key ${k} given twice`);
        seen.add(k);
      }
      after = body.next;
      pages++;
      if (pages !== 1 && pages !== 17) {
        pagesSummed++;
        pageRcu += Object.values(proxy.capacity()).reduce((sum, c) => sum + c.readUnits, 0);
        pageRequests += Object.values(proxy.counts()).reduce((a, b) => a + b, 0);
      }
      proxy.reset();
    } while (after);
    if (seen.size !== MEMBERS) throw new Error(`${seen.size} keys listed, ${MEMBERS} expected`);
    log(`  listed ${seen.size} keys exactly once in ${pages} pages`);
    await measure('page 1 of limit=100', 'shallow=true&limit=100');

    const lines = [
      `# Pages of a wide object's keys: ${choice.name}`,
      '',
      `Generated by \`${choice.slug === 'dynalite' ? '' : 'node scripts/dynamodb-local.mjs -- '}npm run bench:key-pages\` on ${new Date().toISOString()} (${info.cpu}, ${info.cores} cores, node ${info.node}).`,
      '',
      `\`docs\`: ${MEMBERS} members of about ${MEMBER_BYTES} bytes (${SHAPE === 'record' ? 'records: objects of a few fields' : 'strings'}), grown by one \`set\` each (${WRITERS} writers, ${growSeconds.toFixed(0)} s) at the default segment size. Requests and read units as the engine reports them (\`ReturnConsumedCapacity: TOTAL\` added by the proxy), warm key and location.`,
      '',
      '| Read | Status | Keys | DynamoDB requests | RCU | ms |',
      '|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.what} | ${r.status} | ${r.keys} | ${r.requests} | ${r.rcu} | ${r.ms.toFixed(0)} |`),
      '',
      `Every key listed exactly once in ${pages} pages of \`limit=1000\`; the ${pagesSummed} pages not in the table together (the last one short): ${pageRequests} requests, ${pageRcu} RCU (${(pageRcu / Math.max(1, pagesSummed)).toFixed(0)} RCU a page).`,
      '',
    ];
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `key-pages-${SHAPE}-${choice.slug}.md`);
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
