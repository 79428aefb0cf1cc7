// The realtime sender against a management API stand-in (a local HTTP server): posts signed and in parallel, never
// more in flight than REALTIME_SEND_CONCURRENCY; 410 is `gone`; a throttle (429) or a 5xx is tried again (3 attempts),
// any other refusal is an error at once.
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
// Reads its environment on its first post, which comes after beforeAll sets it.
import { sendTo } from '../../lib/realtime/sender';

let server: Server;
let answer: (req: IncomingMessage, body: string) => number;
let inFlight = 0;
let most = 0;
const seen: Array<{ url: string; authorization: string; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    inFlight++;
    most = Math.max(most, inFlight);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ url: req.url ?? '', authorization: String(req.headers.authorization), body });
      // Held a moment, so that the posts overlap.
      setTimeout(() => {
        inFlight--;
        res.writeHead(answer(req, body)).end();
      }, 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.env.REALTIME_ENDPOINT = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stage`;
  process.env.REALTIME_SEND_CONCURRENCY = '3';
  process.env.AWS_ACCESS_KEY_ID = 'AKIDTEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'secret';
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
  most = 0;
});

describe('sendTo', () => {
  it('posts each frame signed to /@connections/{id}, at most REALTIME_SEND_CONCURRENCY at once', async () => {
    answer = () => 200;
    const ids = Array.from({ length: 20 }, (_, i) => `conn${i}+/=`);
    const results = await Promise.all(ids.map((id, i) => sendTo(id, `{"n":${i}}`)));
    expect(results).toEqual(ids.map(() => 'sent'));
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThan(1);
    expect(seen.map((s) => s.url).sort()).toEqual(
      ids.map((id) => `/stage/@connections/${encodeURIComponent(id)}`).sort(),
    );
    expect(seen.map((s) => s.body).sort()).toEqual(ids.map((_, i) => `{"n":${i}}`).sort());
    for (const s of seen)
      expect(s.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/execute-api\/aws4_request, SignedHeaders=host;x-amz-date, Signature=[0-9a-f]{64}$/,
      );
  });

  it('410 is gone; a throttle or a 5xx is tried again, up to 3 attempts; another refusal throws at once', async () => {
    answer = () => 410;
    expect(await sendTo('gone', 'x')).toBe('gone');
    const tries = new Map<string, number>();
    answer = (req) => {
      const n = (tries.get(req.url ?? '') ?? 0) + 1;
      tries.set(req.url ?? '', n);
      if (req.url?.endsWith('/throttled')) return n < 3 ? 429 : 200;
      if (req.url?.endsWith('/failing')) return 503;
      return 403;
    };
    expect(await sendTo('throttled', 'x')).toBe('sent');
    expect(tries.get('/stage/@connections/throttled')).toBe(3);
    await expect(sendTo('failing', 'x')).rejects.toThrow(/answered 503 \(attempt 3\)/);
    await expect(sendTo('forbidden', 'x')).rejects.toThrow(/answered 403 \(attempt 1\)/);
    expect(tries.get('/stage/@connections/forbidden')).toBe(1);
  });
});
