// Sender: one message to one WebSocket connection through API Gateway's management API (PostToConnection): a POST of
// the frame to `${REALTIME_ENDPOINT}/@connections/{id}`, signed with the function's credentials (sigv4.ts) and sent on
// a keep-alive connection, as many sockets as the consumer has posts in flight. Locally the same request reaches the
// local server's `POST /@connections/{id}` (REALTIME_ENDPOINT names either).
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { optionalEnv, realtimeSendConcurrency, requireEnv } from '../config/env';
import { type Credentials, signRequest } from './sigv4';

/** Attempts of one post that meets a throttle (429), a failing service (5xx) or no answer, as the SDK made them. */
const ATTEMPTS = 3;
/** A post's deadline (ms), connecting included. */
const POST_TIMEOUT_MS = 3000;

interface Endpoint {
  host: string;
  /** The stage's path (`/prod`), or '' locally. */
  base: string;
  send: typeof httpRequest;
  agent: HttpAgent;
  url: URL;
}

let endpoint: Endpoint | undefined;
function endpointOf(): Endpoint {
  if (endpoint) return endpoint;
  const url = new URL(requireEnv('REALTIME_ENDPOINT'));
  const secure = url.protocol === 'https:';
  const options = { keepAlive: true, maxSockets: realtimeSendConcurrency() };
  endpoint = {
    host: url.host,
    base: url.pathname.replace(/\/+$/, ''),
    send: secure ? httpsRequest : httpRequest,
    agent: secure ? new HttpsAgent(options) : new HttpAgent(options),
    url,
  };
  return endpoint;
}

/** The function's credentials, read once: Lambda sets them for the sandbox's life (one object, so sigv4.ts keeps its key). */
let credentials: Credentials | undefined;
const functionCredentials = (): Credentials =>
  (credentials ??= {
    accessKeyId: requireEnv('AWS_ACCESS_KEY_ID'),
    secretAccessKey: requireEnv('AWS_SECRET_ACCESS_KEY'),
    sessionToken: optionalEnv('AWS_SESSION_TOKEN'),
  });

/** One POST: the answer's status, or a thrown error when none came. */
function post(target: Endpoint, path: string, body: Buffer): Promise<number> {
  const headers = signRequest({
    method: 'POST',
    host: target.host,
    path,
    body,
    region: optionalEnv('AWS_REGION') ?? 'us-east-1',
    service: 'execute-api',
    credentials: functionCredentials(),
    now: new Date(),
  });
  return new Promise((resolve, reject) => {
    const req = target.send(
      {
        protocol: target.url.protocol,
        hostname: target.url.hostname,
        port: target.url.port,
        method: 'POST',
        path,
        agent: target.agent,
        timeout: POST_TIMEOUT_MS,
        headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': body.length },
      },
      (res: IncomingMessage) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from the management API within ${POST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends one text frame; 'gone' when the connection no longer exists (410), so the caller forgets it. */
export async function sendTo(connectionId: string, text: string): Promise<'sent' | 'gone'> {
  const target = endpointOf();
  const path = `${target.base}/@connections/${encodeURIComponent(connectionId)}`;
  const body = Buffer.from(text, 'utf8');
  for (let attempt = 1; ; attempt++) {
    let status: number | undefined;
    let failure: unknown;
    try {
      status = await post(target, path, body);
    } catch (error) {
      failure = error;
    }
    if (status === 410) return 'gone';
    if (status !== undefined && status >= 200 && status < 300) return 'sent';
    // Worth another attempt: throttled, the service failing, or no answer; any other refusal would come again.
    const retried = status === undefined || status === 429 || status >= 500;
    const why = status === undefined ? `no answer: ${String(failure)}` : `PostToConnection answered ${status}`;
    if (!retried || attempt >= ATTEMPTS) throw new Error(`${why} (attempt ${attempt})`);
    // Full jitter up to 100 ms, then 200 ms: a throttled burst spreads out.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** (attempt - 1)));
  }
}
