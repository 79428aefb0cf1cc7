// A DynamoDB proxy for tests and benchmarks: counts every request by operation and can inject faults, either
// before the engine sees a request or after it applied it (the answer is then lost). Loopback only.
import {
  type IncomingMessage,
  type Server,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** What to do to one request. `after` faults forward it first, so the engine applies it, then lose the answer. */
export type Fault =
  | { when: 'before'; kind: 'throttle' | 'internal' | 'reset' }
  | { when: 'before'; kind: 'delay'; ms: number }
  | { when: 'after'; kind: 'reset' | 'internal' };

export interface ProxyRequest {
  /** The operation, e.g. `UpdateItem` (from X-Amz-Target). */
  operation: string;
  body: Buffer;
}

export interface DynamoProxy {
  url: string;
  /** Requests seen per operation since the last reset. */
  counts(): Record<string, number>;
  /** Faults injected per `when:kind` since the last reset. */
  faults(): Record<string, number>;
  reset(): void;
  /** Decides a fault for each request; return undefined to pass it through. */
  setFaults(decide: ((request: ProxyRequest) => Fault | undefined) | undefined): void;
  close(): Promise<void>;
}

const ERRORS = {
  throttle: {
    status: 400,
    type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
  internal: {
    status: 500,
    type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
    message: 'Internal server error',
  },
};

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, kind: 'throttle' | 'internal'): void {
  const error = ERRORS[kind];
  const body = JSON.stringify({ __type: error.type, message: error.message });
  res.writeHead(error.status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export interface ProxyOptions {
  /** Sees every request the engine answered and the engine's real status, before any `after` fault loses it. */
  observe?: (request: ProxyRequest, status: number) => void;
}

export async function startDynamoProxy(upstream: string, options: ProxyOptions = {}): Promise<DynamoProxy> {
  const target = new URL(upstream);
  let counts: Record<string, number> = {};
  let faults: Record<string, number> = {};
  let decide: ((request: ProxyRequest) => Fault | undefined) | undefined;

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? 'unknown';
      counts[operation] = (counts[operation] ?? 0) + 1;
      const fault = decide?.({ operation, body });
      if (fault) faults[`${fault.when}:${fault.kind}`] = (faults[`${fault.when}:${fault.kind}`] ?? 0) + 1;
      if (fault?.when === 'before') {
        if (fault.kind === 'reset') return void req.socket.destroy();
        if (fault.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
        else return sendError(res, fault.kind);
      }
      const upstreamReq = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (upstreamRes) => {
          void readAll(upstreamRes).then((answer) => {
            options.observe?.({ operation, body }, upstreamRes.statusCode ?? 500);
            if (fault?.when === 'after') {
              // The engine has applied the request; its answer never reaches the client.
              if (fault.kind === 'reset') return void req.socket.destroy();
              return sendError(res, fault.kind);
            }
            if (res.destroyed) return;
            res.writeHead(upstreamRes.statusCode ?? 500, upstreamRes.headers);
            res.end(answer);
          });
        },
      );
      upstreamReq.on('error', () => req.socket.destroy());
      upstreamReq.end(body);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    faults: () => ({ ...faults }),
    reset: () => {
      counts = {};
      faults = {};
    },
    setFaults: (fn) => {
      decide = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
