// Starts the API as its own process, as `npm start` does: the embedded engine in memory, or the engine
// AWS_ENDPOINT_URL_DYNAMODB names (DynamoDB Local), on free ports. Tests reach it over real HTTP.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_AUDIENCE, TEST_ISSUER, startJwks } from './jwks';
import { startLocalApi } from './local-api';

export default async function globalSetup(): Promise<void> {
  // Connected tests refuse to reach anything but a local engine.
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (endpoint && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\/?$/.test(endpoint)) {
    throw new Error(`integration tests only run against a local engine, not ${endpoint}`);
  }
  // A local identity provider: the API verifies JWTs against its JWKS; tests sign with the private keys.
  const jwks = await startJwks();
  const keysFile = join(tmpdir(), `content-api-test-keys-${process.pid}-${Date.now()}.json`);
  writeFileSync(keysFile, JSON.stringify(jwks.keys), { mode: 0o600 });
  process.env.TEST_JWT_KEYS_FILE = keysFile;
  process.env.TABLE_NAME = `content-api-test-${Date.now()}`;
  const ready = await startLocalApi({
    env: {
      ...process.env,
      PORT: '0',
      LOCAL_DYNAMODB_PORT: '0',
      DATA_DIR: ':memory:',
      CORS_ORIGINS: 'https://app.example.com',
      AUTH_JWKS_URL: jwks.url,
      AUTH_ISSUER: TEST_ISSUER,
      AUTH_AUDIENCE: TEST_AUDIENCE,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  process.env.TEST_API_URL = ready.url;
  process.env.AWS_ENDPOINT_URL_DYNAMODB = ready.endpoint;
  (globalThis as Record<string, unknown>).__contentApi = ready.child;
  (globalThis as Record<string, unknown>).__contentApiJwks = { server: jwks.server, keysFile };
}
