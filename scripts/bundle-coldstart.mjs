// Cold-start measurement: AWS SDK bundled vs left to the runtime, each bundle in fresh Node processes answering one
// request against the embedded engine. `node scripts/bundle-coldstart.mjs [runs]`; prints a table for the README.
//
// "external" loads our own SDK copy from node_modules file by file, as Lambda would load the runtime's copy from
// /var/runtime/node_modules; it is the closest offline stand-in for "taken from the runtime".
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ROOT, bundleFunctions } from './bundle.mjs';

const RUNS = Number(process.argv[2] ?? 15);
const OUT = join('.serverless', 'measure');
const FUNCTIONS = { get: 'functions/get.handler', set: 'functions/set.handler', update: 'functions/update.handler' };
const TABLE_NAME = 'coldstart';

/** The engine, the table, one project and one API key, in a child process that prints where they are. */
async function startEngine() {
  const code = `
    const { startRuntime } = await import('./lib/local/runtime.ts');
    await startRuntime({ port: 0, dataDir: null });
    const a = await import('./lib/store/accounts.ts');
    await a.createUser('@bench');
    await a.createProject({ username: '@bench', slug: 'site' });
    const { key } = await a.createApiKey({ username: '@bench', slug: 'site' }, { name: 'bench', permissions: ['content:read', 'content:write'] });
    console.log(JSON.stringify({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB, key }));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    env: { ...process.env, TABLE_NAME, AWS_ENDPOINT_URL_DYNAMODB: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`engine exited with ${code}`)));
  });
  return { child, ...JSON.parse(line) };
}

function event(method, route, key, body) {
  const path = `/api/@bench/site/content${route}`;
  return {
    version: '2.0',
    routeKey: `${method} /api/{username}/{projectSlug}/content${route}`,
    rawPath: path,
    rawQueryString: '',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    pathParameters: { username: '@bench', projectSlug: 'site' },
    requestContext: { http: { method, path }, requestId: 'bench', timeEpoch: Date.now() },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

/** One fresh process: import the bundle, answer one request; times from process start (performance.now()). */
const CHILD = `
  const [bundle] = process.argv.slice(1);
  const eventJson = (await import('node:fs')).readFileSync(0, 'utf8');
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const { handler } = await import(bundle);
  const t1 = performance.now();
  const context = { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 10000 };
  const result = await handler(JSON.parse(eventJson), context);
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu0);
  if (result.statusCode !== 200) throw new Error('status ' + result.statusCode + ' ' + result.body);
  console.log(JSON.stringify({ boot: t0, load: t1 - t0, invoke: t2 - t1, total: t2, cpu: (cpu.user + cpu.system) / 1000, rssMb: process.memoryUsage().rss / 2 ** 20 }));`;

function runOnce(bundle, evt, env) {
  const started = process.hrtime.bigint();
  const run = spawnSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', CHILD, bundle], {
    cwd: ROOT,
    env,
    input: JSON.stringify(evt),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr || String(run.error));
  // The handlers log to stdout too; the measurement is the last line.
  return { ...JSON.parse(run.stdout.trim().split('\n').pop()), wall: Number(process.hrtime.bigint() - started) / 1e6 };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p90 = (values) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.9) - 1];

async function main() {
  rmSync(join(ROOT, OUT), { recursive: true, force: true });
  const bundles = {};
  for (const sdk of ['bundled', 'external']) {
    const dir = join(OUT, sdk);
    for (const built of await bundleFunctions({
      functions: FUNCTIONS,
      sdk,
      buildDir: join(dir, 'build'),
      artifactDir: dir,
    })) {
      bundles[`${sdk}/${built.name}`] = {
        path: join(ROOT, built.bundle),
        zipBytes: built.zipBytes,
        bundleBytes: built.bundleBytes,
      };
    }
  }
  const engine = await startEngine();
  const env = {
    PATH: process.env.PATH,
    TABLE_NAME,
    AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const big = { content: { data: 'x'.repeat(340 * 1024) } };
  const scenarios = {
    get: event('GET', '', engine.key),
    set: event('POST', '/set', engine.key, { path: 'data.n', value: 1 }),
    update: event('POST', '/update', engine.key, big),
  };
  const rows = [];
  try {
    for (const [name, evt] of Object.entries(scenarios)) {
      const samples = { bundled: [], external: [] };
      for (const sdk of Object.keys(samples)) runOnce(bundles[`${sdk}/${name}`].path, evt, env); // warms the file cache
      // Interleaved, so a busy machine slows both variants alike.
      for (let i = 0; i < RUNS; i++)
        for (const sdk of Object.keys(samples)) samples[sdk].push(runOnce(bundles[`${sdk}/${name}`].path, evt, env));
      for (const [sdk, runs] of Object.entries(samples)) {
        const bundle = bundles[`${sdk}/${name}`];
        const pick = (field) => runs.map((s) => s[field]);
        const coldStart = runs.map((s) => s.load + s.invoke);
        rows.push({
          function: name === 'update' ? 'update (340 KB body)' : name,
          sdk,
          'bundle KB': (bundle.bundleBytes / 1024).toFixed(0),
          'zip KB': (bundle.zipBytes / 1024).toFixed(0),
          'load ms (median)': median(pick('load')).toFixed(0),
          'first invoke ms (median)': median(pick('invoke')).toFixed(0),
          'load+invoke ms (median / p90)': `${median(coldStart).toFixed(0)} / ${p90(coldStart).toFixed(0)}`,
          'load+invoke CPU ms (median)': median(pick('cpu')).toFixed(0),
          'process wall ms (median)': median(pick('wall')).toFixed(0),
          'RSS MB (max)': Math.max(...pick('rssMb')).toFixed(0),
        });
      }
    }
  } finally {
    engine.child.kill('SIGTERM');
  }
  console.log(
    `node ${process.version}, ${RUNS} runs each (after one warm-up run), interleaved; times in ms; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.table(rows);
}

await main();
