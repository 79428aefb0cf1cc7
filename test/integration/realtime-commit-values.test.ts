// A change message carries the values of its own commit (issue 27, data integrity 5): where the consumer must read
// segments to complete a value (an insert at the front of a chunked array rewrites its chunks: the whole array is
// sent), it never sends what a later commit wrote there; it sends `changed` when it cannot tell.
import { type Project, content, newProject, post } from '../support/api';
import { Client, applyChanges } from '../support/realtime';

const name = (p: Project) => `${p.username}/${p.slug}`;

describe('realtime: a message holds its own commit', () => {
  it('an insert at the front of a chunked array, then writes to its old elements, while the consumer lags', async () => {
    const p = await newProject();
    const entry = (i: number) => ({ i, note: 'n'.repeat(80) });
    const n = 120;
    for (let i = 0; i < n; i++) expect((await post(p, 'push', { path: 'log', value: entry(i) })).status).toBe(200);
    // Many subscribers: each change is sent to all of them, so the consumer falls behind the writes.
    const clients = await Promise.all(Array.from({ length: 100 }, () => Client.open()));
    try {
      const subs = [];
      for (const c of clients)
        subs.push({ c, ...(await c.subscribe({ project: name(p), token: p.key, path: 'log' })) });
      // The writes back to back (the states after each from a model, checked against the content at the end).
      const states: unknown[] = [];
      const model: any[] = structuredClone(subs[0]?.snapshot.value);
      for (let round = 0; round < 8; round++) {
        expect((await post(p, 'insert', { path: 'log', value: `first${round}`, index: 0 })).status).toBe(200);
        model.unshift(`first${round}`);
        states.push(structuredClone(model));
        for (const at of [20, 60, 110]) {
          expect((await post(p, 'set', { path: `log.${at}.note`, value: `r${round}` })).status).toBe(200);
          model[at].note = `r${round}`;
          states.push(structuredClone(model));
        }
      }
      expect(await content(p, 'log')).toEqual(model);
      // Each subscriber: message i brings its mirror to the state after write i (a `changed` to it, as a GET then).
      for (const { c, snapshot } of subs.slice(0, 3)) {
        const mirror: Record<string, unknown> = { log: structuredClone(snapshot.value) };
        for (const [i, state] of states.entries()) {
          const message = await c.next();
          if (message.type === 'changed') mirror.log = structuredClone(state);
          else applyChanges(mirror, message.changes);
          expect({ write: i, log: mirror.log }).toEqual({ write: i, log: state });
        }
      }
    } finally {
      for (const c of clients) c.close();
    }
  }, 180_000);
});
