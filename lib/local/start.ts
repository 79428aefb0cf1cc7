// `npm start`: the embedded engine (or AWS_ENDPOINT_URL_DYNAMODB), the table, a demo project, and the API on PORT.
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { local } from './env';
import { readableRequestLines } from './request-line';
import { startLocalIdentityProvider } from './identity';
import { startRuntime } from './runtime';
import { installLocalWebhookQueue } from './webhook-queue';
import { REALTIME_PATH, startStreamConsumer } from './realtime';
import { hostConcurrentInvocations, readServerlessConfig, startServer } from './server';

interface Demo {
  username: string;
  projectSlug: string;
  key: string;
}

/** First start: a demo user, project and API key, remembered in the data folder so every start can print them. */
async function ensureDemo(): Promise<Demo> {
  const inMemory = local.dataDir() === ':memory:';
  const file = join(local.dataDir(), 'demo.json');
  if (!inMemory && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Demo;
  const { createApiKey, createProject, createUser, AccountError } = await import('../store/accounts');
  const demo = { username: '@demo', slug: 'site' };
  for (const step of [() => createUser(demo.username), () => createProject(demo)]) {
    try {
      await step();
    } catch (error) {
      if (!(error instanceof AccountError && error.code === 'EXISTS')) throw error;
    }
  }
  const { key } = await createApiKey(demo, { name: 'demo', permissions: ['content:read', 'content:write'] });
  const saved: Demo = { username: demo.username, projectSlug: demo.slug, key };
  if (!inMemory) writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  return saved;
}

/**
 * One process hosts every function here, where Lambda gives each invocation its own fate: an error nothing awaited
 * (a background poll, a detached promise) is logged as an ERROR line and the server keeps serving the others, instead
 * of Node ending the process and every request and connection with it.
 */
function survivePerInvocationFailures(): void {
  const report = (message: string) => (error: unknown) =>
    console.error(
      JSON.stringify({
        level: 'ERROR',
        message,
        error:
          error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
      }),
    );
  process.on('unhandledRejection', report('unhandled rejection'));
  process.on('uncaughtException', report('uncaught exception'));
}

/** How long a stopping process waits for the API requests in flight (under the 5 s before a test's SIGKILL). */
const API_DRAIN_MS = 2_000;

async function main(): Promise<void> {
  survivePerInvocationFailures();
  const invocations = await hostConcurrentInvocations();
  const runtime = await startRuntime();
  // Before the server answers anything: the API reads its provider's settings with the first JWT.
  const identity = await startLocalIdentityProvider();
  const demo = await ensureDemo();
  // Webhook deliveries queued in this process go through the in-process queue to the sender's code.
  installLocalWebhookQueue((outcome) =>
    console.log(
      readableRequestLines()
        ? `webhook ${outcome.webhook} revision ${outcome.revision} attempt ${outcome.attempt}: ${outcome.outcome} (${outcome.result})`
        : JSON.stringify({ message: 'webhook delivery', ...outcome }),
    ),
  );
  const { url, routes, requests } = await startServer({
    port: local.port(),
    host: local.host(),
    corsOrigins: local.corsOrigins(),
  });
  // The sweeper (serverless.yml runs it every 15 minutes): here every few minutes, the same handler, in-process.
  const { handler: sweep } = await import('../../functions/sweep');
  const sweeping = setInterval(() => {
    // An invocation of its own, as Lambda runs it (Powertools keeps its log and metric context per invocation).
    const invocation = { [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: randomUUID() };
    invocations
      .run(invocation, () => sweep())
      .then(({ markers, abandoned, deleted }) => {
        if (readableRequestLines() && markers > 0)
          console.log(
            `sweep: ${markers} interrupted changes settled (${abandoned} never committed), ${deleted} items deleted`,
          );
      })
      .catch((error: unknown) => console.error(`sweep failed: ${error instanceof Error ? error.message : error}`));
  }, local.sweepIntervalMs());
  sweeping.unref();
  // The stream consumer posts to connections through this server's management API, as it would through API Gateway's.
  process.env.REALTIME_ENDPOINT ??= url;
  // LOCAL_STREAM_CONSUMER=off: another local process consumes the table's stream (AWS runs one consumer per shard;
  // test/support/servers.ts starts several API processes over one table).
  const stopStream =
    process.env.LOCAL_STREAM_CONSUMER === 'off'
      ? undefined
      : await startStreamConsumer(readServerlessConfig().functions, {
          embedded: runtime.embedded,
          endpoint: runtime.endpoint,
          tableName: process.env.TABLE_NAME as string,
        });
  const base = `${url}/api/${demo.username}/${demo.projectSlug}/content`;
  console.log(
    `DynamoDB: ${runtime.embedded ? `embedded dynalite at ${runtime.endpoint}, data in ${local.dataDir()}` : runtime.endpoint}`,
  );
  const everywhere = ['0.0.0.0', '::'].includes(local.host());
  console.log(
    `API: ${url} (${routes.length} routes from serverless.yml)${everywhere ? `, listening on every interface (HOST=${local.host()})` : ''}`,
  );
  console.log(`API reference (try requests with your key): ${url}/ (OpenAPI: ${url}/openapi.json)`);
  console.log(`Realtime (WebSocket): ${url.replace(/^http/, 'ws')}${REALTIME_PATH}`);
  if (identity) console.log(`Local identity provider: ${identity.url} (end-user JWTs: npm run -s admin -- jwt @alice)`);
  console.log(`Demo project ${demo.username}/${demo.projectSlug}, API key ${demo.key}\n`);
  console.log('Try:');
  console.log(
    `curl -s -X POST ${base}/set -H 'Authorization: Bearer ${demo.key}' -H 'Content-Type: application/json' -d '{"path":"data.greeting","value":"hello"}'`,
  );
  console.log(`curl -s ${base} -H 'Authorization: Bearer ${demo.key}'`);
  // For tools that start this process (the tests): where the API and the engine are, once both are ready.
  const readyFile = process.env.LOCAL_READY_FILE;
  if (readyFile) writeFileSync(readyFile, JSON.stringify({ url, endpoint: runtime.endpoint, pid: process.pid }));
  // The API first (its requests answered, later ones refused with a 503), then the engine their writes went to.
  const stop = () => {
    void requests
      .close({ graceMs: API_DRAIN_MS, untilClosed: false })
      .then(() => stopStream?.())
      .then(() => runtime.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
