// Shutdown of a local HTTP server without cutting requests short: what they use (LevelDB, the engine) is closed only
// once they have been answered, so a request caught by SIGTERM never meets a closed database.
import type { Server } from 'node:http';

/** A server's requests in flight, and how to stop it once they are answered. */
export interface Drain {
  /** True once close() began: a request arriving now (on a kept-alive connection) should be refused with a 503. */
  readonly closing: boolean;
  /**
   * Stops accepting connections, closes the idle ones, waits for the requests in flight (at most `graceMs`), then
   * closes every connection left. `untilClosed`: and waits for the server's own close to finish (dynalite closes
   * its database then); not for a server whose upgraded WebSocket connections outlive it.
   */
  close(options: { graceMs: number; untilClosed: boolean }): Promise<void>;
}

/** Counts `server`'s requests from now on (call before it listens), for a close() that waits for them. */
export function trackRequests(server: Server): Drain {
  let inFlight = 0;
  let closing = false;
  let settled: (() => void) | undefined;
  server.on('request', (_req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) settled?.();
    });
  });
  return {
    get closing() {
      return closing;
    },
    async close({ graceMs, untilClosed }) {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (settled = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(timer);
      }
      // Answered: the kept-alive connections are idle now (or the grace is over).
      server.closeAllConnections();
      if (untilClosed) await closed;
    },
  };
}
