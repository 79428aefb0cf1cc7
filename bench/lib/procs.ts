// Child processes of the bench: the engine, local API servers (lib/local/start.ts, exactly as `npm start` runs it),
// the latency worker; their RSS from /proc; stopping them by pid.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { OUT_DIR, ROOT, baseEnv } from './config';
import { startLocalApi, stopProcess } from '../../test/support/local-api';

export interface Child {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

const stopper = (child: ChildProcess) => () => stopProcess(child);

/** A TypeScript entry under tsx, with an IPC channel; resolves with its first message. */
export async function spawnTs<T>(
  entry: string,
  env: Record<string, string>,
  options: { stdout?: 'inherit' | 'ignore' } = {},
): Promise<Child & { ready: T }> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env,
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit', 'ipc'],
  });
  const ready = await new Promise<T>((resolve, reject) => {
    child.once('message', (message) => resolve(message as T));
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code} before it was ready`)));
  });
  return { child, pid: child.pid as number, ready, stop: stopper(child) };
}

/** The engine process; with `external` (DynamoDB Local's endpoint) it only creates the table there. */
export async function startEngineProcess(external?: string): Promise<Child & { endpoint: string }> {
  const started = await spawnTs<{ endpoint: string }>(
    'bench/engine.ts',
    baseEnv(external ? { BENCH_ENGINE_ENDPOINT: external } : {}),
  );
  return { ...started, endpoint: started.ready.endpoint };
}

let servers = 0;

/**
 * The local API as `npm start` runs it (lib/local/start.ts), on a free port, talking to `endpoint` (so it starts no
 * engine of its own). Its stdout (the access log) goes to /dev/null, as a Lambda's goes to a pipe; its stderr (error
 * logs) to bench/.out/server-<n>.log.
 */
export async function startApiServer(
  endpoint: string,
  extra: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<Child & { url: string; log: string }> {
  mkdirSync(OUT_DIR, { recursive: true });
  const log = `${OUT_DIR}/server-${++servers}.log`;
  const stderr = openSync(log, 'w');
  const started = await startLocalApi({
    env: baseEnv({ ...extra, PORT: '0', DATA_DIR: ':memory:', AWS_ENDPOINT_URL_DYNAMODB: endpoint }),
    stdio: ['ignore', 'ignore', stderr],
    nodeArgs,
    describeExit: () => readFileSync(log, 'utf8').slice(-2000),
  });
  closeSync(stderr);
  return {
    child: started.child,
    pid: started.child.pid as number,
    url: started.url,
    log,
    stop: stopper(started.child),
  };
}

/** Resident set size and its high-water mark of a process, in MiB, from /proc (Linux only; undefined elsewhere). */
export function readRss(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}
