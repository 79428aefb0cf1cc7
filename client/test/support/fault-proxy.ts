// An HTTP proxy between the client and the local API that can spoil answers: forward a request and then cut the
// connection (the server applied it, the client never hears), or answer a 503 itself without forwarding.
import { type IncomingMessage, type Server, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Spoil = 'lose-answer' | 'busy' | undefined;

export interface FaultProxy {
  url: string;
  /** Requests seen, in order: method, path and the Idempotency-Key they carried. */
  seen: Array<{ method: string; path: string; idempotencyKey: string | undefined; spoiled: Spoil }>;
  /** Decides per request (by its 0-based number) what to spoil. */
  spoil(decide: (n: number, req: IncomingMessage) => Spoil): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const seen: FaultProxy['seen'] = [];
  let decide: (n: number, req: IncomingMessage) => Spoil = () => undefined;
  const server: Server = createServer((req, res) => {
    const spoiled = decide(seen.length, req);
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      spoiled,
    });
    if (spoiled === 'busy') {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify({ message: 'The service is busy; retry shortly', code: 'SERVICE_UNAVAILABLE' }));
      return;
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          // The server has answered, so the write landed; the client gets a reset instead.
          if (spoiled === 'lose-answer') return void req.socket.destroy();
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    forward.on('error', () => req.socket.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    spoil: (d) => {
      decide = d;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
