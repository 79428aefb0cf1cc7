// Local defaults: what `npm start`, the admin CLI and the tests assume when nothing else is configured.
import { join } from 'node:path';

/** npm runs every script from the package root. */
export const ROOT = process.cwd();

export const local = {
  port: () => Number(process.env.PORT ?? 3000),
  /** The interface the API listens on: loopback unless HOST says otherwise (0.0.0.0: a phone on the LAN, a container). */
  host: () => process.env.HOST || '127.0.0.1',
  enginePort: () => Number(process.env.LOCAL_DYNAMODB_PORT ?? 8000),
  /** `:memory:` keeps the embedded engine in memory (tests). */
  dataDir: () => process.env.DATA_DIR ?? join(ROOT, '.data'),
  /** How often `npm start` runs the sweeper in-process (serverless.yml: every 15 minutes). */
  sweepIntervalMs: () => Number(process.env.SWEEP_INTERVAL_MS ?? 3 * 60 * 1000),
  corsOrigins: () =>
    (process.env.CORS_ORIGINS ?? '*')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
};

/** Region, dummy credentials and the table name; set before any handler module builds its client. */
export function applyLocalDefaults(): void {
  process.env.AWS_REGION ??= 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  process.env.TABLE_NAME ??= 'content-api';
  // Webhooks may go to loopback (and over http there) so local receivers work; never set in serverless.yml.
  process.env.WEBHOOKS_ALLOW_LOOPBACK ??= 'true';
  // The SDK warns on every client when it runs on a Node it will stop supporting; the scripts run Node 22 or 24 (.nvmrc), Lambda Node 24.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
