// The local identity provider of `npm start`: an ES256 key kept in the data folder, its JWKS served on loopback, and
// the API told to trust it, so end-user rules can be tried with no external provider. Only `npm start` and the admin
// CLI load this module (lib/local is never bundled into a function): it is never active in a deployed stage, and
// `npm start` leaves a configured provider (AUTH_JWKS_URL) alone.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { local } from './env';

/** The issuer and audience of the local provider's tokens. */
export const LOCAL_ISSUER = 'content-api-local-idp';
export const LOCAL_AUDIENCE = 'content-api-local';

type Jwk = Record<string, unknown>;

const keyFile = () => join(local.dataDir(), 'local-idp.json');

/** The provider's private key (a JWK): from the data folder, or new (kept there unless the data is in memory). */
async function signingKey(create: boolean): Promise<Jwk> {
  const file = keyFile();
  if (local.dataDir() !== ':memory:' && existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Jwk;
  if (!create) throw new Error(`no local identity provider key in ${file}: run npm start once first`);
  const { exportJWK, generateKeyPair } = await import('jose');
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', kid: 'local' };
  if (local.dataDir() !== ':memory:') writeFileSync(file, `${JSON.stringify(jwk)}\n`, { mode: 0o600 });
  return jwk;
}

/**
 * Serves the JWKS on an ephemeral loopback port and points AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE at it;
 * does nothing (undefined) when a provider is configured. Returns the JWKS URL and a stop function.
 */
export async function startLocalIdentityProvider(): Promise<{ url: string; stop: () => void } | undefined> {
  if (process.env.AUTH_JWKS_URL) return undefined;
  const { d: _private, ...publicKey } = await signingKey(true);
  const body = JSON.stringify({ keys: [publicKey] });
  const server = createServer((req, res) => {
    if (req.url !== '/jwks.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  process.env.AUTH_JWKS_URL = url;
  process.env.AUTH_ISSUER = LOCAL_ISSUER;
  process.env.AUTH_AUDIENCE = LOCAL_AUDIENCE;
  server.unref();
  return { url, stop: () => server.close() };
}

/**
 * A token the local provider signed for `username` (its `preferred_username`; `sub` is the name without `@` unless
 * the claims say otherwise), valid for `expiresIn` seconds (default one hour).
 */
export async function signLocalJwt(
  username: string,
  options: { claims?: Record<string, unknown>; expiresIn?: number } = {},
): Promise<string> {
  const { SignJWT, importJWK } = await import('jose');
  const jwk = await signingKey(false);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: username.replace(/^@/, ''), preferred_username: username, ...options.claims })
    .setProtectedHeader({ alg: 'ES256', kid: String(jwk.kid) })
    .setIssuer(LOCAL_ISSUER)
    .setAudience(LOCAL_AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 3600))
    .sign(await importJWK(jwk, 'ES256'));
}
