// Fixtures, made through lib/store/accounts straight against the engine: users, projects, API keys, stored sessions,
// members, and JWTs signed for the local JWKS (test/support/jwks.ts). Import only after AWS_ENDPOINT_URL_DYNAMODB
// and TABLE_NAME are set: lib/dynamo/client builds its client when first imported.
import type { Permission } from '../../lib/schema/attributes';

export const OWNER = '@bench-owner';
export const EDITOR = '@bench-editor';
export const VIEWER = '@bench-viewer';
export const OTHER = '@bench-other';

export interface BenchProject {
  username: string;
  slug: string;
  /** `/api/@user/slug/content` */
  content: string;
  key: string;
  keyId: string;
}

const accounts = () => import('../../lib/store/accounts');

export async function createUsers(): Promise<{ ownerSession: string; viewerSession: string; editorSession: string }> {
  const a = await accounts();
  for (const user of [OWNER, EDITOR, VIEWER, OTHER]) await a.ensureUser(user);
  return {
    ownerSession: (await a.createSession(OWNER, 24 * 3600)).token,
    viewerSession: (await a.createSession(VIEWER, 24 * 3600)).token,
    editorSession: (await a.createSession(EDITOR, 24 * 3600)).token,
  };
}

/** A new stored session of the owner: no API process has it in its session cache yet. */
export async function freshSession(): Promise<string> {
  return (await (await accounts()).createSession(OWNER, 3600)).token;
}

/** A project of `username` with a read/write API key; the editor and viewer are members. */
export async function createBenchProject(slug: string, username = OWNER): Promise<BenchProject> {
  const a = await accounts();
  const ref = { username, slug };
  await a.createProject(ref);
  await a.setMember(ref, EDITOR, 'editor');
  await a.setMember(ref, VIEWER, 'viewer');
  const { id, key } = await a.createApiKey(ref, { name: 'bench', permissions: ['content:read', 'content:write'] });
  return { username, slug, content: `/api/${username}/${slug}/content`, key, keyId: id };
}

export async function createKey(project: BenchProject, permissions: Permission[]): Promise<string> {
  const a = await accounts();
  return (await a.createApiKey({ username: project.username, slug: project.slug }, { name: 'bench', permissions })).key;
}

/** A local identity provider: its JWKS URL and a signer for tokens naming `username`. */
export async function startIdentityProvider() {
  const { startJwks, TEST_AUDIENCE, TEST_ISSUER } = await import('../../test/support/jwks');
  const { SignJWT, importJWK } = await import('jose');
  const jwks = await startJwks();
  const sign = async (username: string, key: 'rs256' | 'es256' | 'stranger' = 'rs256') => {
    const jwk = jwks.keys[key] as Record<string, unknown> & { alg: string; kid: string };
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: TEST_ISSUER,
      aud: TEST_AUDIENCE,
      iat: now,
      exp: now + 3 * 3600,
      preferred_username: username,
    })
      .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid })
      .sign(await importJWK(jwk, jwk.alg));
  };
  const env = { AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE };
  const close = () => {
    jwks.server.closeAllConnections();
    jwks.server.close();
  };
  return { env, sign, close };
}
