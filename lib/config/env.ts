// Environment: every variable the Lambdas read, in one place; a missing required one fails the cold start.

/** A variable's value; throws when it is unset or empty. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`environment variable ${name} is required`);
  return value;
}

/** A variable's value, or undefined when it is unset or empty. */
export function optionalEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The single DynamoDB table: projects' heads and grants, users, sessions, key records, content segments and their
 * pending-commit markers, requests' records, realtime connections, subscriptions and change logs, webhooks.
 */
export const tableName = () => requireEnv('TABLE_NAME');

/**
 * The most a segment's fragment may hold before a write cuts it (DynamoDB-counted bytes), leaving room in a 4 KB item
 * for its key, version, ETag and token slots: so a small write costs at most 4 write units. `SEGMENT_FRAGMENT_BYTES`
 * sets it lower for tests that want small contents spread over many segments.
 */
export const fragmentBytes = (): number => Number(optionalEnv('SEGMENT_FRAGMENT_BYTES') ?? 2900);

/**
 * The most JSON text one page of an export carries in its pieces (docs/design/backup.md §2), default 1 MiB, under a
 * response's 4 MiB with room to spare; `EXPORT_PAGE_BYTES` sets it lower for tests that want many pages.
 */
export const exportPageBytes = (): number => Number(optionalEnv('EXPORT_PAGE_BYTES') ?? 1024 * 1024);

/**
 * How old a pending-commit marker must be before the sweeper settles it (docs/design/storage.md §7.4): longer than
 * any request lives (the Lambda timeout, 10 s, which every DynamoDB call's deadline honours), with a wide margin.
 * `SWEEP_AFTER_MS` sets it lower for tests.
 */
export const sweepAfterMs = (): number => Number(optionalEnv('SWEEP_AFTER_MS') ?? 5 * 60 * 1000);

/** The stream consumer's batch size (stage parameter `streamBatchSize`, the event source's): a batch this full may
 * end inside a commit. */
export const streamBatchSize = (): number => {
  const n = Number(optionalEnv('STREAM_BATCH_SIZE') ?? 100);
  return Number.isSafeInteger(n) && n >= 1 ? n : 100;
};

/**
 * How many PostToConnection requests the realtime consumer has in flight at once (stage parameter
 * `realtimeSendConcurrency`): each counts against the account's API Gateway throttle (10,000 requests/s shared with
 * the HTTP API), so one project's large audience must not spend all of it (docs/design/realtime.md, section 8).
 */
export const realtimeSendConcurrency = (): number => {
  const n = Number(optionalEnv('REALTIME_SEND_CONCURRENCY') ?? 64);
  return Number.isSafeInteger(n) && n >= 1 ? n : 64;
};
