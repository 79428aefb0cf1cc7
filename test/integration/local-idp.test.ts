// npm start's local identity provider: the admin CLI's `jwt` signs end-user tokens the local API accepts, so rules
// for an app's end users can be tried with no external provider; a configured provider is left alone.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unique } from '../support/api';
import { startLocalApi } from '../support/local-api';

function admin(args: string[], env: Record<string, string | undefined>) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'lib/local/admin.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the local identity provider', () => {
  it('signs tokens (admin jwt) the local API accepts for end-user rules, with their claims', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'content-api-idp-'));
    const table = `content-api-${unique('t')}`;
    const env: Record<string, string | undefined> = {
      ...process.env,
      PORT: '0',
      LOCAL_DYNAMODB_PORT: '0',
      DATA_DIR: dataDir,
      TABLE_NAME: table,
      AUTH_JWKS_URL: undefined,
      AUTH_ISSUER: undefined,
      AUTH_AUDIENCE: undefined,
    };
    if (process.env.DYNAMODB_ENGINE !== 'dynamodb-local') delete env.AWS_ENDPOINT_URL_DYNAMODB;
    const api = await startLocalApi({ env });
    try {
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
      const cli = { DATA_DIR: dataDir, TABLE_NAME: table, AWS_ENDPOINT_URL_DYNAMODB: api.endpoint };
      const session = JSON.parse(admin(['session', 'create', demo.username], cli).stdout).token;
      const editor = admin(['jwt', '@alice', '--claims', '{"role":"editor"}', '--expires-in', '600'], cli);
      expect([editor.status, editor.stderr]).toEqual([0, '']);
      const alice = JSON.parse(editor.stdout).token as string;
      const bob = JSON.parse(admin(['jwt', '@bob'], cli).stdout).token as string;

      const project = `${api.url}/api/${demo.username}/${demo.projectSlug}`;
      const send = (path: string, token: string, init: RequestInit = {}) =>
        fetch(`${project}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        });
      await send('/content/update', demo.key, {
        method: 'POST',
        body: JSON.stringify({ content: { drafts: { a: 1 } } }),
      });
      const rules = { rules: [{ match: 'drafts.**', read: 'auth.claims.role == "editor" && auth.sub == "alice"' }] };
      expect((await send('/rules', session, { method: 'PUT', body: JSON.stringify(rules) })).status).toBe(200);

      const read = await send('/content?path=drafts', alice);
      expect([read.status, await read.json()]).toEqual([200, { value: { a: 1 } }]);
      expect((await send('/content?path=drafts', bob)).status).toBe(403);
      // Not a token of the local provider: the uniform 401.
      const forged = `${alice.slice(0, alice.lastIndexOf('.'))}.${Buffer.from('x'.repeat(64)).toString('base64url')}`;
      expect((await send('/content?path=drafts', forged)).status).toBe(401);

      expect(admin(['jwt', 'alice'], cli)).toMatchObject({ status: 2, stderr: expect.stringMatching(/@alice/) });
      expect(admin(['jwt', '@alice', '--claims', '[1]'], cli)).toMatchObject({ status: 2 });
    } finally {
      api.child.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('has no key to sign with before npm start ran in that data folder', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'content-api-idp-'));
    const result = admin(['jwt', '@alice'], { DATA_DIR: dataDir });
    expect([result.status, result.stderr]).toEqual([1, expect.stringMatching(/run npm start once first/)]);
  });
});
