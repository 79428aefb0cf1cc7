// The realtime WebSocket API's $connect, $disconnect and $default routes (README, Realtime).
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { encode } from '../lib/realtime/messages';
import { onConnect, onDisconnect, onMessage } from '../lib/realtime/protocol';

export const handler = async (event: APIGatewayProxyWebsocketEventV2): Promise<APIGatewayProxyResultV2> => {
  const { connectionId, routeKey } = event.requestContext;
  if (routeKey === '$connect') {
    await onConnect(connectionId);
    return { statusCode: 200 };
  }
  if (routeKey === '$disconnect') {
    await onDisconnect(connectionId);
    return { statusCode: 200 };
  }
  // The answer, if any, is the route's response: API Gateway sends it to the client as a frame.
  const answer = await onMessage(connectionId, event.body, event.isBase64Encoded);
  return answer ? { statusCode: 200, body: encode(answer) } : { statusCode: 200 };
};
