// The local API as its own process, exactly as `npm start` runs it (lib/local/start.ts): start it on free ports and
// wait until it reports where it listens; stop it (or any child) gently, then firmly.
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LocalApi {
  child: ChildProcess;
  pid: number;
  /** The API, e.g. http://127.0.0.1:1234 */
  url: string;
  /** The DynamoDB endpoint it uses (its embedded engine, or the one it was given). */
  endpoint: string;
}

export interface LocalApiOptions {
  /** The whole environment of the process (PORT, DATA_DIR, AWS_ENDPOINT_URL_DYNAMODB, ...). */
  env: Record<string, string | undefined>;
  stdio?: StdioOptions;
  nodeArgs?: string[];
  /** Called as soon as the process exists (to collect its output from the first line). */
  onSpawn?: (child: ChildProcess) => void;
  /** What to add to the error when the process exits before it is ready (its stderr, say). */
  describeExit?: () => string;
}

/** Starts lib/local/start.ts; resolves once it has written its ready file (API and engine both serving). */
export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const readyFile = join(tmpdir(), `content-api-ready-${process.pid}-${randomBytes(6).toString('hex')}.json`);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'lib/local/start.ts'], {
    env: { ...options.env, LOCAL_READY_FILE: readyFile },
    stdio: options.stdio ?? 'ignore',
  });
  options.onSpawn?.(child);
  const deadline = Date.now() + 60_000;
  while (!existsSync(readyFile)) {
    if (child.exitCode !== null)
      throw new Error(`the local API exited with ${child.exitCode}. ${options.describeExit?.() ?? ''}`);
    if (Date.now() > deadline) throw new Error('the local API did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  // The file is written in one call; give a partial read one more chance.
  let ready: { url: string; endpoint: string; pid: number };
  try {
    ready = JSON.parse(readFileSync(readyFile, 'utf8'));
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 100));
    ready = JSON.parse(readFileSync(readyFile, 'utf8'));
  }
  rmSync(readyFile, { force: true });
  return { child, pid: ready.pid, url: ready.url, endpoint: ready.endpoint };
}

/** SIGTERM, then SIGKILL if the process has not exited within 5 s. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
