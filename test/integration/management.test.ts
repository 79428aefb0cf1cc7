import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { MAX_EXPIRES_IN_SECONDS } from '../../lib/config/limits';
import { MANAGEMENT_ROUTES } from '../../lib/openapi/management-routes';
import { call, content, expectError, newKey, newProject, newUser, post, signJwt, unique } from '../support/api';

const api = (username: string, slug: string, rest = '') => `/api/${username}/${slug}${rest}`;

describe('projects', () => {
  it('lets a signed-in user create a project under their own name, once', async () => {
    const user = await newUser();
    const slug = unique('site');
    const created = await call('POST', api(user.username, slug), { token: user.token });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      username: user.username,
      projectSlug: slug,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const again = await call('POST', api(user.username, slug), { token: user.token });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('PROJECT_EXISTS');
    const read = await call('GET', api(user.username, slug, '/content'), { token: user.token });
    expect(read.body).toEqual({ value: {} });
  });

  it.each([
    [
      'another user',
      async (u: { username: string }) => ({ path: api(`@${unique('x')}`, 'site'), status: 403, code: 'FORBIDDEN' }),
    ],
    [
      'an invalid slug',
      async (u: { username: string }) => ({ path: api(u.username, '-bad'), status: 400, code: 'INVALID_PROJECT_NAME' }),
    ],
  ])('refuses to create a project for %s', async (_, make) => {
    const user = await newUser();
    const { path, status, code } = await make(user);
    const reply = await call('POST', path, { token: user.token });
    expect(reply.status).toBe(status);
    expect(reply.body.code).toBe(code);
  });

  it('refuses API keys on every management route with 403, and unusable credentials with 401', async () => {
    const project = await newProject();
    const routes: Array<[string, string, unknown?]> = [
      ['POST', api(project.username, unique('new'))],
      ['GET', api(project.username, project.slug)],
      ['DELETE', api(project.username, project.slug)],
      ['POST', api(project.username, project.slug, '/keys'), { name: 'x', permissions: ['content:read'] }],
      ['GET', api(project.username, project.slug, '/keys')],
      ['DELETE', api(project.username, project.slug, `/keys/${project.keyId}`)],
      ['GET', api(project.username, project.slug, '/members')],
      ['PUT', api(project.username, project.slug, '/members/@someone'), { role: 'viewer' }],
      ['DELETE', api(project.username, project.slug, '/members/@someone')],
      ['POST', api(project.username, project.slug, '/webhooks'), { url: 'https://93.184.215.14/hook' }],
      ['GET', api(project.username, project.slug, '/webhooks')],
      ['DELETE', api(project.username, project.slug, '/webhooks/0123456789abcdef')],
    ];
    for (const [method, path, body] of routes) {
      const byKey = await call(method, path, { token: project.key, body });
      expect([method, path, byKey.status, byKey.body.code]).toEqual([method, path, 403, 'FORBIDDEN']);
      const anonymous = await call(method, path, { body });
      expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      const unknown = await call(method, path, { token: 'csess_' + 'a'.repeat(43), body });
      expect([method, path, unknown.status]).toEqual([method, path, 401]);
    }
    expect(await content(project)).toEqual({});
  });

  it('shows the project with the caller role, to members only', async () => {
    const project = await newProject();
    const editor = await newUser(project, 'editor');
    const stranger = await newUser();
    const own = await call('GET', api(project.username, project.slug), { token: project.owner });
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      username: project.username,
      projectSlug: project.slug,
      owner: project.username,
      role: 'owner',
      createdAt: expect.any(String),
    });
    await post(project, 'set', { path: 'a', value: 1 });
    const asEditor = await call('GET', api(project.username, project.slug), { token: editor.token });
    expect(asEditor.body).toEqual({ ...own.body, role: 'editor' });
    expect((await call('GET', api(project.username, project.slug), { token: stranger.token })).status).toBe(403);
    const missing = await call('GET', api(project.username, unique('none')), { token: project.owner });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('PROJECT_NOT_FOUND');
  });

  it('deletes a project with its content, keys and memberships; owner only', async () => {
    const project = await newProject();
    const editor = await newUser(project, 'editor');
    await post(project, 'set', { path: 'a', value: 1 });
    expect((await call('DELETE', api(project.username, project.slug), { token: editor.token })).status).toBe(403);
    const deleted = await call('DELETE', api(project.username, project.slug), { token: project.owner });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: 'Project deleted successfully' });
    expect((await call('GET', api(project.username, project.slug), { token: project.owner })).status).toBe(404);
    // The old key is gone with the project: a 401, not a 404, since it no longer exists anywhere.
    expect((await call('GET', `${project.content}`, { token: project.key })).status).toBe(401);
    expect((await call('POST', api(project.username, project.slug), { token: project.owner })).status).toBe(201);
    const fresh = await call('GET', project.content, { token: project.owner });
    expect(fresh.body).toEqual({ value: {} });
    expect((await call('GET', project.content, { token: editor.token })).status).toBe(403);
  });
});

describe('API keys', () => {
  it('creates a key whose secret is shown once, lists keys without secrets, and revokes', async () => {
    const project = await newProject();
    const created = await call('POST', api(project.username, project.slug, '/keys'), {
      token: project.owner,
      body: { name: 'ci', permissions: ['content:write', 'content:read', 'content:write'], expiresInSeconds: 3600 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      key: expect.stringMatching(/^capi_[0-9a-f]{16}_[\w-]{43}$/),
      name: 'ci',
      permissions: ['content:write', 'content:read'],
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(Date.parse(created.body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect((await post(project, 'set', { path: 'k', value: 1 }, created.body.key)).status).toBe(200);

    const listed = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toHaveLength(2);
    expect(listed.body.keys).toContainEqual({
      id: created.body.id,
      name: 'ci',
      permissions: ['content:write', 'content:read'],
      createdAt: created.body.createdAt,
      expiresAt: created.body.expiresAt,
    });
    expect(JSON.stringify(listed.body)).not.toContain('capi_');

    const revoked = await call('DELETE', api(project.username, project.slug, `/keys/${created.body.id}`), {
      token: project.owner,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ message: 'API key revoked successfully' });
    const after = await post(project, 'set', { path: 'k', value: 2 }, created.body.key);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ message: 'A valid session token or API key is required', code: 'UNAUTHORIZED' });
    const again = await call('DELETE', api(project.username, project.slug, `/keys/${created.body.id}`), {
      token: project.owner,
    });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('KEY_NOT_FOUND');
    expect(await content(project, 'k')).toBe(1);
  });

  it.each([
    [{ name: 'x', permissions: ['content:admin'] }, 'INVALID_PERMISSIONS'],
    [{ name: 'x', permissions: 'content:read' }, 'INVALID_PERMISSIONS'],
    [{ name: 'x', permissions: [] }, 'INVALID_PERMISSIONS'],
    [{ name: 'x', permissions: ['content:read'], expiresInSeconds: 0 }, 'INVALID_EXPIRY'],
    [{ name: 'x', permissions: ['content:read'], expiresInSeconds: -60 }, 'INVALID_EXPIRY'],
    [{ name: 'x', permissions: ['content:read'], expiresInSeconds: 1.5 }, 'INVALID_EXPIRY'],
    [{ name: 'x', permissions: ['content:read'], expiresInSeconds: '60' }, 'INVALID_EXPIRY'],
    [{ permissions: ['content:read'] }, 'INVALID_NAME'],
    [{ name: '', permissions: ['content:read'] }, 'INVALID_NAME'],
    [{ name: 'x', permissions: ['content:read'], admin: true }, 'UNKNOWN_FIELD'],
  ])('rejects key request %j with 400 %s', async (body, code) => {
    const project = await newProject();
    const reply = await call('POST', api(project.username, project.slug, '/keys'), { token: project.owner, body });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe(code);
    const listed = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(listed.body.keys).toHaveLength(1);
  });

  it('lets only the owner manage keys', async () => {
    const project = await newProject();
    const editor = await newUser(project, 'editor');
    for (const [method, rest, body] of [
      ['POST', '/keys', { name: 'x', permissions: ['content:read'] }],
      ['GET', '/keys', undefined],
      ['DELETE', `/keys/${project.keyId}`, undefined],
    ] as const) {
      const reply = await call(method, api(project.username, project.slug, rest), { token: editor.token, body });
      expect(reply.status).toBe(403);
    }
    expect((await post(project, 'set', { path: 'still', value: true })).status).toBe(200);
  });

  it('expires keys: an expired key is the same 401 as an unknown one', async () => {
    const project = await newProject();
    // Long enough to be used once on a loaded machine, then wait until it has expired.
    const expiredBy = Date.now() + 5000;
    const short = await newKey(project, ['content:read', 'content:write'], 4);
    expect((await post(project, 'set', { path: 'a', value: 1 }, short.key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiredBy - Date.now()) + 100));
    const expired = await post(project, 'set', { path: 'a', value: 2 }, short.key);
    const unknown = await post(project, 'set', { path: 'a', value: 2 }, `capi_${'0'.repeat(16)}_${'A'.repeat(43)}`);
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual(unknown.body);
    expect(await content(project, 'a')).toBe(1);
  });
});

describe('members', () => {
  it('adds, changes, lists and removes members, whose access follows their role', async () => {
    const project = await newProject();
    const bob = await newUser();
    const path = api(project.username, project.slug, `/members/${bob.username}`);
    const added = await call('PUT', path, { token: project.owner, body: { role: 'viewer' } });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ member: bob.username, role: 'viewer' });
    expect((await call('GET', project.content, { token: bob.token })).status).toBe(200);
    expect((await post(project, 'set', { path: 'a', value: 1 }, bob.token)).status).toBe(403);

    expect((await call('PUT', path, { token: project.owner, body: { role: 'editor' } })).body).toEqual({
      member: bob.username,
      role: 'editor',
    });
    expect((await post(project, 'set', { path: 'a', value: 1 }, bob.token)).status).toBe(200);

    const listed = await call('GET', api(project.username, project.slug, '/members'), { token: project.owner });
    expect(listed.body).toEqual({ owner: project.username, members: [{ username: bob.username, role: 'editor' }] });

    const removed = await call('DELETE', path, { token: project.owner });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ message: 'Member removed successfully' });
    expect((await call('GET', project.content, { token: bob.token })).status).toBe(403);
    const again = await call('DELETE', path, { token: project.owner });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('MEMBER_NOT_FOUND');
  });

  it.each([
    ['an unknown user', () => `@${unique('ghost')}`, { role: 'viewer' }, 404, 'USER_NOT_FOUND'],
    ['a malformed username', () => 'bob', { role: 'viewer' }, 404, 'USER_NOT_FOUND'],
    ['an unknown role', null, { role: 'admin' }, 400, 'INVALID_ROLE'],
    ['a missing role', null, {}, 400, 'INVALID_ROLE'],
  ])('refuses %s', async (_, member, body, status, code) => {
    const project = await newProject();
    const target = member ? member() : (await newUser()).username;
    const reply = await call('PUT', api(project.username, project.slug, `/members/${target}`), {
      token: project.owner,
      body,
    });
    expect(reply.status).toBe(status);
    expect(reply.body.code).toBe(code);
    const listed = await call('GET', api(project.username, project.slug, '/members'), { token: project.owner });
    expect(listed.body.members).toEqual([]);
  });

  it('refuses to make the owner a member, and non-owners cannot manage members', async () => {
    const project = await newProject();
    const owner = await call('PUT', api(project.username, project.slug, `/members/${project.username}`), {
      token: project.owner,
      body: { role: 'viewer' },
    });
    expect(owner.status).toBe(400);
    expect(owner.body.code).toBe('INVALID_MEMBER');
    const editor = await newUser(project, 'editor');
    const other = await newUser();
    const byEditor = await call('PUT', api(project.username, project.slug, `/members/${other.username}`), {
      token: editor.token,
      body: { role: 'editor' },
    });
    expect(byEditor.status).toBe(403);
    expect((await call('GET', api(project.username, project.slug, '/members'), { token: editor.token })).status).toBe(
      403,
    );
  });
});

describe('identity provider users', () => {
  it('creates a user record on first project creation, so others can add them as members', async () => {
    const name = unique('dora');
    const token = await signJwt({ preferred_username: name });
    expect((await call('POST', api(`@${name}`, 'site'), { token })).status).toBe(201);
    const project = await newProject();
    const added = await call('PUT', api(project.username, project.slug, `/members/@${name}`), {
      token: project.owner,
      body: { role: 'viewer' },
    });
    expect(added.status).toBe(200);
    expect((await call('GET', project.content, { token })).status).toBe(200);
  });
});

describe('numeric fields of the management bodies: every out-of-range or edge value is a 400, never a 500', () => {
  // Every integer/number property of every management route's body schema, from the route table the docs use, so a
  // numeric field added later is covered here (and needs its error code below).
  const CODES: Record<string, string> = { expiresInSeconds: 'INVALID_EXPIRY' };
  const numericFields = MANAGEMENT_ROUTES.flatMap((route) => {
    const properties =
      (route.body?.schema as { properties?: Record<string, { type?: string; maximum?: number }> } | undefined)
        ?.properties ?? {};
    return Object.entries(properties)
      .filter(([, schema]) => schema.type === 'integer' || schema.type === 'number')
      .map(([field, schema]) => ({
        route,
        field,
        maximum: schema.maximum,
        example: route.body!.example as Record<string, unknown>,
      }));
  });
  const path = (p: { username: string; slug: string }, route: string) =>
    route.replace('{username}', p.username).replace('{projectSlug}', p.slug);

  it('finds the numeric fields, each with a documented upper bound and an error code', () => {
    expect(numericFields.map((f) => `${f.route.operationId}.${f.field}`)).toEqual(['createKey.expiresInSeconds']);
    for (const { field, maximum } of numericFields) {
      expect(CODES[field]).toBeDefined();
      expect(maximum).toBe(MAX_EXPIRES_IN_SECONDS);
    }
  });

  const BAD: Array<[string, string]> = [
    ['zero', '0'],
    ['negative zero', '-0'],
    ['negative', '-1'],
    ['a negative fraction', '-0.5'],
    ['a fraction below one', '0.5'],
    ['a fraction', '1.5'],
    ['the maximum plus one', String(MAX_EXPIRES_IN_SECONDS + 1)],
    ['a fraction above the maximum', String(MAX_EXPIRES_IN_SECONDS + 0.5)],
    ['the probe value (about 285,000 years)', '9000000000000'],
    ['beyond the JavaScript Date range', '8640000000001'],
    ['the largest safe integer', String(Number.MAX_SAFE_INTEGER)],
    ['past the safe integers', '9007199254740993'],
    ['1e21', '1e21'],
    ['1e308', '1e308'],
    ['-1e308', '-1e308'],
    ['overflowing to Infinity', '1e400'],
    ['a string', '"3600"'],
    ['null', 'null'],
    ['true', 'true'],
    ['an array', '[3600]'],
    ['an object', '{"s":3600}'],
  ];
  const cases = numericFields.flatMap((f) =>
    BAD.map(([name, text]) => [`${f.route.operationId}.${f.field}`, name, text, f] as const),
  );

  it.each(cases)('%s: %s (%s) is a 400 and stores nothing', async (_, _name, text, { route, field, example }) => {
    const project = await newProject();
    const body = JSON.stringify({ ...example, [field]: '__N__' }).replace('"__N__"', text);
    const reply = await call(route.method, path(project, route.path), {
      token: project.owner,
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    expectError(reply, 400, CODES[field]!);
    const listed = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((k: { id: string }) => k.id)).toEqual([project.keyId]);
  });

  it.each(
    numericFields.flatMap((f) =>
      [
        ['1', 1],
        ['1.0', 1],
        ['1e3', 1000],
        ['the maximum', MAX_EXPIRES_IN_SECONDS],
      ].map(([name, n]) => [f.field, name, n, f] as const),
    ),
  )('%s: %s is accepted, and the list shows the same expiry', async (_, name, seconds, { route, field, example }) => {
    const project = await newProject();
    const text = name === '1.0' || name === '1e3' ? name : String(seconds);
    const body = JSON.stringify({ ...example, [field]: '__N__' }).replace('"__N__"', String(text));
    const created = await call(route.method, path(project, route.path), {
      token: project.owner,
      rawBody: body,
      headers: { 'content-type': 'application/json' },
    });
    expect(created.status).toBe(201);
    const expected = Date.now() + (seconds as number) * 1000;
    expect(Math.abs(Date.parse(created.body.expiresAt) - expected)).toBeLessThan(10_000);
    const listed = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toContainEqual(
      expect.objectContaining({ id: created.body.id, expiresAt: created.body.expiresAt }),
    );
  });
});

describe('a stored key entry the API would never write does not break the key routes', () => {
  const now = () => Math.floor(Date.now() / 1000);
  // Written straight to the table as key grants, as an older version, a bug or an operator could have left them.
  async function putKeyGrant(project: { username: string; slug: string }, id: string, fields: Record<string, unknown>) {
    const { documents } = await import('../../lib/dynamo/client');
    const { GetCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { itemKey, keyGrantSk, projectPk } = await import('../../lib/schema/items');
    const pk = projectPk({ username: project.username, slug: project.slug });
    const { Item } = await documents.send(
      new GetCommand({ TableName: process.env.TABLE_NAME, Key: itemKey(pk), ConsistentRead: true }),
    );
    await documents.send(
      new PutCommand({
        TableName: process.env.TABLE_NAME,
        Item: { ...itemKey(pk, keyGrantSk(id)), inc: Item?.inc, ...fields },
      }),
    );
  }
  const ENTRIES: Array<[string, Record<string, unknown>, string | null]> = [
    ['an expiry beyond the Date range', { e: now() + 9_000_000_000_000 }, '9999-12-31T23:59:59.000Z'],
    ['an expiry of 1e125', { e: NumberValue.from('1e125') }, '9999-12-31T23:59:59.000Z'],
    ['an expiry of -1e125', { e: NumberValue.from('-1e125') }, '1970-01-01T00:00:00.000Z'],
    ['an expiry of 0', { e: 0 }, '1970-01-01T00:00:00.000Z'],
    ['a negative expiry', { e: -1e15 }, '1970-01-01T00:00:00.000Z'],
    ['a fractional expiry', { e: 1_900_000_000.5 }, '2030-03-17T17:46:40.500Z'],
    ['an expiry that is a string', { e: 'soon' }, null],
    ['an expiry that is null', { e: null }, null],
    ['an expiry that is a map', { e: { at: 1 } }, null],
  ];

  it.each(ENTRIES)('lists and revokes a key with %s', async (_, fields, expiresAt) => {
    const project = await newProject();
    const id = 'badbadbadbadbad0';
    await putKeyGrant(project, id, {
      h: 'x'.repeat(43),
      p: ['content:read'],
      n: 'odd',
      c: '2020-01-01T00:00:00.000Z',
      ...fields,
    });
    const listed = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toContainEqual({
      id,
      name: 'odd',
      permissions: ['content:read'],
      createdAt: '2020-01-01T00:00:00.000Z',
      expiresAt,
    });
    expect((await call('GET', api(project.username, project.slug), { token: project.owner })).status).toBe(200);
    const revoked = await call('DELETE', api(project.username, project.slug, `/keys/${id}`), { token: project.owner });
    expect(revoked.status).toBe(200);
    const after = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(after.body.keys.map((k: { id: string }) => k.id)).toEqual([project.keyId]);
  });

  it('lists a key entry with missing or malformed fields', async () => {
    const project = await newProject();
    await putKeyGrant(project, 'aaaaaaaaaaaaaaaa', { h: 'x' });
    await putKeyGrant(project, 'bbbbbbbbbbbbbbbb', { h: 'y', n: 7, p: 'content:read', c: 12 });
    const listed = await call('GET', api(project.username, project.slug, '/keys'), { token: project.owner });
    expect(listed.status).toBe(200);
    expect(listed.body.keys).toContainEqual({
      id: 'aaaaaaaaaaaaaaaa',
      name: '',
      permissions: [],
      createdAt: null,
      expiresAt: null,
    });
    expect(listed.body.keys).toContainEqual({
      id: 'bbbbbbbbbbbbbbbb',
      name: '',
      permissions: [],
      createdAt: null,
      expiresAt: null,
    });
  });
});

describe('ids and names in the path that name nothing (issue 27: an over-long id was a 500)', () => {
  const long = 'a'.repeat(1100);
  it.each(
    (
      [
        ['DELETE', `/keys/${long}`, 'KEY_NOT_FOUND'],
        ['DELETE', '/keys/0123456789ABCDEF', 'KEY_NOT_FOUND'],
        ['DELETE', `/webhooks/${long}`, 'WEBHOOK_NOT_FOUND'],
        ['DELETE', '/webhooks/0123456789abcde', 'WEBHOOK_NOT_FOUND'],
        ['DELETE', `/members/@${long}`, 'MEMBER_NOT_FOUND'],
        ['DELETE', `/members/${long}`, 'MEMBER_NOT_FOUND'],
        ['PUT', `/members/@${long}`, 'USER_NOT_FOUND'],
      ] as const
    ).map(([method, tail, code]) => ({ method, tail, code, shown: tail.replace(long, '<1,100 a>') })),
  )('$method $shown: 404 $code, checked before DynamoDB', async ({ method, tail, code }) => {
    const p = await newProject();
    const reply = await call(method, `/api/${p.username}/${p.slug}${tail}`, {
      token: p.owner,
      body: method === 'PUT' ? { role: 'viewer' } : undefined,
    });
    expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 404, code });
  });
});
