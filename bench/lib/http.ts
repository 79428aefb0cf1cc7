// A small keep-alive HTTP client (node:http): less client-side work per request than fetch, so latency over the
// local server measures the server, not the client.
import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export interface HttpClient {
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  close(): void;
}

export function httpClient(baseUrl: string, maxSockets = 1): HttpClient {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets });
  return {
    call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let payload: string | undefined;
      if (options.body !== undefined) {
        payload = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
        headers['content-length'] = String(Buffer.byteLength(payload));
      }
      return new Promise<Reply>((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path, method, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = text === '' ? undefined : JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
