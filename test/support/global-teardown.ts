import type { ChildProcess } from 'node:child_process';

/** Stops the API process global-setup started: SIGTERM, then SIGKILL if it has not exited within 5 s. */
export default async function globalTeardown(): Promise<void> {
  const child = (globalThis as Record<string, unknown>).__contentApi as ChildProcess | undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
