// JWT sessions from an identity provider (OIDC): verified locally against its cached JWKS, so no DynamoDB request.
import type { JWTVerifyGetKey } from 'jose';
import type * as Jose from './jose';
import { optionalEnv } from '../config/env';
import { Unauthorized } from '../config/errors';
import { USERNAME, canonicalName } from '../schema/items';

interface Provider {
  verify: typeof Jose.jwtVerify;
  keys: JWTVerifyGetKey;
  issuer: string;
  audience: string;
  usernameClaim: string;
}

let provider: Promise<Provider | null> | undefined;

/**
 * AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE configure a provider; without them every JWT is a 401. jose (./jose)
 * is loaded with the first JWT: in the Lambda bundles it is a lazy module (scripts/bundle.mjs), so a cold start that
 * answers an API key or a session never compiles it.
 */
async function loadProvider(): Promise<Provider | null> {
  const jwksUrl = optionalEnv('AUTH_JWKS_URL');
  const issuer = optionalEnv('AUTH_ISSUER');
  const audience = optionalEnv('AUTH_AUDIENCE');
  if (!jwksUrl || !issuer || !audience) return null;
  const { createRemoteJWKSet, jwtVerify } = await import('./jose');
  return {
    verify: jwtVerify,
    // jose caches the key set and refetches it (at most every 30 s) when a token names an unknown key id.
    keys: createRemoteJWKSet(new URL(jwksUrl), {
      cacheMaxAge: 10 * 60_000,
      cooldownDuration: 30_000,
      timeoutDuration: 3000,
    }),
    issuer,
    audience,
    usernameClaim: optionalEnv('AUTH_USERNAME_CLAIM') ?? 'preferred_username',
  };
}

/**
 * A verified token's caller for the rules: its username (null when the token names none: an app's end user, who can
 * never be an owner or a member), `sub` and claims (bounded: at most 50, as sent).
 */
export interface JwtCaller {
  username: string | null;
  sub: string | null;
  claims: Record<string, unknown>;
}

/**
 * The caller a valid token names: its username claim (`@` added when the claim has none; canonical, lower case), its
 * `sub` and claims, which rules' conditions see as `auth.username`, `auth.sub` and `auth.claims`. A token without a
 * username claim is a signed-in caller only rules can grant anything, so it must carry a `sub` for them to name it;
 * a username claim that is not a username fails like a bad signature. Only RS256 and ES256 are accepted, so
 * `alg: none` and HMAC-with-the-public-key confusion fail; exp, nbf, iss and aud are checked. Any failure is the
 * uniform 401.
 */
export async function verifyJwtClaims(token: string): Promise<JwtCaller> {
  provider ??= loadProvider().catch((error: unknown) => {
    provider = undefined;
    throw error;
  });
  const configured = await provider;
  if (!configured) throw new Unauthorized();
  try {
    const { payload } = await configured.verify(token, configured.keys, {
      issuer: configured.issuer,
      audience: configured.audience,
      algorithms: ['RS256', 'ES256'],
      clockTolerance: 5,
      requiredClaims: ['exp'],
    });
    const claim = payload[configured.usernameClaim];
    const sub = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null;
    const claims = Object.fromEntries(Object.entries(payload).slice(0, 50));
    if (claim === undefined) {
      if (sub === null) throw new Unauthorized();
      return { username: null, sub, claims };
    }
    if (typeof claim !== 'string') throw new Unauthorized();
    const username = claim.startsWith('@') ? claim : `@${claim}`;
    if (!USERNAME.test(username)) throw new Unauthorized();
    return { username: canonicalName(username), sub, claims };
  } catch {
    throw new Unauthorized();
  }
}
