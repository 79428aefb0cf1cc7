// Read-then-write operations under a steady stream of other writes. decisions.md: "Every mutation is atomic.
// Concurrent clients never lose each other's updates: N concurrent decrements subtract exactly N, N concurrent pushes
// or inserts all land." Middle inserts, negative-index sets and sets under missing parents are planned after a read and
// written conditionally on the version read; they must still land while other clients keep writing one-request
// operations (increments, pushes) to the same project, and the content must come out exact.
import { type Project, call, newProject, post } from '../support/api';

const BACKGROUND_CLIENTS = 4;
const SLOW_PATH_CLIENTS = 2;
const SLOW_PATH_OPS = 6;

describe('read-then-write operations while other clients keep writing', () => {
  let p: Project;

  beforeAll(async () => {
    p = await newProject();
    expect(
      (await post(p, 'update', { content: { mid: ['first', 'last'], neg: [0, 0, 0], counters: {}, log: [] } })).status,
    ).toBe(200);
  });

  it('middle inserts, negative-index sets and sets under missing parents all land; the content is exact', async () => {
    let stop = false;
    const background = Array.from({ length: BACKGROUND_CLIENTS }, async (_, c) => {
      let increments = 0;
      let pushes = 0;
      while (!stop) {
        if (Math.random() < 0.5) {
          const r = await post(p, 'increment', { path: `counters.c${c}` });
          if (r.status === 200) increments++;
        } else {
          const r = await post(p, 'push', { path: 'log', value: `b${c}-${pushes}` });
          if (r.status === 200) pushes++;
        }
      }
      return { increments, pushes };
    });

    const outcomes: Array<{ what: string; status: number; ms: number; code?: string }> = [];
    const slow = Array.from({ length: SLOW_PATH_CLIENTS }, async (_, c) => {
      for (let i = 0; i < SLOW_PATH_OPS; i++) {
        const ops: Array<[string, string, Record<string, unknown>]> = [
          ['middle insert', 'insert', { path: 'mid', value: `s${c}-${i}`, index: 1 }],
          ['negative-index set', 'set', { path: `neg.-${1 + ((c + i) % 3)}`, value: `s${c}-${i}` }],
          ['set under missing parents', 'set', { path: `new.c${c}.i${i}.x`, value: i }],
        ];
        const [what, route, body] = ops[i % ops.length] as [string, string, Record<string, unknown>];
        const started = performance.now();
        const r = await post(p, route, body);
        outcomes.push({ what, status: r.status, ms: Math.round(performance.now() - started), code: r.body?.code });
      }
    });
    await Promise.all(slow);
    stop = true;
    const counts = await Promise.all(background);

    const refused = outcomes.filter((o) => o.status !== 200);
    console.log(
      `contention: ${outcomes.length} read-then-write requests against ${BACKGROUND_CLIENTS} busy writers; ` +
        `${refused.length} refused (${[...new Set(refused.map((o) => `${o.status} ${o.code}`))].join(', ') || 'none'}); ` +
        `latencies ${outcomes.map((o) => o.ms).join(',')} ms; background writes ${JSON.stringify(counts)}`,
    );
    expect(refused).toEqual([]);

    const content = (await call('GET', p.content, { token: p.key })).body.value;
    counts.forEach(({ increments }, c) => expect(content.counters[`c${c}`] ?? 0).toBe(increments));
    expect(content.log).toHaveLength(counts.reduce((n, c) => n + c.pushes, 0));
    expect(content.mid[0]).toBe('first');
    expect(content.mid[content.mid.length - 1]).toBe('last');
    const inserted = outcomes.filter((o) => o.what === 'middle insert').length;
    expect(content.mid).toHaveLength(2 + inserted);
  });
});
