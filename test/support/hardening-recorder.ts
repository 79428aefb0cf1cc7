// A recording DynamoDB proxy for the fault tests, placed between the fault-injecting proxy and the engine: it sees
// every request that really reaches the engine and the engine's real answer (even when the fault proxy then loses
// it), so a test can tell exactly which content writes were applied, how often, and in which order.
import { type IncomingMessage, type Server, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One UpdateItem on a project item that the engine answered. */
export interface AppliedWrite {
  seq: number;
  /** True when the engine applied it (200); false when its condition failed or it was refused. */
  applied: boolean;
  status: number;
  /** The request token the service wrote into a token slot (also the new ETag), and the slot's number. */
  token?: string;
  slot?: number;
  pk?: string;
}

export interface Recorder {
  url: string;
  /** Every UpdateItem on a `P#` item the engine answered, in the order of its answers. */
  writes(): AppliedWrite[];
  /** Requests per operation that reached the engine. */
  counts(): Record<string, number>;
  reset(): void;
  close(): Promise<void>;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The token slot an UpdateItem writes (`#nK = :vJ` where #nK names rqN) and the token value it writes there. */
export function tokenOf(body: Record<string, any>): { token?: string; slot?: number; pk?: string } {
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (body.ExpressionAttributeValues ?? {}) as Record<string, { S?: string }>;
  const pk = (body.Key?.pk?.S as string | undefined) ?? undefined;
  for (const match of String(body.UpdateExpression ?? '').matchAll(/(#\w+) = (:\w+)/g)) {
    const attribute = names[match[1] as string];
    const slot = /^rq(\d+)$/.exec(attribute ?? '');
    if (slot) return { token: values[match[2] as string]?.S, slot: Number(slot[1]), pk };
  }
  return { pk };
}

export async function startRecorder(upstream: string): Promise<Recorder> {
  const target = new URL(upstream);
  let seq = 0;
  let writes: AppliedWrite[] = [];
  let counts: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? 'unknown';
      counts[operation] = (counts[operation] ?? 0) + 1;
      let parsed: Record<string, any> | undefined;
      if (operation === 'UpdateItem') {
        try {
          parsed = JSON.parse(body.toString('utf8')) as Record<string, any>;
        } catch {
          parsed = undefined;
        }
      }
      const upstreamReq = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (upstreamRes) => {
        void readAll(upstreamRes).then((answer) => {
          const status = upstreamRes.statusCode ?? 500;
          if (parsed && String(parsed.Key?.pk?.S ?? '').startsWith('P#')) {
            writes.push({ seq: ++seq, applied: status === 200, status, ...tokenOf(parsed) });
          }
          if (res.destroyed) return;
          res.writeHead(status, upstreamRes.headers);
          res.end(answer);
        });
      });
      upstreamReq.on('error', () => req.socket.destroy());
      upstreamReq.end(body);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    writes: () => [...writes],
    counts: () => ({ ...counts }),
    reset: () => {
      writes = [];
      counts = {};
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
