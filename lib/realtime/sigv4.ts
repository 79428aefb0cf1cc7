// Signature Version 4 for one request of the management API (PostToConnection): host, date and session token signed,
// no query string. Signed by hand rather than by the SDK's client, whose middleware per post cost more CPU than the
// post itself once a change goes to a thousand subscribers (docs/design/realtime.md, section 8); a unit test holds the
// signature equal to the SDK's signer (@smithy/signature-v4).
import { type KeyObject, createHash, createHmac, createSecretKey } from 'node:crypto';

/** The function's credentials (Lambda sets them in its environment). */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** A request to sign: `path` as it is sent (its segments already percent-encoded). */
export interface SignedRequest {
  method: string;
  host: string;
  path: string;
  body: Buffer;
  region: string;
  service: string;
  credentials: Credentials;
  now: Date;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 percent-encoding of everything but the unreserved characters, as SigV4 writes a path segment. */
const encodeSegment = (segment: string) =>
  encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The derived key of one day, Region and service: four HMACs, so kept (as a key object) while the day lasts and the
 * credentials are the same object (the provider hands out a new one when it refreshes them; no secret is compared).
 */
let cachedKey: { scope: string; from: Credentials; key: KeyObject } | undefined;
function signingKey(credentials: Credentials, day: string, region: string, service: string): KeyObject {
  const scope = `${day}/${region}/${service}`;
  if (cachedKey?.scope !== scope || cachedKey.from !== credentials) {
    const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), service), 'aws4_request');
    cachedKey = { scope, from: credentials, key: createSecretKey(key) };
  }
  return cachedKey.key;
}

/**
 * The headers that sign `request`: `host`, `x-amz-date`, `x-amz-security-token` (with a session token) and
 * `authorization`. Each path segment is encoded once more in the canonical request, as every service but S3 wants.
 */
export function signRequest(request: SignedRequest): Record<string, string> {
  const { credentials } = request;
  const date = request.now.toISOString().replace(/[-:]|\.\d{3}/g, '');
  const day = date.slice(0, 8);
  const headers: Record<string, string> = { host: request.host, 'x-amz-date': date };
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  const names = Object.keys(headers).sort();
  const canonical = [
    request.method,
    request.path.split('/').map(encodeSegment).join('/'),
    '',
    names.map((n) => `${n}:${headers[n]}\n`).join(''),
    names.join(';'),
    sha256(request.body),
  ].join('\n');
  const scope = `${day}/${request.region}/${request.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonical)].join('\n');
  const key = signingKey(credentials, day, request.region, request.service);
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`;
  return headers;
}
