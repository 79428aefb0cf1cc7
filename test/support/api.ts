// Test helpers: HTTP calls to the local API, and fixtures (users, projects, keys, sessions) made through lib/.
import { randomBytes, randomInt } from 'node:crypto';
import type { Permission } from '../../lib/schema/attributes';
import type { Role } from '../../lib/schema/items';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
  /** The body as sent (JSON.parse turns numbers into doubles; exact ones are read from here). */
  text: string;
}

export const baseUrl = () => process.env.TEST_API_URL as string;

/** The success message of every content mutation (the spec's and decisions.md's texts). */
export const MESSAGES = {
  set: 'Value set successfully',
  insert: 'Value inserted successfully',
  push: 'Object pushed successfully',
  decrement: 'Value decremented successfully',
  increment: 'Value incremented successfully',
  delete: 'Value deleted successfully',
  update: 'Content updated successfully',
} as const;

export async function call(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl()}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // leave as text
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

export interface Project {
  username: string;
  slug: string;
  /** `/api/@user/slug/content` */
  content: string;
  owner: string;
  key: string;
  keyId: string;
}

/** A fresh name: the prefix, a random letter (so every name has at least two letters to vary in case) and 10 hex digits. */
export const unique = (prefix: string) =>
  `${prefix}${String.fromCharCode(97 + randomInt(26))}${randomBytes(5).toString('hex')}`;

/** A fresh user and project, with an owner session and a read/write API key. */
export async function newProject(): Promise<Project> {
  const accounts = await import('../../lib/store/accounts');
  const username = `@${unique('u')}`;
  const slug = unique('p');
  await accounts.createUser(username);
  await accounts.createProject({ username, slug });
  const { token } = await accounts.createSession(username, 3600);
  const { id, key } = await accounts.createApiKey(
    { username, slug },
    { name: 'test', permissions: ['content:read', 'content:write'] },
  );
  return { username, slug, content: `/api/${username}/${slug}/content`, owner: token, key, keyId: id };
}

export async function newKey(project: Project, permissions: Permission[], expiresInSeconds?: number, paths?: string[]) {
  const accounts = await import('../../lib/store/accounts');
  return accounts.createApiKey(
    { username: project.username, slug: project.slug },
    { name: 'test', permissions, expiresInSeconds, ...(paths === undefined ? {} : { paths }) },
  );
}

/** A new user with a session, optionally a member of the project. */
export async function newUser(project?: Project, role?: Role): Promise<{ username: string; token: string }> {
  const accounts = await import('../../lib/store/accounts');
  const username = `@${unique('m')}`;
  await accounts.createUser(username);
  if (project && role) await accounts.setMember({ username: project.username, slug: project.slug }, username, role);
  const { token } = await accounts.createSession(username, 3600);
  return { username, token };
}

export const post = (
  project: Project,
  op: string,
  body: unknown,
  token = project.key,
  headers?: Record<string, string>,
) => call('POST', `${project.content}/${op}`, { token, body, headers });

export async function content(project: Project, path?: string): Promise<any> {
  const q = path === undefined ? '' : `?path=${encodeURIComponent(path)}`;
  const res = await call('GET', `${project.content}${q}`, { token: project.key });
  return res.body?.value;
}

/** Signs a token with the test identity provider's keys (see jwks.ts); claims override the valid defaults. */
export async function signJwt(
  claims: Record<string, unknown>,
  options: { key?: 'rs256' | 'es256' | 'stranger'; header?: Record<string, unknown> } = {},
): Promise<string> {
  const { SignJWT, importJWK } = await import('jose');
  const { readFileSync } = await import('node:fs');
  const { TEST_AUDIENCE, TEST_ISSUER } = await import('./jwks');
  const keys = JSON.parse(readFileSync(process.env.TEST_JWT_KEYS_FILE as string, 'utf8'));
  const jwk = keys[options.key ?? 'rs256'];
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: TEST_ISSUER, aud: TEST_AUDIENCE, iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid, ...options.header })
    .sign(await importJWK(jwk, jwk.alg));
}

/** The project's content and version, read with its key. */
export async function state(p: Project): Promise<{ value: any; etag: string | null }> {
  const r = await call('GET', p.content, { token: p.key });
  expect(r.status).toBe(200);
  return { value: r.body.value, etag: r.headers.get('etag') };
}

/** A fresh project whose content is `initial`, when given. */
export async function project(initial?: Record<string, unknown>): Promise<Project> {
  const p = await newProject();
  if (initial !== undefined) expect((await post(p, 'update', { content: initial })).status).toBe(200);
  return p;
}

/** The error body `{message, code}`, with a message that is a sentence, never internals or credentials. */
export function expectError(r: Reply, status: number, code: string): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { message: expect.any(String), code } });
  expect(r.body.message).not.toMatch(/Exception|\n\s+at |content-api-test|arn:aws|capi_|csess_/);
  expect(r.body.message.length).toBeGreaterThan(0);
}
