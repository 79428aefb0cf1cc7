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

  it('a content over many segments: once a Lambda knows where a path is, a write there is one UpdateItem and a read one GetItem', async () => {
    // About 15 KB: the sections move to segments of their own (storage step 3).
    const content = Object.fromEntries(
      Array.from({ length: 12 }, (_, s) => [
        `s${s}`,
        { n: s, ...Object.fromEntries(Array.from({ length: 4 }, (_, f) => [`f${f}`, 'x'.repeat(300)])) },
      ]),
    );
    const big = await stack.newProject();
    await request(`${big.content}/update`, { method: 'POST', token: big.owner, body: { content } });
    const { key } = await stack.newKey(big, ['content:read', 'content:write']);
    const read = `${big.content}?path=s7.f3`;
    // Cold: the credential's verification, the root, then the segment its stub names.
    expect(await counted(read, { token: key })).toEqual({ status: 200, requests: { BatchGetItem: 1, GetItem: 2 } });
    for (let i = 0; i < 3; i++) {
      expect(await counted(read, { token: key })).toEqual({ status: 200, requests: { GetItem: 1 } });
      const set = await counted(`${big.content}/set`, {
        method: 'POST',
        token: key,
        body: { path: 's7.f1', value: i },
      });
      expect(set).toEqual({ status: 200, requests: { UpdateItem: 1 } });
      const add = await counted(`${big.content}/increment`, { method: 'POST', token: key, body: { path: 's7.n' } });
      expect(add).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    }
    expect((await request(`${big.content}?path=s7.n`, { token: key })).body).toEqual({ value: 10 });
    // A batch over two segments it knows: the root and the two segments read, one transaction (no one-request try).
    expect((await counted(`${big.content}?path=s8.f0`, { token: key })).status).toBe(200);
    const across = await counted(`${big.content}/batch`, {
      method: 'POST',
      token: key,
      body: {
        operations: [
          { op: 'increment', path: 's7.n' },
          { op: 'increment', path: 's8.n' },
        ],
      },
    });
    expect(across).toEqual({ status: 200, requests: { GetItem: 3, TransactWriteItems: 1 } });
    expect((await request(`${big.content}?path=s7.n`, { token: key })).body).toEqual({ value: 11 });
    // A revocation stamps the new grant epoch into every segment: the warm key fails in the segment it knows too.
    const other = await stack.newKey(big, ['content:read', 'content:write']);
    const write = { method: 'POST', token: other.key, body: { path: 's9.n' } } as const;
    expect((await counted(`${big.content}/increment`, write)).status).toBe(200);
    expect((await counted(`${big.content}?path=s9.f0`, { token: other.key })).status).toBe(200);
    await stack.accounts.revokeApiKey({ username: big.username, slug: big.slug }, other.id);
    expect(await counted(`${big.content}/increment`, write)).toEqual({
      status: 401,
      requests: { UpdateItem: 1, BatchGetItem: 1, GetItem: 1 },
    });
    expect((await counted(`${big.content}?path=s9.f0`, { token: other.key })).status).toBe(401);
    expect((await request(`${big.content}?path=s9.n`, { token: key })).body).toEqual({ value: 10 });
  });

  it('a delete that leaves its segment small reads the parent and folds it in: one transaction; under a full parent, one read a minute', async () => {
    const small = await stack.newProject();
    const content = {
      s: { x: 'x'.repeat(1200), y: 'y'.repeat(1200), n: 1 },
      t: { x: 'x'.repeat(1200), y: 'y'.repeat(1200), n: 1, m: 'm'.repeat(300) },
      pad: 'p'.repeat(1400),
    };
    await request(`${small.content}/update`, { method: 'POST', token: small.owner, body: { content } });
    const { key } = await stack.newKey(small, ['content:read', 'content:write']);
    const del = (path: string) => counted(`${small.content}/delete`, { method: 'POST', token: key, body: { path } });
    expect((await counted(`${small.content}?path=s.n`, { token: key })).status).toBe(200);
    expect((await counted(`${small.content}?path=t.n`, { token: key })).status).toBe(200);
    // Still over a quarter of the budget: one UpdateItem.
    expect(await del('s.x')).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    // Under it: the root read, and `s` folded into it with the root's update and its own delete.
    expect(await del('s.y')).toEqual({ status: 200, requests: { UpdateItem: 1, GetItem: 1, TransactWriteItems: 1 } });
    expect(await counted(`${small.content}/increment`, { method: 'POST', token: key, body: { path: 's.n' } })).toEqual({
      status: 200,
      requests: { UpdateItem: 1 },
    });
    // `t` would take the root past what it holds now (and half a budget): read once, then left for a minute.
    expect(await del('t.x')).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    expect(await del('t.y')).toEqual({ status: 200, requests: { UpdateItem: 1, GetItem: 1 } });
    expect(await del('t.n')).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    expect((await request(small.content, { token: key })).body).toEqual({
      value: { s: { n: 2 }, t: { m: 'm'.repeat(300) }, pad: 'p'.repeat(1400) },
    });
  });

  it('a chunked array and a bucketed object of any size: a push or a new member is one UpdateItem, a leaf read one or two reads', async () => {
    // About 60 KB of log and 40 KB of builds: the log is chunked, the builds bucketed (storage step 4).
    const log = Array.from({ length: 600 }, (_, i) => ({ i, note: 'n'.repeat(80) }));
    const builds = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`b${i}`, { i, ok: true }]));
    const big = await stack.newProject();
    await request(`${big.content}/update`, { method: 'POST', token: big.owner, body: { content: { log, builds } } });
    const { key } = await stack.newKey(big, ['content:read', 'content:write']);
    // Cold: the root, then the array's segment (learnt), then the chunk that holds element 3 (one Query).
    expect(await counted(`${big.content}?path=log.3.i`, { token: key })).toEqual({
      status: 200,
      requests: { BatchGetItem: 1, GetItem: 2, Query: 1 },
    });
    for (let i = 0; i < 3; i++) {
      expect(await counted(`${big.content}?path=log.3.i`, { token: key })).toEqual({
        status: 200,
        requests: { GetItem: 1, Query: 1 },
      });
      expect(await counted(`${big.content}?path=log.-1.i`, { token: key })).toEqual({
        status: 200,
        requests: { GetItem: 1 },
      });
      const push = { method: 'POST', token: key, body: { path: 'log', value: { i: 600 + i } } } as const;
      expect(await counted(`${big.content}/push`, push)).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    }
    // A batch on the log's newest elements and a member of the root: those two segments read and written in one
    // transaction, no chunk read (however long the log).
    for (let i = 0; i < 2; i++) {
      const operations = [
        { op: 'push', path: 'log', value: { i: 603 + i } },
        { op: 'increment', path: 'runs' },
      ];
      expect(await counted(`${big.content}/batch`, { method: 'POST', token: key, body: { operations } })).toEqual({
        status: 200,
        requests: { GetItem: 2, TransactWriteItems: 1 },
      });
    }
    // An insert or a delete among the log's chunks, in a Lambda that met the log (the reads above): one Query reads the
    // log's segment and its chunks from the last down to the one holding the index (their keys sort that way, right
    // after the segment's), one transaction rewrites them in place with the log's segment (however long the log). An
    // old element's own write: its chunk found, then written.
    for (let i = 0; i < 2; i++) {
      const insert = { method: 'POST', token: key, body: { path: 'log', index: 500, value: { i: -1 } } } as const;
      expect(await counted(`${big.content}/insert`, insert)).toEqual({
        status: 200,
        requests: { Query: 1, TransactWriteItems: 1 },
      });
      const del = { method: 'POST', token: key, body: { path: 'log.500' } } as const;
      expect(await counted(`${big.content}/delete`, del)).toEqual({
        status: 200,
        requests: { Query: 1, TransactWriteItems: 1 },
      });
      const set = { method: 'POST', token: key, body: { path: 'log.500.i', value: 500 } } as const;
      // The first time: the refused try on the log's segment, the chunk's Query, the write. Once this Lambda has met
      // the chunk: the log's segment and that chunk in one BatchGetItem, then the write.
      expect(await counted(`${big.content}/set`, set)).toEqual({
        status: 200,
        requests: i === 0 ? { UpdateItem: 2, Query: 1 } : { BatchGetItem: 1, UpdateItem: 1 },
      });
    }
    // An insert after the chunks (at the end, whatever the index): one UpdateItem, like a push, held by the chunk
    // stub this Lambda knows (the shifts above changed it, and the Lambda learnt the new one from its own commit).
    for (let i = 0; i < 2; i++) {
      const insert = {
        method: 'POST',
        token: key,
        body: { path: 'log', index: 605 + i, value: { i: 605 + i } },
      } as const;
      expect(await counted(`${big.content}/insert`, insert)).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    }
    // A write to one of its newest elements by index (after the chunks): one UpdateItem on the array's segment, held
    // by the same stub; a delete there too.
    const bump = { method: 'POST', token: key, body: { path: 'log.606.i' } } as const;
    expect(await counted(`${big.content}/increment`, bump)).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    const drop = { method: 'POST', token: key, body: { path: 'log.605' } } as const;
    expect(await counted(`${big.content}/delete`, drop)).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    // The bucketed object: learnt once, then a member is computed to its bucket.
    expect((await counted(`${big.content}?path=builds.b1`, { token: key })).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      expect(await counted(`${big.content}?path=builds.b${500 + i}.i`, { token: key })).toEqual({
        status: 200,
        requests: { GetItem: 1 },
      });
      const set = { method: 'POST', token: key, body: { path: `builds.new${i}`, value: { i } } } as const;
      expect(await counted(`${big.content}/set`, set)).toEqual({ status: 200, requests: { UpdateItem: 1 } });
      const add = { method: 'POST', token: key, body: { path: `builds.b${i}.i`, value: 5 } } as const;
      expect(await counted(`${big.content}/increment`, add)).toEqual({ status: 200, requests: { UpdateItem: 1 } });
    }
    // A batch naming a member and a counter of the root: the one-request try on the root, refused (its item is the
    // root read), the object's segment and the member's bucket read, and one transaction writes the three (however
    // many buckets the object has; the whole object was read and cut afresh before).
    for (let i = 0; i < 2; i++) {
      const operations = [
        { op: 'set', path: `builds.batched${i}`, value: { i } },
        { op: 'increment', path: 'runs' },
      ];
      expect(await counted(`${big.content}/batch`, { method: 'POST', token: key, body: { operations } })).toEqual({
        status: 200,
        requests: { UpdateItem: 1, GetItem: 2, TransactWriteItems: 1 },
      });
    }
    const read = await request(`${big.content}`, { token: key });
    expect(read.body.value.builds.batched1).toEqual({ i: 1 });
    expect((read.body.value.log as unknown[]).length).toBe(606);
    expect((read.body.value.log as unknown[]).slice(-3)).toEqual([{ i: 603 }, { i: 604 }, { i: 607 }]);
    expect(read.body.value.runs).toBe(4);
    expect(read.body.value.builds.new2).toEqual({ i: 2 });
    expect(read.body.value.builds.b2).toEqual({ i: 7, ok: true });
  });

  it("a page of a bucketed object's keys reads its segment and the buckets the page needs by key, never a Query", async () => {
    // 1,000 small members: about 40 KB, bucketed (32 buckets of about 31 keys at the default segment size).
    const builds = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`b${i}`, { i, ok: true }]));
    const big = await stack.newProject();
    await request(`${big.content}/update`, { method: 'POST', token: big.owner, body: { content: { builds } } });
    const { key } = await stack.newKey(big, ['content:read']);
    expect((await counted(`${big.content}?path=builds.b1`, { token: key })).status).toBe(200);
    // The object's segment (the root first the first time: the path names the object, not a member), then one
    // BatchGetItem of the buckets ten keys need.
    const url = `${big.content}?path=builds&shallow=true&limit=10`;
    expect(await counted(url, { token: key })).toEqual({ status: 200, requests: { GetItem: 2, BatchGetItem: 1 } });
    expect(await counted(url, { token: key })).toEqual({ status: 200, requests: { GetItem: 1, BatchGetItem: 1 } });
    const page = await request(url, { token: key });
    const after = `${url}&after=${encodeURIComponent(page.body.next as string)}`;
    expect(await counted(after, { token: key })).toEqual({ status: 200, requests: { GetItem: 1, BatchGetItem: 1 } });
    // All 1,000 in one page, and every key at once: the 32 buckets in one BatchGetItem; no member's segment read.
    const whole = `${big.content}?path=builds&shallow=true&limit=1000`;
    expect(await counted(whole, { token: key })).toEqual({ status: 200, requests: { GetItem: 1, BatchGetItem: 1 } });
    const all = await request(whole, { token: key });
    expect({ keys: Object.keys(all.body.value).length, next: all.body.next }).toEqual({ keys: 1000, next: null });
    expect(await counted(`${big.content}?path=builds&shallow=true`, { token: key })).toEqual({
      status: 200,
      requests: { GetItem: 1, BatchGetItem: 1 },
    });
  });

  it('a read: BatchGetItem + one read with a new key, then one read (a Query for the whole content, GetItem for a path)', async () => {
    const { key } = await stack.newKey(p, ['content:read']);
    expect(await counted(p.content, { token: key })).toEqual({
      status: 200,
      requests: { BatchGetItem: 1, Query: 1 },
    });
    expect(await counted(p.content, { token: key })).toEqual({ status: 200, requests: { Query: 1 } });
    expect(await counted(`${p.content}?path=n`, { token: key })).toEqual({ status: 200, requests: { GetItem: 1 } });
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

  it('a shallow read and an array slice read only the segment that holds the value: one GetItem once warm', async () => {
    // Sections of ~1.2 KB and an array of ~3 KB: each moves to a segment of its own (the array whole, in its parent's).
    const content = {
      ...Object.fromEntries(
        Array.from({ length: 12 }, (_, s) => [
          `s${s}`,
          { n: s, ...Object.fromEntries(Array.from({ length: 4 }, (_, f) => [`f${f}`, 'x'.repeat(300)])) },
        ]),
      ),
      deep: { log: Array.from({ length: 600 }, (_, i) => `e${i}`) },
    };
    const big = await stack.newProject();
    await request(`${big.content}/update`, { method: 'POST', token: big.owner, body: { content } });
    const { key } = await stack.newKey(big, ['content:read']);
    // The root, shallow: its own segment only (cold: the credential's verification first), where the full read is
    // one Query of every segment.
    const root = `${big.content}?shallow=true`;
    expect(await counted(root, { token: key })).toEqual({ status: 200, requests: { BatchGetItem: 1, GetItem: 1 } });
    expect(await counted(root, { token: key })).toEqual({ status: 200, requests: { GetItem: 1 } });
    expect(await counted(big.content, { token: key })).toEqual({ status: 200, requests: { Query: 1 } });
    // A section in a child segment: the root's stub names it, then this Lambda knows where it is.
    const section = `${big.content}?path=s7&shallow=true`;
    expect(await counted(section, { token: key })).toEqual({ status: 200, requests: { GetItem: 2 } });
    for (let i = 0; i < 3; i++) {
      expect(await counted(section, { token: key })).toEqual({ status: 200, requests: { GetItem: 1 } });
    }
    // The full read of that section is a Query of its subtree; the shallow one never is.
    expect(await counted(`${big.content}?path=s7`, { token: key })).toEqual({ status: 200, requests: { Query: 1 } });
    // A slice of the array, from the end, from the start, past the end: the one segment that holds the array.
    expect((await counted(`${big.content}?path=deep.log&start=-1`, { token: key })).status).toBe(200);
    for (const query of ['start=-10', 'start=100&limit=50', 'limit=1000', 'start=5000']) {
      const slice = await counted(`${big.content}?path=deep.log&${query}`, { token: key });
      expect({ query, ...slice }).toEqual({ query, status: 200, requests: { GetItem: 1 } });
    }
    // With If-None-Match: the same read (a 304 saves the transfer, not the request).
    const etag = (await request(section, { token: key })).headers.get('etag') as string;
    expect(await counted(section, { token: key, headers: { 'if-none-match': etag } })).toEqual({
      status: 304,
      requests: { GetItem: 1 },
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
      requests: { BatchGetItem: 1, Query: 1 },
    });
  });
});
