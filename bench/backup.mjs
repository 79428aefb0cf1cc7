// Export and import of a large content through the client (issue 31; run alone: `npm run -s bench:backup`, or on
// DynamoDB Local: `node scripts/dynamodb-local.mjs -- npm run bench:backup`). A project is grown to BENCH_BACKUP_MIB
// (default 32) MiB of one-kilobyte strings, 300 to an object, plus exact numbers, through the local API
// (lib/local/start.ts, as `npm start` runs it, with its 10 s request deadline), which talks to the engine through the
// DynamoDB proxy with `consumedCapacity` on, so the requests and capacity units are the engine's own. Then the
// client's exportJson streams it to a file and importJson streams that file into another project: each timed end to
// end, with the DynamoDB requests by operation, RCU and WCU, the HTTP requests and the slowest one (a Lambda has
// 10 s), and the bench process's RSS (the client's memory: constant, whatever the size). With BENCH_BACKUP_VERIFY=1
// the imported project is exported again and compared with the first export byte for byte. Figures go to
// bench/results/backup-<engine>.md.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startLocalApi, stopProcess } from '../test/support/local-api';
import { OUT_DIR, RESULTS_DIR, baseEnv, engineChoice, machine } from './lib/config';
import { startApiServer } from './lib/procs';

const MIB = Number(process.env.BENCH_BACKUP_MIB ?? 32);
const STRING_BYTES = 1000;
const STRINGS_PER_OBJECT = 300;

const lines = [];
const log = (line) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const children = [];
const cleanups = [];

/**
 * Peak RSS of this process (the client) while `run` goes, sampled every 50 ms, in MiB; and with `--expose-gc`
 * (NODE_OPTIONS, as the npm script sets it) the peak live heap, measured after a collection every second: what the
 * client holds, garbage aside.
 */
async function withPeakRss(run) {
  let peak = process.memoryUsage().rss;
  let live = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const collect = () => {
    globalThis.gc?.();
    live = Math.max(live, process.memoryUsage().heapUsed);
  };
  collect();
  const collector = setInterval(collect, 1000);
  try {
    const result = await run();
    return { result, peakMb: peak / 2 ** 20, liveMb: globalThis.gc ? live / 2 ** 20 : undefined };
  } finally {
    clearInterval(timer);
    clearInterval(collector);
  }
}

async function main() {
  const choice = engineChoice();
  const info = machine();
  // Two API processes over one table, as test/support/servers.ts runs them: the first hosts the embedded engine (or
  // talks to DynamoDB Local) and consumes the table's stream (the change log export reads: the embedded engine's stream
  // is in the process that hosts it); the second serves the client through the counting proxy, its consumer off.
  const host = await startLocalApi({
    env: {
      ...baseEnv(choice.endpoint ? { AWS_ENDPOINT_URL_DYNAMODB: choice.endpoint } : { LOCAL_DYNAMODB_PORT: '0' }),
      PORT: '0',
      DATA_DIR: ':memory:',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push({ stop: () => stopProcess(host.child) });
  const { startDynamoProxy } = await import('../test/support/dynamo-proxy');
  const proxy = await startDynamoProxy(host.endpoint, { consumedCapacity: true });
  cleanups.push(() => proxy.close());
  Object.assign(process.env, baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: proxy.url }), { PATH: process.env.PATH });
  const accounts = await import('../lib/store/accounts');
  const { createClient, parseJson } = await import('../client/src/index');
  const { exportJson, importJson } = await import('../client/src/backup');
  const server = await startApiServer(proxy.url, { LOCAL_STREAM_CONSUMER: 'off', REALTIME_ENDPOINT: host.url });
  children.push(server);

  const owner = '@backup-bench';
  await accounts.ensureUser(owner);
  const stamp = Date.now().toString(36);
  const source = { username: owner, slug: `src${stamp}` };
  const target = { username: owner, slug: `dst${stamp}` };
  await accounts.createProject(source);
  await accounts.createProject(target);
  const token = (await accounts.createSession(owner, 3600)).token;

  /** HTTP requests of the client: count and slowest, by route kind. */
  let http = {};
  const timedFetch = async (url, init) => {
    const kind = `${init?.method ?? 'GET'} ${new URL(url).pathname.replace(/^\/api\/[^/]+\/[^/]+/, '').replace(/\/import\/[^/]+/, '/import/:session')}`;
    const t0 = performance.now();
    try {
      return await fetch(url, init);
    } finally {
      const ms = performance.now() - t0;
      const entry = (http[kind] ??= { requests: 0, slowestMs: 0, totalMs: 0 });
      entry.requests++;
      entry.totalMs += ms;
      entry.slowestMs = Math.max(entry.slowestMs, ms);
    }
  };
  const client = createClient({ baseUrl: server.url, credential: token, parse: parseJson, fetch: timedFetch });
  const from = client.project(`${owner}/${source.slug}`);
  const into = client.project(`${owner}/${target.slug}`);

  const objects = Math.ceil((MIB * 1024 * 1024) / (STRING_BYTES * STRINGS_PER_OBJECT));
  log(`# Export and import of a ${MIB} MiB content through the client (${choice.name})`);
  log('');
  log(
    `\`${choice.slug === 'dynalite' ? 'npm run -s bench:backup' : 'node scripts/dynamodb-local.mjs -- npm run bench:backup'}\`, ${info.date.slice(0, 10)}, ${info.cores} cores (${info.cpu}), Node ${info.node}, load average at start ${info.loadAverageStart.join(' ')}.`,
  );
  log('');
  log('```');
  log(
    `growing ${owner}/${source.slug}: ${objects} objects of ${STRINGS_PER_OBJECT} × ${STRING_BYTES} B, and exact numbers`,
  );
  const grown = performance.now();
  for (let i = 0; i < objects; i++) {
    const value = Object.fromEntries(
      Array.from({ length: STRINGS_PER_OBJECT }, (_, j) => [`s${j}`, `${i}.${j}.`.padEnd(STRING_BYTES, 'x')]),
    );
    await from.set(`part${i}`, value);
  }
  await from.set('numbers', parseJson('[12345678901234567890123456789012345678,-1e-36,0.1,3]'));
  log(`grown in ${((performance.now() - grown) / 1000).toFixed(1)} s`);

  mkdirSync(OUT_DIR, { recursive: true });
  const file = join(OUT_DIR, 'backup.json');
  const again = join(OUT_DIR, 'backup-again.json');

  /** Runs `step`, then logs its time, DynamoDB requests and capacity, HTTP requests and the client's peak RSS. */
  const measure = async (label, step) => {
    proxy.reset();
    http = {};
    const t0 = performance.now();
    const { result, peakMb, liveMb } = await withPeakRss(step);
    const seconds = (performance.now() - t0) / 1000;
    const capacity = proxy.capacity();
    const requests = Object.fromEntries(Object.entries(capacity).map(([op, c]) => [op, c.requests]));
    const rcu = Object.values(capacity).reduce((sum, c) => sum + c.readUnits, 0);
    const wcu = Object.values(capacity).reduce((sum, c) => sum + c.writeUnits, 0);
    log(
      `${label}: ${seconds.toFixed(1)} s; ${rcu.toFixed(0)} RCU, ${wcu.toFixed(0)} WCU; DynamoDB ${JSON.stringify(requests)}`,
    );
    for (const [kind, h] of Object.entries(http))
      log(
        `  HTTP ${kind}: ${h.requests} requests, ${(h.totalMs / h.requests).toFixed(0)} ms mean, slowest ${h.slowestMs.toFixed(0)} ms`,
      );
    log(
      `  client RSS peak ${peakMb.toFixed(0)} MiB${liveMb === undefined ? '' : `, live heap peak ${liveMb.toFixed(0)} MiB`}`,
    );
    return result;
  };

  await measure('export (exportJson to a file)', () => pipeline(exportJson(from), createWriteStream(file)));
  const bytes = statSync(file).size;
  log(`  ${(bytes / 2 ** 20).toFixed(1)} MiB of JSON`);
  await measure('import (importJson from that file into another project)', () =>
    importJson(into, createReadStream(file)),
  );
  const shallow = async (site) => Object.keys((await site.get('part0', { shallow: true })).value).length;
  log(`keys of part0 by GET ?shallow: ${await shallow(from)} in the source, ${await shallow(into)} imported`);
  let same = true;
  if (process.env.BENCH_BACKUP_VERIFY === '1') {
    await measure('export of the imported project', () => pipeline(exportJson(into), createWriteStream(again)));
    const digest = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');
    same = digest(file) === digest(again);
    log(`the two exports are ${same ? 'identical, byte for byte' : 'DIFFERENT'} (sha256)`);
  }
  log('```');
  const end = machine().loadAverageStart.join(' '); // machine() samples the load average now
  log('');
  log(`Load average at the end: ${end}. The 2-core machine was shared with other work: times are pessimistic.`);
  if (!same) process.exitCode = 1;
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `backup-${choice.slug}.md`), `${lines.join('\n')}\n`);
}

try {
  await main();
} catch (error) {
  process.exitCode = 1;
  process.stderr.write(`${error?.stack ?? error}\n`);
} finally {
  for (const cleanup of cleanups) await cleanup();
  for (const child of children.reverse()) await child.stop();
}
