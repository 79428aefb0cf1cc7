// The floor's client (part 2 and the HTTP floor's relay): a bare SDK client with the transport settings of
// lib/dynamo/client.ts (retries, timeouts, keep-alive agents), but not its tuning of the SDK itself (the middleware
// cache, no logger middleware): those are part of what the service does to come close to the floor, so the floor
// does not get them.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from 'node:http';
import { Agent } from 'node:https';

export function floorClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB,
    maxAttempts: 3,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: 1000,
      requestTimeout: 3000,
      httpsAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
    }),
  });
}
