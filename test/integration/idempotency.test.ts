import {
  type Project,
  call,
  content,
  expectError,
  newProject,
  newUser,
  post,
  project,
  signJwt,
  unique,
} from '../support/api';

const withKey = (key: string, extra: Record<string, string> = {}) => ({ 'idempotency-key': key, ...extra });

describe('Idempotency-Key', () => {
  it('applies a retried push once and returns the first response, ETag included', async () => {
    const project = await newProject();
    const key = unique('k');
    const first = await post(project, 'push', { path: 'list', value: 1 }, project.key, withKey(key));
    const retry = await post(project, 'push', { path: 'list', value: 1 }, project.key, withKey(key));
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ message: 'Object pushed successfully' });
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await content(project, 'list')).toEqual([1]);
  });

  it('treats the same body with different key order or spacing as the same request', async () => {
    const project = await newProject();
    const key = unique('k');
    await post(project, 'decrement', { path: 'n', value: 2 }, project.key, withKey(key));
    const retry = await call('POST', `${project.content}/decrement`, {
      token: project.key,
      rawBody: '{ "value": 2,  "path": "n" }',
      headers: withKey(key, { 'content-type': 'application/json' }),
    });
    expect(retry.status).toBe(200);
    expect(await content(project, 'n')).toBe(-2);
  });

  it('rejects the same key with a different body (422) and changes nothing', async () => {
    const project = await newProject();
    const key = unique('k');
    await post(project, 'increment', { path: 'n' }, project.key, withKey(key));
    const reused = await post(project, 'increment', { path: 'n', value: 5 }, project.key, withKey(key));
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const otherRoute = await post(project, 'decrement', { path: 'n' }, project.key, withKey(key));
    expect(otherRoute.status).toBe(422);
    expect(await content(project, 'n')).toBe(1);
  });

  it('applies concurrent duplicates once: one 200, the rest 200 replays or 409 in progress', async () => {
    const project = await newProject();
    const key = unique('k');
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => post(project, 'push', { path: 'list', value: 'x' }, project.key, withKey(key))),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(statuses).toContain(200);
    for (const r of replies.filter((r) => r.status === 409)) {
      expect(r.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(await content(project, 'list')).toEqual(['x']);
  });

  it('scopes keys to the credential and the project', async () => {
    const project = await newProject();
    const editor = await newUser(project, 'editor');
    const key = unique('k');
    await post(project, 'increment', { path: 'n' }, project.key, withKey(key));
    await post(project, 'increment', { path: 'n' }, editor.token, withKey(key));
    expect(await content(project, 'n')).toBe(2);
    const other = await newProject();
    await post(other, 'increment', { path: 'n' }, other.key, withKey(key));
    expect(await content(other, 'n')).toBe(1);
  });

  it('does not remember errors: a failed request retried after a fix applies', async () => {
    const project = await newProject();
    const key = unique('k');
    await post(project, 'set', { path: 'a', value: 'text' });
    const failed = await post(project, 'push', { path: 'a', value: 1 }, project.key, withKey(key));
    expect(failed.status).toBe(400);
    expect(failed.body.code).toBe('NOT_AN_ARRAY');
    await post(project, 'set', { path: 'a', value: [] });
    const retried = await post(project, 'push', { path: 'a', value: 1 }, project.key, withKey(key));
    expect(retried.status).toBe(200);
    expect(await content(project, 'a')).toEqual([1]);
  });

  it('without the header every request applies', async () => {
    const project = await newProject();
    await post(project, 'push', { path: 'list', value: 1 });
    await post(project, 'push', { path: 'list', value: 1 });
    expect(await content(project, 'list')).toEqual([1, 1]);
  });

  it.each([['a'.repeat(256)], ['has space'], ['tab\tkey']])(
    'rejects a malformed key %j with 400 after access checks',
    async (bad) => {
      const project = await newProject();
      const reply = await post(project, 'push', { path: 'list', value: 1 }, project.key, withKey(bad));
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe('INVALID_IDEMPOTENCY_KEY');
      const anonymous = await call('POST', `${project.content}/push`, {
        body: { path: 'list', value: 1 },
        headers: withKey(bad),
      });
      expect(anonymous.status).toBe(401);
      expect(await content(project, 'list')).toBeUndefined();
    },
  );
});

describe('a replay is answered only after the credential is checked as a new request would be', () => {
  const api = (p: Project, rest = '') => `/api/${p.username}/${p.slug}${rest}`;
  const now = () => Math.floor(Date.now() / 1000);
  /**
   * Changes the key's grant item as no route can, and advances the project's grant epoch in the same transaction, as
   * any change that takes access away does (so a grant a warm Lambda remembers is verified afresh).
   */
  async function editKeyEntry(p: Project, keyId: string, update: string, values: Record<string, unknown>) {
    const { documents } = await import('../../lib/dynamo/client');
    const { TransactWriteCommand } = await import('@aws-sdk/lib-dynamodb');
    const { itemKey, keyGrantSk, projectPk } = await import('../../lib/schema/items');
    const pk = projectPk({ username: p.username, slug: p.slug });
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: process.env.TABLE_NAME,
              Key: itemKey(pk, keyGrantSk(keyId)),
              UpdateExpression: update,
              ExpressionAttributeNames: update.includes('#f') ? { '#f': 'e' } : { '#p': 'p' },
              ExpressionAttributeValues: values,
            },
          },
          {
            Update: {
              TableName: process.env.TABLE_NAME,
              Key: itemKey(pk),
              UpdateExpression: 'ADD #ge :one',
              ExpressionAttributeNames: { '#ge': 'ge' },
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
        ],
      }),
    );
  }
  async function memberJwt(p: Project, role: 'viewer' | 'editor') {
    const name = unique('j');
    const accounts = await import('../../lib/store/accounts');
    await accounts.createUser(`@${name}`);
    await accounts.setMember({ username: p.username, slug: p.slug }, `@${name}`, role);
    return { username: `@${name}`, token: await signJwt({ preferred_username: name }) };
  }

  /** Every way a credential can lose access after its first request: [name, the credential, how it loses access, the answer]. */
  const LOSSES: Array<
    [string, (p: Project) => Promise<{ token: string; lose: () => Promise<unknown> }>, number, string]
  > = [
    [
      'a revoked key',
      async (p) => ({ token: p.key, lose: () => call('DELETE', api(p, `/keys/${p.keyId}`), { token: p.owner }) }),
      401,
      'UNAUTHORIZED',
    ],
    [
      'an expired key',
      async (p) => ({
        token: p.key,
        lose: () => editKeyEntry(p, p.keyId, 'SET #f = :past', { ':past': now() - 10 }),
      }),
      401,
      'UNAUTHORIZED',
    ],
    [
      'a key that lost content:write',
      async (p) => ({
        token: p.key,
        lose: () => editKeyEntry(p, p.keyId, 'SET #p = :read', { ':read': ['content:read'] }),
      }),
      403,
      'FORBIDDEN',
    ],
    [
      'a key of a deleted project',
      async (p) => ({ token: p.key, lose: () => call('DELETE', api(p), { token: p.owner }) }),
      401,
      'UNAUTHORIZED',
    ],
    [
      'the owner of a deleted project (session)',
      async (p) => ({ token: p.owner, lose: () => call('DELETE', api(p), { token: p.owner }) }),
      404,
      'PROJECT_NOT_FOUND',
    ],
    [
      'a removed member (session)',
      async (p) => {
        const m = await newUser(p, 'editor');
        return { token: m.token, lose: () => call('DELETE', api(p, `/members/${m.username}`), { token: p.owner }) };
      },
      403,
      'FORBIDDEN',
    ],
    [
      'a member demoted to viewer (session)',
      async (p) => {
        const m = await newUser(p, 'editor');
        return {
          token: m.token,
          lose: () => call('PUT', api(p, `/members/${m.username}`), { token: p.owner, body: { role: 'viewer' } }),
        };
      },
      403,
      'FORBIDDEN',
    ],
    [
      'a removed member (JWT)',
      async (p) => {
        const m = await memberJwt(p, 'editor');
        return { token: m.token, lose: () => call('DELETE', api(p, `/members/${m.username}`), { token: p.owner }) };
      },
      403,
      'FORBIDDEN',
    ],
    [
      'a member demoted to viewer (JWT)',
      async (p) => {
        const m = await memberJwt(p, 'editor');
        return {
          token: m.token,
          lose: () => call('PUT', api(p, `/members/${m.username}`), { token: p.owner, body: { role: 'viewer' } }),
        };
      },
      403,
      'FORBIDDEN',
    ],
  ];
  const ROUTES: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['increment', { path: 'n' }, { path: 'n', value: 5 }],
    ['push', { path: 'l', value: 1 }, { path: 'l', value: 2 }],
    ['update', { content: { n: 7 } }, { content: { n: 8 } }],
  ];

  it.each(
    LOSSES.flatMap(([name, make, status, code]) =>
      ROUTES.map(([op, body, other]) => [name, op, status, code, make, body, other] as const),
    ),
  )(
    '%s replaying %s: %i %s (not the first answer, not a 422), nothing applied',
    async (_, op, status, code, make, body, other) => {
      const p = await project({ n: 0 });
      const { token, lose } = await make(p);
      const key = unique('rv');
      const first = await post(p, op, body, token, withKey(key));
      expect(first.status).toBe(200);
      const before = await call('GET', p.content, { token: p.owner });
      expect(((await lose()) as { status?: number } | undefined)?.status ?? 200).toBe(200);
      expectError(await post(p, op, body, token, withKey(key)), status, code);
      expectError(await post(p, op, other, token, withKey(key)), status, code);
      const after = await call('GET', p.content, { token: p.owner });
      expect({ status: after.status, body: after.body, etag: after.headers.get('etag') }).toEqual(
        after.status === 404
          ? { status: 404, body: expect.anything(), etag: null }
          : { status: 200, body: before.body, etag: before.headers.get('etag') },
      );
    },
  );

  const OWNERS: Array<[string, () => Promise<{ p: Project; token: string }>]> = [
    [
      'a session',
      async () => {
        const p = await newProject();
        return { p, token: p.owner };
      },
    ],
    [
      'a JWT',
      async () => {
        const name = unique('o');
        const token = await signJwt({ preferred_username: name });
        const slug = unique('s');
        expect((await call('POST', `/api/@${name}/${slug}`, { token })).status).toBe(201);
        return {
          p: {
            username: `@${name}`,
            slug,
            content: `/api/@${name}/${slug}/content`,
            owner: token,
            key: token,
            keyId: '',
          },
          token,
        };
      },
    ],
  ];

  it.each(OWNERS)(
    'a project deleted and re-created under its name never matches an old record (owner with %s)',
    async (_, make) => {
      const { p, token } = await make();
      const key = unique('rv');
      const first = await post(p, 'push', { path: 'l', value: 1 }, token, withKey(key));
      expect(first.status).toBe(200);
      expect((await call('DELETE', api(p), { token })).status).toBe(200);
      expect((await call('POST', api(p), { token })).status).toBe(201);

      // The same request again is a new request in the new project: applied, with the new project's ETag.
      const again = await post(p, 'push', { path: 'l', value: 1 }, token, withKey(key));
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ message: 'Object pushed successfully' });
      expect(again.headers.get('etag')).not.toBe(first.headers.get('etag'));
      const read = await call('GET', p.content, { token });
      expect(read.body).toEqual({ value: { l: [1] } });
      expect(read.headers.get('etag')).toBe(again.headers.get('etag'));
      // ...and at most once there: its own replay is answered from the new record.
      const replay = await post(p, 'push', { path: 'l', value: 1 }, token, withKey(key));
      expect(replay.status).toBe(200);
      expect(replay.headers.get('etag')).toBe(again.headers.get('etag'));
      // Another body under the same key is a 422 against the new record, not the old one.
      expectError(await post(p, 'push', { path: 'l', value: 2 }, token, withKey(key)), 422, 'IDEMPOTENCY_KEY_REUSED');
      expect((await call('GET', p.content, { token })).body).toEqual({ value: { l: [1] } });
    },
  );

  it('a credential that keeps its access still gets the first answer', async () => {
    const p = await project({ n: 0 });
    const editor = await newUser(p, 'editor');
    const key = unique('rv');
    const first = await post(p, 'increment', { path: 'n' }, editor.token, withKey(key));
    // Demoted and promoted again: access is what it was.
    await call('PUT', api(p, `/members/${editor.username}`), { token: p.owner, body: { role: 'viewer' } });
    await call('PUT', api(p, `/members/${editor.username}`), { token: p.owner, body: { role: 'editor' } });
    const replay = await post(p, 'increment', { path: 'n' }, editor.token, withKey(key));
    expect({ status: replay.status, body: replay.body, etag: replay.headers.get('etag') }).toEqual({
      status: 200,
      body: first.body,
      etag: first.headers.get('etag'),
    });
    expect(await content(p, 'n')).toBe(1);
  });
});
