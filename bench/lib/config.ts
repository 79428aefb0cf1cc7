// Bench parameters (all from the environment, with defaults sized for a few minutes on a 2-core machine) and the
// environment every process of the bench shares.
import { cpus, freemem, loadavg, totalmem, type } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BENCH_DIR = join(ROOT, 'bench');
/** Scratch output (bundles, CPU profiles): gitignored. */
export const OUT_DIR = join(BENCH_DIR, '.out');
export const RESULTS_DIR = join(BENCH_DIR, 'results');

const int = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, not ${raw}`);
  return value;
};

export const params = {
  /** Part 2: measured iterations per operation per block (each iteration runs floor, in-process and HTTP once). */
  iterations: int('BENCH_ITERATIONS', 60),
  /** Part 2: consecutive requests of one mode per turn of the interleaving (1 = A B C D A B C D ...). */
  runLength: int('BENCH_RUN_LENGTH', 5),
  /** Part 2: repeated blocks; the spread of the per-block ratio is the noise figure. */
  blocks: int('BENCH_BLOCKS', 5),
  /** Part 2: unmeasured iterations per operation before the first block. */
  warmup: int('BENCH_WARMUP', 40),
  /** Part 2: iterations per operation of the CPU-profiled pass (0 skips profiling). */
  profileIterations: int('BENCH_PROFILE_ITERATIONS', 150),
  /** Part 1: how many times each request-count case runs (counts must agree). */
  requestRepeats: int('BENCH_REQUEST_REPEATS', 2),
  /** Part 3: concurrent clients. */
  clients: int('BENCH_CLIENTS', 32),
  /** Part 3: operations per client per scenario. */
  contentionOps: int('BENCH_CONTENTION_OPS', 30),
  /** Part 4: measured fresh processes per bundle (after one warm-up each). */
  coldRuns: int('BENCH_COLDSTART_RUNS', 15),
  /** Part 4: extra, profiled cold starts of the floor, set and get (attribution only; 0 skips). */
  coldProfileRuns: int('BENCH_COLDSTART_PROFILE_RUNS', 3),
  /** Part 5: RSS sampling interval, ms. */
  rssIntervalMs: int('BENCH_RSS_INTERVAL_MS', 20),
  /** Part 6: repetitions of each operation per content size (the cells are medians). */
  costRepeats: int('BENCH_COST_REPEATS', 3),
};

/** Which parts run: BENCH_PARTS=requests,latency,contention,coldstart,cost,realtime (memory rides on contention). Default all. */
export function partsToRun(): Set<string> {
  const all = ALL_PARTS;
  const raw = process.env.BENCH_PARTS;
  const chosen = raw
    ? raw
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)
    : all;
  for (const p of chosen)
    if (!all.includes(p)) throw new Error(`BENCH_PARTS: unknown part ${p} (one of ${all.join(', ')})`);
  return new Set(chosen);
}

export const ALL_PARTS = ['requests', 'latency', 'contention', 'coldstart', 'cost', 'realtime'];

export const TABLE_NAME = 'content-api-bench';

/**
 * The engine under the bench: the embedded one (bench/engine.ts), or DynamoDB Local when the bench runs under
 * `node scripts/dynamodb-local.mjs -- npm run bench` (which sets DYNAMODB_ENGINE and AWS_ENDPOINT_URL_DYNAMODB).
 */
export function engineChoice(): { slug: string; name: string; endpoint?: string } {
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (process.env.DYNAMODB_ENGINE === 'dynamodb-local' && endpoint)
    return { slug: 'dynamodb-local', name: 'DynamoDB Local (scripts/dynamodb-local.mjs)', endpoint };
  return { slug: 'dynalite', name: 'dynalite (embedded, in memory)' };
}

/** Region, dummy credentials, the table: what every child (server, engine, worker, cold start) needs. */
export function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    TABLE_NAME,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...extra,
  };
}

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  freeMemoryGb: number;
  os: string;
  node: string;
  date: string;
  loadAverageStart: number[];
  loadAverageEnd?: number[];
}

export function machine(): Machine {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGb: Math.round((freemem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${process.platform}/${process.arch}`,
    node: process.version,
    date: new Date().toISOString(),
    loadAverageStart: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}
