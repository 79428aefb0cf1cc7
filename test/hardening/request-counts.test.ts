// DynamoDB requests per content operation, counted at the proxy in front of the engine (storage step 2, issue 14):
// a credential's first request in a process verifies it with one BatchGetItem (the project's head and its grant);
// from then on (warm) every operation costs what it did when keys and members lived in the project item. A
// revocation advances the grant epoch, so the next request of a warm credential fails its condition and re-verifies.
import { type Stack, type StackProject, request, startStack } from '../support/hardening-stack';

describe('DynamoDB requests per operation, cold and warm', () => {
  let stack: Stack;
  let p: StackProject;

  beforeAll(async () => {
    stack = await startStack();
    p = await stack.newProject();
    // Fixtures go straight to the engine: the API process has seen no credential yet.
    await request(`${p.content}/update`, { method: 'POST', token: p.owner, body: { content: { n: 1, l: [1] } } });
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
  });

  /** The requests one API call sends, per operation, and its status. */
  async function counted(url: string, options: Parameters<typeof request>[1]) {
    stack.proxy.reset();
    const answer = await request(url, options);
    return { status: answer.status, requests: stack.proxy.counts() };
  }

  it.each<[string, string, Record<string, unknown>]>([
    ['increment', 'increment', { path: 'n' }],
    ['push', 'push', { path: 'l', value: 2 }],
    ['set', 'set', { path: 'a', value: 'x' }],
  ])('a fast %s: BatchGetItem + UpdateItem with a new key, then one UpdateItem', async (_, route, body) => {
    const { key } = await stack.newKey(p, ['content:read', 'content:write']);
    const url = `${p.content}/${route}`;
    expect(await counted(url, { method: 'POST', token: key, body })).toEqual({
      status: 200,
      requests: { BatchGetItem: 1, UpdateItem: 1 },
    });
    for (let i = 0; i < 3; i++) {
      expect(await counted(url, { method: 'POST', token: key, body })).toEqual({
        status: 200,
        requests: { UpdateItem: 1 },
      });
    }
  });

  it('a read: BatchGetItem + GetItem with a new key, then one GetItem', async () => {
    const { key } = await stack.newKey(p, ['content:read']);
    expect(await counted(p.content, { token: key })).toEqual({
      status: 200,
      requests: { BatchGetItem: 1, GetItem: 1 },
    });
    expect(await counted(p.content, { token: key })).toEqual({ status: 200, requests: { GetItem: 1 } });
  });

  it('a read-then-write (set at a negative index): one BatchGetItem more only the first time', async () => {
    const { key } = await stack.newKey(p, ['content:read', 'content:write']);
    const body = { path: 'l.-1', value: 0 };
    expect(await counted(`${p.content}/set`, { method: 'POST', token: key, body })).toEqual({
      status: 200,
      requests: { BatchGetItem: 1, GetItem: 1, UpdateItem: 1 },
    });
    expect(await counted(`${p.content}/set`, { method: 'POST', token: key, body })).toEqual({
      status: 200,
      requests: { GetItem: 1, UpdateItem: 1 },
    });
  });

  it('a session: its lookup and the verification the first time, then one UpdateItem', async () => {
    const member = await stack.newUser(p, 'editor');
    const body = { path: 'n' };
    expect(await counted(`${p.content}/increment`, { method: 'POST', token: member.token, body })).toEqual({
      status: 200,
      requests: { GetItem: 1, BatchGetItem: 1, UpdateItem: 1 },
    });
    expect(await counted(`${p.content}/increment`, { method: 'POST', token: member.token, body })).toEqual({
      status: 200,
      requests: { UpdateItem: 1 },
    });
  });

  it('a warm key revoked: its next write fails the epoch condition, re-verifies and is a 401; its next read too', async () => {
    const { id, key } = await stack.newKey(p, ['content:read', 'content:write']);
    const body = { path: 'n' };
    expect((await counted(`${p.content}/increment`, { method: 'POST', token: key, body })).status).toBe(200);
    expect((await counted(p.content, { token: key })).status).toBe(200);
    await stack.accounts.revokeApiKey({ username: p.username, slug: p.slug }, id);
    // The failed UpdateItem, the verification (no grant), the key index (gone): 401.
    expect(await counted(`${p.content}/increment`, { method: 'POST', token: key, body })).toEqual({
      status: 401,
      requests: { UpdateItem: 1, BatchGetItem: 1, GetItem: 1 },
    });
    expect(await counted(p.content, { token: key })).toEqual({
      status: 401,
      requests: { BatchGetItem: 1, GetItem: 1 },
    });
  });

  it('a warm member demoted to viewer: the next write is a 403, reads go on', async () => {
    const member = await stack.newUser(p, 'editor');
    const body = { path: 'n' };
    expect((await counted(`${p.content}/increment`, { method: 'POST', token: member.token, body })).status).toBe(200);
    await stack.accounts.setMember({ username: p.username, slug: p.slug }, member.username, 'viewer');
    expect(await counted(`${p.content}/increment`, { method: 'POST', token: member.token, body })).toEqual({
      status: 403,
      requests: { UpdateItem: 1, BatchGetItem: 1 },
    });
    expect(await counted(p.content, { token: member.token })).toEqual({
      status: 200,
      requests: { BatchGetItem: 1, GetItem: 1 },
    });
  });
});
