// Embedded DynamoDB: dynalite in-process on LevelDB under DATA_DIR, for `npm start` and the tests. Never bundled.
import Big from 'big.js';
import dynalite from 'dynalite';
import db from 'dynalite/db';
import putItemValidation from 'dynalite/validations/putItem';
import updateItemValidation from 'dynalite/validations/updateItem';
import deleteItemValidation from 'dynalite/validations/deleteItem';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordWrite } from './stream';
import { addTransactions } from './transactions';

let patched = false;

/** DynamoDB's Number rules, which dynalite checks on input but not on the results of `+` and `-`. */
function numberProblem(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const problem = numberProblem(v);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const attribute = value as { N?: string; L?: unknown[]; M?: Record<string, unknown> };
  if (attribute.N !== undefined) {
    const n = new Big(attribute.N);
    if (n.eq(0)) return undefined;
    if (n.e > 125) return 'Number overflow. Attempting to store a number with magnitude larger than supported range';
    if (n.e < -130) return 'Number underflow. Attempting to store a number with magnitude smaller than supported range';
    if (n.c.length > 38) return 'Attempting to store more than 38 significant digits in a Number';
    return undefined;
  }
  return numberProblem(attribute.L ?? Object.values(attribute.M ?? {}));
}

/**
 * Two differences from DynamoDB that matter here. dynalite ignores ReturnValuesOnConditionCheckFailure, while
 * DynamoDB returns the old item with the failed condition: returning it here too makes the embedded engine cost
 * what DynamoDB costs (no follow-up read on that path). And dynalite stores arithmetic results DynamoDB refuses.
 */
function returnOldItemOnConditionFailure(): void {
  if (patched) return;
  patched = true;
  // dynalite drops request fields its validation does not list, so the option has to be listed first.
  for (const validation of [putItemValidation, updateItemValidation, deleteItemValidation]) {
    validation.types.ReturnValuesOnConditionCheckFailure = { type: 'String', enum: ['ALL_OLD', 'NONE'] };
  }
  const check = db.checkConditional;
  db.checkConditional = (data, existing) => {
    const error = check(data, existing);
    if (error?.body && existing && data.ReturnValuesOnConditionCheckFailure === 'ALL_OLD') error.body.Item = existing;
    return error;
  };
  // updateItem hands the updated item here just before storing it: refuse what DynamoDB refuses, as DynamoDB does.
  const updateIndexes = db.updateIndexes;
  db.updateIndexes = (store, table, existing, item, cb) => {
    const problem = item ? numberProblem(Object.values(item)) : undefined;
    if (problem) return cb(db.validationError(problem));
    return updateIndexes(store, table, existing, item, (error) => {
      // The write is accepted: this is where DynamoDB Streams would record it.
      if (!error) recordWrite(table as never, existing, item);
      cb(error);
    });
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
  addTransactions(server);
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
