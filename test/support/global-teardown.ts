import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Server } from 'node:http';

/** Stops the API process global-setup started: SIGTERM, then SIGKILL if it has not exited within 5 s. */
export default async function globalTeardown(): Promise<void> {
  const jwks = (globalThis as Record<string, unknown>).__contentApiJwks as { server: Server; keysFile: string } | undefined;
  if (jwks) {
    jwks.server.closeAllConnections();
    jwks.server.close();
    rmSync(jwks.keysFile, { force: true });
  }
  const child = (globalThis as Record<string, unknown>).__contentApi as ChildProcess | undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
