// Part 2: latency against the floor. Runs bench/latency-worker.ts in its own process (so the handlers' access log
// goes to /dev/null and the orchestrator stays out of the measurement) and turns its samples into medians, p99,
// ratios and the spread of the ratio across blocks.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type CpuProfile, type ProfileSummary, summarizeProfile } from './lib/profile';
import { OUT_DIR, baseEnv } from './lib/config';
import { spawnTs } from './lib/procs';
import { type Summary, spread, summarize } from './lib/stats';
import type { LatencyConfig, LatencyResult, Mode } from './latency-worker';

export const TARGETS = { inproc: 1.2, http: 1.5 };

export interface LatencyRow {
  op: string;
  floorKind: string;
  floor: Summary;
  /** The HTTP floor: the floor's request through a do-nothing HTTP server (bench/relay.ts). */
  relay: Summary;
  replay: Summary;
  inproc: Summary;
  http: Summary;
  /**
   * Ratios of medians over all samples (and of p99s): in-process and HTTP against the floor (the targets); the
   * handler's own request sent bare against the floor (what the richer expression costs); in-process against that
   * (what the handler's code costs).
   */
  ratio: {
    inproc: number;
    http: number;
    inprocP99: number;
    httpP99: number;
    replay: number;
    inprocOverReplay: number;
    relay: number;
    httpOverRelay: number;
  };
  /** The min/median/max across blocks of the per-block ratio: the noise. */
  blockRatio: {
    inproc: { min: number; median: number; max: number };
    http: { min: number; median: number; max: number };
  };
  handlerRequest?: LatencyResult['ops'][number]['handlerRequest'];
  handlerRequestsPerOp: number;
  cpu: LatencyResult['ops'][number]['cpu'];
  pass: { inproc: boolean; http: boolean };
}

export interface LatencyReport {
  rows: LatencyRow[];
  samples: Record<string, Record<Mode, number[]>>;
  contentBytes: number;
  itemBytes: number;
  profile?: LatencyResult['profile'];
  /** The local HTTP server's own CPU profile over the measured blocks. */
  serverProfile?: ProfileSummary & { requests: number; file: string };
  window?: LatencyResult['window'];
  config: Pick<LatencyConfig, 'iterations' | 'runLength' | 'blocks' | 'warmup' | 'profileIterations'>;
}

/** Node flags that make the local server write a CPU profile when it exits. */
export function serverProfileArgs(): string[] {
  const dir = join(OUT_DIR, 'server-profile');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '200'];
}

/** After the server stopped: its profile, restricted to the measured window. */
export function serverProfile(report: LatencyReport): void {
  const window = report.window;
  const dir = join(OUT_DIR, 'server-profile');
  if (!window || !existsSync(dir)) return;
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return;
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  report.serverProfile = {
    ...summarizeProfile(profile, 20, window),
    requests: window.httpRequests,
    file: join(dir, file),
  };
}

export async function runLatency(config: Omit<LatencyConfig, 'outDir'>, endpoint: string): Promise<LatencyReport> {
  mkdirSync(OUT_DIR, { recursive: true });
  const full: LatencyConfig = { ...config, outDir: OUT_DIR };
  const worker = await spawnTs<{ ok: boolean; result?: LatencyResult; error?: string }>(
    'bench/latency-worker.ts',
    baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: endpoint, BENCH_LATENCY_CONFIG: JSON.stringify(full) }),
  );
  await worker.stop();
  if (!worker.ready.ok || !worker.ready.result) throw new Error(`latency worker failed: ${worker.ready.error}`);
  const result = worker.ready.result;
  const rows: LatencyRow[] = result.ops.map((op) => {
    const floor = summarize(op.samples.floor);
    const relay = summarize(op.samples.relay);
    const replay = summarize(op.samples.replay);
    const inproc = summarize(op.samples.inproc);
    const http = summarize(op.samples.http);
    const ratio = {
      inproc: inproc.median / floor.median,
      http: http.median / floor.median,
      inprocP99: inproc.p99 / floor.p99,
      httpP99: http.p99 / floor.p99,
      replay: replay.median / floor.median,
      inprocOverReplay: inproc.median / replay.median,
      relay: relay.median / floor.median,
      httpOverRelay: http.median / relay.median,
    };
    return {
      op: op.op,
      floorKind: op.floorKind,
      floor,
      relay,
      replay,
      inproc,
      http,
      ratio,
      handlerRequest: op.handlerRequest,
      handlerRequestsPerOp: op.handlerRequestsPerOp,
      blockRatio: {
        inproc: spread(op.blockMedians.map((b) => b.inproc / b.floor)),
        http: spread(op.blockMedians.map((b) => b.http / b.floor)),
      },
      cpu: op.cpu,
      pass: { inproc: ratio.inproc <= TARGETS.inproc, http: ratio.http <= TARGETS.http },
    };
  });
  return {
    rows,
    samples: Object.fromEntries(result.ops.map((op) => [op.op, op.samples])),
    contentBytes: result.contentBytes,
    itemBytes: result.itemBytes,
    profile: result.profile,
    window: result.window,
    config: {
      iterations: config.iterations,
      runLength: config.runLength,
      blocks: config.blocks,
      warmup: config.warmup,
      profileIterations: config.profileIterations,
    },
  };
}
