// Realtime across re-cuts: values large enough to be cut into segments, deletes that fold them back, re-cuts that
// delete a segment whose stubs move into new ones, then writes below. Every committed change reaches a subscriber
// and the change log, whatever segment holds the stub of the segment it changed (docs/design/storage.md §3a).
import { type Project, call, content, newProject, post } from '../support/api';
import { Client, applyChanges } from '../support/realtime';
import { sameJson } from '../support/model-reference';
import { fragmentBytes } from '../../lib/config/env';

const name = (p: Project) => `${p.username}/${p.slug}`;
const clients: Client[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

/** A route's POST body; `merge`: a merge patch (`body.patch`), PATCH on the content. */
type Step = { route: string; body: Record<string, unknown> };

/** Runs the steps with a root subscription: after each write that changed the content, one message brings the mirror to it. */
async function expectDelivered(steps: Step[]): Promise<void> {
  const p = await newProject();
  const c = await Client.open();
  clients.push(c);
  const { snapshot } = await c.subscribe({ project: name(p), token: p.key });
  const mirror = structuredClone(snapshot.value);
  let before = await content(p);
  for (const [i, { route, body }] of steps.entries()) {
    const res =
      route === 'merge'
        ? await call('PATCH', p.content, {
            token: p.key,
            body: body.patch,
            headers: { 'content-type': 'application/merge-patch+json' },
          })
        : await post(p, route, body);
    const after = await content(p);
    // Unchanged as JSON, whatever order a re-cut lists an object's members in (a set of the same value sends nothing).
    if (res.status !== 200 || sameJson(before, after)) continue;
    const message = await c.next().catch((error) => {
      throw new Error(`step ${i} ${route} ${JSON.stringify(body).slice(0, 200)}: ${String(error).slice(0, 300)}`);
    });
    applyChanges(mirror, message.changes);
    expect({ step: i, route, value: mirror }).toEqual({ step: i, route, value: after });
    before = after;
  }
  await c.quiet(200);
}

describe('realtime across re-cuts', () => {
  it('a segment whose parent folded away, its stub now held by its grandparent: later changes below it arrive', async () => {
    const B = fragmentBytes();
    const blob = (n: number) => 'x'.repeat(Math.ceil(B * n));
    await expectDelivered([
      // sub, sub.n and sub.n.s20 each a segment.
      {
        route: 'update',
        body: {
          content: {
            sub: { n: { s20: { f0: blob(0.4), f1: blob(0.4) }, a: blob(0.3), b: blob(0.3) }, pad: blob(0.3) },
          },
        },
      },
      // sub.n small again: it folds into sub, which now holds the stub of sub.n.s20 (whose key names sub.n's).
      { route: 'delete', body: { path: 'sub.n.a' } },
      { route: 'delete', body: { path: 'sub.n.b' } },
      // A new segment beside sub: the root's stubs change (the consumer forgets what it knew below).
      { route: 'set', body: { path: 'other', value: { x: blob(0.45), y: blob(0.45), z: blob(0.45) } } },
      { route: 'set', body: { path: 'sub.n.s20.f0', value: 1 } },
      { route: 'set', body: { path: 'sub.n.z', value: 1 } },
      { route: 'set', body: { path: 'sub.n.s20.f1', value: 2 } },
    ]);
  });

  // The multi-process suite's content (test/multiprocess/generators.ts `initial`): with 256-byte segments c.obj is a
  // bucketed object inside the bucketed c, the log a chunked array. A new member of c.obj created by an increment,
  // then a sibling large enough to cut the bucket, then a merge patch adding another member: each change arrives.
  it('new members of a nested bucketed object, created beside cuts and merge patches, all arrive', async () => {
    const c: Record<string, unknown> = { n: 0 };
    c.obj = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`y${i}`, { n: i }]));
    for (let b = 0; b < 6; b++) c[`blob${b}`] = { f0: `v${b}`, f1: b, f2: true, f3: 'xxxxxxxxxxxx' };
    const n = Object.fromEntries(
      Array.from({ length: 4 }, (_, s) => [`s${s}`, { f0: s, f1: 'abcdefghijklmnop', f2: [s, s] }]),
    );
    await expectDelivered([
      { route: 'update', body: { content: { c, log: Array.from({ length: 20 }, (_, i) => ({ i })), sub: { n } } } },
      { route: 'set', body: { path: 'list', value: [] } },
      { route: 'increment', body: { path: 'c.obj.new1.n' } },
      { route: 'set', body: { path: 'c.obj.y21', value: { n: 1, f0: 'z'.repeat(300) } } },
      { route: 'merge', body: { patch: { c: { obj: { y45: { n: 1 } }, blob0: { f0: 'a'.repeat(300) } } } } },
      { route: 'increment', body: { path: 'c.obj.new1.n' } },
      { route: 'delete', body: { path: 'c.obj.y21' } },
      { route: 'increment', body: { path: 'c.obj.new1.n' } },
      { route: 'increment', body: { path: 'sub.n.s6.n' } },
      { route: 'set', body: { path: 'c.blob11', value: { n: 1, f0: 'a'.repeat(500) } } },
      { route: 'increment', body: { path: 'sub.n.s6.n' } },
    ]);
  });

  // Found by the multi-process suite (seed 2704): a new member of the bucketed sub.n beside a long string pushed to
  // the list, a new blob and a merge patch into another bucket.
  it('a new member of a bucketed object beside pushes, new blobs and merge patches arrives', async () => {
    const c: Record<string, unknown> = { n: 0 };
    c.obj = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`y${i}`, { n: i }]));
    for (let b = 0; b < 7; b++) c[`blob${b}`] = { f0: `v${b}`, f1: b, f2: true, f3: 'xxxxxxxxxxxx' };
    const n = Object.fromEntries(
      Array.from({ length: 6 }, (_, s) => [`s${s}`, { f0: s, f1: 'abcdefghijklmnop', f2: [s, s] }]),
    );
    const log = Array.from({ length: 26 }, (_, i) => ({ i }));
    await expectDelivered([
      { route: 'update', body: { content: { c, log, sub: { n } } } },
      { route: 'set', body: { path: 'list', value: [] } },
      {
        route: 'batch',
        body: {
          operations: [
            { op: 'set', path: 'c.obj.y36', value: 0.5 },
            { op: 'set', path: 'log.0', value: ['', 'x'] },
            { op: 'set', path: 'sub.n.z', value: { '2': {} } },
            { op: 'set', path: 'c.obj.y2', value: 701 },
          ],
        },
      },
      { route: 'merge', body: { patch: { sub: { n: { s24: { f2: 579 } } } } } },
      { route: 'push', body: { path: 'list', value: 'a'.repeat(519) } },
      { route: 'push', body: { path: 'log', value: -1 } },
      { route: 'merge', body: { patch: { c: { blob7: { f2: 5 } } } } },
      { route: 'increment', body: { path: 'sub.n.s6.n' } },
      { route: 'set', body: { path: 'c.blob11', value: { n: 1, f0: 'a'.repeat(630) } } },
      { route: 'increment', body: { path: 'c.n', value: 2 } },
      { route: 'increment', body: { path: 'sub.n.s6.n' } },
    ]);
  });

  it('random sequences of large values, folding deletes and writes below: every change arrives, the mirror equals the content', async () => {
    const { default: fc } = await import('fast-check');
    const B = fragmentBytes();
    const blob = (n: number) => 'x'.repeat(Math.ceil(B * n));
    const member = fc.constantFrom('sub', 'n', 's0', 's1', 's20', 'z', 'f0');
    const path = fc.array(member, { minLength: 1, maxLength: 4 }).map((rest) => rest.join('.'));
    const flat = (k: number) =>
      Object.fromEntries(Array.from({ length: k }, (_, i) => [`s${i}`, { f0: blob(0.15), f1: i }]));
    const large = fc.oneof(
      fc.integer({ min: 2, max: 30 }).map(flat),
      fc.integer({ min: 2, max: 12 }).map((k) => ({ n: flat(k), sub: { n: flat(k), z: blob(0.3) } })),
    );
    const step = fc.oneof(
      fc.record({
        route: fc.constant('set'),
        body: fc.record({ path, value: fc.oneof(fc.integer(), large, fc.constant(blob(0.4))) }),
      }),
      fc.record({ route: fc.constant('delete'), body: fc.record({ path }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 10 }), async (steps) =>
        expectDelivered(steps as Step[]),
      ),
      {
        numRuns: Math.max(5, Math.round(Number(process.env.PROPERTY_RUNS ?? 40) / 4)),
        ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED) } : {}),
      },
    );
  }, 600_000);
});
