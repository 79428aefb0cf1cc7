// DynamoDB clients: built once per process; endpoint from AWS_ENDPOINT_URL_DYNAMODB, bounded retries and timeouts.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import { optionalEnv } from '../config/env';
import { honourDeadline } from './deadline';

function createClient(): DynamoDBClient {
  const endpoint = optionalEnv('AWS_ENDPOINT_URL_DYNAMODB');
  return new DynamoDBClient({
    ...(endpoint ? { endpoint } : {}),
    // Three attempts with the SDK's backoff; every write carries a request token, so a retry never applies twice.
    maxAttempts: 3,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: 1000,
      requestTimeout: 3000,
      // Without this the handler only logs a warning and keeps waiting.
      throwOnRequestTimeout: true,
      httpsAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
    }),
  });
}

export const dynamo = createClient();
// The SDK's logger middleware builds a redacted copy of every input and output for its logger even when there is
// none (the default no-op logger): a full walk of the request per call, for nothing. This client logs nothing.
dynamo.middlewareStack.remove('loggerMiddleware');
// Every call through this client (the document client and Powertools idempotency share it) honours the request's
// deadline, so a slow DynamoDB becomes a 503 before Lambda's timeout, never a timeout.
dynamo.middlewareStack.add(honourDeadline as never, { step: 'initialize', name: 'requestDeadline' });

/** For flat records (users, sessions, key records); content goes through lib/dynamo/attributes instead. */
export const documents = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true },
  unmarshallOptions: { wrapNumbers: false },
});
