// DynamoDB clients: built once per process; endpoint from AWS_ENDPOINT_URL_DYNAMODB, bounded retries and timeouts.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import { optionalEnv } from '../config/env';
import { honourDeadline } from './deadline';
import { currentUsage, recordCall } from './usage';

/** The operations that take ReturnConsumedCapacity (the rest, such as CreateTable, are left as they are). */
const REPORTS_CAPACITY = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
  'ExecuteStatement',
  'BatchExecuteStatement',
  'ExecuteTransaction',
]);

type Next = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>;

/**
 * SDK middleware: asks for the capacity every request consumes (`ReturnConsumedCapacity: TOTAL`, free on DynamoDB)
 * and records each call, its retries and that capacity in the current request's usage (lib/dynamo/usage.ts), which
 * the request's metrics publish. On the client, so every command is covered: lib-dynamodb's, Powertools
 * idempotency's, batches and transactions alike.
 */
const measureCapacity = (next: Next, context: { commandName?: string }) => {
  const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
  const reports = REPORTS_CAPACITY.has(operation);
  return async (args: { input: Record<string, unknown> }) => {
    if (!reports) return next(args);
    args.input.ReturnConsumedCapacity ??= 'TOTAL';
    const usage = currentUsage();
    try {
      const result = await next(args);
      recordCall(usage, operation, result.output, undefined);
      return result;
    } catch (error) {
      recordCall(usage, operation, undefined, error);
      throw error;
    }
  };
};

/** One connection pool for both clients below. */
const requestHandler = new NodeHttpHandler({
  connectionTimeout: 1000,
  // DYNAMODB_REQUEST_TIMEOUT_MS: for a slow local engine only (scripts/dynamodb-local.mjs sets it); Lambdas keep 3 s.
  requestTimeout: Number(optionalEnv('DYNAMODB_REQUEST_TIMEOUT_MS') ?? 3000),
  // Without this the handler only logs a warning and keeps waiting.
  throwOnRequestTimeout: true,
  httpsAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
  httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
});

function createClient(cacheMiddleware: boolean): DynamoDBClient {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_DYNAMODB');
  const client = new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    // Three attempts with the SDK's backoff; every write carries a request token, so a retry never applies twice.
    maxAttempts: 3,
    requestHandler,
    cacheMiddleware,
  });
  // The SDK's logger middleware builds a redacted copy of every input and output for its logger even when there is
  // none (the default no-op logger): a full walk of the request per call, for nothing. These clients log nothing.
  client.middlewareStack.remove('loggerMiddleware');
  // Every call honours the request's deadline, so a slow DynamoDB becomes a 503 before Lambda's timeout, never a
  // timeout.
  client.middlewareStack.add(honourDeadline as never, { step: 'initialize', name: 'requestDeadline' });
  client.middlewareStack.add(measureCapacity as never, { step: 'initialize', name: 'consumedCapacity' });
  return client;
}

/**
 * Content reads and writes, key checks and Powertools idempotency. `cacheMiddleware` makes the client resolve its
 * middleware chain once per command class instead of on every send (the SDK otherwise rebuilds and sorts it each time:
 * about a tenth of a small request's time). The price: middleware added to this client after its first use of a
 * command class is not seen by that class, so everything that adds middleware does so before the first request.
 */
export const dynamo = createClient(true);

/**
 * For flat records (users, sessions, key records); content goes through lib/dynamo/attributes instead. lib-dynamodb
 * marshals through per-command middleware, which a cached chain would freeze, so it refuses cacheMiddleware: it wraps
 * a client of its own (the same connections).
 */
export const documents = DynamoDBDocumentClient.from(createClient(false), {
  marshallOptions: { removeUndefinedValues: true },
  unmarshallOptions: { wrapNumbers: false },
});
