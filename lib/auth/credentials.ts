// Credentials: the formats of API keys and session tokens, how they are made, hashed and read from a header.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Unauthorized } from '../config/errors';

/** Recognisable prefixes, so secret scanners can find a leaked credential. */
export const API_KEY_PREFIX = 'capi_';
export const SESSION_PREFIX = 'csess_';

const API_KEY = /^capi_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;
const SESSION = /^csess_[A-Za-z0-9_-]{43}$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export type Credential =
  | { kind: 'key'; keyId: string; keyHash: string }
  | { kind: 'session'; tokenHash: string }
  | { kind: 'jwt'; token: string };

/** Secrets are high-entropy, so one SHA-256 is the right hash (no salt or stretching needed). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Whether two hashes are equal, compared in constant time. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const secret = () => randomBytes(32).toString('base64url');

/** A new random API key (`capi_<id>_<secret>`), with its id and its hash. */
export function newApiKey(): { id: string; key: string; hash: string } {
  const id = randomBytes(8).toString('hex');
  const key = `${API_KEY_PREFIX}${id}_${secret()}`;
  return { id, key, hash: hashSecret(key) };
}

/** A new random session token (`csess_<secret>`), with its hash. */
export function newSessionToken(): { token: string; hash: string } {
  const token = `${SESSION_PREFIX}${secret()}`;
  return { token, hash: hashSecret(token) };
}

/** Reads `Authorization: Bearer <credential>`; anything else is the uniform 401. */
export function parseAuthorization(header: string | undefined): Credential {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const value = match?.[1];
  if (value === undefined) throw new Unauthorized();
  const key = API_KEY.exec(value);
  if (key) return { kind: 'key', keyId: key[1] as string, keyHash: hashSecret(value) };
  if (SESSION.test(value)) return { kind: 'session', tokenHash: hashSecret(value) };
  if (JWT.test(value)) return { kind: 'jwt', token: value };
  throw new Unauthorized();
}
