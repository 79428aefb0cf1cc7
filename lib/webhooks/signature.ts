// Webhooks: the Standard Webhooks signature (standardwebhooks.com): HMAC-SHA256 of "<id>.<timestamp>.<body>".
import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** The key bytes of a `whsec_<base64>` secret. */
export const secretBytes = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

/** The `webhook-signature` header's value: `v1,<base64 signature>`. */
export function signPayload(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one delivery attempt; the timestamp is the attempt's, in seconds. */
export const signedHeaders = (secret: string, id: string, body: string, now = Date.now()) => {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signPayload(secret, id, timestamp, body),
  };
};
