// Faults between the requests of a batch over several segments (issue 15, storage step 3): the segments it reads, the
// transaction that commits it, and answers lost after the engine applied it. Whatever happens, a batch is all or
// nothing: its two increments and its push land together or not at all, and never twice. And around a delete that
// folds its segment back into its parent: whatever the fold meets, the delete answers for itself.
import type { Fault, ProxyRequest } from '../support/dynamo-proxy';
import { type Stack, type StackProject, request, startStack } from '../support/hardening-stack';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('injected faults in batches over several segments: all or nothing, never twice', () => {
  let p: StackProject;
  // About 15 KB: each section moves to a segment of its own.
  const content = Object.fromEntries(
    Array.from({ length: 12 }, (_, s) => [
      `s${s}`,
      { n: s, log: [], ...Object.fromEntries(Array.from({ length: 4 }, (_, f) => [`f${f}`, 'x'.repeat(300)])) },
    ]),
  );

  beforeAll(async () => {
    p = await stack.newProject();
    const r = await request(`${p.content}/update`, { method: 'POST', token: p.key, body: { content } });
    expect(r.status).toBe(200);
  }, 60_000);

  it('reads refused, commits lost after they applied, throttling: every batch applied once or not at all', async () => {
    // Where the sections are is learnt first, so each batch reads its segments and commits one transaction.
    for (const path of ['s3.f0', 's9.f0'])
      expect((await request(`${p.content}?path=${path}`, { token: p.key })).status).toBe(200);
    let n = 0;
    let lostCommits = 0;
    const fault = (r: ProxyRequest): Fault | undefined => {
      const content = r.body.toString('utf8').includes('"S":"C#');
      if (!content) return undefined;
      n++;
      if (r.operation === 'TransactWriteItems' && n % 3 === 0) {
        lostCommits++;
        return { when: 'after', kind: n % 2 ? 'reset' : 'internal' };
      }
      if (r.operation === 'GetItem' && n % 5 === 0) return { when: 'before', kind: 'internal' };
      if (n % 7 === 0) return { when: 'before', kind: 'throttle' };
      return undefined;
    };
    stack.proxy.setFaults(fault);
    const statuses: number[] = [];
    const acknowledged: number[] = [];
    try {
      for (let i = 0; i < 30; i++) {
        const r = await request(`${p.content}/batch`, {
          method: 'POST',
          token: p.key,
          body: {
            operations: [
              { op: 'increment', path: 's3.n' },
              { op: 'increment', path: 's9.n' },
              { op: 'push', path: 's3.log', value: i },
            ],
          },
        });
        statuses.push(r.status);
        if (r.status === 200) acknowledged.push(i);
        else expect({ status: r.status, code: r.body?.code }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      }
    } finally {
      stack.proxy.setFaults(undefined);
    }
    const value = (await request(`${p.content}?path=s3`, { token: p.key })).body.value as { n: number; log: number[] };
    const other = (await request(`${p.content}?path=s9.n`, { token: p.key })).body.value as number;
    const applied = value.n - 3;
    // All or nothing: the two increments and the push landed together, each batch at most once.
    expect(other - 9).toBe(applied);
    expect(value.log).toHaveLength(applied);
    expect(new Set(value.log).size).toBe(value.log.length);
    // Every acknowledged batch is there; the faults did reach the batches (some answers were lost or refused).
    for (const i of acknowledged) expect(value.log).toContain(i);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(lostCommits).toBeGreaterThan(0);
    console.log(
      `batch faults: ${statuses.filter((s) => s === 200).length}/30 acknowledged, ${applied} applied, ${lostCommits} commits' answers lost after they applied`,
    );
  }, 120_000);
});

describe('injected faults around a delete that folds its segment back into its parent (storage merges)', () => {
  it("the parent's read refused, the fold's commit refused or its answer lost: every delete answers 200, the content is exact", async () => {
    // Eight sections of more than half a budget each: one segment each, named by a root of stubs.
    const content = Object.fromEntries(
      Array.from({ length: 8 }, (_, s) => [
        `s${s}`,
        { n: s, ...Object.fromEntries(Array.from({ length: 4 }, (_, f) => [`f${f}`, 'x'.repeat(400)])) },
      ]),
    );
    const p = await stack.newProject();
    expect((await request(`${p.content}/update`, { method: 'POST', token: p.key, body: { content } })).status).toBe(
      200,
    );
    let n = 0;
    const faulted = { reads: 0, commits: 0 };
    const fault = (r: ProxyRequest): Fault | undefined => {
      if (!r.body.toString('utf8').includes('"S":"C#')) return undefined;
      n++;
      if (r.operation === 'GetItem' && n % 3 === 0) {
        faulted.reads++;
        return { when: 'before', kind: 'internal' };
      }
      if (r.operation === 'TransactWriteItems') {
        faulted.commits++;
        return n % 2 ? { when: 'after', kind: 'reset' } : { when: 'before', kind: 'throttle' };
      }
      return undefined;
    };
    stack.proxy.setFaults(fault);
    const statuses: number[] = [];
    try {
      for (let s = 0; s < 8; s++) {
        for (let f = 0; f < 4; f++) {
          const r = await request(`${p.content}/delete`, {
            method: 'POST',
            token: p.key,
            body: { path: `s${s}.f${f}` },
          });
          statuses.push(r.status);
        }
      }
    } finally {
      stack.proxy.setFaults(undefined);
    }
    // A fold is housekeeping after the delete landed: whatever it met, the delete's answer is its own.
    expect(statuses).toEqual(statuses.map(() => 200));
    expect(faulted.commits).toBeGreaterThan(0);
    const expected = Object.fromEntries(Array.from({ length: 8 }, (_, s) => [`s${s}`, { n: s }]));
    expect((await request(p.content, { token: p.key })).body).toEqual({ value: expected });
    // What a fault kept from folding folds at a later delete; every section takes writes wherever it now is.
    for (let s = 0; s < 8; s++) {
      const r = await request(`${p.content}/increment`, { method: 'POST', token: p.key, body: { path: `s${s}.n` } });
      expect(r.status).toBe(200);
    }
    const incremented = Object.fromEntries(Array.from({ length: 8 }, (_, s) => [`s${s}`, { n: s + 1 }]));
    expect((await request(p.content, { token: p.key })).body).toEqual({ value: incremented });
    console.log(`fold faults: ${faulted.reads} parent reads and ${faulted.commits} fold commits faulted`);
  }, 120_000);
});
