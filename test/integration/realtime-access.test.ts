// A replay with `since` holds only changes made while the credential could read the project (issue 27, abuse 3):
// a member removed and added again, or a key created later, resuming from an older revision gets a fresh snapshot,
// never the changes made while it had no access; a credential that kept its access still gets its replay.
import { type Project, call, newKey, newProject, newUser, post } from '../support/api';
import { clientsClosedAfterEach, applyChanges } from '../support/realtime';

const name = (p: Project) => `${p.username}/${p.slug}`;
const open = clientsClosedAfterEach();

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

  it('random sequences of writes, removals, re-grants and resumes from any revision seen: a replay holds only what the member could read, and brings its copy to the content', async () => {
    const { default: fc } = await import('fast-check');
    const step = fc.oneof(
      {
        arbitrary: fc.record({ kind: fc.constant('write' as const), path: fc.constantFrom('a', 'b', 'sec.x') }),
        weight: 3,
      },
      { arbitrary: fc.record({ kind: fc.constant('delete' as const), path: fc.constantFrom('a', 'sec') }), weight: 1 },
      { arbitrary: fc.record({ kind: fc.constant('remove' as const) }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant('add' as const) }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant('resume' as const), back: fc.nat(3) }), weight: 3 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 20 }), async (steps) => {
        const p = await newProject();
        const viewer = await newUser(p, 'viewer');
        let reads = true;
        /** Which writes (by their value) were made while the member could read. */
        const readable = new Map<string, boolean>();
        /** The member's copy of the content at each revision it was sent. */
        const copies: Array<{ revision: string; copy: Record<string, unknown> }> = [];
        let n = 0;
        // A first write and resume, so that there is a revision to come back to; a resume at the end.
        const all = [{ kind: 'write' as const, path: 'a' }, { kind: 'resume' as const, back: 0 }, ...steps];
        for (const s of [...all, { kind: 'resume' as const, back: 0 }]) {
          if (s.kind === 'write') {
            const value = `w${n++}`;
            readable.set(value, reads);
            expect((await post(p, 'set', { path: s.path, value })).status).toBe(200);
          } else if (s.kind === 'delete') {
            expect((await post(p, 'delete', { path: s.path })).status).toBe(200);
          } else if (s.kind === 'remove' && reads) {
            await setMember(p, viewer.username, undefined);
            reads = false;
          } else if (s.kind === 'add' && !reads) {
            await setMember(p, viewer.username, 'viewer');
            reads = true;
          } else if (s.kind === 'resume' && reads) {
            const from = copies[Math.max(0, copies.length - 1 - s.back)];
            const c = await open();
            c.send({
              action: 'subscribe',
              project: name(p),
              token: viewer.token,
              ...(from ? { since: from.revision } : {}),
            });
            expect(await c.next()).toMatchObject({ type: 'subscribed' });
            await c.quiet(300).catch(() => undefined);
            const frames = c.frames.slice(1);
            c.close();
            let copy = structuredClone(from?.copy ?? {});
            for (const frame of frames) {
              if (frame.type === 'snapshot') copy = structuredClone(frame.value ?? {});
              else if (frame.type === 'change') {
                for (const change of frame.changes) {
                  for (const value of JSON.stringify(change.value ?? null).match(/w\d+/g) ?? []) {
                    expect({ value, readable: readable.get(value) }).toEqual({ value, readable: true });
                  }
                }
                applyChanges(copy, frame.changes);
              } else throw new Error(`unexpected frame ${JSON.stringify(frame)}`);
              copies.push({ revision: frame.revision, copy: structuredClone(copy) });
            }
            const read = await call('GET', p.content, { token: p.key });
            expect(copy).toEqual(read.body.value);
          }
        }
      }),
      {
        numRuns: Math.max(3, Math.round(Number(process.env.PROPERTY_RUNS ?? 40) / 5)),
        ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED) } : {}),
      },
    );
  }, 300_000);
});
