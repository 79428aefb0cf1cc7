import type { Servers } from '../support/servers';

/** Stops the processes global-setup started. */
export default async function globalTeardown(): Promise<void> {
  await ((globalThis as Record<string, unknown>).__multiprocessServers as Servers | undefined)?.stop();
}
