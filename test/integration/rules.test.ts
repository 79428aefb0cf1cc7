// Access rules: the routes (GET/PUT .../rules with If-Match, the tester) over HTTP on the engine, and fuzzed rules
// documents answered 400, never 500, never slowly.
import fc from 'fast-check';
import { clientsClosedAfterEach } from '../support/realtime';
import { type Project, call, content, expectError, newProject, newUser, post, signJwt, unique } from '../support/api';

const rulesUrl = (p: Project, rest = '') => `/api/${p.username}/${p.slug}/rules${rest}`;
const putRules = (p: Project, body: unknown, headers?: Record<string, string>) =>
  call('PUT', rulesUrl(p), { token: p.owner, body, headers });
const tester = (p: Project, body: unknown) => call('POST', rulesUrl(p, '/test'), { token: p.owner, body });

const NOTES = [
  { match: 'public.**', read: 'true' },
  { match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid', write: 'auth != null && auth.sub == uid' },
];

describe('rules routes', () => {
  it('stores a document with a new version each time, shown to members, If-Match honoured', async () => {
    const project = await newProject();
    const empty = await call('GET', rulesUrl(project), { token: project.owner });
    expect([empty.status, empty.body, empty.headers.get('etag')]).toEqual([200, { rules: [], version: 0 }, '"0"']);

    const first = await putRules(project, { rules: NOTES });
    expect([first.status, first.body]).toEqual([200, { version: 1, warnings: [] }]);
    const viewer = await newUser(project, 'viewer');
    const read = await call('GET', rulesUrl(project), { token: viewer.token });
    expect([read.status, read.body]).toEqual([200, { rules: NOTES, version: 1 }]);

    const stale = await putRules(project, { rules: [] }, { 'if-match': '"0"' });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.headers.get('etag')).toBe('"1"');
    const second = await putRules(project, { rules: [], allowPublicWrite: false }, { 'if-match': '"1"' });
    expect([second.status, second.body.version]).toEqual([200, 2]);
    expectError(await putRules(project, { rules: [] }, { 'if-match': 'nope' }), 400, 'INVALID_IF_MATCH');
  });

  it('refuses invalid rules with INVALID_RULES naming the rule, storing nothing', async () => {
    const project = await newProject();
    const refused = await putRules(project, { rules: [NOTES[0], { match: 'a', read: '1 +' }] });
    expectError(refused, 400, 'INVALID_RULES');
    expect(refused.body.message).toMatch(/^rules\[1\]: invalid CEL/);
    expect((await call('GET', rulesUrl(project), { token: project.owner })).body.version).toBe(0);
  });

  it('answers warnings for rules that can never change a decision', async () => {
    const project = await newProject();
    const reply = await putRules(project, { rules: [...NOTES, { match: 'public.home', read: 'auth != null' }] });
    expect(reply.status).toBe(200);
    expect(reply.body.warnings).toEqual([expect.stringMatching(/^rules\[2\]\.read can never change a decision/)]);
  });

  it('lets only the owner change or test the rules, members read them, keys nothing (401 -> 404 -> 403)', async () => {
    const project = await newProject();
    const editor = await newUser(project, 'editor');
    const stranger = await newUser();
    expectError(await call('PUT', rulesUrl(project), { token: editor.token, body: { rules: [] } }), 403, 'FORBIDDEN');
    expectError(await call('GET', rulesUrl(project), { token: stranger.token }), 403, 'FORBIDDEN');
    expectError(await call('GET', rulesUrl(project), { token: project.key }), 403, 'FORBIDDEN');
    expectError(await call('GET', rulesUrl(project)), 401, 'UNAUTHORIZED');
    const missing = { ...project, slug: `${project.slug}x` };
    expectError(await call('GET', rulesUrl(missing), { token: project.owner }), 404, 'PROJECT_NOT_FOUND');
    expectError(await tester(project, { operation: 'read', path: 'a', auth: null, extra: 1 }), 400, 'UNKNOWN_FIELD');
  });

  it.each<[string, unknown, boolean, number | null, RegExp]>([
    ['anonymous public read', null, true, 0, /rules\[0\] \(public\.\*\*\) grants read/],
    ['anonymous read of the root: not filtered', null, false, null, /no rule grants read at the root/],
    ['an end user her own notes', { kind: 'user', sub: 'u1' }, true, 1, /grants/],
    ['an end user another one', { kind: 'user', sub: 'u2' }, false, null, /is true/],
    [
      'a key scoped elsewhere',
      { kind: 'key', permissions: ['content:read'], paths: ['builds'] },
      false,
      null,
      /outside the key's paths/,
    ],
  ])('the tester: %s', async (name, auth, allowed, rule, reason) => {
    const project = await newProject();
    expect((await putRules(project, { rules: NOTES })).status).toBe(200);
    const path = name.includes('root') ? '' : name.includes('public') ? 'public.home' : 'users.u1.notes';
    const verdict = await tester(project, { auth, operation: 'read', path });
    expect([verdict.status, verdict.body]).toEqual([200, { allowed, rule, reason: expect.stringMatching(reason) }]);
  });

  it('the tester tries rules before they are stored, and names the owner and members by their role', async () => {
    const project = await newProject();
    const viewer = await newUser(project, 'viewer');
    const given = await tester(project, {
      auth: null,
      operation: 'read',
      path: 'x.y',
      rules: [{ match: 'x.**', read: 'true' }],
    });
    expect(given.body).toEqual({ allowed: true, rule: 0, reason: expect.any(String) });
    const owner = await tester(project, { auth: { username: project.username }, operation: 'write', path: 'a' });
    expect(owner.body).toEqual({ allowed: true, rule: null, reason: 'the owner role allows write' });
    const member = await tester(project, { auth: { username: viewer.username }, operation: 'write', path: 'a' });
    expect(member.body).toEqual({ allowed: false, rule: null, reason: "no rule grants write at 'a'" });
    const bad = await tester(project, {
      auth: null,
      operation: 'read',
      path: 'a',
      rules: [{ match: 'a', read: 'nope(' }],
    });
    expectError(bad, 400, 'INVALID_RULES');
  });

  it('answers fuzzed rules documents with 200 or 400, never 500, each quickly', async () => {
    const project = await newProject();
    const condition = fc.oneof(
      fc.constantFrom(
        'true',
        'auth != null',
        'auth.sub == uid',
        '1 +',
        '(',
        '[1].all(x, [1].all(y, y))',
        'now > 1',
        'x',
      ),
      fc.string({ maxLength: 40 }),
    );
    const pattern = fc.oneof(
      fc.constantFrom(
        '**',
        'a.**',
        'users.{uid}.**',
        '__proto__.**',
        'a.__proto__',
        'a.{uid}.{uid}',
        'a.**.b',
        '',
        'a..b',
      ),
      fc.string({ maxLength: 20 }),
    );
    const rule = fc.record(
      { match: pattern, read: condition, write: condition, validate: fc.jsonValue({ maxDepth: 3 }) },
      { requiredKeys: [] },
    );
    const deep = (n: number): unknown => (n === 0 ? {} : { not: deep(n - 1) });
    const documents = fc.oneof(
      fc.record({ rules: fc.array(rule, { maxLength: 8 }) }),
      fc.constantFrom(
        { rules: [{ match: 'a', validate: deep(60) }] },
        { rules: Array.from({ length: 10_000 }, () => ({ match: 'a.**', read: 'true' })) },
        { rules: 'nope' },
        { rules: [{ match: '**', write: 'true' }] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(documents, async (document) => {
        const started = Date.now();
        const reply = await putRules(project, document);
        expect([200, 400]).toContain(reply.status);
        if (reply.status === 400)
          expect(['INVALID_RULES', 'INVALID_BODY', 'UNKNOWN_FIELD', 'INVALID_JSON', 'VALUE_TOO_DEEP']).toContain(
            reply.body.code,
          );
        expect(Date.now() - started).toBeLessThan(3000);
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  });
});

describe('rules on content requests', () => {
  const APP = [
    { match: 'public.**', read: 'true' },
    { match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid', write: 'auth != null && auth.sub == uid' },
    { match: 'drafts.**', read: 'auth != null && auth.claims.role == "editor"' },
  ];
  const get = (p: Project, path?: string, token?: string) =>
    call('GET', `${p.content}${path === undefined ? '' : `?path=${encodeURIComponent(path)}`}`, { token });
  const set = (p: Project, path: string, value: unknown, token?: string) =>
    call('POST', `${p.content}/set`, { token, body: { path, value } });

  async function appProject() {
    const p = await newProject();
    expect(
      (
        await post(p, 'update', {
          content: { public: { home: 'hi' }, drafts: { d: 1 }, users: { u1: { n: 1 }, u2: { n: 2 } } },
        })
      ).status,
    ).toBe(200);
    expect((await putRules(p, { rules: APP })).status).toBe(200);
    return p;
  }

  it('answers an anonymous read of public content; elsewhere the same 401 as without rules', async () => {
    const p = await appProject();
    expect(await get(p, 'public.home')).toMatchObject({ status: 200, body: { value: 'hi' } });
    expect(await get(p, 'public')).toMatchObject({ status: 200, body: { value: { home: 'hi' } } });
    expectError(await get(p), 401, 'UNAUTHORIZED');
    expectError(await get(p, 'users.u1'), 401, 'UNAUTHORIZED');
    expect((await call('GET', `${p.content}?path=public&shallow=true`, {})).body).toEqual({ value: { home: true } });
    expectError(await call('GET', `${p.content}?shallow=true`, {}), 401, 'UNAUTHORIZED');
    expectError(await set(p, 'public.home', 'x'), 401, 'UNAUTHORIZED');
    const plain = await newProject();
    expectError(await get(plain, 'public'), 401, 'UNAUTHORIZED');
    expectError(
      await get({ ...plain, content: `/api/${plain.username}/nope${plain.slug}/content` }, 'public'),
      401,
      'UNAUTHORIZED',
    );
  });

  it('lets two end users (JWT, not members) each write their own subtree and denies the other one', async () => {
    const p = await appProject();
    const u1 = await signJwt({ sub: 'u1', preferred_username: unique('e') });
    const u2 = await signJwt({ sub: 'u2', preferred_username: unique('e') });
    expect((await set(p, 'users.u1.n', 10, u1)).status).toBe(200);
    expect((await set(p, 'users.u2.n', 20, u2)).status).toBe(200);
    expectError(await set(p, 'users.u2.n', 11, u1), 403, 'FORBIDDEN');
    expectError(await get(p, 'users.u1', u2), 403, 'FORBIDDEN');
    expect(await get(p, 'users.u1', u1)).toMatchObject({ status: 200, body: { value: { n: 10 } } });
    expectError(await get(p, 'users', u1), 403, 'FORBIDDEN');
    expect((await content(p, 'users')) as unknown).toEqual({ u1: { n: 10 }, u2: { n: 20 } });
  });

  it('lets two end users known only by sub (no username claim) each write their own subtree, not the other', async () => {
    const p = await appProject();
    const [a, b] = [unique('sa'), unique('sb')];
    const ua = await signJwt({ sub: a });
    const ub = await signJwt({ sub: b });
    expect((await set(p, `users.${a}.n`, 1, ua)).status).toBe(200);
    expect((await set(p, `users.${b}.n`, 2, ub)).status).toBe(200);
    expect((await call('POST', `${p.content}/increment`, { token: ua, body: { path: `users.${a}.n` } })).status).toBe(
      200,
    );
    expectError(await set(p, `users.${b}.n`, 9, ua), 403, 'FORBIDDEN');
    expectError(await set(p, `users.${a}.n`, 9, ub), 403, 'FORBIDDEN');
    expectError(await get(p, `users.${a}`, ub), 403, 'FORBIDDEN');
    expectError(await set(p, 'public.home', 'x', ua), 403, 'FORBIDDEN');
    expect(await get(p, `users.${a}`, ua)).toMatchObject({ status: 200, body: { value: { n: 2 } } });
    expect(await get(p, 'public.home', ub)).toMatchObject({ status: 200, body: { value: 'hi' } });
    expect((await content(p, 'users')) as unknown).toMatchObject({ [a]: { n: 2 }, [b]: { n: 2 } });
    // auth.username is null for them: a rule naming a username never matches, one asking for null does.
    const named = await putRules(p, {
      rules: [
        { match: 'named.**', write: 'auth != null && auth.username != null' },
        { match: 'nameless.**', write: 'auth != null && auth.username == null && auth.kind == "user"' },
      ],
    });
    expect(named.status).toBe(200);
    expectError(await set(p, 'named.x', 1, ua), 403, 'FORBIDDEN');
    expect((await set(p, 'nameless.x', 1, ua)).status).toBe(200);
    // The tester judges such a caller the same way.
    const tested = await tester(p, { auth: { kind: 'user', sub: a }, operation: 'write', path: 'nameless.y' });
    expect(tested.body).toMatchObject({ allowed: true, rule: 1 });
  });

  it('sees the JWT claims and lets a signed-in non-member with a session use the rules too', async () => {
    const p = await appProject();
    const editor = await signJwt({ sub: 'x', preferred_username: unique('e'), role: 'editor' });
    expect(await get(p, 'drafts', editor)).toMatchObject({ status: 200, body: { value: { d: 1 } } });
    const stranger = await newUser();
    expect((await get(p, 'public.home', stranger.token)).status).toBe(200);
    expectError(await get(p, 'drafts', stranger.token), 403, 'FORBIDDEN');
  });

  it('refuses a batch or a patch crossing an allowed and a denied path, changing nothing', async () => {
    const p = await appProject();
    const u1 = await signJwt({ sub: 'u1', preferred_username: unique('e') });
    const before = await content(p);
    const batch = await call('POST', `${p.content}/batch`, {
      token: u1,
      body: {
        operations: [
          { op: 'set', path: 'users.u1.n', value: 5 },
          { op: 'set', path: 'users.u2.n', value: 5 },
        ],
      },
    });
    expectError(batch, 403, 'FORBIDDEN');
    const patch = await call('PATCH', p.content, {
      token: u1,
      rawBody: JSON.stringify([
        { op: 'replace', path: '/users/u1/n', value: 6 },
        { op: 'copy', from: '/drafts/d', path: '/users/u1/c' },
      ]),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expectError(patch, 403, 'FORBIDDEN');
    expect(await content(p)).toEqual(before);
    const allowed = await call('POST', `${p.content}/batch`, {
      token: u1,
      body: {
        operations: [
          { op: 'set', path: 'users.u1.n', value: 7 },
          { op: 'test', path: 'users.u1.n', value: 7 },
        ],
      },
    });
    expect(allowed.status).toBe(200);
  });

  it('takes a rules change on the very next request of a warm caller', async () => {
    const p = await appProject();
    expect((await get(p, 'public.home')).status).toBe(200);
    expect((await putRules(p, { rules: [] })).status).toBe(200);
    expectError(await get(p, 'public.home'), 401, 'UNAUTHORIZED');
    expect((await putRules(p, { rules: APP })).status).toBe(200);
    expect((await get(p, 'public.home')).status).toBe(200);
    // A warm end user refused under the old rules is allowed at once under new ones (a refusal is never remembered).
    const u1 = await signJwt({ sub: 'u1', preferred_username: unique('e') });
    expect((await get(p, 'public.home', u1)).status).toBe(200);
    expectError(await get(p, 'drafts', u1), 403, 'FORBIDDEN');
    expect((await putRules(p, { rules: [...APP, { match: 'drafts.**', read: 'auth != null' }] })).status).toBe(200);
    expect(await get(p, 'drafts', u1)).toMatchObject({ status: 200, body: { value: { d: 1 } } });
  });

  it('keeps members and keys as they are: a viewer reads, writes only where rules allow', async () => {
    const p = await appProject();
    const viewer = await newUser(p, 'viewer');
    expect((await get(p, 'drafts', viewer.token)).status).toBe(200);
    expectError(await set(p, 'drafts.d', 2, viewer.token), 403, 'FORBIDDEN');
    expect((await set(p, 'drafts.d', 2, p.key)).status).toBe(200);
    expect((await set(p, 'drafts.d', 3, p.owner)).status).toBe(200);
  });

  it('limits a path-scoped key to its paths, intersected with its permissions, shown in the key list', async () => {
    const p = await appProject();
    const keys = `/api/${p.username}/${p.slug}/keys`;
    const created = await call('POST', keys, {
      token: p.owner,
      body: { name: 'ci', permissions: ['content:read', 'content:write'], paths: ['builds', 'public.status'] },
    });
    expect([created.status, created.body.paths]).toEqual([201, ['builds', 'public.status']]);
    const key = created.body.key as string;
    expect((await set(p, 'builds.b1', { ok: true }, key)).status).toBe(200);
    expect((await set(p, 'public.status', 'green', key)).status).toBe(200);
    expect(await get(p, 'builds.b1', key)).toMatchObject({ status: 200, body: { value: { ok: true } } });
    expectError(await set(p, 'public.home', 'x', key), 403, 'FORBIDDEN');
    expectError(await get(p, 'public', key), 403, 'FORBIDDEN');
    expectError(await get(p, undefined, key), 403, 'FORBIDDEN');
    const listed = await call('GET', keys, { token: p.owner });
    expect(listed.body.keys.find((k: { id: string }) => k.id === created.body.id).paths).toEqual([
      'builds',
      'public.status',
    ]);
    expect(listed.body.keys.find((k: { id: string }) => k.id === p.keyId).paths).toBeUndefined();
    const readOnly = await call('POST', keys, {
      token: p.owner,
      body: { name: 'r', permissions: ['content:read'], paths: ['builds'] },
    });
    expectError(await set(p, 'builds.b2', 1, readOnly.body.key), 403, 'FORBIDDEN');
    const bad = await call('POST', keys, {
      token: p.owner,
      body: { name: 'x', permissions: ['content:read'], paths: ['a..b'] },
    });
    expectError(bad, 400, 'INVALID_PATH');
  });
});

describe('conditions on data and newData', () => {
  it('judges a write by the value it leaves (newData) and the one it replaces (data)', async () => {
    const p = await newProject();
    const rules = [
      { match: 'inbox.{id}', write: 'auth != null && newData.from == auth.sub' },
      { match: 'claims.{id}', write: 'auth != null && data == null' },
      { match: 'counters.{id}', write: 'auth != null && newData <= 3' },
    ];
    expect((await putRules(p, { rules })).status).toBe(200);
    const u1 = await signJwt({ sub: 'u1', preferred_username: unique('e') });
    const write = (op: string, body: unknown) => call('POST', `${p.content}/${op}`, { token: u1, body });
    expect((await write('set', { path: 'inbox.m1', value: { from: 'u1', text: 'hi' } })).status).toBe(200);
    expectError(await write('set', { path: 'inbox.m2', value: { from: 'u2', text: 'hi' } }), 403, 'FORBIDDEN');
    expect((await write('set', { path: 'claims.c1', value: 'u1' })).status).toBe(200);
    expectError(await write('set', { path: 'claims.c1', value: 'u1 again' }), 403, 'FORBIDDEN');
    for (let i = 0; i < 3; i++) expect((await write('increment', { path: 'counters.a' })).status).toBe(200);
    expectError(await write('increment', { path: 'counters.a' }), 403, 'FORBIDDEN');
    const batch = await write('batch', {
      operations: [
        { op: 'set', path: 'inbox.m3', value: { from: 'u1' } },
        { op: 'set', path: 'inbox.m4', value: { from: 'u9' } },
      ],
    });
    expectError(batch, 403, 'FORBIDDEN');
    expect(await content(p)).toEqual({
      inbox: { m1: { from: 'u1', text: 'hi' } },
      claims: { c1: 'u1' },
      counters: { a: 3 },
    });
  });
});

describe('validate binds every writer', () => {
  const PROFILE = {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string', maxLength: 20 }, age: { type: 'integer', minimum: 0 } },
  };
  const RULES = [
    { match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid', write: 'auth != null && auth.sub == uid' },
    { match: 'users.{uid}.profile', validate: PROFILE },
    { match: 'scores.{id}', validate: { type: 'number' } },
  ];
  async function validated() {
    const p = await newProject();
    expect((await post(p, 'set', { path: 'users.u1.profile', value: { name: 'Ann' } })).status).toBe(200);
    expect((await putRules(p, { rules: RULES })).status).toBe(200);
    return p;
  }

  it.each<[string, string, unknown, string | undefined, RegExp | undefined]>([
    ['set the node', 'set', { path: 'users.u1.profile', value: { name: 'Bo' } }, undefined, undefined],
    [
      'set the node invalid',
      'set',
      { path: 'users.u1.profile', value: { age: 3 } },
      undefined,
      /rules\[1\] .*'users\.u1\.profile': #\/required/,
    ],
    [
      'set below the node invalid',
      'set',
      { path: 'users.u1.profile.name', value: 7 },
      undefined,
      /#\/properties\/name\/type/,
    ],
    ['set below the node', 'set', { path: 'users.u1.profile.age', value: 30 }, undefined, undefined],
    ['delete a required member', 'delete', { path: 'users.u1.profile.name' }, undefined, /#\/required/],
    ['delete the node: absence is valid', 'delete', { path: 'users.u1.profile' }, undefined, undefined],
    [
      'set above the node invalid',
      'set',
      { path: 'users', value: { u2: { profile: { name: 1 } } } },
      undefined,
      /'users\.u2\.profile'/,
    ],
    ['increment into a string', 'set', { path: 'scores.a', value: 'x' }, undefined, /rules\[2\]/],
    ['an increment keeps a number', 'increment', { path: 'scores.a', value: 2 }, undefined, undefined],
    [
      'a batch with one invalid change',
      'batch',
      {
        operations: [
          { op: 'set', path: 'scores.b', value: 1 },
          { op: 'set', path: 'scores.c', value: [] },
        ],
      },
      undefined,
      /scores\.c/,
    ],
  ])('%s (the owner too)', async (_, op, body, __, failure) => {
    const p = await validated();
    const before = await content(p);
    const reply = await call('POST', `${p.content}/${op}`, { token: p.owner, body });
    if (failure === undefined) {
      expect([reply.status, reply.body]).toEqual([200, { message: expect.any(String) }]);
    } else {
      expectError(reply, 400, 'VALIDATION_FAILED');
      expect(reply.body.message).toMatch(failure);
      expect(await content(p)).toEqual(before);
    }
  });

  it('checks end users and whole-content updates, and a refused write is still 401/403 before 400', async () => {
    const p = await validated();
    const u1 = await signJwt({ sub: 'u1', preferred_username: unique('e') });
    const bad = await call('POST', `${p.content}/set`, { token: u1, body: { path: 'users.u1.profile', value: {} } });
    expectError(bad, 400, 'VALIDATION_FAILED');
    const other = await call('POST', `${p.content}/set`, { token: u1, body: { path: 'users.u2.profile', value: {} } });
    expectError(other, 403, 'FORBIDDEN');
    expectError(
      await post(p, 'update', { content: { users: { x: { profile: { name: 5 } } } } }),
      400,
      'VALIDATION_FAILED',
    );
    expect((await post(p, 'update', { content: { users: { x: { profile: { name: 'X' } } } } })).status).toBe(200);
    const merge = await call('PATCH', p.content, {
      token: p.key,
      rawBody: JSON.stringify({ users: { x: { profile: { name: null } } } }),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expectError(merge, 400, 'VALIDATION_FAILED');
    expect(await content(p)).toEqual({ users: { x: { profile: { name: 'X' } } } });
  });

  it('takes a rules change that drops or loosens a schema on the very next write of a warm writer', async () => {
    const p = await validated();
    expectError(await post(p, 'set', { path: 'scores.s1', value: 'high' }), 400, 'VALIDATION_FAILED');
    expectError(await post(p, 'set', { path: 'users.u1.profile', value: {} }), 400, 'VALIDATION_FAILED');
    // The key's grant (with the schemas) is warm; the change must not leave it refusing by the old ones.
    expect((await putRules(p, { rules: [RULES[0]] })).status).toBe(200);
    expect((await post(p, 'set', { path: 'scores.s1', value: 'high' })).status).toBe(200);
    expect((await post(p, 'set', { path: 'users.u1.profile', value: {} })).status).toBe(200);
    expect(await content(p)).toEqual({ users: { u1: { profile: {} } }, scores: { s1: 'high' } });
  });

  it('refuses a warm writer a rules change disallowed with 403, not with the error its write would meet', async () => {
    const p = await newProject();
    expect((await post(p, 'update', { content: { c: 1 } })).status).toBe(200);
    const schema = { match: '{x}', validate: { not: { const: 2 } } };
    expect((await putRules(p, { rules: [{ match: '**', write: 'auth != null' }, schema] })).status).toBe(200);
    const endUser = await signJwt({ sub: unique('s') });
    const set = (path: string, value: unknown) =>
      call('POST', `${p.content}/set`, { token: endUser, body: { path, value } });
    expect((await set('d', 1)).status).toBe(200);
    expect((await putRules(p, { rules: [schema] })).status).toBe(200);
    // `c` is a number, so the write itself fails; the caller may no longer write at all: that comes first.
    expectError(await set('c.b', 'x'), 403, 'FORBIDDEN');
    expectError(await set('d', 2), 403, 'FORBIDDEN');
  });

  it('checks a schema on an ancestor against the ancestor with the write applied, as the tester does', async () => {
    const p = await newProject();
    expect((await post(p, 'update', { content: { a: { b: 1 } } })).status).toBe(200);
    const rules = [{ match: 'a', validate: { type: 'object', maxProperties: 2 } }];
    expect((await putRules(p, { rules })).status).toBe(200);
    const write = (path: string, value: unknown) => ({ auth: null, operation: 'write', path, value });
    const asOwner = (path: string, value: unknown) => ({
      ...write(path, value),
      auth: { kind: 'user', username: p.username },
    });
    // A scalar written below `a` leaves `a` an object of two members: valid, though the value alone is no object.
    expect((await tester(p, asOwner('a.c', 1))).body).toMatchObject({ allowed: true });
    expect((await post(p, 'set', { path: 'a.c', value: 1 })).status).toBe(200);
    // A third member breaks maxProperties at `a`, named as the real write names it.
    const tested = await tester(p, asOwner('a.d', 1));
    const real = await post(p, 'set', { path: 'a.d', value: 1 });
    expectError(real, 400, 'VALIDATION_FAILED');
    expect(tested.body).toEqual({ allowed: false, rule: null, reason: `VALIDATION_FAILED: ${real.body.message}` });
    expect(await content(p)).toEqual({ a: { b: 1, c: 1 } });
  });

  it('costs nothing on writes no schema concerns', async () => {
    const p = await validated();
    expect((await post(p, 'set', { path: 'other', value: 1 })).status).toBe(200);
    expect(await content(p, 'other')).toBe(1);
  });
});

describe('realtime under rules', () => {
  const RULES = [
    { match: 'public.**', read: 'true' },
    { match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid' },
  ];
  const project = (p: Project) => `${p.username}/${p.slug}`;
  const open = clientsClosedAfterEach();

  it('allows a subscription as a GET of its path: anonymous on public content, end users on their own subtree', async () => {
    const p = await newProject();
    expect((await post(p, 'update', { content: { public: { a: 1 }, users: { u1: { n: 1 } } } })).status).toBe(200);
    expect((await putRules(p, { rules: RULES })).status).toBe(200);
    const anonymous = await open();
    const { id } = await anonymous.subscribe({ project: project(p), path: 'public' });
    await post(p, 'set', { path: 'public.a', value: 2 });
    expect(await anonymous.next()).toMatchObject({ type: 'change', id, changes: [{ path: 'public.a', value: 2 }] });

    const refused = await open();
    refused.send({ action: 'subscribe', project: project(p), path: 'users.u1' });
    expect(await refused.next()).toMatchObject({ type: 'error', code: 'UNAUTHORIZED' });
    refused.send({ action: 'subscribe', project: project(p) });
    expect(await refused.next()).toMatchObject({ type: 'error', code: 'UNAUTHORIZED' });

    const u1 = await signJwt({ sub: 'u1', preferred_username: unique('e') });
    const mine = await open();
    await mine.subscribe({ project: project(p), path: 'users.u1', token: u1 });
    mine.send({ action: 'subscribe', project: project(p), path: 'users.u2', token: u1 });
    expect(await mine.next()).toMatchObject({ type: 'error', code: 'FORBIDDEN' });
  });

  it('cuts a live subscription when a rules change takes its access away; others keep receiving', async () => {
    const p = await newProject();
    expect((await post(p, 'set', { path: 'public.a', value: 1 })).status).toBe(200);
    expect((await putRules(p, { rules: RULES })).status).toBe(200);
    const anonymous = await open();
    const kept = await open();
    const { id } = await anonymous.subscribe({ project: project(p), path: 'public' });
    await kept.subscribe({ project: project(p), token: p.owner });
    expect((await putRules(p, { rules: RULES.slice(1) })).status).toBe(200);
    expect(await anonymous.next()).toEqual({ type: 'revoked', id });
    await post(p, 'set', { path: 'public.b', value: 1 });
    expect(await kept.next()).toMatchObject({ changes: [{ path: 'public.b', value: 1 }] });
    await anonymous.quiet();
  });
});

describe('the tester agrees with real requests (property)', () => {
  const step = fc.constantFrom('a', 'b', 'c');
  const pathArb = fc.array(step, { minLength: 1, maxLength: 3 }).map((steps) => steps.join('.'));
  const patternArb = fc
    .tuple(fc.array(fc.oneof(step, fc.constant('{x}')), { minLength: 0, maxLength: 3 }), fc.boolean())
    .filter(([steps, deep]) => steps.length > 0 || deep)
    .map(([steps, deep]) => [...new Set<string>(steps), ...(deep ? ['**'] : [])].join('.'));
  /** A schema names one node (no `**`): above, at or below the written paths. */
  const exactPatternArb = fc
    .array(fc.oneof(step, fc.constant('{x}')), { minLength: 1, maxLength: 3 })
    .map((steps) => [...new Set<string>(steps)].join('.'));
  const conditionArb = fc.constantFrom(
    'true',
    'false',
    'auth != null',
    'auth == null',
    'auth != null && auth.sub == "s1"',
    'auth != null && auth.username == null',
    'auth.claims.role == "editor"',
    'path.startsWith("a")',
    'now > timestamp("2020-01-01T00:00:00Z")',
    'newData == 1',
    'newData != 1',
    'data == null',
  );
  const schemaArb = fc.constantFrom<object>(
    { type: 'object' },
    { type: 'number' },
    { type: 'object', required: ['a'] },
    { type: 'object', properties: { b: { type: 'number', maximum: 1 } } },
    { type: 'object', maxProperties: 1 },
    { not: { const: 2 } },
  );
  const ruleArb = fc.oneof(
    fc.record({ match: patternArb, read: conditionArb, write: conditionArb }, { requiredKeys: ['match'] }),
    fc.record(
      { match: exactPatternArb, validate: schemaArb, write: conditionArb },
      { requiredKeys: ['match', 'validate'] },
    ),
  );
  /** A schema on a node related to the tested path: its parent, its grandparent, itself or a child. */
  const relatedSchemaArb = fc.option(
    fc.record({
      relation: fc.constantFrom('parent', 'parent', 'grandparent', 'self', 'child'),
      capture: fc.boolean(),
      schema: schemaArb,
    }),
    { nil: undefined, freq: 4 },
  );
  const relatedRule = (path: string, related: { relation: string; capture: boolean; schema: object }) => {
    const steps = path.split('.');
    const cut = { parent: 1, grandparent: 2, self: 0, child: -1 }[related.relation] as number;
    const named = cut < 0 ? [...steps, 'a'] : steps.slice(0, Math.max(1, steps.length - cut));
    if (related.capture) named[0] = '{x}';
    return { match: named.join('.'), validate: related.schema };
  };
  const valueArb = fc.constantFrom<unknown>(1, 2, 'x', null, {}, { a: 1 }, { b: 2 }, { a: 1, b: 1 });
  const callerArb = fc.constantFrom(
    'owner',
    'anonymous',
    'jwt-s1-editor',
    'jwt-s2',
    'jwt-s3-nameless',
    'stranger',
    'viewer',
    'owner',
  );
  /** What a request's outcome says about the rules: refused (401/403), refused by a schema, or let through. */
  const outcome = (status: number, code: unknown) =>
    [401, 403].includes(status) ? 'refused' : code === 'VALIDATION_FAILED' ? 'invalid' : 'allowed';
  const testerOutcome = (body: { allowed: boolean; reason: string }) =>
    body.allowed ? 'allowed' : body.reason.startsWith('VALIDATION_FAILED') ? 'invalid' : 'refused';

  it('says allowed exactly when the real request is neither 401 nor 403, and invalid exactly when it is a 400 VALIDATION_FAILED', async () => {
    const p = await newProject();
    const viewer = await newUser(p, 'viewer');
    const stranger = await newUser();
    const s1 = unique('e');
    const s2 = unique('e');
    const tokens: Record<string, string | undefined> = {
      anonymous: undefined,
      'jwt-s1-editor': await signJwt({ sub: 's1', preferred_username: s1, role: 'editor' }),
      'jwt-s2': await signJwt({ sub: 's2', preferred_username: s2 }),
      'jwt-s3-nameless': await signJwt({ sub: 's3' }),
      stranger: stranger.token,
      viewer: viewer.token,
      owner: p.owner,
    };
    const auths: Record<string, unknown> = {
      anonymous: null,
      'jwt-s1-editor': { kind: 'user', username: `@${s1}`, sub: 's1', claims: { role: 'editor' } },
      'jwt-s2': { kind: 'user', username: `@${s2}`, sub: 's2', claims: {} },
      'jwt-s3-nameless': { kind: 'user', sub: 's3', claims: {} },
      stranger: { kind: 'user', username: stranger.username },
      viewer: { kind: 'user', username: viewer.username },
      owner: { kind: 'user', username: p.username },
    };
    let checked = 0;
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(ruleArb, { maxLength: 5 }),
        callerArb,
        fc.constantFrom('read', 'write'),
        pathArb,
        valueArb,
        fc.option(fc.constantFrom<object>({ a: {} }, { a: { a: 1, c: 1 } }, { b: { b: { b: 1 } }, c: 1 }), {
          nil: undefined,
        }),
        relatedSchemaArb,
        async (generated, caller, operation, path, value, initial, related) => {
          const rules = related === undefined ? generated : [...generated, relatedRule(path, related)];
          // Some cases start from a given content (as the owner, before the rules bind anyone).
          if (initial !== undefined) {
            expect((await putRules(p, { rules: [] })).status).toBe(200);
            expect((await post(p, 'update', { content: initial })).status).toBe(200);
          }
          const stored = await putRules(p, { rules });
          if (stored.status === 400) return; // a world-writable document without allowPublicWrite
          expect(stored.status).toBe(200);
          const verdict = await tester(p, {
            auth: auths[caller],
            operation,
            path,
            ...(operation === 'write' ? { value } : {}),
          });
          expect(verdict.status).toBe(200);
          const token = tokens[caller];
          const real =
            operation === 'read'
              ? await call('GET', `${p.content}?path=${encodeURIComponent(path)}`, { token })
              : await call('POST', `${p.content}/set`, { token, body: { path, value } });
          const expected = outcome(real.status, real.body?.code);
          if (expected === 'invalid') invalid++;
          expect({ rules, caller, operation, path, value, outcome: expected, real: real.body }).toEqual({
            real: real.body,
            rules,
            caller,
            operation,
            path,
            value,
            outcome: testerOutcome(verdict.body),
          });
          checked++;
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 80), endOnFailure: true },
    );
    expect(checked).toBeGreaterThan(0);
    expect(invalid).toBeGreaterThan(0);
  }, 180_000);
});
