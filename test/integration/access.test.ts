// Credentials and access: who may read and write a project's content, the uniform 401, and the order of checks
// 401 -> (body envelope) -> 404 -> 403 -> 400, on every route. Includes the 401/403/404 rows of the spec's error table.
import { randomBytes } from 'node:crypto';
import { call, expectError, MESSAGES, newKey, newProject, newUser, type Project, type Reply } from '../support/api';

// ---- helpers (each integration file carries its own: only test files may be added) ----------------------------
type Op = 'get' | 'set' | 'insert' | 'push' | 'decrement' | 'increment' | 'delete' | 'update';
const MUTATIONS = ['set', 'insert', 'push', 'decrement', 'increment', 'delete', 'update'] as const;
const OPS: Op[] = ['get', ...MUTATIONS];
const MESSAGE: Record<Exclude<Op, 'get'>, string> = MESSAGES;
const UNAUTHORIZED = { message: 'A valid session token or API key is required', code: 'UNAUTHORIZED' };

/** A valid body per route; `tag` keeps the paths of different tests apart. */
function bodyFor(op: Op, tag: string, current: Record<string, unknown> = {}): Record<string, unknown> | undefined {
  switch (op) {
    case 'get':
      return undefined;
    case 'set':
      return { path: `s_${tag}`, value: tag };
    case 'insert':
      return { path: `i_${tag}`, value: tag, index: 0 };
    case 'push':
      return { path: `p_${tag}`, value: tag };
    case 'decrement':
    case 'increment':
      return { path: `n_${tag}` };
    case 'delete':
      return { path: 'victim' };
    case 'update':
      return { content: { ...current, [`u_${tag}`]: tag } };
  }
}

interface Options {
  authorization?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  query?: string;
}

/** Sends the route's request to a content base URL with an exact Authorization header (or none). */
function send(base: string, op: Op, options: Options = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  if (op === 'get') return call('GET', `${base}${options.query ?? ''}`, { headers });
  if (options.rawBody !== undefined) {
    return call('POST', `${base}/${op}`, {
      rawBody: options.rawBody,
      headers: { 'content-type': 'application/json', ...headers },
    });
  }
  return call('POST', `${base}/${op}`, { body: options.body, headers });
}

const bearer = (credential: string) => `Bearer ${credential}`;

async function state(p: Project): Promise<{ value: Record<string, unknown>; etag: string | null }> {
  const r = await call('GET', p.content, { token: p.owner });
  expect(r.status).toBe(200);
  return { value: r.body.value, etag: r.headers.get('etag') };
}

function expectSuccess(r: Reply, op: Op): void {
  if (op === 'get') {
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['value']);
  } else {
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const secret = () => randomBytes(32).toString('base64url');
const wellFormedUnknownKey = () => `capi_${randomBytes(8).toString('hex')}_${secret()}`;
const wellFormedUnknownSession = () => `csess_${secret()}`;
// -----------------------------------------------------------------------------------------------------------------

let p: Project;
let other: Project;
const cred: Record<string, string> = {};

beforeAll(async () => {
  const accounts = await import('../../lib/store/accounts');
  [p, other] = await Promise.all([newProject(), newProject()]);
  // Long enough to be used once before expiring on a loaded machine; the setup then waits until both have expired.
  const LIFETIME = 6;
  const expiredBy = Date.now() + (LIFETIME + 1) * 1000;
  const [editor, viewer, stranger, readKey, writeKey, noPermKey, expiring, revoked] = await Promise.all([
    newUser(p, 'editor'),
    newUser(p, 'viewer'),
    newUser(),
    newKey(p, ['content:read']),
    newKey(p, ['content:write']),
    newKey(p, []),
    newKey(p, ['content:read', 'content:write'], LIFETIME),
    newKey(p, ['content:read', 'content:write']),
  ]);
  const expiringSession = await accounts.createSession(p.username, LIFETIME);
  // Both work before they expire, so the 401s below come from expiry and nothing else.
  expect((await call('GET', p.content, { token: expiring.key })).status).toBe(200);
  expect((await call('GET', p.content, { token: expiringSession.token })).status).toBe(200);
  expect((await call('GET', p.content, { token: revoked.key })).status).toBe(200);
  await accounts.revokeApiKey({ username: p.username, slug: p.slug }, revoked.id);
  Object.assign(cred, {
    owner: p.owner,
    editor: editor.token,
    viewer: viewer.token,
    stranger: stranger.token,
    rwKey: p.key,
    readKey: readKey.key,
    writeKey: writeKey.key,
    noPermKey: noPermKey.key,
    expiredKey: expiring.key,
    expiredSession: expiringSession.token,
    revokedKey: revoked.key,
    otherKey: other.key,
    otherOwner: other.owner,
    unknownKey: wellFormedUnknownKey(),
    unknownSession: wellFormedUnknownSession(),
    // Same key id as a real key, wrong secret.
    forgedKey: `${p.key.slice(0, 'capi_'.length + 17)}${secret()}`,
  });
  await sleep(Math.max(0, expiredBy - Date.now()) + 100);
});

describe('access matrix: every principal on every route', () => {
  // [principal, GET, mutations]
  const matrix: Array<[string, number, number]> = [
    ['owner', 200, 200],
    ['editor', 200, 200],
    ['viewer', 200, 403],
    ['stranger', 403, 403],
    ['otherOwner', 403, 403],
    ['rwKey', 200, 200],
    ['readKey', 200, 403],
    ['writeKey', 403, 200],
    ['noPermKey', 403, 403],
    ['otherKey', 403, 403],
    ['expiredKey', 401, 401],
    ['expiredSession', 401, 401],
    ['revokedKey', 401, 401],
    ['unknownKey', 401, 401],
    ['unknownSession', 401, 401],
    ['forgedKey', 401, 401],
  ];
  const cases = matrix.flatMap(([who, read, write]) =>
    OPS.map((op) => [who, op, op === 'get' ? read : write] as const),
  );

  it.each(cases)('%s %s -> %i', async (who, op, status) => {
    const tag = `${who}_${op}`;
    if (op === 'delete') {
      expect(
        (await call('POST', `${p.content}/set`, { token: p.owner, body: { path: 'victim', value: 1 } })).status,
      ).toBe(200);
    }
    const before = await state(p);
    const r = await send(p.content, op, {
      authorization: bearer(cred[who] as string),
      body: bodyFor(op, tag, before.value),
    });
    if (status === 200) {
      expectSuccess(r, op);
      const after = await state(p);
      if (op === 'get') expect(after).toEqual(before);
      else expect(after.etag).not.toBe(before.etag);
    } else {
      if (status === 401) expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
      else expectError(r, status, 'FORBIDDEN');
      expect(await state(p)).toEqual(before);
    }
  });

  it('the writes that were allowed all landed', async () => {
    const { value } = await state(p);
    for (const who of ['owner', 'editor', 'rwKey', 'writeKey']) {
      expect(value[`s_${who}_set`]).toBe(`${who}_set`);
      expect(value[`i_${who}_insert`]).toEqual([`${who}_insert`]);
      expect(value[`p_${who}_push`]).toEqual([`${who}_push`]);
      expect(value[`n_${who}_increment`]).toBe(1);
      expect(value[`n_${who}_decrement`]).toBe(-1);
    }
    for (const who of [
      'viewer',
      'stranger',
      'readKey',
      'noPermKey',
      'otherKey',
      'expiredKey',
      'revokedKey',
      'unknownKey',
    ]) {
      expect(Object.keys(value).filter((k) => k.includes(`_${who}_`))).toEqual([]);
    }
  });

  it('an owner session of another project is refused on this one, and works on its own', async () => {
    expect((await call('GET', other.content, { token: other.owner })).status).toBe(200);
    expect((await call('GET', other.content, { token: other.key })).status).toBe(200);
  });
});

describe('401: every unusable credential gets the identical body', () => {
  const malformed: Array<[string, () => string | undefined]> = [
    ['no Authorization header', () => undefined],
    ['an empty header', () => ''],
    ['only the scheme', () => 'Bearer'],
    ['the scheme and a space', () => 'Bearer '],
    ['Basic credentials', () => 'Basic dXNlcjpwYXNz'],
    ['another scheme with a valid key', () => `Token ${p.key}`],
    ['a valid key without a scheme', () => p.key],
    ['a key with one character more', () => `Bearer ${p.key}x`],
    ['a key with one character less', () => `Bearer ${p.key.slice(0, -1)}`],
    ['two credentials', () => `Bearer ${p.key} ${p.key}`],
    ['a key in quotes', () => `Bearer "${p.key}"`],
    ['random text', () => 'Bearer not-a-credential'],
    ['a JWT-shaped token', () => 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'],
    ['a session token prefix only', () => 'Bearer csess_'],
    ['a key prefix only', () => 'Bearer capi_'],
  ];
  const unusable: Array<[string, () => string]> = [
    ['an unknown well-formed key', () => bearer(cred.unknownKey as string)],
    ['an unknown well-formed session', () => bearer(cred.unknownSession as string)],
    ['an expired key', () => bearer(cred.expiredKey as string)],
    ['an expired session', () => bearer(cred.expiredSession as string)],
    ['a revoked key', () => bearer(cred.revokedKey as string)],
    ['a real key id with a wrong secret', () => bearer(cred.forgedKey as string)],
  ];
  const all = [...malformed, ...unusable];

  it.each(OPS.flatMap((op) => all.map(([name, auth]) => [op, name, auth] as const)))(
    '%s with %s',
    async (op, _name, auth) => {
      const before = await state(p);
      const r = await send(p.content, op, { authorization: auth(), body: bodyFor(op, 'x', before.value) });
      expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(await state(p)).toEqual(before);
    },
  );

  it('the bodies are byte-for-byte identical', async () => {
    const texts = new Set<string>();
    for (const [, auth] of all) {
      const authorization = auth();
      const res = await fetch(`${process.env.TEST_API_URL}${p.content}`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      texts.add(await res.text());
    }
    expect([...texts]).toEqual([JSON.stringify(UNAUTHORIZED)]);
  });

  it('the scheme name is case-insensitive (RFC 7235): "bearer" works', async () => {
    const r = await send(p.content, 'get', { authorization: `bearer ${p.key}` });
    expect(r.status).toBe(200);
  });
});

describe('404: project or user does not exist', () => {
  const targets: Array<[string, () => string]> = [
    ['an unknown project of a known user', () => `/api/${p.username}/no-such-project/content`],
    ['an unknown user', () => `/api/@nosuchuser${randomBytes(4).toString('hex')}/${p.slug}/content`],
    ['a username without @', () => `/api/${p.username.slice(1)}/${p.slug}/content`],
    ['a username that cannot exist', () => `/api/@-bad!name/${p.slug}/content`],
    ['a slug that cannot exist', () => `/api/${p.username}/-bad!slug/content`],
  ];
  const principals = ['owner', 'stranger', 'rwKey'];
  it.each(
    OPS.flatMap((op) => targets.flatMap(([name, base]) => principals.map((who) => [op, name, who, base] as const))),
  )('%s on %s with %s: 404 PROJECT_NOT_FOUND', async (op, _name, who, base) => {
    const r = await send(base(), op, { authorization: bearer(cred[who] as string), body: bodyFor(op, 'x') });
    expectError(r, 404, 'PROJECT_NOT_FOUND');
  });

  it.each(
    OPS.flatMap((op) => ['unknownKey', 'expiredKey', 'revokedKey', 'unknownSession'].map((who) => [op, who] as const)),
  )('%s on an unknown project with %s: 401 comes first', async (op, who) => {
    const r = await send(`/api/${p.username}/no-such-project/content`, op, {
      authorization: bearer(cred[who] as string),
      body: bodyFor(op, 'x'),
    });
    expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it.each(OPS)('%s on an unknown project without a credential: 401', async (op) => {
    const r = await send(`/api/@nosuchuser/nosuchproject/content`, op, { body: bodyFor(op, 'x') });
    expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it.each(OPS)('%s on a username without @ with an unknown key: 401', async (op) => {
    const r = await send(`/api/${p.username.slice(1)}/${p.slug}/content`, op, {
      authorization: bearer(cred.unknownKey as string),
      body: bodyFor(op, 'x'),
    });
    expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});

describe('order of checks: 401 -> body envelope -> 401 (unknown credential) -> 404 -> 403 -> 400', () => {
  const missing = () => `/api/${p.username}/no-such-project/content`;
  const invalidBody = '[{"path": "a..b", "value": 1, "extra": true}]';

  it.each<[string, () => string, string | undefined, number, string]>([
    ['invalid body + no credential', () => p.content, undefined, 401, 'UNAUTHORIZED'],
    ['invalid body + malformed credential', () => p.content, 'Bearer nope', 401, 'UNAUTHORIZED'],
    ['invalid body + unknown key', () => p.content, 'unknownKey', 401, 'UNAUTHORIZED'],
    ['invalid body + expired key', () => p.content, 'expiredKey', 401, 'UNAUTHORIZED'],
    ['invalid body + revoked key', () => p.content, 'revokedKey', 401, 'UNAUTHORIZED'],
    ['invalid body + missing project (owner session)', missing, 'owner', 404, 'PROJECT_NOT_FOUND'],
    ['invalid body + missing project (API key)', missing, 'rwKey', 404, 'PROJECT_NOT_FOUND'],
    ['invalid body + missing project (non-member)', missing, 'stranger', 404, 'PROJECT_NOT_FOUND'],
    ['invalid body + viewer', () => p.content, 'viewer', 403, 'FORBIDDEN'],
    ['invalid body + non-member', () => p.content, 'stranger', 403, 'FORBIDDEN'],
    ['invalid body + read-only key', () => p.content, 'readKey', 403, 'FORBIDDEN'],
    ['invalid body + key without permissions', () => p.content, 'noPermKey', 403, 'FORBIDDEN'],
    ['invalid body + key of another project', () => p.content, 'otherKey', 403, 'FORBIDDEN'],
    ['invalid body + editor', () => p.content, 'editor', 400, 'INVALID_BODY'],
    ['invalid body + write-only key', () => p.content, 'writeKey', 400, 'INVALID_BODY'],
    ['invalid body + owner', () => p.content, 'owner', 400, 'INVALID_BODY'],
  ])('%s', async (_name, base, who, status, code) => {
    const authorization = who === undefined ? undefined : who.startsWith('Bearer') ? who : bearer(cred[who] as string);
    for (const op of MUTATIONS) {
      const before = await state(p);
      const r = await send(base(), op, { authorization, rawBody: invalidBody });
      expectError(r, status, code);
      if (status === 401) expect(r.body).toEqual(UNAUTHORIZED);
      expect(await state(p)).toEqual(before);
    }
  });

  it.each<[string, () => string, string | undefined, number, string]>([
    ['invalid JSON + no credential', () => p.content, undefined, 401, 'UNAUTHORIZED'],
    ['invalid JSON + missing project', missing, 'owner', 404, 'PROJECT_NOT_FOUND'],
    ['invalid JSON + viewer', () => p.content, 'viewer', 403, 'FORBIDDEN'],
    ['invalid JSON + editor', () => p.content, 'editor', 400, 'INVALID_JSON'],
  ])('%s', async (_name, base, who, status, code) => {
    const authorization = who === undefined ? undefined : bearer(cred[who] as string);
    const r = await send(base(), 'set', { authorization, rawBody: '{not json' });
    expectError(r, status, code);
  });

  describe('the body envelope (413, 415) is checked after a missing/malformed credential, before everything else', () => {
    const oversized = `{"path":"a","value":1}${' '.repeat(512 * 1024)}`;
    it.each<[string, () => string, string | undefined, Options, number, string]>([
      ['413 + no credential', () => p.content, undefined, { rawBody: oversized }, 401, 'UNAUTHORIZED'],
      ['413 + malformed credential', () => p.content, 'Bearer x', { rawBody: oversized }, 401, 'UNAUTHORIZED'],
      ['413 + unknown key', () => p.content, 'unknownKey', { rawBody: oversized }, 413, 'PAYLOAD_TOO_LARGE'],
      ['413 + expired key', () => p.content, 'expiredKey', { rawBody: oversized }, 413, 'PAYLOAD_TOO_LARGE'],
      ['413 + missing project', missing, 'owner', { rawBody: oversized }, 413, 'PAYLOAD_TOO_LARGE'],
      ['413 + viewer', () => p.content, 'viewer', { rawBody: oversized }, 413, 'PAYLOAD_TOO_LARGE'],
      ['413 + owner', () => p.content, 'owner', { rawBody: oversized }, 413, 'PAYLOAD_TOO_LARGE'],
      [
        '415 + no credential',
        () => p.content,
        undefined,
        { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
        401,
        'UNAUTHORIZED',
      ],
      [
        '415 + unknown key',
        () => p.content,
        'unknownKey',
        { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        '415 + missing project',
        missing,
        'owner',
        { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        '415 + viewer',
        () => p.content,
        'viewer',
        { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        '415 + read-only key',
        () => p.content,
        'readKey',
        { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
    ])('%s', async (_name, base, who, options, status, code) => {
      const authorization =
        who === undefined ? undefined : who.startsWith('Bearer') ? who : bearer(cred[who] as string);
      for (const op of MUTATIONS) {
        const before = await state(p);
        expectError(await send(base(), op, { ...options, authorization }), status, code);
        expect(await state(p)).toEqual(before);
      }
    });
  });

  describe('GET with an invalid ?path=', () => {
    const query = '?path=a..b';
    it.each<[string, () => string, string | undefined, number, string]>([
      ['no credential', () => p.content, undefined, 401, 'UNAUTHORIZED'],
      ['unknown key', () => p.content, 'unknownKey', 401, 'UNAUTHORIZED'],
      ['missing project', missing, 'owner', 404, 'PROJECT_NOT_FOUND'],
      ['non-member', () => p.content, 'stranger', 403, 'FORBIDDEN'],
      ['write-only key', () => p.content, 'writeKey', 403, 'FORBIDDEN'],
      ['viewer', () => p.content, 'viewer', 400, 'INVALID_PATH'],
      ['read-only key', () => p.content, 'readKey', 400, 'INVALID_PATH'],
    ])('%s', async (_name, base, who, status, code) => {
      const authorization = who === undefined ? undefined : bearer(cred[who] as string);
      expectError(await send(base(), 'get', { authorization, query }), status, code);
    });

    it('a missing path for a principal without access is a 403, not a 404', async () => {
      expectError(
        await send(p.content, 'get', { authorization: bearer(cred.stranger as string), query: '?path=nothing.here' }),
        403,
        'FORBIDDEN',
      );
    });
  });

  it('operation errors (NOT_AN_ARRAY) for a viewer are a 403', async () => {
    await call('POST', `${p.content}/set`, { token: p.owner, body: { path: 'scalar', value: 1 } });
    const r = await send(p.content, 'push', {
      authorization: bearer(cred.viewer as string),
      body: { path: 'scalar', value: 1 },
    });
    expectError(r, 403, 'FORBIDDEN');
  });
});

describe('spec section 7: the 401, 403 and 404 rows apply to every route', () => {
  const rows: Array<[string, () => string, string | undefined, number, string]> = [
    ['401 no authentication supplied', () => p.content, undefined, 401, 'UNAUTHORIZED'],
    ['401 API key invalid', () => p.content, 'unknownKey', 401, 'UNAUTHORIZED'],
    ['401 API key expired', () => p.content, 'expiredKey', 401, 'UNAUTHORIZED'],
    ['403 authenticated user has no access to the project', () => p.content, 'stranger', 403, 'FORBIDDEN'],
    ['403 API key lacks the required permission', () => p.content, 'noPermKey', 403, 'FORBIDDEN'],
    ['404 project does not exist', () => `/api/${p.username}/gone/content`, 'owner', 404, 'PROJECT_NOT_FOUND'],
    [
      '404 user does not exist',
      () => `/api/@gone${randomBytes(3).toString('hex')}/${p.slug}/content`,
      'owner',
      404,
      'PROJECT_NOT_FOUND',
    ],
  ];
  it.each(
    rows.flatMap(([row, base, who, status, code]) => OPS.map((op) => [row, op, base, who, status, code] as const)),
  )('%s: %s', async (_row, op, base, who, status, code) => {
    const before = await state(p);
    const authorization = who === undefined ? undefined : bearer(cred[who] as string);
    expectError(await send(base(), op, { authorization, body: bodyFor(op, 'row', before.value) }), status, code);
    expect(await state(p)).toEqual(before);
  });
});

describe('a key only works on its own project; a member only on projects they belong to', () => {
  it('a read/write key of another project cannot read or write this one, but its own', async () => {
    const before = await state(p);
    expectError(
      await send(p.content, 'set', { authorization: bearer(other.key), body: { path: 'x', value: 1 } }),
      403,
      'FORBIDDEN',
    );
    expectError(await send(p.content, 'get', { authorization: bearer(other.key) }), 403, 'FORBIDDEN');
    expect(await state(p)).toEqual(before);
    expect(
      (await send(other.content, 'set', { authorization: bearer(other.key), body: { path: 'x', value: 1 } })).status,
    ).toBe(200);
  });

  it('an editor of this project cannot write another project', async () => {
    const before = await state(other);
    expectError(
      await send(other.content, 'set', { authorization: bearer(cred.editor as string), body: { path: 'y', value: 1 } }),
      403,
      'FORBIDDEN',
    );
    expect(await state(other)).toEqual(before);
  });

  it('a key grant whose permissions were written by hand as something else allows only what it names', async () => {
    const { documents } = await import('../../lib/dynamo/client');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { tableName } = await import('../../lib/config/env');
    const { itemKey, keyGrantSk, projectPk } = await import('../../lib/schema/items');
    const scalar = await newKey(p, ['content:write']);
    const mixed = await newKey(p, ['content:read']);
    // The grants as no route writes them (before either key is used): a string, a list with an unknown permission.
    for (const [id, permissions] of [
      [scalar.id, 'content:write'],
      [mixed.id, ['content:read', 'content:admin']],
    ] as const) {
      await documents.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: itemKey(projectPk({ username: p.username, slug: p.slug }), keyGrantSk(id)),
          UpdateExpression: 'SET #p = :p',
          ExpressionAttributeNames: { '#p': 'p' },
          ExpressionAttributeValues: { ':p': permissions },
        }),
      );
    }
    const before = (await state(p)).value;
    const refused = await send(p.content, 'set', {
      authorization: bearer(scalar.key),
      body: { path: 'hand_written', value: 7 },
    });
    expect(refused.status).toBe(403);
    expect((await send(p.content, 'get', { authorization: bearer(mixed.key) })).status).toBe(200);
    const alsoRefused = await send(p.content, 'set', {
      authorization: bearer(mixed.key),
      body: { path: 'hand_written', value: 8 },
    });
    expect(alsoRefused.status).toBe(403);
    expect((await state(p)).value).toEqual(before);
  });

  it('a newly revoked key stops working at once, on reads and writes', async () => {
    const accounts = await import('../../lib/store/accounts');
    const key = await newKey(p, ['content:read', 'content:write']);
    expect((await send(p.content, 'get', { authorization: bearer(key.key) })).status).toBe(200);
    await accounts.revokeApiKey({ username: p.username, slug: p.slug }, key.id);
    for (const op of OPS) {
      const r = await send(p.content, op, {
        authorization: bearer(key.key),
        body: bodyFor(op, 'revoked', (await state(p)).value),
      });
      expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
    }
  });
});
