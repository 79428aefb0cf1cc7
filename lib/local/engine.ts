// Embedded DynamoDB: dynalite in-process on LevelDB under DATA_DIR, for `npm start` and the tests. Never bundled.
import dynalite from 'dynalite';
import db from 'dynalite/db';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

let patched = false;

/**
 * dynalite ignores ReturnValuesOnConditionCheckFailure; DynamoDB returns the old item with the failed condition.
 * Returning it here too makes the embedded engine cost what DynamoDB costs (no follow-up read on that path).
 */
function returnOldItemOnConditionFailure(): void {
  if (patched) return;
  patched = true;
  const check = db.checkConditional;
  db.checkConditional = (data, existing) => {
    const error = check(data, existing);
    if (error?.body && existing && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD') error.body.Item = existing;
    return error;
  };
}

export interface Engine {
  endpoint: string;
  close(): Promise<void>;
}

/** Starts dynalite on 127.0.0.1:port (0 picks a free one); `dataDir` persists it, undefined keeps it in memory. */
export async function startEngine(options: { port: number; dataDir?: string }): Promise<Engine> {
  returnOldItemOnConditionFailure();
  const server: Server = dynalite({ path: options.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}
