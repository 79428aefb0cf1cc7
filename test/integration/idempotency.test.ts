import { call, content, newProject, newUser, post, unique } from '../support/api';

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

  it.each([['a'.repeat(256)], ['has space'], ['tab\tkey']])('rejects a malformed key %j with 400 after access checks', async (bad) => {
    const project = await newProject();
    const reply = await post(project, 'push', { path: 'list', value: 1 }, project.key, withKey(bad));
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('INVALID_IDEMPOTENCY_KEY');
    const anonymous = await call('POST', `${project.content}/push`, { body: { path: 'list', value: 1 }, headers: withKey(bad) });
    expect(anonymous.status).toBe(401);
    expect(await content(project, 'list')).toBeUndefined();
  });
});
