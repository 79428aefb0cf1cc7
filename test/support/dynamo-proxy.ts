// A DynamoDB proxy for tests and benchmarks: counts every request by operation and can inject faults, either
// before the engine sees a request or after it applied it (the answer is then lost). Loopback only. With
// `consumedCapacity`, it asks the engine for `ReturnConsumedCapacity: TOTAL` on every data-plane request (the JSON
// body is rewritten; the caller's code is unchanged) and sums the capacity the engine reports, per operation.
import {
  type IncomingMessage,
  type Server,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What to do to one request. `after` faults forward it first, so the engine applies it, then lose the answer;
 * `landed` faults lose it only when the engine answered with success (a refused condition's answer gets through).
 */
export type Fault =
  | { when: 'before'; kind: 'throttle' | 'internal' | 'reset' }
  | { when: 'before'; kind: 'delay'; ms: number }
  /** An answer no HTTP client may accept (Content-Length beside chunked Transfer-Encoding), written raw. */
  | { when: 'before'; kind: 'malformed' }
  | { when: 'after' | 'landed'; kind: 'reset' | 'internal' };

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
  /** Engine-reported capacity per operation since the last reset (only with the `consumedCapacity` option). */
  capacity(): Record<string, CapacityTotals>;
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

/** A 200 framed two ways at once (RFC 9112 §6.3: a client must treat it as an error), then the socket closes. */
function sendMalformed(req: IncomingMessage): void {
  const body = '{}';
  req.socket.end(
    'HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\n' +
      `content-length: ${body.length}\r\ntransfer-encoding: chunked\r\n\r\n` +
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
  );
}

export interface ProxyOptions {
  /** Sees every request the engine answered and the engine's real status, before any `after` fault loses it. */
  observe?: (request: ProxyRequest, status: number) => void;
  /** Add `ReturnConsumedCapacity: TOTAL` to every request that takes it and sum what the engine reports. */
  consumedCapacity?: boolean;
}

export interface CapacityTotals {
  /** Requests of this operation the engine answered. */
  requests: number;
  /** Of those, answers that reported no ConsumedCapacity (e.g. a refused condition on some engines). */
  unreported: number;
  readUnits: number;
  writeUnits: number;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/**
 * The request body with `ReturnConsumedCapacity: TOTAL` added, for operations that accept it (others, and a body
 * that already names a ReturnConsumedCapacity or is not a JSON object, are returned unchanged).
 */
export function withConsumedCapacity(operation: string, body: Buffer): Buffer {
  if (!READS.has(operation) && !WRITES.has(operation)) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return body;
  if ('ReturnConsumedCapacity' in parsed) return body;
  return Buffer.from(JSON.stringify({ ...parsed, ReturnConsumedCapacity: 'TOTAL' }), 'utf8');
}

/**
 * Read and write units an engine answer reports (`ConsumedCapacity`: one object, or a list per table for batches
 * and transactions). `ReadCapacityUnits`/`WriteCapacityUnits` are taken when present; otherwise `CapacityUnits`
 * counts as read units for reads and write units for writes. Undefined when the answer reports none.
 */
export function consumedUnits(
  operation: string,
  answer: Buffer | string,
): { readUnits: number; writeUnits: number } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof answer === 'string' ? answer : answer.toString('utf8'));
  } catch {
    return undefined;
  }
  const consumed = (parsed as { ConsumedCapacity?: unknown } | null)?.ConsumedCapacity;
  if (consumed === undefined || consumed === null) return undefined;
  const entries = (Array.isArray(consumed) ? consumed : [consumed]) as Array<Record<string, unknown>>;
  let readUnits = 0;
  let writeUnits = 0;
  for (const entry of entries) {
    const num = (field: string) => (typeof entry[field] === 'number' ? (entry[field] as number) : undefined);
    const read = num('ReadCapacityUnits');
    const write = num('WriteCapacityUnits');
    if (read !== undefined || write !== undefined) {
      readUnits += read ?? 0;
      writeUnits += write ?? 0;
    } else if (WRITES.has(operation)) writeUnits += num('CapacityUnits') ?? 0;
    else readUnits += num('CapacityUnits') ?? 0;
  }
  return { readUnits, writeUnits };
}

export async function startDynamoProxy(upstream: string, options: ProxyOptions = {}): Promise<DynamoProxy> {
  const target = new URL(upstream);
  let counts: Record<string, number> = {};
  let faults: Record<string, number> = {};
  let capacity: Record<string, CapacityTotals> = {};
  let decide: ((request: ProxyRequest) => Fault | undefined) | undefined;

  const server: Server = createServer((req, res) => {
    void (async () => {
      const received = await readAll(req);
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? 'unknown';
      const body = options.consumedCapacity ? withConsumedCapacity(operation, received) : received;
      const headers = body === received ? req.headers : { ...req.headers, 'content-length': String(body.byteLength) };
      counts[operation] = (counts[operation] ?? 0) + 1;
      const fault = decide?.({ operation, body });
      if (fault) faults[`${fault.when}:${fault.kind}`] = (faults[`${fault.when}:${fault.kind}`] ?? 0) + 1;
      if (fault?.when === 'before') {
        if (fault.kind === 'reset') return void req.socket.destroy();
        if (fault.kind === 'malformed') return void sendMalformed(req);
        if (fault.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
        else return sendError(res, fault.kind);
      }
      const upstreamReq = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
        (upstreamRes) => {
          void readAll(upstreamRes).then((answer) => {
            options.observe?.({ operation, body }, upstreamRes.statusCode ?? 500);
            if (options.consumedCapacity && (READS.has(operation) || WRITES.has(operation))) {
              const units = consumedUnits(operation, answer);
              const totals = (capacity[operation] ??= { requests: 0, unreported: 0, readUnits: 0, writeUnits: 0 });
              totals.requests += 1;
              if (units) {
                totals.readUnits += units.readUnits;
                totals.writeUnits += units.writeUnits;
              } else totals.unreported += 1;
            }
            const landed = (upstreamRes.statusCode ?? 500) < 300;
            if (fault?.when === 'after' || (fault?.when === 'landed' && landed)) {
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
    capacity: () => Object.fromEntries(Object.entries(capacity).map(([op, totals]) => [op, { ...totals }])),
    reset: () => {
      counts = {};
      faults = {};
      capacity = {};
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
