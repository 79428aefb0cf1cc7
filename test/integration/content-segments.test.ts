// A content over many segments (docs/design/storage.md): what clients see is the same JSON, whatever the layout; each
// segment stays within its 4 KB item, writes land in the segment that holds their path, and nothing is left behind.
import { itemSize } from '../../bench/lib/item-size';
import { fragmentBytes } from '../../lib/config/env';
import { byChunkStart } from '../../lib/storage/layout/keys';
import { chunkStubOf } from '../../lib/storage/layout/chunked';
import type { Segment } from '../../lib/storage/segment';
import { MESSAGES, type Project, call, expectError, post, project, state, unique } from '../support/api';
import { incarnationOf, segmentsOf, strays } from '../support/segments';

const text = (n: number, c = 'x') => c.repeat(n);
/** A content of `sections` objects of `fields` strings of `size` bytes: several KB, so several segments. */
const wide = (sections: number, fields = 4, size = 300) =>
  Object.fromEntries(
    Array.from({ length: sections }, (_, s) => [
      `s${s}`,
      { n: s, ...Object.fromEntries(Array.from({ length: fields }, (_, f) => [`f${f}`, text(size, String(f))])) },
    ]),
  );

const get = async (p: Project, path?: string) =>
  call('GET', `${p.content}${path === undefined ? '' : `?path=${encodeURIComponent(path)}`}`, { token: p.key });

async function ok(p: Project, op: keyof typeof MESSAGES, body: unknown, headers?: Record<string, string>) {
  const r = await call('POST', `${p.content}/${op}`, { token: p.key, body, headers });
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGES[op] } });
  return r;
}

/** Every segment within one 4 KB item, unless it is a value that cannot be cut (a long array or string). */
async function expectSegmentsWithinBudget(p: Project): Promise<Segment[]> {
  // Nothing left behind, nothing missing.
  expect(await strays(p)).toEqual({ orphans: [], dangling: [] });
  const segments = await segmentsOf(p);
  for (const s of segments) {
    const size = itemSize(s.raw);
    if (size > 4096) {
      // Only a fragment with nothing left to move out (scalars, arrays) may be larger.
      const f = s.fragment as Record<string, unknown>;
      expect(Object.values(f).every((v) => typeof v !== 'object' || v === null || Array.isArray(v))).toBe(true);
    }
  }
  return segments;
}

/**
 * Runs `act` while the first Query that `pick` selects is in flight: the Query reads the state before `act`, and its
 * answer is then built by `answer` from that and the state after (as a read that meets a commit half-way would).
 */
async function duringQuery(
  pick: (input: Record<string, unknown>) => boolean,
  act: () => Promise<void>,
  answer: (
    before: Record<string, { S?: string }>[],
    after: Record<string, { S?: string }>[],
  ) => Record<string, { S?: string }>[],
  run: () => Promise<unknown>,
): Promise<{ result: unknown; queries: number; met: boolean }> {
  const { dynamo } = await import('../../lib/dynamo/client');
  const { QueryCommand } = await import('@aws-sdk/client-dynamodb');
  type Page = { Items?: Record<string, { S?: string }>[] };
  const send = dynamo.send.bind(dynamo) as (command: unknown) => Promise<Page>;
  let queries = 0;
  let met = false;
  const spy = jest.spyOn(dynamo, 'send').mockImplementation((async (command: unknown) => {
    if (!(command instanceof QueryCommand)) return send(command);
    queries++;
    if (met || !pick(command.input as unknown as Record<string, unknown>)) return send(command);
    met = true;
    const before = await send(command);
    await act();
    const after = await send(command);
    return { ...after, Items: answer(before.Items ?? [], after.Items ?? []) };
  }) as never);
  try {
    return { result: await run(), queries, met };
  } finally {
    spy.mockRestore();
  }
}

describe('a content larger than one segment', () => {
  const content = wide(12);

  it('is stored over several segments of at most 4 KB and read back exactly, whole and by path', async () => {
    const p = await project(content);
    const segments = await expectSegmentsWithinBudget(p);
    // The root keeps at most half a budget: all but a section or two move to segments of their own (or further).
    expect(segments.length).toBeGreaterThanOrEqual(11);
    expect(JSON.stringify(content).length).toBeGreaterThan(fragmentBytes());
    expect((await get(p)).body).toEqual({ value: content });
    for (const path of ['s0', 's7.f3', 's11.n']) {
      const [section, field] = path.split('.') as [string, string | undefined];
      const expected = field === undefined ? content[section] : (content[section] as Record<string, unknown>)[field];
      expect((await get(p, path)).body).toEqual({ value: expected });
    }
    expectError(await get(p, 's3.missing'), 404, 'PATH_NOT_FOUND');
  });

  it('takes every operation anywhere in it, each landing where its path is', async () => {
    const p = await project(content);
    await ok(p, 'set', { path: 's5.f0', value: 'short' });
    await ok(p, 'increment', { path: 's6.n', value: 10 });
    await ok(p, 'decrement', { path: 's7.n' });
    await ok(p, 'push', { path: 's8.list', value: 1 });
    await ok(p, 'insert', { path: 's8.list', value: 0, index: 0 });
    await ok(p, 'delete', { path: 's9.f1' });
    await ok(p, 'set', { path: 's10.new.deep.er', value: { x: [1, 2] } });
    const expected = structuredClone(content) as Record<string, Record<string, unknown>>;
    (expected.s5 as Record<string, unknown>).f0 = 'short';
    (expected.s6 as Record<string, unknown>).n = 16;
    (expected.s7 as Record<string, unknown>).n = 6;
    (expected.s8 as Record<string, unknown>).list = [0, 1];
    delete (expected.s9 as Record<string, unknown>).f1;
    (expected.s10 as Record<string, unknown>).new = { deep: { er: { x: [1, 2] } } };
    expect((await get(p)).body).toEqual({ value: expected });
    await expectSegmentsWithinBudget(p);
  });

  it('grows past any one item: 200 KB of small writes stay within 4 KB segments', async () => {
    const p = await project({});
    for (let i = 0; i < 40; i++) {
      await ok(p, 'set', { path: `g${i % 8}.k${i}`, value: { body: text(5000, String(i % 10)) } });
    }
    const segments = await expectSegmentsWithinBudget(p);
    expect(segments.length).toBeGreaterThan(40);
    const whole = (await get(p)).body.value as Record<string, Record<string, { body: string }>>;
    for (let i = 0; i < 40; i++) expect(whole[`g${i % 8}`]?.[`k${i}`]?.body).toBe(text(5000, String(i % 10)));
  });

  it('deleting or replacing a subtree removes its segments with it; update leaves one segment for a small content', async () => {
    const p = await project(content);
    const before = (await segmentsOf(p)).length;
    await ok(p, 'delete', { path: 's3' });
    await ok(p, 'set', { path: 's4', value: 1 });
    const after = (await segmentsOf(p)).length;
    expect(after).toBeLessThan(before);
    const { s3: _gone, ...rest } = content;
    expect((await get(p)).body).toEqual({ value: { ...rest, s4: 1 } });
    await ok(p, 'update', { content: { small: true } });
    expect(await segmentsOf(p)).toHaveLength(1);
    expect((await get(p)).body).toEqual({ value: { small: true } });
  });

  it('a write without reading never replaces a stub unseen, at any depth of a cut: the segments below go with it', async () => {
    // outer is moved to a segment of its own, and inner, within it, to another: a stub inside a segment a cut made.
    const big = text(Math.ceil(fragmentBytes() * 0.9));
    const p = await project({ outer: { inner: { a: big, b: big }, pad: 'p' } });
    // A read learns where outer is, so the next writes go there first, without reading.
    expect((await get(p, 'outer.pad')).body).toEqual({ value: 'p' });
    const before = (await segmentsOf(p)).length;
    expect(before).toBeGreaterThanOrEqual(3);
    await ok(p, 'set', { path: 'outer.inner', value: 1 });
    expect((await get(p)).body).toEqual({ value: { outer: { inner: 1, pad: 'p' } } });
    expect((await segmentsOf(p)).length).toBeLessThan(before);
    await ok(p, 'set', { path: 'outer.inner', value: { a: big, b: big } });
    const grown = (await segmentsOf(p)).length;
    await ok(p, 'delete', { path: 'outer.inner' });
    expect((await get(p)).body).toEqual({ value: { outer: { pad: 'p' } } });
    expect((await segmentsOf(p)).length).toBeLessThan(grown);
  });

  it('a stub a cut moved into a newer segment still leads to its subtree: read, batched through, deleted', async () => {
    const B = fragmentBytes();
    const big = { b1: text(Math.ceil(B * 0.4)), b2: text(Math.ceil(B * 0.4)) };
    const p = await project({ a: { big, x: 1, pad: text(Math.ceil(B * 0.3)) }, other: text(Math.ceil(B * 0.45)) });
    // A batch over two segments re-cuts from the root: `a` comes back into the root's fragment, `big` (not on the
    // batch's paths) stays a segment of its own under a key below `a`'s old one.
    const batch = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'set', path: 'a.x', value: 2 },
          { op: 'set', path: 'other', value: text(Math.ceil(B * 0.52)) },
        ],
      },
    });
    expect(batch.status).toBe(200);
    // `a` grows and is cut into a new segment, taking `big`'s stub with it.
    await ok(p, 'set', { path: 'a.more', value: text(Math.ceil(B * 0.52)) });
    const a = { big, x: 2, pad: text(Math.ceil(B * 0.3)), more: text(Math.ceil(B * 0.52)) };
    const held = (await segmentsOf(p)).flatMap((s) =>
      Object.values(s.fragment as Record<string, unknown>).flatMap((v) =>
        v instanceof Object && 'key' in v && typeof v.key === 'string' && !v.key.startsWith(s.key) ? [v.key] : [],
      ),
    );
    expect(held.length).toBeGreaterThan(0);
    expect((await get(p, 'a')).body).toEqual({ value: a });
    expect((await get(p, 'a.big')).body).toEqual({ value: big });
    const through = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'increment', path: 'a.x' },
          { op: 'set', path: 'a.big.b2', value: 'c' },
        ],
      },
    });
    expect({ status: through.status, body: through.body }).toEqual({
      status: 200,
      body: { message: 'Batch applied successfully' },
    });
    const read = await get(p, 'a');
    expect(read.body).toEqual({ value: { ...a, x: 3, big: { b1: big.b1, b2: 'c' } } });
    // Replaced on the ETag of its GET: the segments below go with it, `big`'s too.
    await ok(p, 'set', { path: 'a', value: { small: 1 } }, { 'If-Match': read.headers.get('etag') as string });
    expect((await get(p)).body).toEqual({ value: { a: { small: 1 }, other: text(Math.ceil(B * 0.52)) } });
    expect(await strays(p)).toEqual({ orphans: [], dangling: [] });
  });

  it('a subtree of more segments than one transaction holds is deleted, replaced and read back whole', async () => {
    const many = Object.fromEntries(
      Array.from({ length: 150 }, (_, i) => [`k${i}`, { body: text(Math.ceil(fragmentBytes() * 0.6)), i }]),
    );
    const p = await project({ keep: 1, big: many });
    expect((await segmentsOf(p)).length).toBeGreaterThan(150);
    expect((await get(p, 'big.k149.i')).body).toEqual({ value: 149 });
    expect((await get(p)).body).toEqual({ value: { keep: 1, big: many } });
    // A batch plans on every segment it reads and rewrites them in one transaction: along its paths it is small...
    const batch = (operations: unknown[]) => call('POST', `${p.content}/batch`, { token: p.key, body: { operations } });
    const small = await batch([
      { op: 'test', path: 'big.k7.i', value: 7 },
      { op: 'set', path: 'big.k7.i', value: 'seven' },
    ]);
    expect(small.status).toBe(200);
    // ...one that reads the whole of a 150-segment value cannot be one commit: 413, nothing changed.
    const before = await state(p);
    const whole = await batch([
      { op: 'test', path: 'big', exists: true },
      { op: 'delete', path: 'big.k1' },
    ]);
    expectError(whole, 413, 'CHANGE_TOO_LARGE');
    expect(await state(p)).toEqual(before);
    await ok(p, 'set', { path: 'big', value: { small: true } });
    expect((await get(p)).body).toEqual({ value: { keep: 1, big: { small: true } } });
    await expectSegmentsWithinBudget(p);
    await ok(p, 'set', { path: 'big', value: many });
    await ok(p, 'delete', { path: 'big' });
    expect((await get(p)).body).toEqual({ value: { keep: 1 } });
    expect(await segmentsOf(p)).toHaveLength(1);
  });

  describe('merges: a segment a delete leaves under a quarter of the budget folds back into its parent', () => {
    /** Six sections of more than half a budget each: one segment each, named by a root of stubs. */
    const halves = () => wide(6, 4, Math.floor(fragmentBytes() * 0.14));
    const emptied = (value: Record<string, unknown>, sections: number[]) => {
      const expected = structuredClone(value) as Record<string, Record<string, unknown>>;
      for (const s of sections) expected[`s${s}`] = { n: s };
      return expected;
    };
    /** The value a segment holds for a section: a stub while it is a segment of its own, the section once folded. */
    const heldAt = (segments: Segment[], section: string) =>
      (
        segments.find((s) => {
          const f = s.fragment as Record<string, unknown>;
          return f !== null && typeof f === 'object' && !Array.isArray(f) && section in f;
        })?.fragment as Record<string, unknown> | undefined
      )?.[section];

    // A named delete is a transaction with its record (no item returned): it reads its segment for the fold's check.
    it.each([
      ['unnamed', false],
      ['named by an Idempotency-Key', true],
    ])(
      'sections emptied member by member (%s deletes) are folded back, one segment each, the same JSON; they take writes there',
      async (_named, named) => {
        const value = halves();
        const p = await project(value);
        const before = await expectSegmentsWithinBudget(p);
        // Each section is a segment of its own, named by a stub in the root.
        for (const s of [3, 4, 5]) expect(heldAt(before, `s${s}`)).toHaveProperty('key');
        const key = () => (named ? { 'idempotency-key': unique('k') } : undefined);
        for (const s of [3, 4, 5]) for (let f = 0; f < 4; f++) await ok(p, 'delete', { path: `s${s}.f${f}` }, key());
        const expected = emptied(value, [3, 4, 5]);
        expect((await get(p)).body).toEqual({ value: expected });
        const after = await expectSegmentsWithinBudget(p);
        expect(after).toHaveLength(before.length - 3);
        // Now held inline where their stubs were.
        for (const s of [3, 4, 5]) expect(heldAt(after, `s${s}`)).toEqual({ n: s });
        await ok(p, 'increment', { path: 's4.n', value: 10 });
        await ok(p, 'set', { path: 's5.again', value: 'yes' });
        expect((await get(p, 's4')).body).toEqual({ value: { n: 14 } });
        expect((await get(p, 's5')).body).toEqual({ value: { n: 5, again: 'yes' } });
        await expectSegmentsWithinBudget(p);
      },
    );

    it('a section that keeps a segment of its own below is folded with its stub; what is below stays where it is', async () => {
      const B = fragmentBytes();
      const inner = { a: text(Math.ceil(B * 0.4)), b: text(Math.ceil(B * 0.4)) };
      const value = { outer: { inner, pad: text(Math.ceil(B * 0.3)), n: 1 }, other: text(Math.ceil(B * 0.3)) };
      const p = await project(value);
      const before = await expectSegmentsWithinBudget(p);
      expect(before.length).toBeGreaterThanOrEqual(3);
      await ok(p, 'delete', { path: 'outer.pad' });
      expect((await get(p)).body).toEqual({ value: { outer: { inner, n: 1 }, other: value.other } });
      const after = await expectSegmentsWithinBudget(p);
      expect(after).toHaveLength(before.length - 1);
      await ok(p, 'set', { path: 'outer.inner.a', value: 'short' });
      expect((await get(p, 'outer')).body).toEqual({ value: { inner: { ...inner, a: 'short' }, n: 1 } });
      await expectSegmentsWithinBudget(p);
    });

    it.each([
      ['a batch of deletes', 'batch'],
      ['a JSON Patch remove', 'json-patch'],
      ['a merge patch null', 'merge-patch'],
    ])('%s that leaves a section small folds it back too', async (_, how) => {
      const value = halves();
      const p = await project(value);
      const before = await expectSegmentsWithinBudget(p);
      for (const s of [2, 3]) {
        // Where the section is, learnt: the batch goes to its segment alone (one UpdateItem there, not a re-cut).
        expect((await get(p, `s${s}.n`)).body).toEqual({ value: s });
        const fields = ['f0', 'f1', 'f2', 'f3'];
        const r =
          how === 'batch'
            ? await call('POST', `${p.content}/batch`, {
                token: p.key,
                body: { operations: fields.map((f) => ({ op: 'delete', path: `s${s}.${f}` })) },
              })
            : await call('PATCH', p.content, {
                token: p.key,
                rawBody: JSON.stringify(
                  how === 'json-patch'
                    ? fields.map((f) => ({ op: 'remove', path: `/s${s}/${f}` }))
                    : { [`s${s}`]: Object.fromEntries(fields.map((f) => [f, null])) },
                ),
                headers: {
                  'content-type': how === 'json-patch' ? 'application/json-patch+json' : 'application/merge-patch+json',
                },
              });
        expect(r.status).toBe(200);
      }
      const expected = emptied(value, [2, 3]);
      expect((await get(p)).body).toEqual({ value: expected });
      const after = await expectSegmentsWithinBudget(p);
      expect(after).toHaveLength(before.length - 2);
      for (const s of [2, 3]) expect(heldAt(after, `s${s}`)).toEqual({ n: s });
    });

    it('a parent too full to take the section keeps it a segment; the JSON is the same', async () => {
      const B = fragmentBytes();
      const value = { s: { x: text(Math.ceil(B * 0.4)), y: 1 }, pad: text(Math.ceil(B * 0.45)) };
      const p = await project(value);
      const before = await expectSegmentsWithinBudget(p);
      await ok(p, 'delete', { path: 's.x' });
      expect((await get(p)).body).toEqual({ value: { s: { y: 1 }, pad: value.pad } });
      expect(await expectSegmentsWithinBudget(p)).toHaveLength(before.length);
    });

    it('deletes that fold sections back race increments, sets and deletes of the same sections and the root: each lands once', async () => {
      const value = halves();
      const p = await project(value);
      const before = await segmentsOf(p);
      const deletes = [1, 2, 3, 4, 5].flatMap((s) => [0, 1, 2, 3].map((f) => `s${s}.f${f}`));
      const increments = Array.from({ length: 20 }, (_, i) => `s${1 + (i % 5)}.n`);
      const sets = Array.from({ length: 8 }, (_, i) => `s${1 + (i % 5)}.w${i}`);
      const replies = await Promise.all([
        ...deletes.map((path) => post(p, 'delete', { path })),
        ...increments.map((path) => post(p, 'increment', { path })),
        ...sets.map((path, i) => post(p, 'set', { path, value: i })),
        ...[0, 1].map((i) => post(p, 'set', { path: `top${i}`, value: i })),
      ]);
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
      const expected = emptied(value, [1, 2, 3, 4, 5]);
      for (const path of increments) (expected[path.split('.')[0] as string] as { n: number }).n += 1;
      for (const [i, path] of sets.entries())
        (expected[path.split('.')[0] as string] as Record<string, number>)[`w${i}`] = i;
      Object.assign(expected, { top0: 0, top1: 1 });
      expect((await get(p)).body).toEqual({ value: expected });
      await expectSegmentsWithinBudget(p);
      // Sections a racing write kept from folding fold at their next delete: all five are back in their parent.
      for (const s of [1, 2, 3, 4, 5]) {
        await ok(p, 'set', { path: `s${s}.z`, value: 0 });
        await ok(p, 'delete', { path: `s${s}.z` });
      }
      expect((await get(p)).body).toEqual({ value: expected });
      const folded = await expectSegmentsWithinBudget(p);
      expect(folded).toHaveLength(before.length - 5);
      for (const s of [1, 2, 3, 4, 5]) expect(heldAt(folded, `s${s}`)).toEqual(expected[`s${s}`]);
    });
  });

  it('a writer that learnt where a subtree was still lands its write after the subtree was replaced', async () => {
    const p = await project(content);
    await ok(p, 'set', { path: 's2.f0', value: 'first' });
    // The subtree is replaced (its segments deleted) and written again at the same path.
    await ok(p, 'set', { path: 's2', value: { ...(content.s2 as object), f0: 'again' } });
    await ok(p, 'set', { path: 's2.f1', value: 'second' });
    expect((await get(p, 's2')).body.value).toEqual({ ...(content.s2 as object), f0: 'again', f1: 'second' });
  });

  it('a batch over several segments applies atomically; a failing operation leaves every segment as it was', async () => {
    const p = await project(content);
    const batch = (operations: unknown[]) => call('POST', `${p.content}/batch`, { token: p.key, body: { operations } });
    const r = await batch([
      { op: 'increment', path: 's0.n', value: 5 },
      { op: 'set', path: 's11.f0', value: 'b' },
      { op: 'test', path: 's5.n', value: 5 },
      { op: 'delete', path: 's6' },
    ]);
    expect({ status: r.status, body: r.body }).toEqual({
      status: 200,
      body: { message: 'Batch applied successfully' },
    });
    const after = structuredClone(content) as Record<string, Record<string, unknown>>;
    (after.s0 as Record<string, unknown>).n = 5;
    (after.s11 as Record<string, unknown>).f0 = 'b';
    delete after.s6;
    expect((await get(p)).body).toEqual({ value: after });
    const before = await state(p);
    const failed = await batch([
      { op: 'set', path: 's1.f0', value: 'changed' },
      { op: 'increment', path: 's2.f0' },
    ]);
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ code: 'NOT_A_NUMBER', index: 1 });
    expect(await state(p)).toEqual(before);
  });

  it('an error names the path as sent, however deep the segment that holds it (and once this process knows where it is)', async () => {
    const p = await project({
      a: { deep: { n: 1, s: text(1500), l: [1, 2] }, other: { t: text(1500) } },
      pad: text(1500),
    });
    const cases = [
      {
        op: 'set',
        path: 'a.deep.n.x',
        value: 1,
        code: 'NOT_A_CONTAINER',
        message: "cannot create 'a.deep.n.x': 'a.deep.n' is not an object or array",
      },
      { op: 'increment', path: 'a.deep.s', code: 'NOT_A_NUMBER', message: "the value at 'a.deep.s' is not a number" },
      {
        op: 'push',
        path: 'a.deep.n',
        value: 1,
        code: 'NOT_AN_ARRAY',
        message: "the value at 'a.deep.n' is not an array",
      },
      {
        op: 'set',
        path: 'a.deep.l.k',
        value: 1,
        code: 'INVALID_PATH',
        message: "'a.deep.l' is an array: 'k' is not an index",
      },
      {
        op: 'set',
        path: 'a.deep.l.5',
        value: 1,
        code: 'INDEX_OUT_OF_RANGE',
        message: "index 5 is outside the array at 'a.deep.l' (length 2)",
      },
    ];
    // Twice: the second time this process remembers which segment holds `a.deep` and plans on it alone.
    for (let round = 0; round < 2; round++) {
      for (const { op, code, message, ...body } of cases) {
        const single = await call('POST', `${p.content}/${op}`, { token: p.key, body });
        expect({ status: single.status, body: single.body }).toEqual({ status: 400, body: { code, message } });
        const batch = await call('POST', `${p.content}/batch`, {
          token: p.key,
          body: {
            operations: [
              { op, ...body },
              { op: 'set', path: 'a.deep.m', value: 1 },
            ],
          },
        });
        expect({ status: batch.status, body: batch.body }).toEqual({ status: 400, body: { code, message, index: 0 } });
      }
      const test = await call('POST', `${p.content}/batch`, {
        token: p.key,
        body: {
          operations: [
            { op: 'test', path: 'a.deep.n', value: 2 },
            { op: 'set', path: 'a.deep.m', value: 1 },
          ],
        },
      });
      expect(test.body).toEqual({
        code: 'TEST_FAILED',
        message: "the value at 'a.deep.n' is not the one tested",
        index: 0,
      });
      expect((await get(p, 'a.deep.zz')).body).toEqual({ code: 'PATH_NOT_FOUND', message: "nothing at 'a.deep.zz'" });
    }
  });
  it('ETags: a change anywhere below a value changes its ETag; If-Match takes the ETag of a GET of the path written', async () => {
    const p = await project(content);
    const whole = (await get(p)).headers.get('etag') as string;
    const section = (await get(p, 's4')).headers.get('etag') as string;
    await ok(p, 'set', { path: 's4.f2', value: 'new' });
    expect((await get(p)).headers.get('etag')).not.toBe(whole);
    expect((await get(p, 's4')).headers.get('etag')).not.toBe(section);
    // The old ETag is refused with the current one; the current one is taken.
    const stale = await call('POST', `${p.content}/set`, {
      token: p.key,
      body: { path: 's4', value: { replaced: true } },
      headers: { 'if-match': section },
    });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    const current = (await get(p, 's4')).headers.get('etag') as string;
    await ok(p, 'set', { path: 's4', value: { replaced: true } }, { 'if-match': current });
    expect((await get(p, 's4')).body.value).toEqual({ replaced: true });
  });

  it('32 concurrent writers on counters in different segments, while another writer splits and merges beside them: nothing lost', async () => {
    const p = await project(content);
    const counters = Array.from({ length: 32 }, (_, i) => `s${i % 12}.n`);
    const churn = (async () => {
      for (let i = 0; i < 10; i++) {
        await post(p, 'set', { path: `s${i % 12}.blob`, value: text(2500, 'z') });
        await post(p, 'delete', { path: `s${i % 12}.blob` });
      }
    })();
    const replies = await Promise.all(counters.map((path) => post(p, 'increment', { path })));
    await churn;
    expect(replies.map((r) => r.status)).toEqual(counters.map(() => 200));
    const value = (await get(p)).body.value as Record<string, { n: number; blob?: string }>;
    for (let s = 0; s < 12; s++) {
      const writes = counters.filter((c) => c === `s${s}.n`).length;
      expect(value[`s${s}`]?.n).toBe(s + writes);
      expect(value[`s${s}`]?.blob).toBeUndefined();
    }
    await expectSegmentsWithinBudget(p);
  });
});

describe('a chunked array (an array larger than one segment)', () => {
  const entry = (i: number) => ({ i, build: `b${i}`, note: text(40 + (i % 7) * 10, String(i % 10)) });

  /** A project whose `log` was pushed to `n` times, and the array the client expects. */
  async function pushed(n: number): Promise<{ p: Project; model: unknown[] }> {
    const p = await project({ meta: { name: 'ci' } });
    const model: unknown[] = [];
    for (let i = 0; i < n; i++) {
      await ok(p, 'push', { path: 'log', value: entry(i) });
      model.push(entry(i));
    }
    return { p, model };
  }

  /** A chunked array's chunks, in the order of their elements. */
  const chunksOf = (segments: Segment[]) =>
    segments.filter((s) => /~\d+\/$/.test(s.key)).sort((a, b) => byChunkStart(a.key, b.key));

  /** A log of 210 entries of nearly half a segment each: over 100 chunks, past what one transaction rewrites. */
  async function longLog(): Promise<{ p: Project; model: unknown[] }> {
    const pad = text(Math.ceil(fragmentBytes() * 0.45));
    const p = await project({ meta: { builds: 0 } });
    const model: unknown[] = [];
    for (let i = 0; i < 210; i++) {
      await ok(p, 'push', { path: 'log', value: { i, pad } });
      model.push({ i, pad });
    }
    return { p, model };
  }

  /** A JSON Patch (`patch`), or a POST to the route (`batch`, `insert`…). */
  const send = (p: Project, route: string, body: unknown) =>
    route === 'patch'
      ? call('PATCH', p.content, { token: p.key, headers: { 'content-type': 'application/json-patch+json' }, body })
      : call('POST', `${p.content}/${route}`, { token: p.key, body });

  it('grows by pushes into chunks of at most one segment each, read back whole, by index and from the end', async () => {
    const n = Math.ceil((fragmentBytes() * 6) / 90);
    const { p, model } = await pushed(n);
    const segments = await expectSegmentsWithinBudget(p);
    expect(chunksOf(segments).length).toBeGreaterThanOrEqual(4);
    for (const s of segments) expect(itemSize(s.raw)).toBeLessThanOrEqual(4096);
    expect((await get(p)).body).toEqual({ value: { meta: { name: 'ci' }, log: model } });
    expect((await get(p, 'log')).body).toEqual({ value: model });
    for (const i of [0, 1, Math.floor(n / 3), Math.floor(n / 2), n - 2, n - 1, -1, -2, -Math.floor(n / 2), -n]) {
      const at = i < 0 ? n + i : i;
      expect({ i, body: (await get(p, `log.${i}`)).body }).toEqual({ i, body: { value: model[at] } });
      expect((await get(p, `log.${i}.build`)).body).toEqual({ value: `b${at}` });
    }
    expectError(await get(p, `log.${n}`), 404, 'PATH_NOT_FOUND');
    expectError(await get(p, `log.${-n - 1}`), 404, 'PATH_NOT_FOUND');
    // Shallow: the length; slices across chunks and into the newest elements, as on the whole array.
    const read = (q: string) => call('GET', `${p.content}?path=log&${q}`, { token: p.key });
    expect((await read('shallow=true')).body).toEqual({ value: { length: n } });
    for (const [start, limit] of [
      [0, 7],
      [1, 1],
      [Math.floor(n / 3), 2],
      [3, 40],
      [Math.floor(n / 2) - 5, 20],
      [n - 10, 100],
      [-5, 3],
      [-n - 4, 10],
      [n, 5],
      [n + 10, 5],
    ] as const) {
      const from = start < 0 ? Math.max(0, n + start) : start;
      expect({ start, limit, body: (await read(`start=${start}&limit=${limit}`)).body }).toEqual({
        start,
        limit,
        body: { value: model.slice(from, from + limit), start: from, length: n },
      });
    }
    // Every short page, start to end: pages inside one chunk, across chunks, and across the chunks and the newest.
    const pages = await Promise.all(Array.from({ length: n }, (_, start) => read(`start=${start}&limit=3`)));
    expect(pages.map((r) => r.body.value)).toEqual(
      Array.from({ length: n }, (_, start) => model.slice(start, start + 3)),
    );
    // A slice's ETag covers the chunks it read: a change in one of them is a 200 again, not a 304.
    const before = await read('start=0&limit=5');
    const etag = before.headers.get('etag') as string;
    expect(
      (await call('GET', `${p.content}?path=log&start=0&limit=5`, { token: p.key, headers: { 'if-none-match': etag } }))
        .status,
    ).toBe(304);
    await ok(p, 'set', { path: 'log.2.build', value: 'changed' });
    const after = await call('GET', `${p.content}?path=log&start=0&limit=5`, {
      token: p.key,
      headers: { 'if-none-match': etag },
    });
    expect(after.status).toBe(200);
    expect((after.body.value as { build: string }[])[2]?.build).toBe('changed');
  });

  it('takes every operation at every index, old and new, as an unchunked array would', async () => {
    const n = Math.ceil((fragmentBytes() * 4) / 90);
    const { p, model } = await pushed(n);
    const steps: Array<[keyof typeof MESSAGES, Record<string, unknown>, (m: any[]) => void]> = [
      ['set', { path: 'log.0.build', value: 'first' }, (m) => (m[0].build = 'first')],
      ['increment', { path: 'log.1.i', value: 100 }, (m) => (m[1].i += 100)],
      ['decrement', { path: `log.-1.i`, value: 1 }, (m) => (m[m.length - 1].i -= 1)],
      [
        'set',
        { path: `log.${Math.floor(n / 2)}`, value: { replaced: true } },
        (m) => (m[Math.floor(n / 2)] = { replaced: true }),
      ],
      ['push', { path: 'log.2.tags', value: 'x' }, (m) => (m[2].tags = ['x'])],
      ['insert', { path: 'log', value: 'at-0', index: 0 }, (m) => m.splice(0, 0, 'at-0')],
      ['insert', { path: 'log', value: 'at-3', index: 3 }, (m) => m.splice(3, 0, 'at-3')],
      ['insert', { path: 'log', value: 'before-last', index: -1 }, (m) => m.splice(m.length - 1, 0, 'before-last')],
      ['delete', { path: 'log.4' }, (m) => m.splice(4, 1)],
      ['delete', { path: 'log.-1' }, (m) => m.splice(m.length - 1, 1)],
      ['set', { path: `log.${n + 10}`, value: 'x' }, () => {}],
      ['push', { path: 'log', value: 'last' }, (m) => m.push('last')],
    ];
    for (const [op, body, apply] of steps) {
      if (op === 'set' && body.path === `log.${n + 10}`) {
        expectError(await call('POST', `${p.content}/set`, { token: p.key, body }), 400, 'INDEX_OUT_OF_RANGE');
        continue;
      }
      await ok(p, op, body);
      apply(model);
      expect({ op, body, value: (await get(p, 'log')).body.value }).toEqual({ op, body, value: model });
      await expectSegmentsWithinBudget(p);
    }
    // Setting at the length appends, past it is refused, as for any array.
    await ok(p, 'set', { path: `log.${model.length}`, value: 'appended' });
    model.push('appended');
    expect((await get(p, 'log')).body).toEqual({ value: model });
    expectError(await get(p, 'log.x'), 404, 'PATH_NOT_FOUND');
  });

  it('32 concurrent pushes onto a chunked array, alone and in batches, all land once while it rolls over into new chunks', async () => {
    const { p, model } = await pushed(Math.ceil((fragmentBytes() * 2) / 90));
    // Half push alone, half in a batch with a counter elsewhere (planned on the array's segment alone).
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, w) =>
        w % 2 === 0
          ? call('POST', `${p.content}/push`, { token: p.key, body: { path: 'log', value: { w } } })
          : call('POST', `${p.content}/batch`, {
              token: p.key,
              body: {
                operations: [
                  { op: 'push', path: 'log', value: { w } },
                  { op: 'increment', path: 'meta.batches' },
                ],
              },
            }),
      ),
    );
    // A push commutes with every other; a batch is planned on the array segment's version, and past its attempts
    // under this contention may be a 409 WRITE_CONFLICT that applied nothing.
    const landed = results.flatMap((r, w) => (r.status === 200 ? [w] : []));
    for (const [w, r] of results.entries()) {
      if (r.status !== 200)
        expect({ w, status: r.status, code: r.body.code }).toEqual({ w, status: 409, code: 'WRITE_CONFLICT' });
    }
    expect(landed.filter((w) => w % 2 === 0)).toHaveLength(16);
    expect((await get(p, 'meta.batches')).body).toEqual({ value: landed.filter((w) => w % 2 === 1).length });
    const log = (await get(p, 'log')).body.value as unknown[];
    expect(log.slice(0, model.length)).toEqual(model);
    expect(
      log
        .slice(model.length)
        .map((e) => (e as { w: number }).w)
        .sort((a, b) => a - b),
    ).toEqual(landed);
    await expectSegmentsWithinBudget(p);
  });

  it('a batch and a JSON Patch plan on the whole array; replacing or deleting it removes its chunks', async () => {
    const n = Math.ceil((fragmentBytes() * 3) / 90);
    const { p, model } = await pushed(n);
    const batch = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'push', path: 'log', value: 'b' },
          { op: 'set', path: 'log.0', value: 'zero' },
          { op: 'delete', path: 'log.1' },
        ],
      },
    });
    expect(batch.status).toBe(200);
    model.push('b');
    model[0] = 'zero';
    model.splice(1, 1);
    expect((await get(p, 'log')).body).toEqual({ value: model });
    await expectSegmentsWithinBudget(p);
    const patch = await call('PATCH', p.content, {
      token: p.key,
      headers: { 'content-type': 'application/json-patch+json' },
      body: [
        { op: 'move', from: '/log/0', path: '/first' },
        { op: 'test', path: '/log/0', value: model[1] },
      ],
    });
    expect(patch.status).toBe(200);
    const first = model.shift();
    expect((await get(p)).body).toEqual({ value: { meta: { name: 'ci' }, log: model, first } });
    await expectSegmentsWithinBudget(p);
    await ok(p, 'set', { path: 'log', value: [1, 2] });
    expect(chunksOf(await expectSegmentsWithinBudget(p))).toEqual([]);
    expect((await get(p)).body).toEqual({ value: { meta: { name: 'ci' }, log: [1, 2], first } });
  });

  it('a batch or patch on its newest elements leaves its chunks as they are, past what one transaction rewrites', async () => {
    const { p, model } = await longLog();
    const before = chunksOf(await segmentsOf(p)).map((s) => s.key);
    expect(before.length).toBeGreaterThan(100);
    const meta = { builds: 0 };
    const steps: Array<[string, () => unknown, () => void]> = [
      [
        'batch',
        () => ({
          operations: [
            { op: 'push', path: 'log', value: { i: 210 } },
            { op: 'increment', path: 'meta.builds' },
          ],
        }),
        () => {
          model.push({ i: 210 });
          meta.builds++;
        },
      ],
      [
        'batch',
        () => ({
          operations: [
            { op: 'set', path: 'log.-1.ok', value: true },
            { op: 'push', path: 'log', value: { i: 211 } },
            { op: 'test', path: `log.${model.length - 1}.i`, value: 210 },
            { op: 'insert', path: 'log', index: model.length + 1, value: 'end' },
          ],
        }),
        () => {
          (model[model.length - 1] as Record<string, unknown>).ok = true;
          model.push({ i: 211 }, 'end');
        },
      ],
      [
        'patch',
        () => [
          { op: 'add', path: '/log/-', value: { i: 212 } },
          { op: 'remove', path: `/log/${model.length - 1}` },
          { op: 'replace', path: '/meta/builds', value: 5 },
        ],
        () => {
          model.push({ i: 212 });
          model.splice(model.length - 2, 1);
          meta.builds = 5;
        },
      ],
    ];
    for (const [route, bodyOf, apply] of steps) {
      const body = bodyOf();
      const r = await send(p, route, body);
      expect({ route, status: r.status }).toEqual({ route, status: 200 });
      apply();
      expect((await get(p)).body).toEqual({ value: { meta, log: model } });
    }
    // No chunk was read into the change and written again: they are all still there, under their keys.
    const after = chunksOf(await expectSegmentsWithinBudget(p)).map((s) => s.key);
    expect(after).toEqual(expect.arrayContaining(before));
    // An error is the whole array's, with its logical indexes and length.
    const past = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'push', path: 'log', value: 1 },
          { op: 'insert', path: 'log', index: model.length + 5, value: 1 },
        ],
      },
    });
    expect({ status: past.status, body: past.body }).toEqual({
      status: 400,
      body: {
        code: 'INDEX_OUT_OF_RANGE',
        message: `index ${model.length + 5} is outside -${model.length + 1}..${model.length + 1}`,
        index: 1,
      },
    });
    // Reaching an old element plans on the whole array: past what one transaction rewrites, the 413 says so.
    const old = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'set', path: 'log.0.i', value: -1 },
          { op: 'push', path: 'log', value: 1 },
        ],
      },
    });
    expect({ status: old.status, code: old.body.code }).toEqual({ status: 413, code: 'CHANGE_TOO_LARGE' });
    expect((await get(p)).body).toEqual({ value: { meta, log: model } });
    expect(await strays(p)).toEqual({ orphans: [], dangling: [] });
  });

  it('inserts and deletes before its newest elements rewrite only the chunks after them, in place, past what one transaction rewrites', async () => {
    const { p, model } = await longLog();
    const keysBefore = chunksOf(await segmentsOf(p)).map((s) => s.key);
    expect(keysBefore.length).toBeGreaterThan(100);
    const versions = async () => new Map(chunksOf(await segmentsOf(p)).map((s) => [s.key, s.version]));
    const before = await versions();
    const meta = { builds: 0 };
    const at = (k: number) => model.length - k;
    const steps: Array<[string, string, () => unknown, () => void]> = [
      ['insert', 'insert', () => ({ path: 'log', index: at(5), value: 'five' }), () => model.splice(at(5), 0, 'five')],
      ['delete', 'delete', () => ({ path: `log.${at(9)}` }), () => model.splice(at(9), 1)],
      [
        'an old element',
        'set',
        () => ({ path: `log.${at(12)}.seen`, value: true }),
        () => {
          (model[at(12)] as Record<string, unknown>).seen = true;
        },
      ],
      [
        'insert from the end',
        'insert',
        () => ({ path: 'log', index: -7, value: 'seven' }),
        () => model.splice(model.length - 7, 0, 'seven'),
      ],
      [
        'batch',
        'batch',
        () => ({
          operations: [
            { op: 'insert', path: 'log', index: at(10), value: 'ten' },
            { op: 'increment', path: 'meta.builds' },
            { op: 'delete', path: 'log.-1' },
            { op: 'push', path: 'log', value: 'last' },
          ],
        }),
        () => {
          model.splice(at(10), 0, 'ten');
          meta.builds++;
          model.pop();
          model.push('last');
        },
      ],
      [
        'patch',
        'patch',
        () => [
          { op: 'remove', path: `/log/${at(6)}` },
          { op: 'add', path: `/log/${at(3)}`, value: 'p' },
        ],
        () => {
          // Applied in order, as sent: the add's index was taken before the remove.
          const [removed, added] = [at(6), at(3)];
          model.splice(removed, 1);
          model.splice(added, 0, 'p');
        },
      ],
    ];
    for (const [what, route, bodyOf, apply] of steps) {
      const body = bodyOf();
      const r = await send(p, route, body);
      expect({ what, status: r.status }).toEqual({ what, status: 200 });
      apply();
      expect((await get(p)).body).toEqual({ value: { meta, log: model } });
    }
    // Every chunk kept its key; the first chunks were not even written (only those from the lowest index reached).
    const after = await versions();
    expect([...after.keys()]).toEqual(expect.arrayContaining(keysBefore));
    const untouched = keysBefore.slice(0, keysBefore.length - 12);
    for (const key of untouched) expect({ key, version: after.get(key) }).toEqual({ key, version: before.get(key) });
    expect(keysBefore.slice(-3).some((key) => (after.get(key) ?? 0) > (before.get(key) ?? 0))).toBe(true);
    // Read back by element and by slice, across the rewritten chunks.
    for (const i of [0, at(14), at(8), at(4), at(1)])
      expect((await get(p, `log.${i}`)).body).toEqual({ value: model[i] });
    const page = await call('GET', `${p.content}?path=log&start=-15&limit=15`, { token: p.key });
    expect(page.body).toEqual({ value: model.slice(-15), start: model.length - 15, length: model.length });
    // An insert at the start moves every element: past what one transaction rewrites, the 413 says so.
    const first = await call('POST', `${p.content}/insert`, {
      token: p.key,
      body: { path: 'log', index: 0, value: 0 },
    });
    expect({ status: first.status, code: first.body.code }).toEqual({ status: 413, code: 'CHANGE_TOO_LARGE' });
    // Known from the chunks read from the end: no more of them than one commit could rewrite, and no whole read.
    const { dynamo } = await import('../../lib/dynamo/client');
    const { writeContent } = await import('../../lib/storage');
    const { insert } = await import('../unit/helpers');
    const engine = dynamo.send.bind(dynamo) as (command: unknown) => Promise<{ Items?: unknown[] }>;
    const reads: { items: number; requests: string[] }[] = [];
    const spy = jest.spyOn(dynamo, 'send').mockImplementation((async (command: unknown) => {
      const answer = await engine(command);
      const now = reads[reads.length - 1] as { items: number; requests: string[] };
      now.items += answer.Items?.length ?? 0;
      now.requests.push((command as object).constructor.name);
      return answer;
    }) as never);
    try {
      // Twice: the second in a process that knows the array (the segment and the tail in one Query, then on after
      // what it read, never again).
      for (let i = 0; i < 2; i++) {
        reads.push({ items: 0, requests: [] });
        const refused = await writeContent({
          project: { username: p.username, slug: p.slug },
          principal: { kind: 'user', username: p.username },
          op: insert('log', 1, 'one'),
        }).catch((error: unknown) => error);
        expect(refused).toMatchObject({ code: 'CHANGE_TOO_LARGE' });
      }
    } finally {
      spy.mockRestore();
    }
    // 98 chunks (one more than a whole rewrite may have), and the segments the request reads on its way; before, the
    // tail's 91 chunks and then every chunk of the array.
    for (const { items } of reads) {
      expect(items).toBeGreaterThanOrEqual(98);
      expect(items).toBeLessThan(110);
    }
    // The second knows the array is chunked (the first met its segment): no one-request try.
    expect(reads[1]?.requests).not.toContain('UpdateItemCommand');
    expect((await get(p)).body).toEqual({ value: { meta, log: model } });
    await expectSegmentsWithinBudget(p);
  });

  it('inserts after its chunks (at the end, by index) and writes to its newest elements by index land where they name, across rollovers, alone and racing pushes', async () => {
    const { p, model } = await pushed(Math.ceil((fragmentBytes() * 4) / 90));
    // The process meets the array (its last element read), then inserts at the end as it grows past rollovers, where
    // the chunk stub it knows is replaced, and around inserts among the chunks, which replace it too.
    expect((await get(p, 'log.-1.i')).body.value).toBe(model.length - 1);
    for (let k = 0; k < 60; k++) {
      const value = { k, note: text(60, 'e') };
      expect((await send(p, 'insert', { path: 'log', index: model.length, value })).status).toBe(200);
      model.push(value);
      if (k % 20 === 10) {
        expect((await send(p, 'insert', { path: 'log', index: 2, value: { k } })).status).toBe(200);
        model.splice(2, 0, { k });
      }
    }
    // Writes to its newest elements by index (after the chunks): set, increment and delete land on the element named.
    for (let k = 0; k < 12; k++) {
      const last = model.length - 1;
      expect((await send(p, 'increment', { path: `log.${last}.k`, value: 2 })).status).toBe(200);
      (model[last] as { k?: number }).k = ((model[last] as { k?: number }).k ?? 0) + 2;
      expect((await send(p, 'set', { path: `log.${last - 1}.tag`, value: `t${k}` })).status).toBe(200);
      (model[last - 1] as { tag?: string }).tag = `t${k}`;
      if (k % 3 === 0) {
        expect((await send(p, 'delete', { path: `log.${last - 2}` })).status).toBe(200);
        model.splice(last - 2, 1);
      }
      await ok(p, 'push', { path: 'log', value: entry(k) });
      model.push(entry(k));
    }
    // If-Match on the array is the whole array's ETag: one a push answered (its segment's) no longer matches once an
    // old element changed in a chunk, and the insert is refused with the current one.
    const afterPush = await send(p, 'push', { path: 'log', value: { tagged: true } });
    model.push({ tagged: true });
    await ok(p, 'set', { path: 'log.3.seen', value: true });
    (model[3] as { seen?: boolean }).seen = true;
    const stale = await call('POST', `${p.content}/insert`, {
      token: p.key,
      body: { path: 'log', index: model.length, value: 0 },
      headers: { 'if-match': afterPush.headers.get('etag') as string },
    });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    // Writes to an old element (in the chunks), the second one with its chunk read beside the array's segment; then
    // the array replaced by another long one: a write to an old index lands in the new array, not in a chunk of the
    // old one that this process still knows.
    for (let k = 0; k < 3; k++) {
      expect((await send(p, 'increment', { path: 'log.4.old' })).status).toBe(200);
      const old = model[4] as { old?: number };
      old.old = (old.old ?? 0) + 1;
    }
    expect((await get(p, 'log')).body.value).toEqual(model);
    const replaced = model.map((e, i) => ({ r: i, note: (e as { note?: string }).note ?? 'r' }));
    expect((await send(p, 'set', { path: 'log', value: replaced })).status).toBe(200);
    expect((await send(p, 'set', { path: 'log.4.old', value: 'new' })).status).toBe(200);
    (replaced[4] as { old?: string }).old = 'new';
    expect((await get(p, 'log')).body.value).toEqual(replaced);
    model.splice(0, model.length, ...replaced);
    // Past the end is still the model's 400; before the newest elements, the same insert lands in the chunks.
    expect((await send(p, 'insert', { path: 'log', index: model.length + 1, value: 1 })).status).toBe(400);
    expect((await get(p, 'log')).body.value).toEqual(model);
    // Racing: inserts at the length they all read, pushes, and increments of the last element before them by its
    // index (which neither shifts); each lands once, the elements before untouched.
    const before = model.length;
    (model[before - 1] as { hits?: number }).hits = 8;
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, w) =>
        w % 4 === 3
          ? send(p, 'increment', { path: `log.${before - 1}.hits` })
          : send(p, w % 2 === 0 ? 'insert' : 'push', {
              path: 'log',
              index: w % 2 === 0 ? before : undefined,
              value: { w },
            }),
      ),
    );
    for (const [w, r] of results.entries()) expect({ w, status: r.status }).toEqual({ w, status: 200 });
    const log = (await get(p, 'log')).body.value as Record<string, unknown>[];
    expect(log.slice(0, before)).toEqual(model);
    expect(
      log
        .slice(before)
        .map((e) => e.w)
        .sort((a, b) => (a as number) - (b as number)),
    ).toEqual(Array.from({ length: 32 }, (_, w) => w).filter((w) => w % 4 !== 3));
    await expectSegmentsWithinBudget(p);
  });

  it('inserts and deletes in its chunks, pushes and writes to an old element, 24 at once: each lands once, in place', async () => {
    const { p, model } = await pushed(Math.ceil((fragmentBytes() * 6) / 90));
    const old = 3;
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, w) => {
        const body =
          w % 3 === 0
            ? { path: 'log', index: old + 1 + (w % 5), value: { w } }
            : w % 3 === 1
              ? { path: 'log', value: { w } }
              : { path: `log.${old}.hits` };
        const route = w % 3 === 0 ? 'insert' : w % 3 === 1 ? 'push' : 'increment';
        return call('POST', `${p.content}/${route}`, { token: p.key, body });
      }),
    );
    for (const [w, r] of results.entries()) expect({ w, status: r.status }).toEqual({ w, status: 200 });
    const log = (await get(p, 'log')).body.value as Record<string, unknown>[];
    // The element at `old` is before every insert: it stayed there and counted every increment.
    expect(log[old]).toEqual({ ...(model[old] as object), hits: 8 });
    expect(log).toHaveLength(model.length + 16);
    const written = log.flatMap((e) => (typeof e.w === 'number' ? [e.w] : [])).sort((a, b) => a - b);
    expect(written).toEqual(Array.from({ length: 24 }, (_, w) => w).filter((w) => w % 3 !== 2));
    // The elements that were there keep their order.
    expect(log.filter((e) => e.w === undefined).map((e) => e.i)).toEqual(model.map((e) => (e as { i: number }).i));
    await expectSegmentsWithinBudget(p);
  });

  it('a write to an old element whose chunk an insert before it shifted, while it wrote, finds its element again', async () => {
    const pad = text(Math.ceil(fragmentBytes() * 0.45));
    const p = await project({});
    const model: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      await ok(p, 'push', { path: 'log', value: { i, pad } });
      model.push({ i, pad });
    }
    const { writeContent } = await import('../../lib/storage');
    const { set } = await import('../unit/helpers');
    // The write locates log.-5 in its chunk (a Query with Limit 1); an insert at 2 lands before it writes.
    const { met } = await duringQuery(
      (input) => input.Limit === 1,
      async () => {
        await ok(p, 'insert', { path: 'log', index: 2, value: 'ins' });
        model.splice(2, 0, 'ins');
      },
      (before) => before,
      () =>
        writeContent({
          project: { username: p.username, slug: p.slug },
          principal: { kind: 'user', username: p.username },
          op: set('log.-5.seen', true),
        }),
    );
    expect(met).toBe(true);
    // Applied after the insert: to the element that is fifth from the end once the insert landed.
    (model[model.length - 5] as Record<string, unknown>).seen = true;
    expect((await get(p, 'log')).body).toEqual({ value: model });
  });

  it("a read that holds a chunked array's segment after an insert in its chunks and a chunk from before it reads again", async () => {
    const { p, model } = await pushed(Math.ceil((fragmentBytes() * 6) / 90));
    const { readContent } = await import('../../lib/storage');
    const segment = (await segmentsOf(p)).find((s) => chunkStubOf(s.fragment as never)) as Segment;
    const { result, met, queries } = await duringQuery(
      (input) => input.KeyConditionExpression === 'pk = :pk AND begins_with(sk, :prefix)',
      async () => {
        await ok(p, 'insert', { path: 'log', index: 3, value: 'ins' });
        model.splice(3, 0, 'ins');
      },
      // The array's segment as the commit left it, its chunks as they were before it.
      (before, after) => [
        ...after.filter((item) => !item.sk?.S?.startsWith(segment.key) || item.sk?.S === segment.key),
        ...before.filter((item) => item.sk?.S?.startsWith(segment.key) && item.sk?.S !== segment.key),
      ],
      () =>
        readContent({
          project: { username: p.username, slug: p.slug },
          principal: { kind: 'user', username: p.username },
        }),
    );
    expect(met).toBe(true);
    expect(queries).toBe(2);
    expect((result as { value: unknown }).value).toEqual({ meta: { name: 'ci' }, log: model });
  });

  it.each([
    ['read after the refused one-request try (a Lambda that never met the array)', false],
    ["read with the array's segment in one Query (a Lambda that met the array)", true],
  ])(
    'an insert in the chunks, its tail %s, fails and plans again when an element it shifts changes in between, even where a chunk looks the same',
    async (_, warm) => {
      // Runs of equal elements: shifting one along leaves a chunk unchanged. The insert must still be conditioned on it.
      const same = text(40, 'z');
      const p = await project({});
      for (let i = 0; i < 200; i++) await ok(p, 'push', { path: 'log', value: same });
      const model: unknown[] = Array.from({ length: 200 }, () => same);
      const { readContent, writeContent } = await import('../../lib/storage');
      const { insert } = await import('../unit/helpers');
      const who = {
        project: { username: p.username, slug: p.slug },
        principal: { kind: 'user' as const, username: p.username },
      };
      // A read of the array's segment in this process: it then knows the array is chunked.
      if (warm) expect((await readContent({ ...who, segments: ['log', '-1'] })).value).toBe(same);
      const { met } = await duringQuery(
        // The tail's Query (from the last chunk down, as many as the tail should have), alone or with the segment.
        (input) =>
          input.Limit !== undefined &&
          input.Limit !== 1 &&
          String(input.KeyConditionExpression).includes('begins_with') === warm,
        async () => {
          // A write to an old element lands between the insert's read of its tail and its commit.
          await ok(p, 'set', { path: 'log.60', value: 1 });
          model[60] = 1;
        },
        (before) => before,
        () =>
          writeContent({
            project: { username: p.username, slug: p.slug },
            principal: { kind: 'user', username: p.username },
            op: insert('log', 5, 'ins'),
          }),
      );
      expect(met).toBe(true);
      model.splice(5, 0, 'ins');
      expect((await get(p, 'log')).body).toEqual({ value: model });
    },
  );

  // The batch changes two segments in place in one commit: the root (the counter) and the log's (the push). A Query
  // is read-committed item by item, and a read of several segments may take several requests, so a reader can meet
  // the root before the commit and the log's segment after it; here that is made to happen, to each kind of reader.
  it.each([
    ['a GET of the whole content (one Query)', 'get'],
    ["a subscription's snapshot (the root's GetItem, then the log's Query)", 'snapshot'],
  ])(
    '%s that meets a batch on a chunked array half-way, one segment old and one new, reads again',
    async (_, reader) => {
      const pad = text(Math.ceil(fragmentBytes() * 0.45));
      const p = await project({ meta: { builds: 0 } });
      const log: unknown[] = [];
      for (let i = 0; i < 12; i++) {
        await ok(p, 'push', { path: 'log', value: { i, pad } });
        log.push({ i, pad });
      }
      expect(chunksOf(await segmentsOf(p)).length).toBeGreaterThan(0);
      const inc = await incarnationOf(p);
      const { dynamo } = await import('../../lib/dynamo/client');
      const { readContent } = await import('../../lib/storage');
      const { readSnapshot } = await import('../../lib/storage/snapshot');
      const { QueryCommand } = await import('@aws-sdk/client-dynamodb');
      let queries = 0;
      let torn = false;
      const send = dynamo.send.bind(dynamo) as (
        command: unknown,
      ) => Promise<{ Items?: Record<string, { S?: string }>[] }>;
      const spy = jest.spyOn(dynamo, 'send').mockImplementation((async (command: unknown) => {
        if (!(command instanceof QueryCommand)) return send(command);
        queries++;
        if (queries > 1) return send(command);
        const before = await send(command);
        const r = await call('POST', `${p.content}/batch`, {
          token: p.key,
          body: {
            operations: [
              { op: 'push', path: 'log', value: { i: 12 } },
              { op: 'increment', path: 'meta.builds' },
            ],
          },
        });
        expect(r.status).toBe(200);
        const after = await send(command);
        // The root as this Query met it before the commit (or as the GetItem before it did), the rest after it.
        const root = (before.Items ?? []).filter((item) => item.sk?.S === '/');
        const rest = (after.Items ?? []).filter((item) => item.sk?.S !== '/');
        torn = rest.length > 0;
        return { ...after, Items: [...root, ...rest] };
      }) as never);
      const whole = { meta: { builds: 1 }, log: [...log, { i: 12 }] };
      try {
        if (reader === 'get') {
          const read = await readContent({
            project: { username: p.username, slug: p.slug },
            principal: { kind: 'user', username: p.username },
          });
          // Read again: the whole batch, never the push without the increment.
          expect(read.value).toEqual(whole);
        } else {
          expect((await readSnapshot(inc, [], Number.POSITIVE_INFINITY)).value).toEqual(whole);
        }
        expect(torn).toBe(true);
        expect(queries).toBe(2);
      } finally {
        spy.mockRestore();
      }
    },
  );
});

describe('a bucketed object (more members than one segment holds)', () => {
  const record = (i: number) => ({ id: i, ok: i % 3 === 0 });
  const bucketStubs = (segments: Segment[]) => segments.filter((s) => /#\d+\/\d+\/$/.test(s.key));

  it('an object bucketed while a member was a segment of its own: that member is read, batched through and deleted', async () => {
    const B = fragmentBytes();
    const big = { a: text(Math.ceil(B * 0.4)), b: text(Math.ceil(B * 0.4)) };
    const p = await project({ m: { big }, pad: text(Math.ceil(B * 0.6)) });
    const m: Record<string, unknown> = { big };
    const n = Math.ceil(B / 4);
    for (let i = 0; i < n; i++) {
      await ok(p, 'set', { path: `m.k${i}`, value: i });
      m[`k${i}`] = i;
    }
    expect(bucketStubs(await segmentsOf(p)).length).toBeGreaterThan(0);
    expect((await get(p, 'm')).body).toEqual({ value: m });
    const batch = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'set', path: 'm.big.a', value: 1 },
          { op: 'test', path: 'm.big.b', value: big.b },
          { op: 'set', path: 'm.k1', value: 'z' },
        ],
      },
    });
    expect({ status: batch.status, body: batch.body }).toEqual({
      status: 200,
      body: { message: 'Batch applied successfully' },
    });
    expect((await get(p, 'm')).body).toEqual({ value: { ...m, big: { a: 1, b: big.b }, k1: 'z' } });
    await ok(p, 'delete', { path: 'm' });
    expect((await get(p)).body).toEqual({ value: { pad: text(Math.ceil(B * 0.6)) } });
    expect(await strays(p)).toEqual({ orphans: [], dangling: [] });
  });

  it('grows member by member into buckets, read back whole and by member; every operation lands in its bucket', async () => {
    const p = await project({ meta: { v: 1 } });
    const builds: Record<string, unknown> = {};
    const n = Math.ceil((fragmentBytes() * 5) / 40);
    for (let i = 0; i < n; i++) {
      await ok(p, 'set', { path: `builds.b${i}`, value: record(i) });
      builds[`b${i}`] = record(i);
    }
    let segments = await expectSegmentsWithinBudget(p);
    expect(bucketStubs(segments).length).toBeGreaterThanOrEqual(4);
    for (const s of segments) expect(itemSize(s.raw)).toBeLessThanOrEqual(4096);
    expect((await get(p)).body).toEqual({ value: { meta: { v: 1 }, builds } });
    expect((await get(p, 'builds')).body).toEqual({ value: builds });
    for (const i of [0, 7, n - 1]) expect((await get(p, `builds.b${i}.id`)).body).toEqual({ value: i });
    const shallow = await call('GET', `${p.content}?path=builds&shallow=true`, { token: p.key });
    expect(shallow.body).toEqual({ value: Object.fromEntries(Object.keys(builds).map((k) => [k, true])) });
    expectError(await call('GET', `${p.content}?path=builds&start=0`, { token: p.key }), 400, 'NOT_AN_ARRAY');
    expectError(await get(p, 'builds.missing'), 404, 'PATH_NOT_FOUND');

    await ok(p, 'increment', { path: 'builds.b3.id', value: 1000 });
    (builds.b3 as { id: number }).id += 1000;
    await ok(p, 'push', { path: 'builds.b4.tags', value: 'x' });
    (builds.b4 as Record<string, unknown>).tags = ['x'];
    await ok(p, 'delete', { path: 'builds.b5' });
    delete builds.b5;
    await ok(p, 'set', { path: 'builds.b6', value: 'replaced' });
    builds.b6 = 'replaced';
    await ok(p, 'set', { path: 'builds.new.deep', value: [1] });
    builds.new = { deep: [1] };
    expectError(await post(p, 'push', { path: 'builds', value: 1 }), 400, 'NOT_AN_ARRAY');
    expectError(await post(p, 'increment', { path: 'builds' }), 400, 'NOT_A_NUMBER');
    expect((await get(p, 'builds')).body).toEqual({ value: builds });
    segments = await expectSegmentsWithinBudget(p);

    // A batch and a merge patch on members (their buckets alone); replacing the object removes its buckets.
    const batch = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'set', path: 'builds.b1.ok', value: 'yes' },
          { op: 'delete', path: 'builds.b2' },
        ],
      },
    });
    expect(batch.status).toBe(200);
    (builds.b1 as Record<string, unknown>).ok = 'yes';
    delete builds.b2;
    const merge = await call('PATCH', p.content, {
      token: p.key,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { builds: { b8: null, added: 1 } },
    });
    expect(merge.status).toBe(200);
    delete builds.b8;
    builds.added = 1;
    expect((await get(p, 'builds')).body).toEqual({ value: builds });
    await expectSegmentsWithinBudget(p);
    await ok(p, 'set', { path: 'builds', value: { small: true } });
    expect(bucketStubs(await expectSegmentsWithinBudget(p))).toEqual([]);
    expect((await get(p)).body).toEqual({ value: { meta: { v: 1 }, builds: { small: true } } });
  });

  it('a batch, a JSON Patch or a merge patch naming some members reads and rewrites only their buckets, in place', async () => {
    const p = await project({ runs: 0 });
    const builds: Record<string, unknown> = {};
    const n = Math.ceil((fragmentBytes() * 5) / 40);
    for (let i = 0; i < n; i++) {
      await ok(p, 'set', { path: `builds.b${i}`, value: record(i) });
      builds[`b${i}`] = record(i);
    }
    let runs = 0;
    const versions = async () => new Map(bucketStubs(await segmentsOf(p)).map((s) => [s.key, s.version]));
    /** The buckets a change wrote: the same keys before and after (nothing cut afresh), a few versions moved. */
    async function expectInPlace(change: () => Promise<{ status: number; body: unknown }>, most: number) {
      const before = await versions();
      const r = await change();
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: expect.anything() });
      const after = await versions();
      for (const key of before.keys()) expect(after.has(key)).toBe(true);
      const moved = [...before].filter(([k, v]) => after.get(k) !== v);
      expect(moved.length).toBeGreaterThan(0);
      expect(moved.length).toBeLessThanOrEqual(most);
      expect((await get(p)).body).toEqual({ value: { runs, builds } });
    }
    expect((await versions()).size).toBeGreaterThanOrEqual(4);
    const batch = (operations: unknown[]) => call('POST', `${p.content}/batch`, { token: p.key, body: { operations } });
    await expectInPlace(() => {
      (builds.b1 as Record<string, unknown>).ok = 'yes';
      delete builds.b2;
      builds.fresh = { tags: ['a', 'b'] };
      runs++;
      return batch([
        { op: 'set', path: 'builds.b1.ok', value: 'yes' },
        { op: 'delete', path: 'builds.b2' },
        { op: 'set', path: 'builds.fresh', value: { tags: ['a'] } },
        { op: 'push', path: 'builds.fresh.tags', value: 'b' },
        { op: 'increment', path: 'runs' },
      ]);
    }, 3);
    expect((await get(p, 'builds.fresh')).body).toEqual({ value: { tags: ['a', 'b'] } });
    await expectInPlace(() => {
      builds.p1 = 1;
      builds.b5moved = builds.b5;
      delete builds.b4;
      delete builds.b5;
      return call('PATCH', p.content, {
        token: p.key,
        headers: { 'content-type': 'application/json-patch+json' },
        body: [
          { op: 'test', path: '/builds/b3/id', value: 3 },
          { op: 'add', path: '/builds/p1', value: 1 },
          { op: 'remove', path: '/builds/b4' },
          { op: 'move', from: '/builds/b5', path: '/builds/b5moved' },
        ],
      });
    }, 5);
    await expectInPlace(() => {
      delete builds.b8;
      builds.added = { x: 1 };
      return call('PATCH', p.content, {
        token: p.key,
        headers: { 'content-type': 'application/merge-patch+json' },
        body: { builds: { b8: null, added: { x: 1 } } },
      });
    }, 2);
    // What fails on a member fails as on the whole object, with its operation's index; nothing changes.
    const unchanged = await versions();
    const refused = await batch([
      { op: 'set', path: 'builds.b6.ok', value: 1 },
      { op: 'increment', path: 'builds.b7.ok' },
    ]);
    expect({ status: refused.status, code: refused.body.code, index: refused.body.index }).toEqual({
      status: 400,
      code: 'NOT_A_NUMBER',
      index: 1,
    });
    const failed = await batch([
      { op: 'test', path: 'builds.b9.id', value: 'not it' },
      { op: 'increment', path: 'runs' },
    ]);
    expect({ status: failed.status, code: failed.body.code }).toEqual({ status: 409, code: 'TEST_FAILED' });
    const notArray = await batch([{ op: 'push', path: 'builds.b6.id', value: 1 }]);
    expect({ status: notArray.status, code: notArray.body.code, index: notArray.body.index }).toEqual({
      status: 400,
      code: 'NOT_AN_ARRAY',
      index: 0,
    });
    expect(await versions()).toEqual(unchanged);
    expect((await get(p)).body).toEqual({ value: { runs, builds } });
    // A member that takes its bucket past its budget: the bucket is cut below itself in the same commit.
    const big = Object.fromEntries(
      Array.from({ length: 8 }, (_, i) => [`big${i}`, text(Math.ceil(fragmentBytes() / 5))]),
    );
    const operations = Object.entries(big).map(([k, value]) => ({ op: 'set', path: `builds.${k}`, value }));
    const grown = await batch([...operations, { op: 'increment', path: 'runs' }]);
    expect(grown.status).toBe(200);
    Object.assign(builds, big);
    runs++;
    const after = await versions();
    for (const key of unchanged.keys()) expect(after.has(key)).toBe(true);
    expect((await get(p)).body).toEqual({ value: { runs, builds } });
    await expectSegmentsWithinBudget(p);
  });

  it('a bucketed object in a bucket of another: batches, JSON Patches and merge patches on its members, in place', async () => {
    const B = fragmentBytes();
    const obj: Record<string, unknown> = Object.fromEntries(
      Array.from({ length: Math.ceil(B / 6) }, (_, i) => [`m${i}`, { n: 0 }]),
    );
    const blob = { a: 'xxxxxxxx', b: 'yyyyyyyy', c: 12345, d: true };
    const c: Record<string, unknown> = {
      obj,
      ...Object.fromEntries(Array.from({ length: Math.ceil(B / 20) }, (_, i) => [`blob${i}`, { ...blob }])),
    };
    const p = await project({ c });
    const segments = await segmentsOf(p);
    // The inner object's bucket stub extends a bucket of the outer one's: two objects, one key prefix.
    const stubs = segments.map((s) => (s.fragment as { key?: string }).key).filter((k) => /#\d+$/.test(String(k)));
    expect(stubs.some((inner) => stubs.some((outer) => inner !== outer && inner?.startsWith(`${outer}/`)))).toBe(true);
    const versions = async () => new Map(bucketStubs(await segmentsOf(p)).map((s) => [s.key, s.version]));
    /** Landed on the members' buckets alone: every bucket kept under its key, a few rewritten. */
    async function expectInPlace(change: () => Promise<{ status: number; body: unknown }>, most: number) {
      const before = await versions();
      const r = await change();
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: expect.anything() });
      const after = await versions();
      for (const key of before.keys()) expect(after.has(key)).toBe(true);
      expect([...before].filter(([k, v]) => after.get(k) !== v).length).toBeLessThanOrEqual(most);
      expect((await get(p)).body).toEqual({ value: { c } });
    }
    const batch = (operations: unknown[]) => call('POST', `${p.content}/batch`, { token: p.key, body: { operations } });
    const patch = (type: string, body: unknown) =>
      call('PATCH', p.content, { token: p.key, headers: { 'content-type': type }, body });
    await expectInPlace(() => {
      obj.y5 = 1;
      c.n = 1;
      return batch([
        { op: 'set', path: 'c.obj.y5', value: 1 },
        { op: 'increment', path: 'c.n' },
      ]);
    }, 3);
    await expectInPlace(() => {
      (obj.m3 as { n: number }).n = 2;
      obj.m7 = 'moved';
      delete obj.m4;
      return batch([
        { op: 'test', path: 'c.obj.m3.n', value: 0 },
        { op: 'increment', path: 'c.obj.m3.n', value: 2 },
        { op: 'set', path: 'c.obj.m7', value: 'moved' },
        { op: 'delete', path: 'c.obj.m4' },
      ]);
    }, 4);
    await expectInPlace(() => {
      obj.p1 = { q: [1] };
      obj.m9moved = obj.m9;
      delete obj.m9;
      (c.blob0 as Record<string, unknown>).d = false;
      return patch('application/json-patch+json', [
        { op: 'test', path: '/c/obj/m8/n', value: 0 },
        { op: 'add', path: '/c/obj/p1', value: { q: [1] } },
        { op: 'move', from: '/c/obj/m9', path: '/c/obj/m9moved' },
        { op: 'replace', path: '/c/blob0/d', value: false },
      ]);
    }, 6);
    await expectInPlace(() => {
      obj.fresh = 1;
      delete obj.m10;
      return patch('application/merge-patch+json', { c: { obj: { fresh: 1, m10: null } } });
    }, 3);
    // What fails on a member fails as on the whole object, with its operation's index; nothing changes.
    const unchanged = await versions();
    const refused = await batch([
      { op: 'set', path: 'c.obj.m11.n', value: 1 },
      { op: 'increment', path: 'c.obj.m12' },
    ]);
    expect({ status: refused.status, code: refused.body.code, index: refused.body.index }).toEqual({
      status: 400,
      code: 'NOT_A_NUMBER',
      index: 1,
    });
    const failed = await batch([
      { op: 'increment', path: 'c.n' },
      { op: 'test', path: 'c.obj.m13.n', value: 'not it' },
    ]);
    expect({ status: failed.status, code: failed.body.code, index: failed.body.index }).toEqual({
      status: 409,
      code: 'TEST_FAILED',
      index: 1,
    });
    const missing = await patch('application/json-patch+json', [{ op: 'remove', path: '/c/obj/absent' }]);
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: 'PATH_NOT_FOUND' });
    expect(await versions()).toEqual(unchanged);
    expect((await get(p)).body).toEqual({ value: { c } });
    await expectSegmentsWithinBudget(p);
  });

  it('16 batches naming members, beside 16 single writes to the same members, while buckets split: nothing lost', async () => {
    const base = Object.fromEntries(Array.from({ length: Math.ceil(fragmentBytes() / 8) }, (_, i) => [`k${i}`, 0]));
    const p = await project({ runs: 0, m: base });
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, w) =>
        w % 2 === 0
          ? call('POST', `${p.content}/batch`, {
              token: p.key,
              body: {
                operations: [
                  { op: 'set', path: `m.new${w}`, value: { w, pad: text(60) } },
                  { op: 'increment', path: `m.k${w % 4}` },
                  { op: 'increment', path: 'runs' },
                ],
              },
            })
          : post(p, 'increment', { path: `m.k${w % 4}`, value: 1 }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const { runs, m } = (await get(p)).body.value as { runs: number; m: Record<string, unknown> };
    expect(runs).toBe(16);
    for (let w = 0; w < 32; w += 2) expect(m[`new${w}`]).toEqual({ w, pad: text(60) });
    expect([m.k0, m.k1, m.k2, m.k3]).toEqual([8, 8, 8, 8]);
    await expectSegmentsWithinBudget(p);
  });

  // The batch changes, in place, the root (the counter), the object's segment and two buckets in one commit; a Query
  // is read-committed item by item. Here a GET of the object meets its segment on one side of the commit and its
  // buckets on the other, both ways round: it reads again, and never answers half of the batch.
  it.each([
    ["the object's segment before the commit, its buckets after", 'segment'],
    ["the object's segment after the commit, its buckets before", 'buckets'],
  ])('a GET of a bucketed object that meets a batch on its members half-way (%s) reads again', async (_, old) => {
    const p = await project({ runs: 0 });
    const builds: Record<string, unknown> = {};
    for (let i = 0; i < Math.ceil((fragmentBytes() * 3) / 40); i++) builds[`b${i}`] = record(i);
    await ok(p, 'set', { path: 'builds', value: builds });
    const holder = (await segmentsOf(p)).find(
      (s) =>
        typeof s.fragment === 'object' &&
        s.fragment !== null &&
        /#\d+$/.test(String((s.fragment as { key?: string }).key)),
    );
    expect(holder).toBeDefined();
    const { readContent } = await import('../../lib/storage');
    const isHolder = (item: Record<string, { S?: string }>) => item.sk?.S === holder?.key;
    let torn = false;
    const { result, queries, met } = await duringQuery(
      () => true,
      async () => {
        const r = await call('POST', `${p.content}/batch`, {
          token: p.key,
          body: {
            operations: [
              { op: 'set', path: 'builds.b1.ok', value: 'one' },
              { op: 'set', path: 'builds.b2.ok', value: 'two' },
              { op: 'increment', path: 'runs' },
            ],
          },
        });
        expect(r.status).toBe(200);
      },
      (before, after) => {
        const [first, second] = old === 'segment' ? [before, after] : [after, before];
        torn = second.some((i) => !isHolder(i));
        return [...first.filter(isHolder), ...second.filter((i) => !isHolder(i))];
      },
      () =>
        readContent({
          project: { username: p.username, slug: p.slug },
          principal: { kind: 'user', username: p.username },
          segments: ['builds'],
        }),
    );
    expect(met).toBe(true);
    expect((result as { value: unknown }).value).toEqual({
      ...builds,
      b1: { ...record(1), ok: 'one' },
      b2: { ...record(2), ok: 'two' },
    });
    expect(torn).toBe(true);
    expect(queries).toBe(2);
  });

  it('a content of many scalar members is bucketed at its root; its members change and read as before', async () => {
    const content = Object.fromEntries(Array.from({ length: Math.ceil(fragmentBytes() / 3) }, (_, i) => [`c${i}`, i]));
    const p = await project(content);
    expect(bucketStubs(await expectSegmentsWithinBudget(p)).length).toBeGreaterThanOrEqual(2);
    expect((await get(p)).body).toEqual({ value: content });
    await ok(p, 'increment', { path: 'c1', value: 10 });
    await ok(p, 'delete', { path: 'c2' });
    await ok(p, 'set', { path: 'fresh', value: { a: 1 } });
    const expected: Record<string, unknown> = { ...content, c1: 11, fresh: { a: 1 } };
    delete expected.c2;
    expect((await get(p)).body).toEqual({ value: expected });
    expect((await get(p, 'fresh.a')).body).toEqual({ value: 1 });
    await expectSegmentsWithinBudget(p);
    // update with a small content leaves one segment.
    await ok(p, 'update', { content: { small: 1 } });
    expect((await segmentsOf(p)).length).toBe(1);
    expect((await get(p)).body).toEqual({ value: { small: 1 } });
  });

  it('an object of large strings: each its own bucket, past what one segment holds; one value past 350 KiB is a 413', async () => {
    const p = await project({});
    const big = (c: string) => c.repeat(200 * 1024);
    await ok(p, 'set', { path: 'docs.a', value: big('a') });
    await ok(p, 'set', { path: 'docs.b', value: big('b') });
    await ok(p, 'set', { path: 'docs.c', value: big('c') });
    expect((await get(p, 'docs')).body).toEqual({ value: { a: big('a'), b: big('b'), c: big('c') } });
    expect((await get(p, 'docs.b')).body).toEqual({ value: big('b') });
    await expectSegmentsWithinBudget(p);
    expectError(await post(p, 'set', { path: 'docs.d', value: 'd'.repeat(360 * 1024) }), 413, 'CONTENT_TOO_LARGE');
    expect(Object.keys((await get(p, 'docs')).body.value).sort()).toEqual(['a', 'b', 'c']);
  });

  it('32 concurrent writers of new and existing members of a bucketed object, while its buckets split: nothing lost', async () => {
    const base = Object.fromEntries(Array.from({ length: Math.ceil(fragmentBytes() / 8) }, (_, i) => [`k${i}`, 0]));
    const p = await project({ m: base });
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, w) =>
        w % 2 === 0
          ? post(p, 'set', { path: `m.new${w}`, value: { w, pad: text(60) } })
          : post(p, 'increment', { path: `m.k${w % 4}`, value: 1 }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    const m = (await get(p, 'm')).body.value as Record<string, unknown>;
    for (let w = 0; w < 32; w += 2) expect(m[`new${w}`]).toEqual({ w, pad: text(60) });
    expect([m.k1, m.k3]).toEqual([8, 8]);
    await expectSegmentsWithinBudget(p);
  });
});
