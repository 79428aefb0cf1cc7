import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { call, signJwt, unique } from '../support/api';

const UNAUTHORIZED = { message: 'A valid session token or API key is required', code: 'UNAUTHORIZED' };
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A user signed in through the identity provider creates a project and works in it with the same token. */
async function projectFor(token: string, username: string) {
  const slug = unique('site');
  const created = await call('POST', `/api/${username}/${slug}`, { token });
  expect(created.status).toBe(201);
  return `/api/${username}/${slug}/content`;
}

describe('JWTs from an identity provider', () => {
  it.each(['rs256', 'es256'] as const)('accepts a valid %s token for project and content routes', async (key) => {
    const name = unique('jwt');
    const token = await signJwt({ preferred_username: `@${name}` }, { key });
    const content = await projectFor(token, `@${name}`);
    const set = await call('POST', `${content}/set`, { token, body: { path: 'a', value: 1 } });
    expect(set.status).toBe(200);
    const got = await call('GET', content, { token });
    expect(got.body).toEqual({ value: { a: 1 } });
  });

  it('adds the @ to a username claim without one', async () => {
    const name = unique('plain');
    const token = await signJwt({ preferred_username: name });
    await projectFor(token, `@${name}`);
  });

  it("is not the owner of somebody else's project", async () => {
    const owner = unique('own');
    const content = await projectFor(await signJwt({ preferred_username: owner }), `@${owner}`);
    const other = await signJwt({ preferred_username: unique('other') });
    expect((await call('GET', content, { token: other })).status).toBe(403);
  });

  it('takes a token without the username claim as a signed-in caller who owns and is a member of nothing', async () => {
    const owner = unique('own');
    const content = await projectFor(await signJwt({ preferred_username: owner }), `@${owner}`);
    const project = content.replace(/\/content$/, '');
    const endUser = await signJwt({ sub: unique('sub') });
    // Signed in (not the 401 of a bad token), but no project of its own and no role anywhere.
    const created = await call('POST', `/api/@x/${unique('s')}`, { token: endUser });
    expect(created.status).toBe(403);
    expect(created.body.code).toBe('FORBIDDEN');
    expect((await call('GET', content, { token: endUser })).status).toBe(403);
    expect((await call('GET', `${project}/rules`, { token: endUser })).status).toBe(403);
    expect((await call('GET', `${project}/members`, { token: endUser })).status).toBe(403);
    expect((await call('GET', `/api/${`@${owner}`}/${unique('none')}/content`, { token: endUser })).status).toBe(404);
  });

  const rsaPublicPem = () => {
    const keys = JSON.parse(readFileSync(process.env.TEST_JWT_KEYS_FILE as string, 'utf8'));
    return createPublicKey({ key: keys.rs256, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
  };

  it.each<[string, () => Promise<string>]>([
    ['expired', () => signJwt({ preferred_username: 'x', exp: now() - 60 })],
    ['not yet valid (nbf)', () => signJwt({ preferred_username: 'x', nbf: now() + 600 })],
    ['from another issuer', () => signJwt({ preferred_username: 'x', iss: 'https://evil.example/' })],
    ['for another audience', () => signJwt({ preferred_username: 'x', aud: 'someone-else' })],
    ['without exp', () => signJwt({ preferred_username: 'x', exp: undefined })],
    ['signed by a key the provider does not publish', () => signJwt({ preferred_username: 'x' }, { key: 'stranger' })],
    ['without the username claim and without sub', () => signJwt({ sub: undefined })],
    ['without the username claim and an empty sub', () => signJwt({ sub: '' })],
    ['with a username claim that is not a string', () => signJwt({ sub: 'x', preferred_username: 7 })],
    ['with an impossible username', () => signJwt({ preferred_username: 'has space' })],
    [
      'with alg none',
      async () =>
        `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ preferred_username: 'x', iss: 'https://id.example.test/', aud: 'content-api', exp: now() + 600 })}.`,
    ],
    [
      'signed with HMAC using the RSA public key (algorithm confusion)',
      async () => {
        const { SignJWT } = await import('jose');
        return new SignJWT({
          preferred_username: 'x',
          iss: 'https://id.example.test/',
          aud: 'content-api',
          exp: now() + 600,
        })
          .setProtectedHeader({ alg: 'HS256', kid: 'rs-1' })
          .sign(new TextEncoder().encode(rsaPublicPem()));
      },
    ],
    [
      'with a tampered payload',
      async () => {
        const [header, , signature] = (await signJwt({ preferred_username: 'x' })).split('.');
        return `${header}.${b64({ preferred_username: 'admin', iss: 'https://id.example.test/', aud: 'content-api', exp: now() + 600 })}.${signature}`;
      },
    ],
  ])('rejects a token %s with the uniform 401', async (_, make) => {
    const token = await make();
    const reply = await call('POST', `/api/@x/${unique('s')}`, { token });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(UNAUTHORIZED);
    const read = await call('GET', '/api/@x/site/content', { token });
    expect(read.status).toBe(401);
    expect(read.body).toEqual(UNAUTHORIZED);
  });
});
