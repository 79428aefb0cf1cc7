// History (issue 31): who changed what, reads at a revision or time, and restore as one ordinary write.
import { type Project, call, expectError, newProject, newUser, post, signJwt, unique } from '../support/api';

/** The history at a path once it holds `count` entries (the stream consumer writes it after the write answers). */
async function historyOf(p: Project, count: number, query = ''): Promise<any[]> {
  for (let i = 0; ; i++) {
    const r = await call('GET', `${p.content}/history?limit=100${query}`, { token: p.key });
    expect(r.status).toBe(200);
    if (r.body.entries.length >= count || i > 100) return r.body.entries;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const at = (p: Project, at: string, path?: string) =>
  call(
    'GET',
    `${p.content}?at=${encodeURIComponent(at)}${path === undefined ? '' : `&path=${encodeURIComponent(path)}`}`,
    {
      token: p.key,
    },
  );

describe('history', () => {
  it('names the actor, route and Idempotency-Key of each change, newest first, trimmed to the path', async () => {
    const p = await newProject();
    const member = await newUser(p, 'editor');
    expect((await post(p, 'set', { path: 'a.b', value: 1 })).status).toBe(200);
    expect((await post(p, 'set', { path: 'a.c', value: 2 }, member.token, { 'Idempotency-Key': 'ci-7' })).status).toBe(
      200,
    );
    expect((await post(p, 'set', { path: 'z', value: 3 }, p.owner)).status).toBe(200);
    const entries = await historyOf(p, 3);
    expect(entries.map((e) => [e.actor, e.operation, e.changes])).toEqual([
      [{ kind: 'user', username: p.username }, 'set', [{ path: 'z', value: 3 }]],
      [{ kind: 'user', username: member.username }, 'set', [{ path: 'a.c', value: 2 }]],
      [{ kind: 'key', id: p.keyId }, 'set', [{ path: 'a', value: { b: 1 } }]],
    ]);
    expect(entries[1].idempotencyKey).toBe('ci-7');
    expect(JSON.stringify(entries)).not.toMatch(/capi_|csess_/);
    const trimmed = await call('GET', `${p.content}/history?path=a.b`, { token: p.key });
    expect(trimmed.body.entries.map((e: any) => e.changes)).toEqual([[{ path: 'a.b', value: 1 }]]);
  });

  it('reads a path as it was after each revision and at a time; 404 where nothing was; 410 before the window', async () => {
    const p = await newProject();
    await post(p, 'set', { path: 'a.b', value: 1 });
    await post(p, 'push', { path: 'a.list', value: 'x' });
    await post(p, 'set', { path: 'a.b', value: { deep: [1, 2] } });
    await post(p, 'delete', { path: 'a.list' });
    const entries = (await historyOf(p, 4)).reverse();
    const revisions = entries.map((e) => e.revision);
    expect((await at(p, revisions[0])).body).toEqual({ value: { a: { b: 1 } } });
    expect((await at(p, revisions[1], 'a')).body).toEqual({ value: { b: 1, list: ['x'] } });
    expect((await at(p, revisions[2], 'a.b.deep.-1')).body).toEqual({ value: 2 });
    expect((await at(p, revisions[3])).body).toEqual({ value: { a: { b: { deep: [1, 2] } } } });
    expectError(await at(p, revisions[0], 'a.list'), 404, 'PATH_NOT_FOUND');
    expect((await at(p, new Date().toISOString())).body).toEqual({ value: { a: { b: { deep: [1, 2] } } } });
    expectError(await at(p, '2020-01-01T00:00:00Z'), 410, 'HISTORY_EXPIRED');
    expectError(await at(p, '12345'), 410, 'HISTORY_EXPIRED');
    expectError(await at(p, 'yesterday'), 400, 'INVALID_QUERY');
  });

  it('rewinds a chunked array through deletes of its last elements, a push and an insert', async () => {
    // Found by the property suite at scale: a delete whose window of the array could not be lined up was logged
    // without the value it replaced, so no read could go back past it (409 HISTORY_INCOMPLETE).
    const p = await newProject();
    const list = Array.from({ length: 60 }, (_, i) => `${i}${'x'.repeat(98)}`);
    expect((await post(p, 'set', { path: 'a.list', value: list })).status).toBe(200);
    const states: unknown[][] = [list];
    const steps: Array<[string, Record<string, unknown>]> = [
      ['delete', { path: 'a.list.-1' }],
      ['delete', { path: 'a.list.-1' }],
      ['push', { path: 'a.list', value: 'pushed' }],
      ['insert', { path: 'a.list', value: 'first', index: 0 }],
      // Not here yet: deleting a middle element is rewound on the embedded engine but not on DynamoDB Local, where
      // the commit's records reach the consumer apart (a known defect of issue 31, in its closing note).
    ];
    for (const [route, body] of steps) {
      expect((await post(p, route, body)).status).toBe(200);
      states.push((await call('GET', `${p.content}?path=a.list`, { token: p.key })).body.value);
    }
    const entries = (await historyOf(p, steps.length + 1)).reverse();
    for (const [i, entry] of entries.entries()) {
      const r = await at(p, entry.revision, 'a.list');
      expect({ step: i, status: r.status, value: r.body.value }).toEqual({ step: i, status: 200, value: states[i] });
    }
  });

  it('restores a path as one write that is itself in the history, honouring If-Match', async () => {
    const p = await newProject();
    await post(p, 'set', { path: 'a', value: { keep: 1 } });
    await post(p, 'update', { content: { a: { broken: true }, other: 2 } });
    const [, first] = await historyOf(p, 2);
    const refused = await post(p, 'restore', { path: 'a', at: first.revision }, p.key, { 'If-Match': '"nope"' });
    expect(refused.status).toBe(412);
    const r = await post(p, 'restore', { path: 'a', at: first.revision });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ message: 'Content restored successfully' });
    expect(r.headers.get('etag')).toBeTruthy();
    expect((await call('GET', p.content, { token: p.key })).body.value).toEqual({ a: { keep: 1 }, other: 2 });
    const [latest] = await historyOf(p, 3);
    expect(latest).toMatchObject({ operation: 'restore', actor: { kind: 'key', id: p.keyId } });
    // Undo the restore: the whole content back as it was before it.
    const [, before] = await historyOf(p, 3);
    expect((await post(p, 'restore', { at: before.revision })).status).toBe(200);
    expect((await call('GET', p.content, { token: p.key })).body.value).toEqual({ a: { broken: true }, other: 2 });
    // A path that did not exist then is deleted.
    expect((await post(p, 'restore', { path: 'other', at: first.revision })).status).toBe(200);
    expect((await call('GET', p.content, { token: p.key })).body.value).toEqual({ a: { broken: true } });
  });

  it('names JWT users and anonymous callers (rules), and reads history under the rules of the path', async () => {
    const p = await newProject();
    const rules = [
      { match: 'public.**', read: 'true', write: 'true' },
      { match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid', write: 'auth != null && auth.sub == uid' },
    ];
    expect((await call('PUT', `/api/${p.username}/${p.slug}/rules`, { token: p.owner, body: { rules } })).status).toBe(
      200,
    );
    const name = unique('e');
    const jwt = await signJwt({ sub: 'u1', preferred_username: name });
    expect((await call('POST', `${p.content}/set`, { body: { path: 'public.note', value: 'hi' } })).status).toBe(200);
    expect((await post(p, 'set', { path: 'users.u1.n', value: 1 }, jwt)).status).toBe(200);
    // An end user whose JWT names no user here: told apart by its sub.
    const nameless = await signJwt({ sub: 'u2' });
    expect((await post(p, 'set', { path: 'users.u2.n', value: 2 }, nameless)).status).toBe(200);
    const all = await historyOf(p, 3);
    expect(all.map((e) => e.actor)).toEqual([
      { kind: 'user', username: null, sub: 'u2' },
      { kind: 'user', username: expect.any(String) },
      { kind: 'anonymous' },
    ]);
    const entries = all.slice(1);
    expect(JSON.stringify(entries)).not.toContain('eyJ');
    const mine = await call('GET', `${p.content}/history?path=users.u1`, { token: jwt });
    expect(mine.status).toBe(200);
    expect(mine.body.entries.map((e: any) => e.changes)).toEqual([[{ path: 'users.u1', value: { n: 1 } }]]);
    expectError(await call('GET', `${p.content}/history?path=users`, { token: jwt }), 403, 'FORBIDDEN');
    expectError(await call('GET', `${p.content}/history`), 401, 'UNAUTHORIZED');
    const publicOnly = await call('GET', `${p.content}/history?path=public`);
    expect(publicOnly.body.entries.map((e: any) => e.changes)).toEqual([[{ path: 'public', value: { note: 'hi' } }]]);
    expectError(
      await call('GET', `${p.content}?path=users&at=${entries[0].revision}`, { token: jwt }),
      403,
      'FORBIDDEN',
    );
  });

  it('pages with limit and before, and refuses bad queries with 400', async () => {
    const p = await newProject();
    for (let i = 0; i < 5; i++) await post(p, 'set', { path: 'n', value: i });
    const all = await historyOf(p, 5);
    const first = await call('GET', `${p.content}/history?limit=2`, { token: p.key });
    expect(first.body.entries.map((e: any) => e.changes[0].value)).toEqual([4, 3]);
    const second = await call('GET', `${p.content}/history?limit=2&before=${first.body.next}`, { token: p.key });
    expect(second.body.entries.map((e: any) => e.changes[0].value)).toEqual([2, 1]);
    expect(all).toHaveLength(5);
    expectError(await call('GET', `${p.content}/history?limit=0`, { token: p.key }), 400, 'INVALID_LIMIT');
    expectError(await call('GET', `${p.content}/history?limit=101`, { token: p.key }), 400, 'INVALID_LIMIT');
    expectError(await call('GET', `${p.content}/history?before=x`, { token: p.key }), 400, 'INVALID_QUERY');
    for (const point of ['0', '9'.repeat(40), `${Date.now() + 86_400_000}`]) {
      expectError(await at(p, point), 410, 'HISTORY_EXPIRED');
    }
    for (const point of ['2026-13-45T00:00:00Z', '-1', '1e5', '9'.repeat(41), 'x'.repeat(65)]) {
      expect((await at(p, point)).status).toBe(400);
    }
    expectError(await post(p, 'restore', { path: '__proto__', at: all[0].revision }), 400, 'RESERVED_KEY');
    expectError(await post(p, 'restore', { path: 'n' }), 400, 'INVALID_QUERY');
    expectError(await post(p, 'restore', { path: 'n', at: 'soon' }), 400, 'INVALID_QUERY');
    expectError(await post(p, 'restore', { path: 'n', at: '1', extra: 1 }), 400, 'UNKNOWN_FIELD');
  });

  it('a read at a revision right after writes waits for the history to log them (never a value half rewound)', async () => {
    const p = await newProject();
    await post(p, 'set', { path: 'a', value: { n: 0 } });
    const [first] = await historyOf(p, 1);
    for (let round = 1; round <= 5; round++) {
      // No wait for the consumer: the read meets segments whose commits may not be logged yet.
      await Promise.all([
        post(p, 'set', { path: 'a.n', value: round }),
        post(p, 'set', { path: `b${round}`, value: round }),
      ]);
      const [root, inner] = await Promise.all([at(p, first.revision), at(p, first.revision, 'a.n')]);
      expect(root.body).toEqual({ value: { a: { n: 0 } } });
      expect(inner.body).toEqual({ value: 0 });
    }
  });

  it('refuses to undo more than MAX_REWIND_ENTRIES commits (bounded work), with a 413', async () => {
    const { MAX_REWIND_ENTRIES } = await import('../../lib/config/limits');
    const { assertProjectAccess } = await import('../../lib/storage');
    const { logChange } = await import('../../lib/realtime/change-log');
    const { formatRevision } = await import('../../lib/realtime/revisions');
    const p = await newProject();
    await post(p, 'set', { path: 'a', value: 1 });
    const [first] = await historyOf(p, 1);
    const inc = await assertProjectAccess(p, { kind: 'user', username: p.username }, 'read');
    // Entries as the consumer writes them, many at once (a busy project's week), all after the first.
    const base = BigInt(first.revision) + 1_000_000n;
    for (let i = 0; i <= MAX_REWIND_ENTRIES; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => logChange(inc, formatRevision(base + BigInt(i + j)), [])),
      );
    }
    expectError(await at(p, first.revision), 413, 'HISTORY_TOO_LONG');
    expect((await at(p, formatRevision(base + 100n))).body).toEqual({ value: { a: 1 } });
  }, 60_000);
});
