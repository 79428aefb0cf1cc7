// Starts three API processes over one engine (test/support/servers.ts) with 256-byte segments, so contents chunk
// and bucket: the embedded engine served by the first, or DynamoDB Local when AWS_ENDPOINT_URL_DYNAMODB names it.
import { startServers } from '../support/servers';

export default async function globalSetup(): Promise<void> {
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (endpoint && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\/?$/.test(endpoint)) {
    throw new Error(`the multi-process suite only runs against a local engine, not ${endpoint}`);
  }
  process.env.TABLE_NAME = `content-api-mp-${Date.now()}`;
  process.env.SEGMENT_FRAGMENT_BYTES ??= '256';
  const servers = await startServers({
    count: Number(process.env.MULTIPROCESS_SERVERS ?? 3),
    table: process.env.TABLE_NAME,
    env: { CORS_ORIGINS: 'https://app.example.com' },
  });
  process.env.MULTIPROCESS_URLS = servers.urls.join(' ');
  // The first process also serves the WebSocket API (test/support/realtime.ts connects to TEST_API_URL).
  process.env.TEST_API_URL = servers.urls[0];
  process.env.AWS_ENDPOINT_URL_DYNAMODB = servers.endpoint;
  (globalThis as Record<string, unknown>).__multiprocessServers = servers;
}
