// Part 4: cold start. Bundles every function of serverless.yml with scripts/bundle.mjs (the bundles Lambda gets),
// plus bench/coldstart/floor.ts with the very same options; then, interleaved round by round, fresh Node processes
// each load one bundle and answer one request against the engine. Reports bundle sizes and what is in them.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ROOT, baseEnv } from './lib/config';
import { type RouteInfo, contentRoutes, v2Event } from './lib/events';
import { type Summary, quantile, summarize } from './lib/stats';

export const TARGET = 1.2;
const FLOOR = 'floor';
/**
 * The same bundles with tracing on (`<name>+xray`): what a Lambda with active tracing and POWERTOOLS_TRACE_ENABLED=true
 * sees (AWS_EXECUTION_ENV, LAMBDA_TASK_ROOT and a sampled trace header), so lib/http/tracing.ts loads Powertools Tracer
 * and captures the clients. Segments go by UDP to a daemon address where nothing listens, as X-Ray's own client does.
 */
const TRACED = ['set', 'get'];
const XRAY = '+xray';
const TRACING_ENV = {
  POWERTOOLS_TRACE_ENABLED: 'true',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  LAMBDA_TASK_ROOT: ROOT,
  _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
  AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
  AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
};
const functionOf = (name: string) => name.replace(XRAY, '');

interface Built {
  name: string;
  handler: string;
  bundle: string;
  bundleBytes: number;
  zipBytes: number;
  /** Lazy modules (scripts/bundle.mjs): in the zip, loaded only when the code reaches their import(). */
  lazy?: Array<{ file: string; bytes: number }>;
}

export interface BundleRow {
  name: string;
  bundleKb: number;
  zipKb: number;
  /** Bytes in the bundle per package (or lib/ folder), largest first: what a cold start loads. */
  composition: Array<{ area: string; kb: number }>;
  /** Lazy modules in the zip, loaded on first use only (not part of bundleKb or composition). */
  lazy: Array<{ file: string; kb: number }>;
}

export interface ColdRow {
  name: string;
  loadPlusInvoke: Summary;
  load: Summary;
  invoke: Summary;
  total: Summary;
  wall: Summary;
  rssMb: number;
  ratio: number;
  /** fn ÷ floor within each interleaved round: p25, median, p75 (the noise). */
  roundRatio: { p25: number; median: number; p75: number };
  ratioTotal: number;
  pass: boolean | null;
}

export interface ColdReport {
  available: boolean;
  /** Profiled cold starts (separate from the timed ones): ms of self time per package, mean per run. */
  profile?: { runs: number; byBundle: Record<string, Record<string, number>> };
  note?: string;
  runs: number;
  bundles: BundleRow[];
  rows: ColdRow[];
  samples: Record<string, number[]>;
}

function areaOfInput(path: string): string {
  const modules = path.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = path.slice(modules + 'node_modules/'.length).split('/');
    const name = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? '?');
    return name.startsWith('@smithy/') ? '@smithy/*' : name;
  }
  const parts = path.split('/');
  return parts[0] === 'lib' ? `lib/${parts[1]}` : (parts[0] ?? path);
}

/** Per output bundle: bytes contributed by each package / lib folder, from esbuild's metafile. */
function compositionOf(metaFile: string, bundleRel: string): Array<{ area: string; kb: number }> {
  if (!existsSync(metaFile)) return [];
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
  const output = Object.entries(meta.outputs).find(
    ([file]) => file === bundleRel || file.endsWith(bundleRel) || bundleRel.endsWith(file),
  );
  if (!output) return [];
  const areas: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(output[1].inputs))
    areas[areaOfInput(input)] = (areas[areaOfInput(input)] ?? 0) + bytesInOutput;
  return Object.entries(areas)
    .map(([area, bytes]) => ({ area, kb: bytes / 1024 }))
    .sort((a, b) => b.kb - a.kb);
}

export async function runColdStart(ctx: {
  endpoint: string;
  project: { username: string; slug: string; key: string };
  twinPk: string;
  runs: number;
  profileRuns: number;
  log: (line: string) => void;
}): Promise<ColdReport> {
  let bundler: {
    bundleFunctions: (o: Record<string, unknown>) => Promise<Built[]>;
    functionsOf: () => Record<string, string>;
  };
  try {
    bundler = await import(join(ROOT, 'scripts/bundle.mjs'));
    if (typeof bundler.bundleFunctions !== 'function' || typeof bundler.functionsOf !== 'function')
      throw new Error('no bundleFunctions/functionsOf export');
  } catch (error) {
    const note = `per-function bundles are not available (scripts/bundle.mjs: ${error instanceof Error ? error.message : error}); part skipped`;
    return { available: false, note, runs: 0, bundles: [], rows: [], samples: {} };
  }
  const buildDir = 'bench/.out/bundles/build';
  const functions = { ...bundler.functionsOf(), [FLOOR]: 'bench/coldstart/floor.handler' };
  // Validators are generated by `prebench` (npm run bench); regenerate here only when missing.
  const validators = !existsSync(join(ROOT, 'lib/http/validators.generated.ts'));
  const built = await bundler.bundleFunctions({ functions, buildDir, artifactDir: 'bench/.out/bundles', validators });
  const meta = join(ROOT, buildDir, 'meta.json');
  const bundles: BundleRow[] = built
    .map((b) => ({
      name: b.name,
      bundleKb: b.bundleBytes / 1024,
      zipKb: b.zipBytes / 1024,
      composition: compositionOf(meta, b.bundle),
      lazy: (b.lazy ?? []).map((l) => ({ file: l.file.split('/').slice(-2).join('/'), kb: l.bytes / 1024 })),
    }))
    .sort((a, b) => (a.name === FLOOR ? 1 : b.name === FLOOR ? -1 : 0));

  const routes = await contentRoutes();
  const p = ctx.project;
  const bag = 200;
  const content = {
    data: {
      item: { name: 'lamp' },
      items: [1, 2, 3],
      counter: 0,
      bag: Object.fromEntries(Array.from({ length: bag }, (_, i) => [`k${i}`, i])),
    },
  };
  const eventFor = (name: string, run: number): unknown => {
    if (name === FLOOR) return { pk: ctx.twinPk };
    const route = routes[functionOf(name)] as RouteInfo;
    const bodies: Record<string, unknown> = {
      set: { path: 'data.item.name', value: `cold ${run}` },
      push: { path: 'data.items', value: run },
      insert: { path: 'data.items', value: run, index: 0 },
      decrement: { path: 'data.counter' },
      increment: { path: 'data.counter' },
      delete: { path: `data.bag.k${run % bag}` },
      update: { content },
      batch: { operations: [{ op: 'increment', path: 'data.counter' }] },
    };
    const event: APIGatewayProxyEventV2 = v2Event(route, p, {
      token: p.key,
      body: bodies[functionOf(name)],
      query: functionOf(name) === 'get' ? { path: 'data.item' } : undefined,
    });
    return event;
  };
  const measured = [
    FLOOR,
    ...Object.keys(routes),
    ...TRACED.filter((name) => name in routes).map((name) => `${name}${XRAY}`),
  ];
  const env = baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: ctx.endpoint });
  const envOf = (name: string) => (name.endsWith(XRAY) ? { ...env, ...TRACING_ENV } : env);
  const bundleOf = (name: string) => join(ROOT, (built.find((b) => b.name === functionOf(name)) as Built).bundle);

  const once = (name: string, run: number, profile = false) => {
    const started = process.hrtime.bigint();
    const child = spawnSync(
      process.execPath,
      ['--enable-source-maps', join(ROOT, 'bench/coldstart/child.mjs'), bundleOf(name)],
      {
        cwd: ROOT,
        env: profile ? { ...envOf(name), BENCH_COLDSTART_PROFILE: '1' } : envOf(name),
        input: JSON.stringify(eventFor(name, run)),
        encoding: 'utf8',
        maxBuffer: 16 * 2 ** 20,
      },
    );
    const wall = Number(process.hrtime.bigint() - started) / 1e6;
    const line = child.stdout.split('\n').find((l) => l.startsWith('BENCH_COLDSTART '));
    if (child.status !== 0 || !line)
      throw new Error(`cold start of ${name} failed (${child.status}): ${child.stderr.slice(0, 2000)}`);
    const parsed = JSON.parse(line.slice('BENCH_COLDSTART '.length)) as {
      status: number;
      body?: string;
      load: number;
      invoke: number;
      total: number;
      rssMb: number;
      byArea?: Record<string, number>;
    };
    if (parsed.status !== 200) throw new Error(`cold start of ${name}: status ${parsed.status} ${parsed.body}`);
    return { ...parsed, wall };
  };
  // Start from the content the events expect (through the update function itself).
  once('update', 0);
  // One warm-up process per bundle (the OS file cache, as a Lambda host's would be), then interleaved rounds.
  for (const name of measured) once(name, 0);
  const samples: Record<string, Array<ReturnType<typeof once>>> = Object.fromEntries(measured.map((n) => [n, []]));
  for (let run = 1; run <= ctx.runs; run++) {
    for (let k = 0; k < measured.length; k++) {
      const name = measured[(run + k) % measured.length] as string;
      samples[name]?.push(once(name, run));
    }
  }
  // Attribution: a few profiled cold starts of the floor and two functions (profiler overhead: not timed).
  let profile: ColdReport['profile'];
  if (ctx.profileRuns > 0) {
    const byBundle: Record<string, Record<string, number>> = {};
    // The floor, set, and the function furthest from the floor in the timed runs.
    const lpi = (name: string) => summarize((samples[name] ?? []).map((x) => x.load + x.invoke)).median;
    const worst = measured.filter((n) => n !== FLOOR).reduce((a, b) => (lpi(b) > lpi(a) ? b : a), 'set');
    for (const name of [...new Set([FLOOR, 'set', worst])].filter((n) => measured.includes(n))) {
      const areas: Record<string, number> = {};
      for (let run = 0; run < ctx.profileRuns; run++) {
        for (const [area, ms] of Object.entries(once(name, ctx.runs + 1 + run, true).byArea ?? {}))
          areas[area] = (areas[area] ?? 0) + ms / ctx.profileRuns;
      }
      byBundle[name] = areas;
    }
    profile = { runs: ctx.profileRuns, byBundle };
  }
  const floorMedian = summarize((samples[FLOOR] ?? []).map((s) => s.load + s.invoke)).median;
  const floorTotal = summarize((samples[FLOOR] ?? []).map((s) => s.total)).median;
  const rows: ColdRow[] = measured.map((name) => {
    const s = samples[name] ?? [];
    const loadPlusInvoke = summarize(s.map((x) => x.load + x.invoke));
    const total = summarize(s.map((x) => x.total));
    const ratio = loadPlusInvoke.median / floorMedian;
    const floorSamples = samples[FLOOR] ?? [];
    const perRound = s.map(
      (x, r) => (x.load + x.invoke) / ((floorSamples[r]?.load ?? Number.NaN) + (floorSamples[r]?.invoke ?? Number.NaN)),
    );
    return {
      roundRatio: { p25: quantile(perRound, 0.25), median: quantile(perRound, 0.5), p75: quantile(perRound, 0.75) },
      name,
      loadPlusInvoke,
      load: summarize(s.map((x) => x.load)),
      invoke: summarize(s.map((x) => x.invoke)),
      total,
      wall: summarize(s.map((x) => x.wall)),
      rssMb: Math.max(...s.map((x) => x.rssMb)),
      ratio,
      ratioTotal: total.median / floorTotal,
      pass: name === FLOOR ? null : ratio <= TARGET,
    };
  });
  return {
    available: true,
    runs: ctx.runs,
    profile,
    bundles,
    rows,
    samples: Object.fromEntries(measured.map((n) => [n, (samples[n] ?? []).map((x) => x.load + x.invoke)])),
  };
}
