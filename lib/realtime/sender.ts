// Sender: one message to one WebSocket connection through API Gateway's management API (PostToConnection). Locally
// the same call reaches the local server's `POST /@connections/{id}` (REALTIME_ENDPOINT names either).
import {
  ApiGatewayManagementApiClient,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { requireEnv } from '../config/env';

let client: ApiGatewayManagementApiClient | undefined;
const managementApi = () => {
  client ??= new ApiGatewayManagementApiClient({ endpoint: requireEnv('REALTIME_ENDPOINT') });
  return client;
};

/** Sends one text frame; 'gone' when the connection no longer exists (410), so the caller forgets it. */
export async function sendTo(connectionId: string, text: string): Promise<'sent' | 'gone'> {
  try {
    await managementApi().send(
      new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(text, 'utf8') }),
    );
    return 'sent';
  } catch (error) {
    if (
      error instanceof GoneException ||
      (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410
    ) {
      return 'gone';
    }
    throw error;
  }
}
