// A replay with `since` holds only changes made while the credential could read the project (issue 27, abuse 3):
// a member removed and added again, or a key created later, resuming from an older revision gets a fresh snapshot,
// never the changes made while it had no access; a credential that kept its access still gets its replay.
import { type Project, call, newKey, newProject, newUser, post } from '../support/api';
import { Client } from '../support/realtime';

const name = (p: Project) => `${p.username}/${p.slug}`;
const clients: Client[] = [];
const open = async () => {
  const c = await Client.open();
  clients.push(c);
  return c;
};
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

/** Subscribes with `since` and returns the frames up to the snapshot or the first change, and the subscription id. */
async function resume(token: string, p: Project, since: string) {
  const c = await open();
  c.send({ action: 'subscribe', project: name(p), token, since });
  const subscribed = await c.next();
  expect(subscribed).toMatchObject({ type: 'subscribed' });
  return { c, id: subscribed.id as string, first: await c.next() };
}

const setMember = async (p: Project, username: string, role: string | undefined) => {
  const path = `/api/${p.username}/${p.slug}/members/${username}`;
  const reply = role
    ? await call('PUT', path, { token: p.owner, body: { role } })
    : await call('DELETE', path, { token: p.owner });
  expect([200, 204]).toContain(reply.status);
};

describe('realtime: since and access', () => {
  it('a member removed, then added back, resuming from before: a snapshot, not what changed while removed', async () => {
    const p = await newProject();
    const viewer = await newUser(p, 'viewer');
    const first = await open();
    const { id } = await first.subscribe({ project: name(p), token: viewer.token });
    await post(p, 'set', { path: 'x', value: 1 });
    const seen = await first.next();
    expect(seen).toMatchObject({ type: 'change', changes: [{ path: 'x', value: 1 }] });
    await setMember(p, viewer.username, undefined);
    expect(await first.next()).toEqual({ type: 'revoked', id });
    expect((await post(p, 'set', { path: 'sec.pw', value: 'hunter2-while-removed' })).status).toBe(200);
    expect((await post(p, 'delete', { path: 'sec' })).status).toBe(200);
    await setMember(p, viewer.username, 'viewer');
    const back = await resume(viewer.token, p, seen.revision);
    expect(back.first).toMatchObject({ type: 'snapshot', value: { x: 1 } });
    await back.c.quiet();
    expect(JSON.stringify(back.c.frames)).not.toContain('hunter2');
    // From then on its access is unbroken: a resume from a revision it received replays.
    await post(p, 'set', { path: 'y', value: 2 });
    const live = await back.c.next();
    back.c.close();
    await post(p, 'set', { path: 'z', value: 3 });
    const again = await resume(viewer.token, p, live.revision);
    expect(again.first).toMatchObject({ type: 'change', changes: [{ path: 'z', value: 3 }] });
  });

  it('a key created after a secret was set and deleted, resuming from an older revision: a snapshot', async () => {
    const p = await newProject();
    const watcher = await open();
    await watcher.subscribe({ project: name(p), token: p.key });
    await post(p, 'set', { path: 'sec.pw', value: 'hunter2-before-the-key' });
    const before = await watcher.next();
    await post(p, 'delete', { path: 'sec' });
    await watcher.next();
    const later = await newKey(p, ['content:read']);
    // Revisions are guessable (locally consecutive): the new key walks back to the one before the secret.
    const walked = (BigInt(before.revision) - 1n).toString().padStart(40, '0');
    for (const since of [before.revision, walked]) {
      const { c, first } = await resume(later.key, p, since);
      expect(first).toMatchObject({ type: 'snapshot', value: {} });
      await c.quiet(100);
      expect(JSON.stringify(c.frames)).not.toContain('hunter2');
    }
  });

  it('after any revocation in the project, a resume gets a snapshot (who read since when is forgotten)', async () => {
    const p = await newProject();
    const other = await newKey(p, ['content:read']);
    const first = await open();
    await first.subscribe({ project: name(p), token: p.key });
    await post(p, 'set', { path: 'a', value: 1 });
    const seen = await first.next();
    first.close();
    expect((await call('DELETE', `/api/${p.username}/${p.slug}/keys/${other.id}`, { token: p.owner })).status).toBe(
      200,
    );
    await post(p, 'set', { path: 'b', value: 2 });
    // Any revocation forgets who read since when (the consumer cannot tell whose access it broke): a snapshot.
    const back = await resume(p.key, p, seen.revision);
    expect(back.first).toMatchObject({ type: 'snapshot', value: { a: 1, b: 2 } });
  });
});
