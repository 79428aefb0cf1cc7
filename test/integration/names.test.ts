// Usernames and project slugs are case-insensitive: every spelling names the same user or project, and the API keeps
// and shows them in lower case, so no look-alike account or project can exist beside another.
import { call, content, expectError, newProject, newUser, post, signJwt, unique } from '../support/api';

/** Case variants of a name (`@u1a2b`): upper, mixed, and each letter flipped one at a time. */
/** Other spellings of a name: all upper case, only its last letter upper, alternate characters upper; at least two. */
function spellings(name: string): string[] {
  const upper = name.toUpperCase();
  const last = name.replace(/[a-z](?=[^a-z]*$)/, (c) => c.toUpperCase());
  const mixed = [...name].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
  const variants = [...new Set([upper, last, mixed])].filter((s) => s !== name);
  if (variants.length < 2) throw new Error(`${name} has fewer than two other spellings`);
  return variants;
}

describe('case variants in the URL name the same project', () => {
  it('reads and writes the same content under every spelling of the username and the slug, with its key and its owner', async () => {
    const p = await newProject();
    const variants = [
      ...spellings(p.username).map((u) => [u, p.slug]),
      ...spellings(p.slug).map((s) => [p.username, s]),
      [p.username.toUpperCase(), p.slug.toUpperCase()],
    ];
    expect(variants.length).toBeGreaterThan(3);
    for (const [i, [username, slug]] of variants.entries()) {
      const base = `/api/${username}/${slug}/content`;
      for (const token of [p.key, p.owner]) {
        const set = await call('POST', `${base}/set`, { token, body: { path: `v${i}`, value: username + '/' + slug } });
        expect([username, slug, set.status]).toEqual([username, slug, 200]);
        const read = await call('GET', `${base}?path=v${i}`, { token });
        expect(read.body).toEqual({ value: `${username}/${slug}` });
      }
    }
    const whole = await content(p);
    expect(Object.keys(whole)).toHaveLength(variants.length);
  });

  it('shows the canonical (lower-case) names, and the project is one project under every spelling', async () => {
    const p = await newProject();
    for (const [username, slug] of [
      [p.username.toUpperCase(), p.slug.toUpperCase()],
      ...spellings(p.username).map((u) => [u, p.slug]),
    ]) {
      const got = await call('GET', `/api/${username}/${slug}`, { token: p.owner });
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ username: p.username, projectSlug: p.slug, owner: p.username, role: 'owner' });
      expectError(await call('POST', `/api/${username}/${slug}`, { token: p.owner }), 409, 'PROJECT_EXISTS');
      const keys = await call('GET', `/api/${username}/${slug}/keys`, { token: p.owner });
      expect(keys.body.keys.map((k: { id: string }) => k.id)).toEqual([p.keyId]);
    }
  });

  it('creates a project named in any case under the canonical names, and only for its own user', async () => {
    const user = await newUser();
    const slug = unique('Site');
    const created = await call('POST', `/api/${user.username.toUpperCase()}/${slug}`, { token: user.token });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: user.username, projectSlug: slug.toLowerCase() });
    expectError(
      await call('POST', `/api/${user.username}/${slug.toLowerCase()}`, { token: user.token }),
      409,
      'PROJECT_EXISTS',
    );
    expectError(
      await call('POST', `/api/${user.username}/${slug.toUpperCase()}`, { token: user.token }),
      409,
      'PROJECT_EXISTS',
    );
    const set = await call('POST', `/api/${user.username}/${slug.toLowerCase()}/content/set`, {
      token: user.token,
      body: { path: 'a', value: 1 },
    });
    expect(set.status).toBe(200);
    expect(
      (await call('GET', `/api/${user.username}/${slug.toUpperCase()}/content`, { token: user.token })).body,
    ).toEqual({ value: { a: 1 } });
    // Another user cannot create under a case variant of this one's name.
    const other = await newUser();
    expectError(
      await call('POST', `/api/${user.username.toUpperCase()}/${unique('x')}`, { token: other.token }),
      403,
      'FORBIDDEN',
    );
  });

  it('an Idempotency-Key retry under another spelling is the same request', async () => {
    const p = await newProject();
    const key = unique('k');
    const first = await post(p, 'push', { path: 'l', value: 1 }, p.key, { 'idempotency-key': key });
    const retry = await call('POST', `/api/${p.username.toUpperCase()}/${p.slug.toUpperCase()}/content/push`, {
      token: p.key,
      body: { path: 'l', value: 1 },
      headers: { 'idempotency-key': key },
    });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(await content(p, 'l')).toEqual([1]);
  });

  it('an API key of another project stays a 403 under every spelling', async () => {
    const p = await newProject();
    const other = await newProject();
    for (const [username, slug] of [
      [p.username.toUpperCase(), p.slug],
      [p.username, p.slug.toUpperCase()],
    ]) {
      expectError(await call('GET', `/api/${username}/${slug}/content`, { token: other.key }), 403, 'FORBIDDEN');
    }
  });
});

describe('case variants of a member name the same user', () => {
  it('adds, lists, changes and removes a member named in any case, under the canonical name', async () => {
    const p = await newProject();
    const bob = await newUser();
    const path = (name: string) => `/api/${p.username}/${p.slug}/members/${name}`;
    const [upper, mixed] = spellings(bob.username);
    const added = await call('PUT', path(upper!), { token: p.owner, body: { role: 'viewer' } });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ member: bob.username, role: 'viewer' });
    expect((await call('PUT', path(mixed!), { token: p.owner, body: { role: 'editor' } })).body).toEqual({
      member: bob.username,
      role: 'editor',
    });
    const listed = await call('GET', `/api/${p.username}/${p.slug}/members`, { token: p.owner });
    expect(listed.body).toEqual({ owner: p.username, members: [{ username: bob.username, role: 'editor' }] });
    expect((await post(p, 'set', { path: 'by', value: 'bob' }, bob.token)).status).toBe(200);
    const removed = await call('DELETE', path(bob.username.toUpperCase()), { token: p.owner });
    expect(removed.status).toBe(200);
    expectError(await call('DELETE', path(mixed!), { token: p.owner }), 404, 'MEMBER_NOT_FOUND');
    expectError(await call('GET', p.content, { token: bob.token }), 403, 'FORBIDDEN');
  });

  it('refuses the owner under any spelling as a member', async () => {
    const p = await newProject();
    for (const name of spellings(p.username)) {
      expectError(
        await call('PUT', `/api/${p.username}/${p.slug}/members/${name}`, { token: p.owner, body: { role: 'viewer' } }),
        400,
        'INVALID_MEMBER',
      );
    }
    const listed = await call('GET', `/api/${p.username}/${p.slug}/members`, { token: p.owner });
    expect(listed.body.members).toEqual([]);
  });
});

describe('case variants of a JWT username claim name the same user', () => {
  it('a claim in any case is the canonical user: one account, owner of the same project', async () => {
    const name = unique('al');
    const variants = [name.toUpperCase(), `@${name[0]!.toUpperCase()}${name.slice(1)}`, `@${name}`, name];
    const first = await signJwt({ preferred_username: variants[0] });
    const created = await call('POST', `/api/@${name}/site`, { token: first });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ username: `@${name}`, projectSlug: 'site' });
    for (const claim of variants) {
      const token = await signJwt({ preferred_username: claim });
      expectError(await call('POST', `/api/@${name}/site`, { token }), 409, 'PROJECT_EXISTS');
      const got = await call('GET', `/api/@${name.toUpperCase()}/site`, { token });
      expect([claim, got.status, got.body.role, got.body.owner]).toEqual([claim, 200, 'owner', `@${name}`]);
    }
  });

  it('a member added by the canonical name is the same user as a JWT with an upper-case claim', async () => {
    const p = await newProject();
    const name = unique('jm');
    const owner = await signJwt({ preferred_username: name.toUpperCase() });
    expect((await call('POST', `/api/@${name}/own`, { token: owner })).status).toBe(201);
    expect(
      (await call('PUT', `/api/${p.username}/${p.slug}/members/@${name}`, { token: p.owner, body: { role: 'editor' } }))
        .status,
    ).toBe(200);
    expect((await post(p, 'set', { path: 'jwt', value: true }, owner)).status).toBe(200);
  });
});
