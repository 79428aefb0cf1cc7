// Local realtime: the WebSocket API at ws://host/realtime and its management API (`POST /@connections/{id}`), served
// by the same handlers serverless.yml names, with API-Gateway-shaped events; and the stream consumer fed by the
// engine's change stream (lib/local/stream.ts), one batch at a time in stream order.
import type {
  APIGatewayProxyResultV2,
  APIGatewayProxyWebsocketEventV2,
  Context,
  DynamoDBBatchResponse,
  DynamoDBStreamEvent,
} from 'aws-lambda';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { WebSocket, WebSocketServer } from 'ws';
import { lambdaContext, loadHandler } from './lambda';
import { local } from './env';
import { streamBatchSize } from '../config/env';
import { type ChangeRecord, listenDynamoDbLocal, listenEmbedded } from './stream';

type SocketHandler = (event: APIGatewayProxyWebsocketEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;
type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<unknown>;

interface FunctionConfig {
  handler: string;
  events?: Array<{ websocket?: { route: string } | string; stream?: unknown }>;
}

/** The path the local server serves the WebSocket API at. */
export const REALTIME_PATH = '/realtime';
/** API Gateway's largest message; a larger client frame gets an error frame here (API Gateway closes). */
const MAX_FRAME_BYTES = 128 * 1024;
/** Frames past this are refused by `ws` itself (the connection closes with 1009). */
const MAX_PAYLOAD_BYTES = 1024 * 1024;
/**
 * Frames waiting for a client that does not read them, at most (`ws`'s own buffer, past what the kernel's socket
 * buffers hold): a post that would pass it closes the connection and is answered 410 Gone, so the consumer forgets
 * the connection and its subscriptions; the client reconnects and resumes with `since`. API Gateway documents no
 * such buffer; it drops a connection it cannot deliver to, which is what the client sees here too.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

const findFunction = (functions: Record<string, FunctionConfig>, kind: 'websocket' | 'stream') =>
  Object.entries(functions).find(([, fn]) => fn.events?.some((e) => e[kind] !== undefined));

export interface LocalRealtime {
  /** Answers the management API's requests (true when it did). */
  serve(method: string, pathname: string, req: IncomingMessage, res: ServerResponse): boolean;
  close(): Promise<void>;
}

/** Serves the WebSocket API on `server` and the management API through `serve`. */
export async function attachRealtime(
  server: Server,
  functions: Record<string, FunctionConfig>,
): Promise<LocalRealtime | undefined> {
  const found = findFunction(functions, 'websocket');
  if (!found) return undefined;
  const [functionName, config] = found;
  const handler = await loadHandler<SocketHandler>(config.handler);
  const sockets = new Map<string, WebSocket>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD_BYTES });

  const eventFor = (
    connectionId: string,
    routeKey: string,
    req: IncomingMessage,
    body?: string,
  ): APIGatewayProxyWebsocketEventV2 =>
    ({
      requestContext: {
        routeKey,
        eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
        connectionId,
        domainName: req.headers.host ?? '127.0.0.1',
        stage: '$default',
        apiId: 'local',
        requestId: randomUUID(),
        requestTimeEpoch: Date.now(),
        connectedAt: Date.now(),
        messageDirection: 'IN',
        extendedRequestId: randomUUID(),
        messageId: randomUUID(),
      },
      body,
      isBase64Encoded: false,
    }) as unknown as APIGatewayProxyWebsocketEventV2;

  const invoke = async (event: APIGatewayProxyWebsocketEventV2) => {
    try {
      return await handler(event, lambdaContext(functionName, 10));
    } catch (error) {
      console.error(JSON.stringify({ level: 'ERROR', message: 'realtime handler failed', error: String(error) }));
      return { statusCode: 500 };
    }
  };
  const errorFrame = (code: string, message: string) => JSON.stringify({ type: 'error', code, message });

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    // API Gateway's connection ids are 16 base64 characters.
    const connectionId = randomBytes(12).toString('base64');
    sockets.set(connectionId, ws);
    const ready = invoke(eventFor(connectionId, '$connect', req)).then((result) => {
      const status = typeof result === 'object' ? result.statusCode : 200;
      if (status !== 200) ws.close(1011);
      return status === 200;
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      void ready.then(async (open) => {
        if (!open) return;
        if (isBinary) return ws.send(errorFrame('INVALID_MESSAGE', 'a message is a JSON object in a text frame'));
        if (data.length > MAX_FRAME_BYTES) {
          return ws.send(
            errorFrame('MESSAGE_TOO_LARGE', `a realtime message must be at most ${MAX_FRAME_BYTES} bytes`),
          );
        }
        const result = await invoke(eventFor(connectionId, '$default', req, data.toString('utf8')));
        const body = typeof result === 'object' ? result.body : result;
        if (typeof body === 'string' && body.length > 0 && ws.readyState === WebSocket.OPEN) ws.send(body);
      });
    });
    ws.on('close', () => {
      sockets.delete(connectionId);
      void ready.then(() => invoke(eventFor(connectionId, '$disconnect', req)));
    });
    ws.on('error', () => ws.terminate());
  });

  server.on('upgrade', (req, socket, head) => {
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== REALTIME_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  const CONNECTIONS = /^\/@connections\/([^/]+)$/;
  return {
    serve(method, pathname, req, res) {
      const match = CONNECTIONS.exec(pathname);
      if (!match) return false;
      const id = decodeURIComponent(match[1] as string);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const ws = sockets.get(id);
        const body = Buffer.concat(chunks);
        if (ws && method === 'POST' && ws.bufferedAmount + body.length > MAX_BUFFERED_BYTES) {
          // A reader that stopped reading: no close handshake can reach it, so the socket is dropped.
          ws.terminate();
        }
        const gone = !ws || ws.readyState !== WebSocket.OPEN;
        if (gone) {
          // The SDK reads the error's type from this header: GoneException.
          res.writeHead(410, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'GoneException' });
          res.end(JSON.stringify({ message: 'Gone' }));
          return;
        }
        if (method === 'DELETE') ws.close(1000);
        else if (method === 'POST') ws.send(body.toString('utf8'));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{}');
      });
      return true;
    },
    async close() {
      for (const ws of sockets.values()) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/**
 * Feeds the stream function's handler with the engine's records: the embedded engine's own, or DynamoDB Local's
 * real stream when AWS_ENDPOINT_URL_DYNAMODB names it. Batches run one at a time, in order; a failed batch is logged
 * and dropped (Lambda would retry it).
 */
export async function startStreamConsumer(
  functions: Record<string, FunctionConfig>,
  options: { embedded: boolean; endpoint: string; tableName: string },
): Promise<(() => void) | undefined> {
  const found = findFunction(functions, 'stream');
  if (!found) return undefined;
  const [functionName, config] = found;
  const handler = await loadHandler<StreamHandler>(config.handler);
  const pending: ChangeRecord[] = [];
  let running = false;
  const drain = async () => {
    if (running) return;
    running = true;
    while (pending.length > 0) {
      const Records = pending.splice(0, streamBatchSize());
      const lag = local.streamLagMs();
      if (lag > 0) await sleep(lag);
      try {
        const answer = (await handler({ Records }, lambdaContext(functionName, 10))) as
          | DynamoDBBatchResponse
          | undefined;
        // A partial batch response: as the event source does, the records from the first failed one come again,
        // ahead of the rest (a commit cut at the batch's end, handed over whole next time).
        const failed = answer?.batchItemFailures?.[0]?.itemIdentifier;
        const from = Records.findIndex((r) => r.dynamodb?.SequenceNumber === failed);
        if (failed !== undefined && from >= 0) pending.unshift(...Records.slice(from));
      } catch (error) {
        console.error(JSON.stringify({ level: 'ERROR', message: 'stream handler failed', error: String(error) }));
      }
    }
    running = false;
  };
  const table = `table/${options.tableName}/`;
  const listener = (records: ChangeRecord[]) => {
    pending.push(...records.filter((r) => r.eventSourceARN?.includes(table)));
    void drain();
  };
  if (options.embedded) return listenEmbedded(listener);
  const client = new DynamoDBClient({ endpoint: options.endpoint });
  try {
    const stop = await listenDynamoDbLocal(client, options.tableName, listener, {
      pollMs: 10,
      onError: (error) =>
        console.error(JSON.stringify({ level: 'ERROR', message: 'stream poll failed', error: String(error) })),
    });
    return () => {
      stop();
      client.destroy();
    };
  } catch (error) {
    // An engine without Streams (dynalite in another process): the API works, realtime delivers nothing. Said on
    // stdout with the other startup lines (stderr carries only JSON log lines).
    client.destroy();
    console.log(
      `Realtime: no change stream at ${options.endpoint} (${(error as Error).message}); changes are not delivered`,
    );
    return undefined;
  }
}
