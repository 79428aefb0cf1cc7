// Child processes of the bench: the engine, local API servers (lib/local/start.ts, exactly as `npm start` runs it),
// the latency worker; their RSS from /proc; stopping them by pid.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OUT_DIR, ROOT, baseEnv } from './config';

export interface Child {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
}

/** A TypeScript entry under tsx, with an IPC channel; resolves with its first message. */
export async function spawnTs<T>(entry: string, env: Record<string, string>, options: { stdout?: 'inherit' | 'ignore' } = {}): Promise<Child & { ready: T }> {
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

export async function startEngineProcess(): Promise<Child & { endpoint: string }> {
  const started = await spawnTs<{ endpoint: string }>('bench/engine.ts', baseEnv());
  return { ...started, endpoint: started.ready.endpoint };
}

let servers = 0;

/**
 * The local API as `npm start` runs it (lib/local/start.ts), on a free port, talking to `endpoint` (so it starts no
 * engine of its own). Its stdout (the access log) goes to /dev/null, as a Lambda's goes to a pipe; its stderr (error
 * logs) to bench/.out/server-<n>.log.
 */
export async function startApiServer(endpoint: string, extra: Record<string, string>, nodeArgs: string[] = []): Promise<Child & { url: string; log: string }> {
  mkdirSync(OUT_DIR, { recursive: true });
  const log = `${OUT_DIR}/server-${++servers}.log`;
  const stderr = openSync(log, 'w');
  const readyFile = join(tmpdir(), `content-api-bench-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'lib/local/start.ts'], {
    cwd: ROOT,
    env: baseEnv({ ...extra, PORT: '0', DATA_DIR: ':memory:', AWS_ENDPOINT_URL_DYNAMODB: endpoint, LOCAL_READY_FILE: readyFile }),
    stdio: ['ignore', 'ignore', stderr],
  });
  closeSync(stderr);
  const deadline = Date.now() + 60_000;
  while (!existsSync(readyFile)) {
    if (child.exitCode !== null) throw new Error(`the local API exited with ${child.exitCode}: ${readFileSync(log, 'utf8').slice(-2000)}`);
    if (Date.now() > deadline) throw new Error('the local API did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // The file is written in one call, but give a partial write one more chance.
  let ready: { url: string };
  try {
    ready = JSON.parse(readFileSync(readyFile, 'utf8'));
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 100));
    ready = JSON.parse(readFileSync(readyFile, 'utf8'));
  }
  rmSync(readyFile, { force: true });
  return { child, pid: child.pid as number, url: ready.url, log, stop: stopper(child) };
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
