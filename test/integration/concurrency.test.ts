// Concurrency: every mutation is atomic; concurrent clients never lose each other's updates.
import { call, newUser, post, type Project, project, type Reply } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
async function state(p: Project): Promise<{ value: any; etag: string | null }> {
  const r = await call('GET', p.content, { token: p.key });
  expect(r.status).toBe(200);
  return { value: r.body.value, etag: r.headers.get('etag') };
}

/** Fires all requests at once and expects every one to succeed with its operation's message. */
async function allSucceed(requests: Array<Promise<Reply>>, message: string): Promise<Reply[]> {
  const replies = await Promise.all(requests);
  const failures = replies.filter((r) => r.status !== 200 || r.body?.message !== message);
  expect(failures.map((r) => ({ status: r.status, body: r.body }))).toEqual([]);
  return replies;
}

/** Every reply carries its own ETag: each write is its own version. */
function expectDistinctEtags(replies: Reply[]): void {
  const etags = replies.map((r) => r.headers.get('etag'));
  expect(etags.every((e) => typeof e === 'string' && /^"[\w-]+"$/.test(e))).toBe(true);
  expect(new Set(etags).size).toBe(replies.length);
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
// -----------------------------------------------------------------------------------------------------------------

describe('concurrent mutations on one project', () => {
  it('50 concurrent decrements on one counter subtract exactly 50', async () => {
    const p = await project({ counter: 100, other: 'x' });
    const replies = await allSucceed(
      range(50).map(() => post(p, 'decrement', { path: 'counter' })),
      'Value decremented successfully',
    );
    expectDistinctEtags(replies);
    expect((await state(p)).value).toEqual({ counter: 50, other: 'x' });
  });

  it('50 concurrent decrements on a missing counter start from 0 and subtract exactly 50', async () => {
    const p = await project({ stats: {} });
    await allSucceed(
      range(50).map(() => post(p, 'decrement', { path: 'stats.left' })),
      'Value decremented successfully',
    );
    expect((await state(p)).value).toEqual({ stats: { left: -50 } });
  });

  it('50 concurrent decrements on a counter inside an array (read-then-write path) subtract exactly 50', async () => {
    const p = await project({ l: [{ n: 0 }, { n: 1000 }] });
    await allSucceed(
      range(50).map(() => post(p, 'decrement', { path: 'l.-1.n' })),
      'Value decremented successfully',
    );
    expect((await state(p)).value).toEqual({ l: [{ n: 0 }, { n: 950 }] });
  });

  it('50 concurrent pushes all land, each value exactly once', async () => {
    const p = await project({ list: ['start'] });
    const replies = await allSucceed(
      range(50).map((i) => post(p, 'push', { path: 'list', value: `v${i}` })),
      'Object pushed successfully',
    );
    expectDistinctEtags(replies);
    const list = (await state(p)).value.list as string[];
    expect(list).toHaveLength(51);
    expect(list[0]).toBe('start');
    expect([...list.slice(1)].sort()).toEqual(
      range(50)
        .map((i) => `v${i}`)
        .sort(),
    );
  });

  it('50 concurrent pushes onto a missing array all land', async () => {
    const p = await project();
    await allSucceed(
      range(50).map((i) => post(p, 'push', { path: 'list', value: { i } })),
      'Object pushed successfully',
    );
    const list = (await state(p)).value.list as Array<{ i: number }>;
    expect(list.map((e) => e.i).sort((a, b) => a - b)).toEqual(range(50));
  });

  it('20 concurrent middle inserts all land: every value once, the original elements in order', async () => {
    const original = ['a', 'b', 'c', 'd'];
    const p = await project({ list: original });
    await allSucceed(
      range(20).map((i) => post(p, 'insert', { path: 'list', value: `x${i}`, index: 2 })),
      'Value inserted successfully',
    );
    const list = (await state(p)).value.list as string[];
    expect(list).toHaveLength(24);
    expect(list.filter((v) => original.includes(v))).toEqual(original);
    // Every insert went in at index 2 of the list it saw: a and b stay in front, c and d at the end.
    expect(list.slice(0, 2)).toEqual(['a', 'b']);
    expect(list.slice(-2)).toEqual(['c', 'd']);
    expect(list.filter((v) => v.startsWith('x')).sort()).toEqual(
      range(20)
        .map((i) => `x${i}`)
        .sort(),
    );
  });

  it('20 concurrent inserts at negative indexes all land', async () => {
    const p = await project({ list: ['first', 'last'] });
    await allSucceed(
      range(20).map((i) => post(p, 'insert', { path: 'list', value: i, index: -1 })),
      'Value inserted successfully',
    );
    const list = (await state(p)).value.list as Array<string | number>;
    expect(list[0]).toBe('first');
    expect(list[list.length - 1]).toBe('last');
    expect(
      list
        .slice(1, -1)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual(range(20));
  });

  it('concurrent inserts at 0 and pushes on one array all land, original in order', async () => {
    const p = await project({ list: ['m'] });
    await Promise.all([
      allSucceed(
        range(15).map((i) => post(p, 'insert', { path: 'list', value: `front${i}`, index: 0 })),
        'Value inserted successfully',
      ),
      allSucceed(
        range(15).map((i) => post(p, 'push', { path: 'list', value: `back${i}` })),
        'Object pushed successfully',
      ),
    ]);
    const list = (await state(p)).value.list as string[];
    expect(list).toHaveLength(31);
    const m = list.indexOf('m');
    expect(list.slice(0, m).every((v) => v.startsWith('front'))).toBe(true);
    expect(list.slice(m + 1).every((v) => v.startsWith('back'))).toBe(true);
    expect(new Set(list).size).toBe(31);
  });

  it('increments and decrements mixed from 50 clients give the exact sum', async () => {
    const p = await project({ n: 1000 });
    // Client i adds i + 1 (even i) or subtracts i + 1 (odd i): the net change is -25.
    const replies = await Promise.all(
      range(50).map((i) => post(p, i % 2 === 0 ? 'increment' : 'decrement', { path: 'n', value: i + 1 })),
    );
    expect(replies.filter((r) => r.status !== 200).map((r) => r.body)).toEqual([]);
    const expected = 1000 + range(50).reduce((sum, i) => sum + (i % 2 === 0 ? i + 1 : -(i + 1)), 0);
    expect(expected).toBe(975);
    expect((await state(p)).value).toEqual({ n: expected });
  });

  it('increments and decrements with decimal amounts from 50 clients give the exact decimal sum', async () => {
    const p = await project({ n: 0.5 });
    // 25 increments of 0.1 and 25 decrements of 0.01: 0.5 + 2.5 - 0.25 = 2.75 exactly.
    await Promise.all(
      range(50).map((i) =>
        i % 2 === 0
          ? post(p, 'increment', { path: 'n', value: 0.1 })
          : post(p, 'decrement', { path: 'n', value: 0.01 }),
      ),
    ).then((replies) => expect(replies.map((r) => r.status)).toEqual(range(50).map(() => 200)));
    expect((await state(p)).value).toEqual({ n: 2.75 });
  });

  it('50 concurrent sets on disjoint existing paths all land', async () => {
    const p = await project({ items: {} });
    await allSucceed(
      range(50).map((i) => post(p, 'set', { path: `items.k${i}`, value: i })),
      'Value set successfully',
    );
    expect((await state(p)).value).toEqual({ items: Object.fromEntries(range(50).map((i) => [`k${i}`, i])) });
  });

  it('50 concurrent sets creating keys under the same missing parent all land', async () => {
    const p = await project();
    await allSucceed(
      range(50).map((i) => post(p, 'set', { path: `fresh.inner.k${i}`, value: i })),
      'Value set successfully',
    );
    expect((await state(p)).value).toEqual({
      fresh: { inner: Object.fromEntries(range(50).map((i) => [`k${i}`, i])) },
    });
  });

  it('concurrent sets on disjoint elements of an array all land', async () => {
    const p = await project({ l: range(30).map(() => ({ v: 0 })) });
    await allSucceed(
      range(30).map((i) => post(p, 'set', { path: `l.${i}.v`, value: i })),
      'Value set successfully',
    );
    expect((await state(p)).value).toEqual({ l: range(30).map((i) => ({ v: i })) });
  });

  it('concurrent deletes of element 0 remove exactly one element each', async () => {
    const p = await project({ l: range(20) });
    await allSucceed(
      range(10).map(() => post(p, 'delete', { path: 'l.0' })),
      'Value deleted successfully',
    );
    expect((await state(p)).value).toEqual({ l: range(20).slice(10) });
  });

  it('mixed operations from owner, editor and keys on different paths all land', async () => {
    const p = await project({ counter: 0, list: [], map: {} });
    const editor = await newUser(p, 'editor');
    const tokens = [p.key, p.owner, editor.token];
    const replies = await Promise.all(
      range(60).flatMap((i) => {
        const token = tokens[i % tokens.length] as string;
        switch (i % 4) {
          case 0:
            return [post(p, 'increment', { path: 'counter' }, token)];
          case 1:
            return [post(p, 'push', { path: 'list', value: i }, token)];
          case 2:
            return [post(p, 'set', { path: `map.k${i}`, value: i }, token)];
          default:
            return [post(p, 'insert', { path: 'list', value: i, index: 0 }, token)];
        }
      }),
    );
    expect(replies.filter((r) => r.status !== 200).map((r) => r.body)).toEqual([]);
    const { value } = await state(p);
    expect(value.counter).toBe(15);
    expect([...value.list].sort((a: number, b: number) => a - b)).toEqual(
      range(60).filter((i) => i % 4 === 1 || i % 4 === 3),
    );
    expect(value.map).toEqual(
      Object.fromEntries(
        range(60)
          .filter((i) => i % 4 === 2)
          .map((i) => [`k${i}`, i]),
      ),
    );
  });

  it('concurrent writers with the same If-Match: exactly one wins, the others get 412 and change nothing', async () => {
    const p = await project({ n: 0 });
    const { etag } = await state(p);
    const replies = await Promise.all(
      range(10).map(() => post(p, 'increment', { path: 'n' }, p.key, { 'if-match': etag as string })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...range(9).map(() => 412)]);
    expect((await state(p)).value).toEqual({ n: 1 });
  });
});
