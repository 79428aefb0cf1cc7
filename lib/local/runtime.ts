// Local runtime: the engine named by AWS_ENDPOINT_URL_DYNAMODB, or the embedded one, with the table in place.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdirSync } from 'node:fs';
import { type Engine, startEngine } from './engine';
import { applyLocalDefaults, local } from './env';
import { ensureTable } from './tables';

export interface Runtime {
  endpoint: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** Starts the embedded engine unless AWS_ENDPOINT_URL_DYNAMODB names one, then creates the table if missing. */
export async function startRuntime(options: { port?: number; dataDir?: string | null } = {}): Promise<Runtime> {
  applyLocalDefaults();
  let engine: Engine | undefined;
  if (!process.env.AWS_ENDPOINT_URL_DYNAMODB) {
    const dir = options.dataDir === null ? ':memory:' : (options.dataDir ?? local.dataDir());
    const dataDir = dir === ':memory:' ? undefined : dir;
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    engine = await startEngine({ port: options.port ?? local.enginePort(), dataDir });
    process.env.AWS_ENDPOINT_URL_DYNAMODB = engine.endpoint;
  }
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const client = new DynamoDBClient({ endpoint });
  await ensureTable(client, process.env.TABLE_NAME as string);
  client.destroy();
  return { endpoint, embedded: engine !== undefined, close: async () => engine?.close() };
}
