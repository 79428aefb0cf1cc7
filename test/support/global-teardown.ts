import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { stopProcess } from './local-api';

/** Stops what global-setup started: the JWKS server, its keys file and the API process. */
export default async function globalTeardown(): Promise<void> {
  const jwks = (globalThis as Record<string, unknown>).__contentApiJwks as
    | { server: Server; keysFile: string }
    | undefined;
  if (jwks) {
    jwks.server.closeAllConnections();
    jwks.server.close();
    rmSync(jwks.keysFile, { force: true });
  }
  const child = (globalThis as Record<string, unknown>).__contentApi as ChildProcess | undefined;
  if (child) await stopProcess(child);
}
