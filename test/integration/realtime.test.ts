// Realtime over real WebSockets against the local server (embedded engine, or DynamoDB Local's stream): snapshots,
// every operation's change in order, trimming to the subscribed path, batches as one message, resuming with
// `since`, revocation, bad frames, limits and 100 connections.
import { type Project, call, content, newKey, newProject, post } from '../support/api';
import { clientsClosedAfterEach, applyChanges } from '../support/realtime';
import { segmentsOf } from '../support/segments';
import { fragmentBytes } from '../../lib/config/env';
import { MAX_SUBSCRIPTIONS_PER_CONNECTION } from '../../lib/realtime/records';

const name = (p: Project) => `${p.username}/${p.slug}`;
const open = clientsClosedAfterEach();

/** A mirror of the content at `path` (as a whole-content object), from a subscription's snapshot. */
function mirrorOf(path: string[], snapshot: any): Record<string, any> {
  if (snapshot.missing) return {};
  if (path.length === 0) return structuredClone(snapshot.value);
  const root: Record<string, any> = {};
  let node: any = root;
  for (const step of path.slice(0, -1)) node = node[step] = {};
  node[path[path.length - 1] as string] = structuredClone(snapshot.value);
  return root;
}

/** Changes in path order: changes to different members of one object come in the engine's map order. */
const byPath = (changes: Array<{ path: string }>) => [...changes].sort((a, b) => (a.path < b.path ? -1 : 1));

/** The value at a path, or undefined when the path runs through anything but an object or array (null, a scalar). */
const at = (value: any, path: string[]) =>
  path.reduce((v, k) => (v !== null && typeof v === 'object' ? v[k] : undefined), value);

describe('realtime: snapshot, then every committed change in order', () => {
  const writes: Array<[string, (p: Project) => Promise<{ status: number }>]> = [
    ['set', (p) => post(p, 'set', { path: 'data.title', value: 'Hello' })],
    ['set a new nested object', (p) => post(p, 'set', { path: 'data.item', value: { name: 'Lamp', count: 3 } })],
    ['push', (p) => post(p, 'push', { path: 'data.items', value: { id: 1 } })],
    ['push again', (p) => post(p, 'push', { path: 'data.items', value: { id: 2 } })],
    ['insert at 0', (p) => post(p, 'insert', { path: 'data.items', value: { id: 0 }, index: 0 })],
    ['insert in the middle', (p) => post(p, 'insert', { path: 'data.items', value: { id: 9 }, index: 1 })],
    ['increment', (p) => post(p, 'increment', { path: 'data.item.count', value: 2 })],
    ['decrement', (p) => post(p, 'decrement', { path: 'data.item.count' })],
    ['increment a missing counter', (p) => post(p, 'increment', { path: 'data.views' })],
    ['delete an element', (p) => post(p, 'delete', { path: 'data.items.1' })],
    ['delete a key', (p) => post(p, 'delete', { path: 'data.title' })],
    [
      'batch',
      (p) =>
        post(p, 'batch', {
          operations: [
            { op: 'set', path: 'data.a', value: 1 },
            { op: 'push', path: 'data.items', value: { id: 3 } },
            { op: 'increment', path: 'data.item.count' },
          ],
        }),
    ],
    [
      'JSON Patch',
      (p) =>
        call('PATCH', p.content, {
          token: p.key,
          rawBody: JSON.stringify([
            { op: 'add', path: '/data/tags', value: ['x'] },
            { op: 'move', from: '/data/a', path: '/data/b' },
            { op: 'replace', path: '/data/item/name', value: 'Desk' },
          ]),
          headers: { 'content-type': 'application/json-patch+json' },
        }),
    ],
    [
      'merge patch',
      (p) =>
        call('PATCH', p.content, {
          token: p.key,
          rawBody: JSON.stringify({ data: { b: null, item: { color: 'red' } } }),
          headers: { 'content-type': 'application/merge-patch+json' },
        }),
    ],
    ['update', (p) => post(p, 'update', { content: { data: { fresh: true, items: [{ id: 1 }] }, other: 1 } })],
    ['a large value (several segments)', (p) => post(p, 'set', { path: 'data.big', value: big() })],
    ['a change inside it', (p) => post(p, 'set', { path: 'data.big.part1.n', value: 2 })],
    ['replace it', (p) => post(p, 'set', { path: 'data.big', value: { small: true } })],
  ];

  it.each([
    ['the whole content', []],
    ['data', ['data']],
    ['data.items', ['data', 'items']],
    ['data.item.count', ['data', 'item', 'count']],
  ])('subscribed to %s, a mirror kept from the messages equals the content after every write', async (_, path) => {
    const p = await newProject();
    const c = await open();
    const { id, snapshot } = await c.subscribe({ project: name(p), token: p.key, path: path.join('.') || undefined });
    expect(path.length === 0 ? snapshot.value : snapshot.missing).toEqual(path.length === 0 ? {} : true);
    const mirror = mirrorOf(path, snapshot);
    let revision = BigInt(snapshot.revision);
    for (const [label, write] of writes) {
      const before = await content(p);
      expect({ label, status: (await write(p)).status }).toEqual({ label, status: 200 });
      const after = await content(p);
      const relevant = JSON.stringify(at(before, path)) !== JSON.stringify(at(after, path));
      if (!relevant) continue;
      const message = await c.next();
      expect(message).toMatchObject({ type: 'change', id, revision: expect.stringMatching(/^\d+$/) });
      // Revisions grow; each path lies inside the subscription.
      expect(BigInt(message.revision) > revision).toBe(true);
      revision = BigInt(message.revision);
      for (const change of message.changes)
        expect(`${change.path}.`.startsWith(path.map((s) => `${s}.`).join(''))).toBe(true);
      applyChanges(mirror, message.changes);
      expect({ label, value: at(mirror, path) }).toEqual({ label, value: at(after, path) });
    }
    await c.quiet();
  });

  it('sends exactly the changed paths: a push as the new element, a set as its value, a delete as deleted', async () => {
    const p = await newProject();
    await post(p, 'update', { content: { data: { items: [{ id: 1 }], n: 1, gone: 'x' } } });
    const c = await open();
    const { id } = await c.subscribe({ project: name(p), token: p.key, path: 'data' });
    await post(p, 'push', { path: 'data.items', value: { id: 2 } });
    expect(await c.next()).toMatchObject({ id, changes: [{ path: 'data.items.1', value: { id: 2 } }] });
    await post(p, 'increment', { path: 'data.n', value: 41 });
    expect(await c.next()).toMatchObject({ changes: [{ path: 'data.n', value: 42 }] });
    await post(p, 'delete', { path: 'data.gone' });
    expect(await c.next()).toMatchObject({ changes: [{ path: 'data.gone', deleted: true }] });
    await post(p, 'insert', { path: 'data.items', value: { id: 0 }, index: 0 });
    expect(await c.next()).toMatchObject({
      changes: [{ path: 'data.items', value: [{ id: 0 }, { id: 1 }, { id: 2 }] }],
    });
  });

  it('keeps exact decimals exact', async () => {
    const p = await newProject();
    const c = await open();
    await c.subscribe({ project: name(p), token: p.key });
    const set = await call('POST', `${p.content}/set`, {
      token: p.key,
      rawBody: '{"path":"n","value":12345678901234567890123}',
      headers: { 'content-type': 'application/json' },
    });
    expect(set.status).toBe(200);
    await c.next();
    const increment = await call('POST', `${p.content}/increment`, {
      token: p.key,
      rawBody: '{"path":"n","value":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(increment.status).toBe(200);
    await c.next();
    // The frames as sent (JSON.parse would round them): every digit, in the form GET writes numbers.
    expect(c.texts.slice(-2)).toEqual([
      expect.stringContaining('"value":1.2345678901234567890123e+22}'),
      expect.stringContaining('"value":1.2345678901234567890124e+22}'),
    ]);
  });
});

/** A value several segments long at the default 3 KB fragment size. */
const big = () => ({
  part1: { text: 'a'.repeat(1500), n: 1 },
  part2: { text: 'b'.repeat(1500) },
  part3: { list: Array.from({ length: 30 }, (_, i) => ({ i, t: 'c'.repeat(40) })) },
});

describe('realtime: what a subscription receives', () => {
  it('nothing for changes outside its path', async () => {
    const p = await newProject();
    const c = await open();
    const { id } = await c.subscribe({ project: name(p), token: p.key, path: 'data.a' });
    await post(p, 'set', { path: 'other', value: 1 });
    await post(p, 'set', { path: 'data.b', value: 1 });
    await post(p, 'set', { path: 'data.ab', value: 1 });
    await post(p, 'set', { path: 'data.a.x', value: 1 });
    expect(await c.next()).toMatchObject({ type: 'change', id, changes: [{ path: 'data.a', value: { x: 1 } }] });
    await c.quiet();
  });

  it('changes above its path trimmed to it, and below it as they are', async () => {
    const p = await newProject();
    await post(p, 'update', { content: { data: { items: [{ id: 0 }, { id: 1, tags: ['a'] }] } } });
    const c = await open();
    const { snapshot } = await c.subscribe({ project: name(p), token: p.key, path: 'data.items.1' });
    expect(snapshot.value).toEqual({ id: 1, tags: ['a'] });
    await post(p, 'update', { content: { data: { items: [{ id: 0 }, { id: 7 }], x: 1 } } });
    expect(byPath((await c.next()).changes)).toEqual([
      { path: 'data.items.1.id', value: 7 },
      { path: 'data.items.1.tags', deleted: true },
    ]);
    await post(p, 'set', { path: 'data.items.1.tags', value: ['b'] });
    expect(await c.next()).toMatchObject({ changes: [{ path: 'data.items.1.tags', value: ['b'] }] });
    await post(p, 'delete', { path: 'data.items.0' });
    // The array shifted: the element now at index 1 is whatever followed (nothing).
    expect(await c.next()).toMatchObject({ changes: [{ path: 'data.items.1', deleted: true }] });
    await post(p, 'delete', { path: 'data' });
    await post(p, 'set', { path: 'data', value: { items: [1, 2] } });
    expect(await c.next()).toMatchObject({ changes: [{ path: 'data.items.1', value: 2 }] });
  });

  it('a batch is one message, a JSON Patch is one message', async () => {
    const p = await newProject();
    const c = await open();
    const { id } = await c.subscribe({ project: name(p), token: p.key });
    await post(p, 'batch', {
      operations: [
        { op: 'set', path: 'a', value: 1 },
        { op: 'push', path: 'l', value: 'x' },
        { op: 'set', path: 'b.c', value: true },
      ],
    });
    const batch = await c.next();
    expect(batch).toEqual({ type: 'change', id, revision: expect.any(String), changes: expect.any(Array) });
    // Members of one object come in the engine's map order (DynamoDB keeps none).
    expect(byPath(batch.changes)).toEqual([
      { path: 'a', value: 1 },
      { path: 'b', value: { c: true } },
      { path: 'l', value: ['x'] },
    ]);
    await call('PATCH', p.content, {
      token: p.key,
      rawBody: JSON.stringify([
        { op: 'remove', path: '/a' },
        { op: 'add', path: '/l/-', value: 'y' },
      ]),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(await c.next()).toMatchObject({
      changes: [
        { path: 'a', deleted: true },
        { path: 'l.1', value: 'y' },
      ],
    });
    await c.quiet();
  });

  it('a write that changes nothing sends nothing', async () => {
    const p = await newProject();
    await post(p, 'set', { path: 'a', value: 1 });
    const c = await open();
    await c.subscribe({ project: name(p), token: p.key });
    await post(p, 'set', { path: 'a', value: 1 });
    await post(p, 'delete', { path: 'missing' });
    await c.quiet();
  });

  it('a delete that folds its segment back into its parent (storage merges) sends the deletion alone', async () => {
    const p = await newProject();
    const B = fragmentBytes();
    const section = { x: 'x'.repeat(Math.ceil(B * 0.4)), y: 'y'.repeat(Math.ceil(B * 0.4)), n: 1 };
    const pad = 'p'.repeat(Math.ceil(B * 0.2));
    await post(p, 'update', { content: { s: section, t: section, pad } });
    const before = (await segmentsOf(p)).length;
    const whole = await open();
    const { id } = await whole.subscribe({ project: name(p), token: p.key });
    const inside = await open();
    const below = await inside.subscribe({ project: name(p), token: p.key, path: 's' });
    await post(p, 'delete', { path: 's.x' });
    await post(p, 'delete', { path: 's.y' });
    await post(p, 'increment', { path: 's.n' });
    for (const c of [whole, inside]) {
      const sub = c === whole ? id : below.id;
      expect(await c.next()).toMatchObject({ id: sub, changes: [{ path: 's.x', deleted: true }] });
      expect(await c.next()).toMatchObject({ id: sub, changes: [{ path: 's.y', deleted: true }] });
      expect(await c.next()).toMatchObject({ id: sub, changes: [{ path: 's.n', value: 2 }] });
      await c.quiet();
    }
    expect(await content(p)).toEqual({ s: { n: 2 }, t: section, pad });
    expect(await segmentsOf(p)).toHaveLength(before - 1);
  });

  it('one connection holds several subscriptions, each with its own id; unsubscribe ends one', async () => {
    const p = await newProject();
    const c = await open();
    const a = await c.subscribe({ project: name(p), token: p.key, path: 'a' });
    const b = await c.subscribe({ project: name(p), token: p.key, path: 'b' });
    expect(a.id).not.toBe(b.id);
    await post(p, 'set', { path: 'b', value: 1 });
    expect(await c.next()).toMatchObject({ id: b.id, changes: [{ path: 'b', value: 1 }] });
    c.send({ action: 'unsubscribe', id: b.id });
    expect(await c.next()).toEqual({ type: 'unsubscribed', id: b.id });
    await post(p, 'set', { path: 'b', value: 2 });
    await post(p, 'set', { path: 'a', value: 2 });
    expect(await c.next()).toMatchObject({ id: a.id, changes: [{ path: 'a', value: 2 }] });
    await c.quiet();
  });

  it('at most MAX_SUBSCRIPTIONS_PER_CONNECTION subscriptions per connection (409 LIMIT_REACHED, its ref echoed), and unsubscribing frees one', async () => {
    const p = await newProject();
    const c = await open();
    const ids: string[] = [];
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_CONNECTION; i++) {
      ids.push((await c.subscribe({ project: name(p), token: p.key, path: `k${i}` })).id);
    }
    c.send({ action: 'subscribe', project: name(p), token: p.key, ref: 'over-1' });
    expect(await c.next()).toEqual({
      type: 'error',
      code: 'LIMIT_REACHED',
      message: expect.any(String),
      ref: 'over-1',
    });
    c.send({ action: 'unsubscribe', id: ids[0] });
    expect(await c.next()).toEqual({ type: 'unsubscribed', id: ids[0] });
    await c.subscribe({ project: name(p), token: p.key });
  });

  it("echoes a subscribe's ref in its subscribed frame and in its refusal; refuses a ref that is not a short name", async () => {
    const p = await newProject();
    const c = await open();
    c.send({ action: 'subscribe', project: name(p), token: p.key, path: 'a', ref: 'r_1-A' });
    expect(await c.next()).toEqual({ type: 'subscribed', id: expect.any(String), path: 'a', ref: 'r_1-A' });
    expect(await c.next()).toMatchObject({ type: 'snapshot', missing: true });
    c.send({ action: 'subscribe', project: name(p), token: 'nope', path: 'a', ref: 'r2' });
    expect(await c.next()).toMatchObject({ type: 'error', code: 'UNAUTHORIZED', ref: 'r2' });
    for (const ref of ['', 'a b', 'x'.repeat(65), 7, { r: 1 }]) {
      c.send({ action: 'subscribe', project: name(p), token: p.key, ref });
      const refusal = await c.next();
      expect(refusal).toMatchObject({ type: 'error', code: 'INVALID_MESSAGE' });
      expect(refusal.ref).toBeUndefined();
    }
  });
});

describe('realtime: paths of segments that move', () => {
  it('a JSON Patch move of a value held in other segments: the moved value at its new path, then changes inside it there', async () => {
    const p = await newProject();
    expect((await post(p, 'set', { path: 'data.big', value: big() })).status).toBe(200);
    const c = await open();
    const whole = await c.subscribe({ project: name(p), token: p.key });
    const moved = await c.subscribe({ project: name(p), token: p.key, path: 'data.moved.part1' });
    expect(moved.snapshot.missing).toBe(true);
    // Learn the segments' paths first (a change inside them), then move them without rewriting them.
    await post(p, 'set', { path: 'data.big.part1.n', value: 5 });
    expect(await c.next()).toMatchObject({ id: whole.id, changes: [{ path: 'data.big.part1.n', value: 5 }] });
    const patch = await call('PATCH', p.content, {
      token: p.key,
      rawBody: JSON.stringify([{ op: 'move', from: '/data/big', path: '/data/moved' }]),
      headers: { 'content-type': 'application/json-patch+json' },
    });
    expect(patch.status).toBe(200);
    const first = [await c.next(), await c.next()];
    const ofWhole = first.find((m) => m.id === whole.id);
    const ofMoved = first.find((m) => m.id === moved.id);
    expect(byPath(ofWhole.changes)).toEqual([
      { path: 'data.big', deleted: true },
      { path: 'data.moved', value: { ...big(), part1: { ...big().part1, n: 5 } } },
    ]);
    expect(ofMoved.changes).toEqual([{ path: 'data.moved.part1', value: { ...big().part1, n: 5 } }]);
    await post(p, 'increment', { path: 'data.moved.part1.n' });
    const second = [await c.next(), await c.next()];
    for (const m of second) expect(m.changes).toEqual([{ path: 'data.moved.part1.n', value: 6 }]);
    await c.quiet();
  });
});

describe('realtime: resuming with since', () => {
  it('replays the changes missed while away, then continues live', async () => {
    const p = await newProject();
    const first = await open();
    await first.subscribe({ project: name(p), token: p.key, path: 'data' });
    await post(p, 'set', { path: 'data.a', value: 1 });
    const seen = await first.next();
    first.close();
    await post(p, 'set', { path: 'data.b', value: 2 });
    await post(p, 'set', { path: 'outside', value: 3 });
    await post(p, 'push', { path: 'data.l', value: 4 });
    // A value as deep as content may nest (29 levels under data.deep): the change log holds it too.
    const deep = Array.from({ length: 28 }).reduce<unknown>((inner) => ({ d: inner }), 'bottom');
    expect((await post(p, 'set', { path: 'data.deep', value: deep })).status).toBe(200);
    const again = await open();
    again.send({ action: 'subscribe', project: name(p), token: p.key, path: 'data', since: seen.revision });
    const subscribed = await again.next();
    expect(subscribed).toMatchObject({ type: 'subscribed', path: 'data' });
    const replayed = [await again.next(), await again.next(), await again.next()];
    expect(replayed).toEqual([
      { type: 'change', id: subscribed.id, revision: expect.any(String), changes: [{ path: 'data.b', value: 2 }] },
      { type: 'change', id: subscribed.id, revision: expect.any(String), changes: [{ path: 'data.l', value: [4] }] },
      {
        type: 'change',
        id: subscribed.id,
        revision: expect.any(String),
        changes: [{ path: 'data.deep', value: deep }],
      },
    ]);
    expect(BigInt(replayed[0].revision) > BigInt(seen.revision)).toBe(true);
    expect(BigInt(replayed[1].revision) > BigInt(replayed[0].revision)).toBe(true);
    await post(p, 'set', { path: 'data.c', value: 5 });
    expect(await again.next()).toMatchObject({ changes: [{ path: 'data.c', value: 5 }] });
    await again.quiet();
  });

  it('a revision the log does not hold gets a fresh snapshot', async () => {
    const p = await newProject();
    await post(p, 'set', { path: 'a', value: 1 });
    const c = await open();
    c.send({ action: 'subscribe', project: name(p), token: p.key, since: '12345' });
    expect(await c.next()).toMatchObject({ type: 'subscribed' });
    expect(await c.next()).toMatchObject({ type: 'snapshot', value: { a: 1 } });
  });
});

describe('realtime: credentials', () => {
  it('a revoked key gets revoked and nothing more; another subscriber keeps receiving', async () => {
    const p = await newProject();
    const second = await newKey(p, ['content:read']);
    const revokedClient = await open();
    const kept = await open();
    const { id } = await revokedClient.subscribe({ project: name(p), token: second.key });
    await kept.subscribe({ project: name(p), token: p.owner });
    const revoke = await call('DELETE', `/api/${p.username}/${p.slug}/keys/${second.id}`, { token: p.owner });
    expect(revoke.status).toBe(200);
    expect(await revokedClient.next()).toEqual({ type: 'revoked', id });
    await post(p, 'set', { path: 'after', value: 1 });
    expect(await kept.next()).toMatchObject({ changes: [{ path: 'after', value: 1 }] });
    await revokedClient.quiet();
  });

  it.each([
    ['no token', (p: Project) => ({ project: name(p) }), 'UNAUTHORIZED'],
    ['a malformed token', (p: Project) => ({ project: name(p), token: 'nope' }), 'UNAUTHORIZED'],
    ['an unknown key', (p: Project) => ({ project: name(p), token: `${p.key.slice(0, -4)}AAAA` }), 'UNAUTHORIZED'],
    ['a missing project', (p: Project) => ({ project: `${p.username}/missing`, token: p.owner }), 'PROJECT_NOT_FOUND'],
    ['a project name that cannot exist', (p: Project) => ({ project: 'nope', token: p.owner }), 'PROJECT_NOT_FOUND'],
    ['a bad path', (p: Project) => ({ project: name(p), token: p.key, path: 'a..b' }), 'INVALID_PATH'],
    ['__proto__ in the path', (p: Project) => ({ project: name(p), token: p.key, path: '__proto__' }), 'RESERVED_KEY'],
    ['an unknown field', (p: Project) => ({ project: name(p), token: p.key, extra: 1 }), 'UNKNOWN_FIELD'],
    ['a bad since', (p: Project) => ({ project: name(p), token: p.key, since: 'x' }), 'INVALID_MESSAGE'],
  ])('subscribe with %s: an error frame', async (_, fields, code) => {
    const p = await newProject();
    const c = await open();
    c.send({ action: 'subscribe', ...fields(p) });
    expect(await c.next()).toEqual({ type: 'error', code, message: expect.any(String) });
    c.send({ action: 'ping' });
    expect(await c.next()).toEqual({ type: 'pong' });
  });

  it('FORBIDDEN for a key without content:read and for a key of another project', async () => {
    const p = await newProject();
    const other = await newProject();
    const writeOnly = await newKey(p, ['content:write']);
    const c = await open();
    c.send({ action: 'subscribe', project: name(p), token: writeOnly.key });
    expect(await c.next()).toEqual({ type: 'error', code: 'FORBIDDEN', message: expect.any(String) });
    c.send({ action: 'subscribe', project: name(p), token: other.key });
    expect(await c.next()).toEqual({ type: 'error', code: 'FORBIDDEN', message: expect.any(String) });
  });
});

describe('realtime: bad frames', () => {
  it('malformed, binary and oversize frames get an error frame; the connection and the server keep working', async () => {
    const p = await newProject();
    const c = await open();
    const cases: Array<[string | Buffer, string]> = [
      ['not json', 'INVALID_MESSAGE'],
      ['[1,2]', 'INVALID_MESSAGE'],
      ['"text"', 'INVALID_MESSAGE'],
      ['{"action":"subscrbe"}', 'INVALID_MESSAGE'],
      ['{"no":"action"}', 'INVALID_MESSAGE'],
      ['{"action":"unsubscribe"}', 'INVALID_MESSAGE'],
      [JSON.stringify({ action: 'subscribe', token: 'x'.repeat(20_000) }), 'MESSAGE_TOO_LARGE'],
      ['x'.repeat(200_000), 'MESSAGE_TOO_LARGE'],
      [Buffer.from([0, 1, 2, 255]), 'INVALID_MESSAGE'],
    ];
    for (const [frame, code] of cases) {
      c.ws.send(frame);
      expect(await c.next()).toEqual({ type: 'error', code, message: expect.any(String) });
    }
    c.send({ action: 'ping' });
    expect(await c.next()).toEqual({ type: 'pong' });
    await c.subscribe({ project: name(p), token: p.key });
    await post(p, 'set', { path: 'ok', value: true });
    expect(await c.next()).toMatchObject({ type: 'change', changes: [{ path: 'ok', value: true }] });
    expect((await call('GET', p.content, { token: p.key })).status).toBe(200);
  });
});

describe('realtime: many connections', () => {
  it('100 concurrent connections each receive the change once', async () => {
    const p = await newProject();
    const many = await Promise.all(Array.from({ length: 100 }, () => open()));
    const ids = await Promise.all(
      many.map((c) => c.subscribe({ project: name(p), token: p.key, path: 'n' }).then((s) => s.id)),
    );
    expect(new Set(ids).size).toBe(100);
    await post(p, 'set', { path: 'n', value: 1 });
    const got = await Promise.all(many.map((c) => c.next()));
    expect(got.map((m, i) => [m.id, m.changes])).toEqual(ids.map((id) => [id, [{ path: 'n', value: 1 }]]));
    await Promise.all(many.map((c) => c.quiet(100)));
  }, 60_000);
});

describe('realtime: messages over 128 KB', () => {
  it('a change or a snapshot over 128 KB is sent as changed (fetch it with GET)', async () => {
    const p = await newProject();
    const c = await open();
    const { id } = await c.subscribe({ project: name(p), token: p.key });
    const large = 'x'.repeat(140 * 1024);
    expect((await post(p, 'set', { path: 'big', value: large })).status).toBe(200);
    const changed = await c.next();
    expect(changed).toEqual({ type: 'changed', id, revision: expect.stringMatching(/^\d+$/) });
    // Small changes after it come as changes again.
    await post(p, 'set', { path: 'small', value: 1 });
    expect(await c.next()).toMatchObject({ type: 'change', changes: [{ path: 'small', value: 1 }] });
    const late = await open();
    late.send({ action: 'subscribe', project: name(p), token: p.key });
    const subscribed = await late.next();
    expect(await late.next()).toEqual({ type: 'changed', id: subscribed.id, revision: expect.stringMatching(/^\d+$/) });
    expect((await content(p, 'big')).length).toBe(large.length);
  });
});

describe('realtime: random operation sequences (the model suite generators)', () => {
  const RUNS = Math.max(2, Math.round(Number(process.env.PROPERTY_RUNS ?? 40) / 5));
  it('after every write, mirrors kept from the messages of subscriptions at several paths equal the content', async () => {
    const { default: fc } = await import('fast-check');
    const { stringify } = await import('lossless-json');
    const { batchRequest, initialContent, rare, requests, resolveBody } = await import('../support/model-generators');
    // The model suite's mutations (every route but get, bad bodies included), ordinary ones three times as likely.
    const mutations = requests.slice(0, 6);
    const step = fc.oneof(
      ...[...mutations, ...mutations, ...mutations, ...rare].map((r) => r.map(([route, body]) => ({ route, body }))),
      batchRequest.map((operations) => ({ route: 'batch', body: { operations } })),
    );
    const paths = [[], ['list'], ['a'], ['a', 'list'], ['0']];
    await fc.assert(
      fc.asyncProperty(initialContent, fc.array(step, { minLength: 1, maxLength: 12 }), async (initial, steps) => {
        const p = await newProject();
        expect(
          (
            await call('POST', `${p.content}/update`, {
              token: p.key,
              rawBody: stringify({ content: initial }),
              headers: { 'content-type': 'application/json' },
            })
          ).status,
        ).toBe(200);
        const c = await open();
        const subs = [];
        for (const path of paths) {
          const { id, snapshot } = await c.subscribe({
            project: name(p),
            token: p.key,
            path: path.join('.') || undefined,
          });
          subs.push({ id, path, mirror: mirrorOf(path, snapshot) });
        }
        let before = await content(p);
        for (const { route, body } of steps) {
          const sent =
            route === 'batch'
              ? {
                  operations: (body as { operations: Record<string, unknown>[] }).operations.map((o) =>
                    resolveBody(o, before),
                  ),
                }
              : resolveBody(body as Record<string, unknown>, before);
          await call('POST', `${p.content}/${route}`, {
            token: p.key,
            rawBody: stringify(sent) as string,
            headers: { 'content-type': 'application/json' },
          });
          const after = await content(p);
          // One message per subscription whose value changed, in subscription order is not promised: match by id.
          const changed = subs.filter((s) => JSON.stringify(at(before, s.path)) !== JSON.stringify(at(after, s.path)));
          const got = [];
          for (let i = 0; i < changed.length; i++) got.push(await c.next());
          expect(got.map((m) => m.id).sort()).toEqual(changed.map((s) => s.id).sort());
          for (const message of got) {
            const sub = subs.find((s) => s.id === message.id) as (typeof subs)[number];
            applyChanges(sub.mirror, message.changes);
          }
          for (const s of subs) {
            expect({ route, sent, path: s.path, value: at(s.mirror, s.path) }).toEqual({
              route,
              sent,
              path: s.path,
              value: at(after, s.path),
            });
          }
          before = after;
        }
        await c.quiet(100);
        c.close();
      }),
      {
        numRuns: RUNS,
        // A missing message waits 8 s per case: shrinking would run into the test's timeout and hide the failure.
        endOnFailure: true,
        ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED) } : {}),
      },
    );
  }, 240_000);
});

/**
 * Subscriptions to the root and to `path`, then each batch: exactly one message to each subscription (whatever
 * segments the commit changed together), which brings its mirror to the content read back; nothing more (the
 * commit's other segments say nothing of their own).
 */
async function expectOneMessageEach(p: Project, path: string, batches: unknown[][]): Promise<void> {
  const c = await open();
  const mirrors = new Map<string, { path: string[]; mirror: Record<string, unknown> }>();
  for (const steps of [[], [path]]) {
    const sub = await c.subscribe({ project: name(p), token: p.key, ...(steps.length ? { path } : {}) });
    mirrors.set(sub.id, { path: steps, mirror: mirrorOf(steps, sub.snapshot) });
  }
  for (const operations of batches) {
    expect((await post(p, 'batch', { operations })).status).toBe(200);
    const expected = await content(p);
    const got = [];
    for (let i = 0; i < mirrors.size; i++) got.push(await c.next());
    expect(got.map((m) => m.id).sort()).toEqual([...mirrors.keys()].sort());
    for (const message of got) {
      const sub = mirrors.get(message.id as string) as { path: string[]; mirror: Record<string, unknown> };
      applyChanges(sub.mirror, message.changes);
      expect(at(sub.mirror, sub.path)).toEqual(at(expected, sub.path));
    }
    await c.quiet(200);
  }
}

describe('realtime: chunked arrays and bucketed objects (storage step 4)', () => {
  it('a batch that changes a chunked array and another path, in two segments at once, is one message to each subscriber', async () => {
    const p = await newProject();
    const entry = (i: number) => ({ i, note: 'n'.repeat(80) });
    for (let i = 0; i < 80; i++) expect((await post(p, 'push', { path: 'log', value: entry(i) })).status).toBe(200);
    const batches = [
      // On the log's newest elements (its segment and the root changed in place together).
      [
        { op: 'push', path: 'log', value: entry(80) },
        { op: 'set', path: 'runs', value: 1 },
      ],
      // On its chunks (the chunks from index 5 on, its segment and the root).
      [
        { op: 'insert', path: 'log', index: 5, value: 'five' },
        { op: 'increment', path: 'runs' },
      ],
      [
        { op: 'delete', path: 'log.2' },
        { op: 'push', path: 'log', value: entry(81) },
        { op: 'set', path: 'meta', value: { ok: true } },
      ],
    ];
    await expectOneMessageEach(p, 'log', batches);
  });

  it('a batch that changes members of a bucketed object and another path, in their buckets and the root at once, is one message to each subscriber', async () => {
    const p = await newProject();
    const builds = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`b${i}`, { i }]));
    expect((await post(p, 'set', { path: 'builds', value: builds })).status).toBe(200);
    const batches = [
      [
        { op: 'set', path: 'builds.new', value: { i: -1 } },
        { op: 'set', path: 'runs', value: 1 },
      ],
      [
        { op: 'delete', path: 'builds.b3' },
        { op: 'increment', path: 'builds.b4.i', value: 10 },
        { op: 'set', path: 'builds.b5.tag', value: 'x' },
        { op: 'increment', path: 'runs' },
      ],
    ];
    await expectOneMessageEach(p, 'builds', batches);
  });

  it('a subscription below a bucketed object that a write removes gets deleted, though its removals span stream batches', async () => {
    const p = await newProject();
    // Members of 0.6 segment: one to a bucket, so the object is over a hundred segments (a stream batch's records).
    const members = Object.fromEntries(
      Array.from({ length: 150 }, (_, i) => [`m${i}`, `${i}`.padEnd(Math.ceil(fragmentBytes() * 0.6), 'x')]),
    );
    expect((await post(p, 'set', { path: 'a', value: { ...members, list: [1, 2] } })).status).toBe(200);
    expect((await post(p, 'set', { path: 'b', value: 1 })).status).toBe(200);
    const c = await open();
    const below = await c.subscribe({ project: name(p), token: p.key, path: 'a.list' });
    const missing = await c.subscribe({ project: name(p), token: p.key, path: 'a.none' });
    expect([below.snapshot.value, missing.snapshot.missing]).toEqual([[1, 2], true]);
    expect((await post(p, 'update', { content: { b: 2 } })).status).toBe(200);
    // Each subscription's message is sent on its own: in no set order.
    const got = [await c.next(), ...(await c.rest())];
    expect(got.filter((m) => m.id === below.id)).toEqual([
      { type: 'change', id: below.id, revision: expect.any(String), changes: [{ path: 'a.list', deleted: true }] },
    ]);
    // The path never there: told nothing, or deleted (what was there is not known until the removals' records come).
    expect(got.filter((m) => m.id !== below.id)).toEqual(
      got.length === 1
        ? []
        : [
            {
              type: 'change',
              id: missing.id,
              revision: expect.any(String),
              changes: [{ path: 'a.none', deleted: true }],
            },
          ],
    );
  });

  it('pushes onto a log larger than a segment arrive at their indexes across rollovers; old elements and members changed in place too', async () => {
    const p = await newProject();
    const entry = (i: number) => ({ i, note: 'n'.repeat(80) });
    const n = 120; // about 11 KB: the log is chunked, rolling over every ~1.5 KB of pushes
    for (let i = 0; i < n; i++) expect((await post(p, 'push', { path: 'log', value: entry(i) })).status).toBe(200);
    const builds = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`b${i}`, { i }]));
    expect((await post(p, 'set', { path: 'builds', value: builds })).status).toBe(200);
    const c = await open();
    const log = await c.subscribe({ project: name(p), token: p.key, path: 'log' });
    expect(log.snapshot.value).toEqual(Array.from({ length: n }, (_, i) => entry(i)));
    const b = await c.subscribe({ project: name(p), token: p.key, path: 'builds' });
    expect(b.snapshot.value).toEqual(builds);
    for (let i = n; i < n + 40; i++) {
      expect((await post(p, 'push', { path: 'log', value: entry(i) })).status).toBe(200);
      expect(await c.next()).toMatchObject({
        type: 'change',
        id: log.id,
        changes: [{ path: `log.${i}`, value: entry(i) }],
      });
    }
    expect((await post(p, 'set', { path: 'log.3.note', value: 'changed' })).status).toBe(200);
    expect(await c.next()).toMatchObject({
      type: 'change',
      id: log.id,
      changes: [{ path: 'log.3.note', value: 'changed' }],
    });
    // A batch of pushes beside a member elsewhere (planned on the log's segment alone, across a rollover): one
    // message to each subscription, with its part.
    for (let i = n + 40; i < n + 60; i += 2) {
      const batch = await post(p, 'batch', {
        operations: [
          { op: 'push', path: 'log', value: entry(i) },
          { op: 'push', path: 'log', value: entry(i + 1) },
          { op: 'set', path: 'runs', value: i },
        ],
      });
      expect(batch.status).toBe(200);
      expect(await c.next()).toMatchObject({
        type: 'change',
        id: log.id,
        changes: [
          { path: `log.${i}`, value: entry(i) },
          { path: `log.${i + 1}`, value: entry(i + 1) },
        ],
      });
    }
    expect((await post(p, 'increment', { path: 'builds.b7.i', value: 10 })).status).toBe(200);
    expect(await c.next()).toMatchObject({ type: 'change', id: b.id, changes: [{ path: 'builds.b7.i', value: 17 }] });
    expect((await post(p, 'set', { path: 'builds.new', value: 1 })).status).toBe(200);
    expect(await c.next()).toMatchObject({ type: 'change', id: b.id, changes: [{ path: 'builds.new', value: 1 }] });
    // An insert at the front shifts every index: the whole array, as for any array. Its chunks are rewritten in place
    // in the same commit, and say nothing of their own: one message.
    const model: unknown[] = Array.from({ length: n + 60 }, (_, i) =>
      i === 3 ? { ...entry(3), note: 'changed' } : entry(i),
    );
    model.unshift('first');
    expect((await post(p, 'insert', { path: 'log', value: 'first', index: 0 })).status).toBe(200);
    const shifted = await c.next();
    expect(shifted).toMatchObject({ type: 'change', id: log.id, changes: [{ path: 'log' }] });
    expect((shifted.changes as Array<{ value: unknown[] }>)[0]?.value).toEqual(model);
    await c.quiet(200);
    // So does a delete in the chunks, and a batch that inserts in them beside a member elsewhere (its part of it).
    expect((await post(p, 'delete', { path: 'log.7' })).status).toBe(200);
    model.splice(7, 1);
    const deleted = await c.next();
    expect(deleted).toMatchObject({ type: 'change', id: log.id, changes: [{ path: 'log' }] });
    expect((deleted.changes as Array<{ value: unknown[] }>)[0]?.value).toEqual(model);
    const batch = await post(p, 'batch', {
      operations: [
        { op: 'insert', path: 'log', index: 20, value: 'twenty' },
        { op: 'set', path: 'runs', value: -1 },
      ],
    });
    expect(batch.status).toBe(200);
    model.splice(20, 0, 'twenty');
    const inserted = await c.next();
    expect(inserted).toMatchObject({ type: 'change', id: log.id, changes: [{ path: 'log' }] });
    expect((inserted.changes as Array<{ value: unknown[] }>)[0]?.value).toEqual(model);
    await c.quiet(200);
  }, 120_000);
});
