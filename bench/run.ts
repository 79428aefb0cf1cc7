// `npm run bench`: every part on the embedded engine in one run, side by side; writes bench/results/latest.md,
// latest.json and the SVG charts. Parameters: see bench/lib/config.ts (BENCH_ITERATIONS, BENCH_PARTS, ...).
//
// Processes: this orchestrator (fixtures, the counting proxy, the JWKS, HTTP clients), the engine (bench/engine.ts),
// the local API twice (lib/local/start.ts: one whose DynamoDB is the counting proxy, for parts 1, 3 and 5; one
// talking straight to the engine, for part 2's HTTP latency), the latency worker (part 2) and cold-start processes;
// part 6 starts a third local API behind a second proxy that asks for and sums the consumed capacity.
// Under `node scripts/dynamodb-local.mjs -- npm run bench` the engine is DynamoDB Local (bench/lib/config.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  ALL_PARTS,
  OUT_DIR,
  RESULTS_DIR,
  TABLE_NAME,
  baseEnv,
  engineChoice,
  machine,
  params,
  partsToRun,
} from './lib/config';
import { itemKeyAttributes } from '../lib/schema/items';
import { type Child, spawnTs, startApiServer, startEngineProcess } from './lib/procs';
import { carryOver, writeReport, type BenchReport } from './report';

const log = (line: string) => console.log(line);

async function main(): Promise<number> {
  const parts = partsToRun();
  const info = machine();
  mkdirSync(OUT_DIR, { recursive: true });
  mkdirSync(RESULTS_DIR, { recursive: true });
  log(
    `content-api bench: ${info.cpu}, ${info.cores} cores, ${info.memoryGb} GB, node ${info.node}, load ${info.loadAverageStart.join(' ')}`,
  );
  log(`parts: ${[...parts].join(', ')}; parameters ${JSON.stringify(params)}`);

  const children: Child[] = [];
  const cleanups: Array<() => unknown> = [];
  const report: BenchReport = { machine: info, params, parts: [...parts], errors: {} };
  const started = Date.now();
  const choice = engineChoice();
  try {
    const engine = await startEngineProcess(choice.endpoint);
    children.push(engine);
    // Everything this process imports from lib/ talks straight to the engine.
    Object.assign(process.env, baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint }), { PATH: process.env.PATH });
    const fixtures = await import('./lib/fixtures');
    const { startDynamoProxy } = await import('../test/support/dynamo-proxy');
    const { dynamo } = await import('../lib/dynamo/client');
    const { GetItemCommand, PutItemCommand, UpdateItemCommand } = await import('@aws-sdk/client-dynamodb');
    const { httpClient } = await import('./lib/http');

    const idp = await fixtures.startIdentityProvider();
    cleanups.push(idp.close);
    const users = await fixtures.createUsers();
    const proxy = await startDynamoProxy(engine.endpoint);
    cleanups.push(() => proxy.close());
    log('starting the local API (DynamoDB through the counting proxy)...');
    const counted = await startApiServer(proxy.url, idp.env);
    children.push(counted);

    /** A copy of a project item under another key: the floor's twin (same size, same attributes). */
    const twin = async (project: { username: string; slug: string }, name: string) => {
      const pk = `P#${project.username}/${project.slug}`;
      const { Item } = await dynamo.send(
        new GetItemCommand({ TableName: TABLE_NAME, Key: itemKeyAttributes(pk), ConsistentRead: true }),
      );
      if (!Item) throw new Error(`no item ${pk}`);
      const twinPk = `BENCH#${name}`;
      await dynamo.send(new PutItemCommand({ TableName: TABLE_NAME, Item: { ...Item, pk: { S: twinPk } } }));
      return twinPk;
    };

    // Does the engine return the old item with a failed condition (as DynamoDB does)? If not, the service reads it.
    await dynamo.send(
      new PutItemCommand({ TableName: TABLE_NAME, Item: { ...itemKeyAttributes('BENCH#probe'), n: { N: '1' } } }),
    );
    report.engine = { name: choice.name, returnsOldItemOnConditionFailure: false };
    try {
      await dynamo.send(
        new UpdateItemCommand({
          TableName: TABLE_NAME,
          Key: itemKeyAttributes('BENCH#probe'),
          UpdateExpression: 'SET n = :two',
          ConditionExpression: 'n = :two',
          ExpressionAttributeValues: { ':two': { N: '2' } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      report.engine.returnsOldItemOnConditionFailure = (error as { Item?: unknown }).Item !== undefined;
    }
    log(
      `engine returns the old item on a failed condition (ALL_OLD): ${report.engine.returnsOldItemOnConditionFailure ? 'yes' : 'NO'}`,
    );

    const part = async (name: string, fn: () => Promise<void>) => {
      if (!parts.has(name)) return;
      const t0 = Date.now();
      log(`\n== ${name}`);
      try {
        await fn();
        log(`== ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        report.errors[name] = message;
        log(`== ${name} FAILED: ${message}`);
      }
    };

    await part('requests', async () => {
      const { runRequests } = await import('./requests');
      const project = await fixtures.createBenchProject('requests');
      const other = await fixtures.createBenchProject('other', fixtures.OTHER);
      const api = httpClient(counted.url, 1);
      try {
        report.requests = await runRequests({
          proxy,
          api,
          project,
          repeats: Math.max(1, params.requestRepeats),
          log,
          tokens: {
            key: project.key,
            session: users.ownerSession,
            jwt: await idp.sign(fixtures.EDITOR),
            readOnlyKey: await fixtures.createKey(project, ['content:read']),
            viewerSession: users.viewerSession,
            otherProjectKey: other.key,
            strangerJwt: await idp.sign(fixtures.EDITOR, 'stranger'),
            nonMemberJwt: await idp.sign(fixtures.OTHER),
            freshSession: fixtures.freshSession,
            freshJwt: () => idp.sign(fixtures.EDITOR),
          },
        });
      } finally {
        api.close();
      }
      const failing = report.requests.filter((r) => r.pass === false);
      log(
        `  ${report.requests.length} cases; ${failing.length} miss their target${failing.length ? `: ${failing.map((f) => f.id).join(', ')}` : ''}`,
      );
    });

    await part('latency', async () => {
      const { runLatency, serverProfile, serverProfileArgs } = await import('./latency');
      log('starting the local API (DynamoDB direct)...');
      const profiling = params.profileIterations > 0;
      // The measured server runs without a profiler; a second one, profiled, only serves the profiling pass.
      const direct = await startApiServer(engine.endpoint, idp.env);
      children.push(direct);
      const profiled = profiling ? await startApiServer(engine.endpoint, idp.env, serverProfileArgs()) : undefined;
      if (profiled) children.push(profiled);
      const relay = await spawnTs<{ url: string }>(
        'bench/relay.ts',
        baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint }),
      );
      children.push(relay);
      const inproc = await fixtures.createBenchProject('latency-inproc');
      const overHttp = await fixtures.createBenchProject('latency-http');
      const capture = await fixtures.createBenchProject('latency-capture');
      report.latency = await runLatency(
        {
          inproc: { username: inproc.username, slug: inproc.slug, key: inproc.key },
          http: { username: overHttp.username, slug: overHttp.slug, key: overHttp.key, url: direct.url },
          capture: { username: capture.username, slug: capture.slug, key: capture.key },
          twinPk: 'BENCH#latency-floor',
          replayPk: 'BENCH#latency-replay',
          relay: { url: relay.ready.url, pid: relay.pid, pk: 'BENCH#latency-relay' },
          enginePid: engine.pid,
          serverPid: direct.pid,
          iterations: params.iterations,
          runLength: params.runLength,
          blocks: params.blocks,
          warmup: params.warmup,
          profileIterations: params.profileIterations,
          profileUrl: profiled?.url,
        },
        engine.endpoint,
      );
      await direct.stop();
      await relay.stop();
      await profiled?.stop();
      if (profiling) serverProfile(report.latency);
      for (const r of report.latency.rows) {
        log(
          `  ${r.op.padEnd(12)} floor ${r.floor.median.toFixed(2)} ms, handler's request bare ${r.replay.median.toFixed(2)} ms, in-process ${r.inproc.median.toFixed(2)} ms (${r.ratio.inproc.toFixed(2)}x), HTTP ${r.http.median.toFixed(2)} ms (${r.ratio.http.toFixed(2)}x)`,
        );
      }
    });

    await part('contention', async () => {
      const { runContention } = await import('./contention');
      const result = await runContention({
        url: counted.url,
        proxy,
        newProject: (slug) => fixtures.createBenchProject(slug),
        serverPid: counted.pid,
        enginePid: engine.pid,
        clients: params.clients,
        opsPerClient: params.contentionOps,
        rssIntervalMs: Math.max(5, params.rssIntervalMs),
        log,
      });
      report.contention = result.rows;
      report.memory = result.memory;
      log(
        `  local API RSS: baseline ${result.memory.server.baselineMb.toFixed(0)} MB, peak ${result.memory.server.peakMb.toFixed(0)} MB; engine peak ${result.memory.engine.peakMb.toFixed(0)} MB`,
      );
    });

    await part('coldstart', async () => {
      const { runColdStart } = await import('./coldstart');
      const project = await fixtures.createBenchProject('coldstart');
      const twinPk = await twin(project, 'coldstart-floor');
      report.coldstart = await runColdStart({
        endpoint: engine.endpoint,
        project,
        twinPk,
        runs: Math.max(1, params.coldRuns),
        profileRuns: params.coldProfileRuns,
        log,
      });
      if (!report.coldstart.available) log(`  ${report.coldstart.note}`);
      for (const r of report.coldstart.rows)
        log(
          `  ${r.name.padEnd(10)} load+invoke ${r.loadPlusInvoke.median.toFixed(1)} ms (${r.ratio.toFixed(2)}x), process total ${r.total.median.toFixed(1)} ms`,
        );
    });

    await part('cost', async () => {
      const { costMarkdown, runCost } = await import('./cost');
      const capacityProxy = await startDynamoProxy(engine.endpoint, { consumedCapacity: true });
      cleanups.push(() => capacityProxy.close());
      log('starting the local API (DynamoDB through the capacity-summing proxy)...');
      const server = await startApiServer(capacityProxy.url, idp.env);
      children.push(server);
      const api = httpClient(server.url, 1);
      try {
        report.cost = await runCost({
          proxy: capacityProxy,
          api,
          project: await fixtures.createBenchProject('cost'),
          engine: choice.name,
          tableName: TABLE_NAME,
          repeats: Math.max(1, params.costRepeats),
          log,
        });
      } finally {
        api.close();
      }
      // Its own file per engine as well, so that the dynalite and DynamoDB Local tables stand side by side.
      const file = join(RESULTS_DIR, `cost-${choice.slug}.md`);
      writeFileSync(
        file,
        `${[
          `# Cost per operation by content size: ${choice.name}`,
          '',
          `Generated by \`BENCH_PARTS=cost ${choice.slug === 'dynalite' ? '' : 'node scripts/dynamodb-local.mjs -- '}npm run bench\` on ${info.date} (${info.cpu}, ${info.cores} cores, node ${info.node}, load ${info.loadAverageStart.join(' ')}).`,
          '',
          ...costMarkdown(report.cost, '##'),
        ].join('\n')}\n`,
      );
      log(`  wrote ${join('bench/results', `cost-${choice.slug}.md`)}`);
    });

    await part('realtime', async () => {
      const { runRealtime } = await import('./realtime');
      // Its own local API: the embedded engine's stream reaches the consumer only in the engine's own process.
      report.realtime = await runRealtime({
        subscribers: [1, 100, 1000],
        writes: (n) => (n >= 1000 ? 20 : n >= 100 ? 40 : 100),
        log,
      });
    });
  } finally {
    for (const child of children.reverse()) await child.stop();
    for (const cleanup of cleanups) await cleanup();
  }
  report.machine.loadAverageEnd = loadavg().map((l) => Math.round(l * 100) / 100);
  report.durationSeconds = Math.round((Date.now() - started) / 100) / 10;
  // A run of some parts on the embedded engine keeps the other parts' results of the previous latest.json (named as
  // carried over in latest.md); a run on another engine writes only its own per-part files.
  const previous = join(RESULTS_DIR, 'latest.json');
  if (choice.slug !== 'dynalite') {
    log(`\nnot on the embedded engine: bench/results/latest.* left as they were`);
    return Object.keys(report.errors).length > 0 ? 1 : 0;
  }
  if (ALL_PARTS.some((p) => !parts.has(p)) && existsSync(previous))
    carryOver(report, JSON.parse(readFileSync(previous, 'utf8')) as BenchReport);
  const files = writeReport(report, RESULTS_DIR);
  log(`\nwrote ${files.map((f) => join('bench/results', f)).join(', ')} in ${report.durationSeconds} s`);
  return Object.keys(report.errors).length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
