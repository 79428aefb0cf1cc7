// History (issue 31): what it costs per write, and what a read at a revision and a page of history cost. Writes
// `set` values of three sizes through the local API (default segment size), and for each one measures the write's own
// write units (as the engine reports them through a proxy that adds ReturnConsumedCapacity) and the size of the change
// log item the stream consumer puts for it (its write units by DynamoDB's rule, 1 per KB), with and without what the
// history adds to it (old values, the stamp). Then reads at revisions 1, 10 and 100 commits back against a plain GET,
// and a page of history, by requests, read units and time.
// Run: `node scripts/dynamodb-local.mjs -- npm run bench:history` (DynamoDB Local: its stream is read through the
// proxy, so the consumer's change log items are seen; the embedded engine's stream is in the engine's own process).
// HISTORY_BENCH_WRITES (default 150).
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CapacityTotals } from '../test/support/dynamo-proxy';
import { RESULTS_DIR, baseEnv, engineChoice, machine } from './lib/config';
import { itemSize } from './lib/item-size';
import { type Child, startApiServer, startEngineProcess } from './lib/procs';

const WRITES = Number(process.env.HISTORY_BENCH_WRITES ?? 150);
const SIZES = [100, 1000, 3000];
const log = (line: string) => console.error(line);
const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** The change log item as it would be without the history: no stamp, no time, no old values. */
function withoutHistory(item: Record<string, AttributeValue>): Record<string, AttributeValue> {
  const { wb: _stamp, t: _time, x: _x, xp: _xp, ...rest } = item;
  if (rest.c?.L) {
    rest.c = {
      L: rest.c.L.map((c) => {
        const { o: _old, n: _none, ...kept } = c.M ?? {};
        return { M: kept };
      }),
    };
  }
  return rest;
}

async function main(): Promise<void> {
  const children: Child[] = [];
  const choice = engineChoice();
  const info = machine();
  if (choice.slug === 'dynalite')
    throw new Error('run under DynamoDB Local: node scripts/dynamodb-local.mjs -- npm run bench:history');
  try {
    const engine = await startEngineProcess(choice.endpoint);
    children.push(engine);
    Object.assign(process.env, baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint }), { PATH: process.env.PATH });
    const fixtures = await import('./lib/fixtures');
    const { startDynamoProxy } = await import('../test/support/dynamo-proxy');
    const { httpClient } = await import('./lib/http');
    const idp = await fixtures.startIdentityProvider();
    await fixtures.createUsers();
    /** Change log items the consumer put, in order. */
    const logged: Array<Record<string, AttributeValue>> = [];
    /** The small items naming each stamp's revision, which the consumer puts beside each log item. */
    const stampItems: Array<Record<string, AttributeValue>> = [];
    let onLogged: (() => void) | undefined;
    const proxy = await startDynamoProxy(engine.endpoint, {
      consumedCapacity: true,
      observe: (request) => {
        if (request.operation !== 'PutItem') return;
        const item = (JSON.parse(request.body.toString('utf8')) as { Item?: Record<string, AttributeValue> }).Item;
        if (item?.pk?.S?.startsWith('RN#')) stampItems.push(item);
        if (!item?.pk?.S?.startsWith('R#')) return;
        logged.push(item);
        onLogged?.();
      },
    });
    const server = await startApiServer(proxy.url, idp.env);
    children.push(server);
    const api = httpClient(server.url, 1);
    const project = await fixtures.createBenchProject(`history-${Date.now().toString(36)}`);
    const token = project.key;
    const writeUnits = () =>
      Object.entries(proxy.capacity() as Record<string, CapacityTotals>)
        .filter(([op]) => op !== 'PutItem' && op !== 'Query' && op !== 'GetItem' && op !== 'BatchGetItem')
        .reduce((sum, [, c]) => sum + c.writeUnits, 0);

    // Warm: the key verified and the root created.
    await api.call('POST', `${project.content}/set`, { token, body: { path: 'warm', value: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const perSize = new Map<number, { write: number; log: number; bare: number; stamp: number; n: number }>();
    log(`${WRITES} writes of ${SIZES.join(', ')} bytes, ${choice.name}`);
    for (let i = 0; i < WRITES; i++) {
      const size = SIZES[i % SIZES.length] as number;
      const before = logged.length;
      const landed = new Promise<void>((resolve) => {
        onLogged = () => {
          if (logged.length > before) resolve();
        };
      });
      proxy.reset();
      // Overwrites: each path is written again and again, so the log keeps an old value of the same size.
      const r = await api.call('POST', `${project.content}/set`, {
        token,
        body: { path: `docs.d${i % 12}`, value: 'v'.repeat(size - 20) + String(i).padStart(20, '0') },
      });
      if (r.status !== 200) throw new Error(`set ${i}: ${r.status} ${JSON.stringify(r.body)}`);
      const write = writeUnits();
      // Kept alive while the consumer works (the child processes and sockets do not hold the loop).
      const timer = setTimeout(() => {
        throw new Error(`write ${i}: no change log item within 10 s (requests: ${JSON.stringify(proxy.counts())})`);
      }, 10_000);
      await landed;
      clearTimeout(timer);
      const item = logged[logged.length - 1] as Record<string, AttributeValue>;
      const row = perSize.get(size) ?? { write: 0, log: 0, bare: 0, stamp: 0, n: 0 };
      const stampItem = stampItems.at(-1);
      row.stamp += stampItem && stampItem.rev?.S === item.sk?.S ? units(itemSize(stampItem)) : 0;
      row.write += write;
      row.log += units(itemSize(item));
      row.bare += units(itemSize(withoutHistory(item)));
      row.n++;
      perSize.set(size, row);
    }
    onLogged = undefined;

    const history = await api.call('GET', `${project.content}/history?limit=100`, { token });
    const revisions = (history.body as { entries: Array<{ revision: string }> }).entries.map((e) => e.revision);
    const reads: Array<{ what: string; status: number; requests: string; rcu: number; ms: number }> = [];
    const measure = async (what: string, path: string) => {
      proxy.reset();
      const started = performance.now();
      const r = await api.call('GET', path, { token });
      const ms = performance.now() - started;
      const capacity = Object.values(proxy.capacity() as Record<string, CapacityTotals>);
      const row = {
        what,
        status: r.status,
        requests: Object.entries(proxy.counts())
          .map(([op, n]) => (n > 1 ? `${n}× ${op}` : op))
          .join(' + '),
        rcu: capacity.reduce((sum, c) => sum + c.readUnits, 0),
        ms,
      };
      reads.push(row);
      log(`  ${what}: ${row.status}, ${row.requests}, ${row.rcu} RCU, ${ms.toFixed(1)} ms`);
    };
    for (let round = 0; round < 2; round++) {
      // First right after the burst of writes (its stamps are within the margin: looked up in the log), then after
      // it (older than the newest logged commit by more than the margin: known logged).
      if (round === 1) await new Promise((resolve) => setTimeout(resolve, 16_000));
      const when = round === 0 ? 'right after the writes' : '16 s later';
      await measure(`GET path=docs.d0 (now), ${when}`, `${project.content}?path=docs.d0`);
      for (const back of [1, 10, 100]) {
        const revision = revisions[Math.min(back, revisions.length - 1)];
        await measure(
          `GET path=docs.d0&at=<${back} commits back>, ${when}`,
          `${project.content}?path=docs.d0&at=${revision}`,
        );
      }
      await measure('GET content/history?limit=20', `${project.content}/history?limit=20`);
      await measure('GET content/history?path=docs.d0&limit=20', `${project.content}/history?path=docs.d0&limit=20`);
    }

    const lines = [
      `# History: cost per write, reads at a revision, a page of history: ${choice.name}`,
      '',
      `Generated by \`${choice.slug === 'dynalite' ? '' : 'node scripts/dynamodb-local.mjs -- '}npm run bench:history\` on ${new Date().toISOString()} (${info.cpu}, ${info.cores} cores, node ${info.node}).`,
      '',
      `${WRITES} \`set\` requests overwriting 12 paths (so every change replaces a value of its own size), default segment size. The write's units as the engine reports them; the change log item's by DynamoDB's rule (1 WCU per KB, rounded up) from the item the consumer put, and from that item without what the history adds (the stamp, the time, the old values): the change log was written before history too, so the history's own cost per write is the difference, plus the small item naming the stamp's revision (what a read at a revision looks its segments' stamps up in).`,
      '',
      '| Value size | Write WCU (mean) | Log item WCU with history | Without history | Stamp item WCU | History adds per write |',
      '|---|---|---|---|---|---|',
      ...[...perSize].map(
        ([size, r]) =>
          `| ${size} B | ${(r.write / r.n).toFixed(2)} | ${(r.log / r.n).toFixed(2)} | ${(r.bare / r.n).toFixed(2)} | ${(r.stamp / r.n).toFixed(2)} | ${((r.log - r.bare + r.stamp) / r.n).toFixed(2)} |`,
      ),
      '',
      'Reads, requests and read units as the engine reports them (GetRecords is the local stream reader, not the read):',
      '',
      '| Read | Status | DynamoDB requests | RCU | ms |',
      '|---|---|---|---|---|',
      ...reads.map((r) => `| ${r.what} | ${r.status} | ${r.requests} | ${r.rcu} | ${r.ms.toFixed(1)} |`),
      '',
    ];
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `history-${choice.slug}.md`);
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
