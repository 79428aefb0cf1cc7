// Starts the API as its own process, as `npm start` does: the embedded engine in memory, or the engine
// AWS_ENDPOINT_URL_DYNAMODB names (DynamoDB Local), on free ports. Tests reach it over real HTTP.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_AUDIENCE, TEST_ISSUER, startJwks } from './jwks';

export default async function globalSetup(): Promise<void> {
  // Connected tests refuse to reach anything but a local engine.
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (endpoint && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\/?$/.test(endpoint)) {
    throw new Error(`integration tests only run against a local engine, not ${endpoint}`);
  }
  const readyFile = join(tmpdir(), `content-api-test-${process.pid}-${Date.now()}.json`);
  // A local identity provider: the API verifies JWTs against its JWKS; tests sign with the private keys.
  const jwks = await startJwks();
  const keysFile = join(tmpdir(), `content-api-test-keys-${process.pid}-${Date.now()}.json`);
  writeFileSync(keysFile, JSON.stringify(jwks.keys), { mode: 0o600 });
  process.env.TEST_JWT_KEYS_FILE = keysFile;
  process.env.TABLE_NAME = `content-api-test-${Date.now()}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/local/start.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      LOCAL_DYNAMODB_PORT: '0',
      DATA_DIR: ':memory:',
      CORS_ORIGINS: 'https://app.example.com',
      LOCAL_READY_FILE: readyFile,
      AUTH_JWKS_URL: jwks.url,
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  while (!existsSync(readyFile)) {
    if (child.exitCode !== null) throw new Error(`the local API exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('the local API did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as { url: string; endpoint: string };
  rmSync(readyFile, { force: true });
  process.env.TEST_API_URL = ready.url;
  process.env.AWS_ENDPOINT_URL_DYNAMODB = ready.endpoint;
  (globalThis as Record<string, unknown>).__contentApi = child;
  (globalThis as Record<string, unknown>).__contentApiJwks = { server: jwks.server, keysFile };
}
