// POST content/batch: our own operations applied in order, each seeing the ones before it, all or none; a failing
// operation fails the batch with the error it gets alone plus its position.
import { call, expectError, newKey, newUser, post, type Project, project, type Reply, state } from '../support/api';
import { strays } from '../support/segments';

type Op = Record<string, unknown> & { op: string };
const MESSAGE = 'Batch applied successfully';

const batch = (p: Project, operations: unknown, headers?: Record<string, string>, token = p.key) =>
  post(p, 'batch', { operations }, token, headers);

async function applied(p: Project, operations: Op[], headers?: Record<string, string>): Promise<Reply> {
  const r = await batch(p, operations, headers);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
  expect(r.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  return r;
}

/** Sends each operation to its own route, as a client would one by one; the last reply. */
async function oneByOne(p: Project, operations: Op[]): Promise<Reply | undefined> {
  let last: Reply | undefined;
  for (const { op, ...body } of operations) {
    last = await post(p, op, body);
    if (last.status !== 200) return last;
  }
  return last;
}

/**
 * The batch fails at `index` with exactly the error that operation gets alone (after the ones before it, sent one
 * by one to a twin project), and changes nothing.
 */
async function failsAt(initial: Record<string, unknown>, operations: Op[], index: number, code: string) {
  // The single route words a sum the engine refused by the engine's rule; the batch's planner by its own.
  const sameWords = code !== 'NUMBER_TOO_PRECISE';
  const [p, twin] = await Promise.all([project(initial), project(initial)]);
  const alone = await oneByOne(twin, operations.slice(0, index + 1));
  expect(alone?.body.code).toBe(code);
  const before = await state(p);
  const r = await batch(p, operations);
  expect({ status: r.status, body: r.body }).toEqual({
    status: alone?.status,
    body: { ...alone?.body, ...(sameWords ? {} : { message: expect.any(String) }), index },
  });
  expect(await state(p)).toEqual(before);
}

describe('POST content/batch', () => {
  // Found by import on DynamoDB Local: 100 operations merged into one UpdateItem made a ConditionExpression of more
  // than DynamoDB's 300 operators (a 500 there, while the embedded engine took it). Each kind, 100 at once.
  it.each<[string, (i: number) => Op, Record<string, unknown>, (i: number) => [string, unknown]]>([
    ['sets of new nested members', (i) => ({ op: 'set', path: `o.m${i}`, value: i }), { o: {} }, (i) => [`m${i}`, i]],
    ['increments', (i) => ({ op: 'increment', path: `o.m${i}` }), { o: {} }, (i) => [`m${i}`, 1]],
    [
      'sets of new members',
      (i) => ({ op: 'set', path: `o.m${i}`, value: { v: i } }),
      { o: {} },
      (i) => [`m${i}`, { v: i }],
    ],
  ])('100 %s in one batch: 200, all applied', async (_name, make, initial, member) => {
    const p = await project(initial);
    const r = await batch(
      p,
      Array.from({ length: 100 }, (_, i) => make(i)),
    );
    expect(r.status).toBe(200);
    expect((await state(p)).value).toEqual({ o: Object.fromEntries(Array.from({ length: 100 }, (_, i) => member(i))) });
  });

  it.each<[string, Record<string, unknown>, Op[], Record<string, unknown>]>([
    ['set', { a: 1 }, [{ op: 'set', path: 'b.c', value: { d: [1] } }], { a: 1, b: { c: { d: [1] } } }],
    ['insert', { l: [1, 2] }, [{ op: 'insert', path: 'l', value: 0, index: 0 }], { l: [0, 1, 2] }],
    ['insert in the middle', { l: [1, 3] }, [{ op: 'insert', path: 'l', value: 2, index: -1 }], { l: [1, 2, 3] }],
    ['push', { l: [1] }, [{ op: 'push', path: 'l', value: { id: 2 } }], { l: [1, { id: 2 }] }],
    ['push to a missing array', {}, [{ op: 'push', path: 'l', value: null }], { l: [null] }],
    ['increment', { n: 1 }, [{ op: 'increment', path: 'n', value: 2 }], { n: 3 }],
    ['increment by the default 1', { n: 1 }, [{ op: 'increment', path: 'n' }], { n: 2 }],
    ['decrement', { n: 1 }, [{ op: 'decrement', path: 'n' }], { n: 0 }],
    ['decimal arithmetic', { n: 0.1 }, [{ op: 'increment', path: 'n', value: 0.2 }], { n: 0.3 }],
    ['delete', { a: 1, b: 2 }, [{ op: 'delete', path: 'a' }], { b: 2 }],
    ['delete an element', { l: [1, 2, 3] }, [{ op: 'delete', path: 'l.0' }], { l: [2, 3] }],
    ['delete of a missing path', { a: 1 }, [{ op: 'delete', path: 'x' }], { a: 1 }],
    [
      'many operations on unrelated paths',
      { n: 1, l: [], o: { k: 1 } },
      [
        { op: 'increment', path: 'n' },
        { op: 'push', path: 'l', value: 'x' },
        { op: 'set', path: 'o.j', value: 2 },
        { op: 'delete', path: 'o.k' },
        { op: 'decrement', path: 'm', value: 5 },
      ],
      { n: 2, l: ['x'], o: { j: 2 }, m: -5 },
    ],
    [
      'a missing delete beside an increment (the one-request form fails its condition, then reads)',
      { n: 1 },
      [
        { op: 'delete', path: 'gone' },
        { op: 'increment', path: 'n' },
      ],
      { n: 2 },
    ],
    [
      'a set under a missing parent (the one-request condition fails, then planned)',
      { s: 'x', n: 1 },
      [
        { op: 'increment', path: 'n' },
        { op: 'set', path: 't.u', value: 1 },
      ],
      { s: 'x', n: 2, t: { u: 1 } },
    ],
    [
      '100 pushes to 100 lists (too long for one expression: read and plan)',
      {},
      Array.from({ length: 100 }, (_, i) => ({ op: 'push', path: `list${i}`, value: i })),
      Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`list${i}`, [i]])),
    ],
  ])('%s', async (_name, initial, operations, expected) => {
    const p = await project(initial);
    await applied(p, operations);
    expect((await state(p)).value).toEqual(expected);
  });

  it.each<[string, Op[], Record<string, unknown>]>([
    [
      'a value set is there for the next operation',
      [
        { op: 'set', path: 'a', value: { n: 1 } },
        { op: 'increment', path: 'a.n' },
        { op: 'test', path: 'a.n', value: 2 },
      ],
      { a: { n: 2 } },
    ],
    [
      'pushes and inserts on one list, in order',
      [
        { op: 'push', path: 'l', value: 1 },
        { op: 'push', path: 'l', value: 3 },
        { op: 'insert', path: 'l', value: 2, index: 1 },
        { op: 'insert', path: 'l', value: 0, index: 0 },
      ],
      { l: [0, 1, 2, 3] },
    ],
    [
      'a delete shifts the elements the next operation addresses',
      [
        { op: 'push', path: 'l', value: 'a' },
        { op: 'push', path: 'l', value: 'b' },
        { op: 'delete', path: 'l.0' },
        { op: 'set', path: 'l.0', value: 'B' },
      ],
      { l: ['B'] },
    ],
    [
      'a path set and then deleted',
      [
        { op: 'set', path: 'x.y', value: 1 },
        { op: 'delete', path: 'x.y' },
        { op: 'test', path: 'x.y', exists: false },
      ],
      { x: {} },
    ],
    [
      'the same counter twice',
      [
        { op: 'increment', path: 'n', value: 2 },
        { op: 'decrement', path: 'n', value: 5 },
      ],
      { n: -3 },
    ],
  ])('applies in order: %s', async (_name, operations, expected) => {
    const p = await project({});
    const twin = await project({});
    await applied(p, operations);
    expect((await state(p)).value).toEqual(expected);
    // Exactly as if sent one by one (tests aside, which have no route of their own).
    await oneByOne(
      twin,
      operations.filter((o) => o.op !== 'test'),
    );
    expect((await state(twin)).value).toEqual(expected);
  });

  describe('test', () => {
    it.each<[string, Record<string, unknown>, Op]>([
      ['an equal number', { a: { b: 1 } }, { op: 'test', path: 'a.b', value: 1 }],
      [
        'an equal object, keys in another order',
        { o: { x: 1, y: [2] } },
        { op: 'test', path: 'o', value: { y: [2], x: 1 } },
      ],
      ['an equal array', { l: [1, 'a', null] }, { op: 'test', path: 'l', value: [1, 'a', null] }],
      ['null', { a: null }, { op: 'test', path: 'a', value: null }],
      ['an element by a negative index', { l: [1, 2] }, { op: 'test', path: 'l.-1', value: 2 }],
      ['exists: false on a missing key', { a: 1 }, { op: 'test', path: 'b', exists: false }],
      ['exists: false below a scalar', { a: 1 }, { op: 'test', path: 'a.b', exists: false }],
      ['exists: false beyond an array', { l: [1] }, { op: 'test', path: 'l.1', exists: false }],
      ['exists: true', { a: null }, { op: 'test', path: 'a', exists: true }],
    ])('holds: %s', async (_name, initial, test) => {
      const p = await project(initial);
      await applied(p, [test, { op: 'set', path: 'after', value: true }]);
      expect((await state(p)).value).toEqual({ ...initial, after: true });
    });

    it.each<[string, Record<string, unknown>, Op]>([
      ['another number', { a: { b: 1 } }, { op: 'test', path: 'a.b', value: 2 }],
      ['a string for a number', { a: 1 }, { op: 'test', path: 'a', value: '1' }],
      ['an object with a key more', { o: { x: 1, y: 2 } }, { op: 'test', path: 'o', value: { x: 1 } }],
      ['an array in another order', { l: [1, 2] }, { op: 'test', path: 'l', value: [2, 1] }],
      ['null for a missing path', {}, { op: 'test', path: 'a', value: null }],
      ['false for 0', { a: 0 }, { op: 'test', path: 'a', value: false }],
      ['exists: false on a present value', { a: null }, { op: 'test', path: 'a', exists: false }],
      ['exists: true on a missing path', {}, { op: 'test', path: 'a', exists: true }],
    ])('fails with 409 TEST_FAILED and changes nothing: %s', async (_name, initial, test) => {
      const p = await project(initial);
      const before = await state(p);
      const r = await batch(p, [{ op: 'set', path: 'before', value: 1 }, test, { op: 'set', path: 'after', value: 1 }]);
      expectErrorAt(r, 409, 'TEST_FAILED', 1);
      expect(await state(p)).toEqual(before);
    });

    it.each([
      ['1.0', '1'],
      ['1E+2', '100'],
      ['0.30000000000000001', '0.30000000000000001'],
      ['12345678901234567890', '12345678901234567890'],
    ])('compares numbers as decimals: %s equals the stored %s', async (tested, stored) => {
      const p = await project({});
      await call('POST', `${p.content}/set`, {
        token: p.key,
        rawBody: `{"path":"n","value":${stored}}`,
        headers: { 'content-type': 'application/json' },
      });
      const r = await call('POST', `${p.content}/batch`, {
        token: p.key,
        rawBody: `{"operations":[{"op":"test","path":"n","value":${tested}},{"op":"set","path":"ok","value":1}]}`,
        headers: { 'content-type': 'application/json' },
      });
      expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
    });

    it('tells apart decimals a double cannot', async () => {
      const p = await project({});
      await call('POST', `${p.content}/set`, {
        token: p.key,
        rawBody: '{"path":"n","value":0.30000000000000001}',
        headers: { 'content-type': 'application/json' },
      });
      const r = await call('POST', `${p.content}/batch`, {
        token: p.key,
        rawBody: '{"operations":[{"op":"test","path":"n","value":0.3}]}',
        headers: { 'content-type': 'application/json' },
      });
      expectErrorAt(r, 409, 'TEST_FAILED', 0);
    });

    it('a batch of tests that hold changes nothing and answers the current ETag', async () => {
      const p = await project({ a: 1 });
      const before = await state(p);
      const r = await applied(p, [{ op: 'test', path: 'a', value: 1 }]);
      expect(r.headers.get('etag')).toBe(before.etag);
      expect(await state(p)).toEqual(before);
    });
  });

  describe('atomicity: a failing operation fails the batch with its own error and its index', () => {
    it.each<[string, Record<string, unknown>, Op[], number, string]>([
      [
        'push to a non-array',
        { s: 'x', n: 1 },
        [
          { op: 'increment', path: 'n' },
          { op: 'push', path: 's', value: 1 },
        ],
        1,
        'NOT_AN_ARRAY',
      ],
      [
        'insert out of range after a push',
        { l: [] },
        [
          { op: 'push', path: 'l', value: 1 },
          { op: 'set', path: 'x', value: 1 },
          { op: 'insert', path: 'l', value: 2, index: 3 },
        ],
        2,
        'INDEX_OUT_OF_RANGE',
      ],
      [
        'increment of what an earlier set made a string',
        { n: 1 },
        [
          { op: 'set', path: 'n', value: 'one' },
          { op: 'increment', path: 'n' },
        ],
        1,
        'NOT_A_NUMBER',
      ],
      [
        'set through a scalar an earlier set made',
        {},
        [
          { op: 'set', path: 'a', value: 1 },
          { op: 'set', path: 'a.b', value: 2 },
        ],
        1,
        'NOT_A_CONTAINER',
      ],
      [
        'a sum out of range',
        { n: 9e125 },
        [
          { op: 'set', path: 'x', value: 1 },
          { op: 'increment', path: 'n', value: 9e125 },
        ],
        1,
        'NUMBER_OUT_OF_RANGE',
      ],
      [
        'set at an index beyond the end an earlier delete made',
        { l: [1, 2] },
        [
          { op: 'delete', path: 'l.1' },
          { op: 'set', path: 'l.2', value: 3 },
        ],
        1,
        'INDEX_OUT_OF_RANGE',
      ],
      ['a key on an array', { l: [] }, [{ op: 'set', path: 'l.k', value: 1 }], 0, 'INVALID_PATH'],
      // The one-request form gets past its condition and the engine refuses the sum: planning names the operation.
      [
        'a sum over 38 digits',
        { n: 1, m: 1e-130 },
        [
          { op: 'increment', path: 'n' },
          { op: 'decrement', path: 'm' },
        ],
        1,
        'NUMBER_TOO_PRECISE',
      ],
      ['a sum over 38 digits, alone', { m: 1e-130 }, [{ op: 'decrement', path: 'm' }], 0, 'NUMBER_TOO_PRECISE'],
      [
        'a set below a string beside an increment (refused by the engine in one request, then planned)',
        { s: 'x', n: 1 },
        [
          { op: 'increment', path: 'n' },
          { op: 'set', path: 's.u', value: 1 },
        ],
        1,
        'NOT_A_CONTAINER',
      ],
    ])('%s', async (_name, initial, operations, index, code) => {
      await failsAt(initial, operations, index, code);
    });

    it('a value too large for any segment: 413 CONTENT_TOO_LARGE at that operation', async () => {
      // Members of any size are spread over segments; one value that stays whole (a string) holds at most 350 KiB.
      const p = await project({});
      const before = await state(p);
      const r = await batch(p, [
        { op: 'set', path: 'a', value: 'x'.repeat(100 * 1024) },
        { op: 'set', path: 'c', value: 'x'.repeat(360 * 1024) },
      ]);
      expectErrorAt(r, 413, 'CONTENT_TOO_LARGE', 1);
      expect(await state(p)).toEqual(before);
    });

    it('a batch that would write more new segments than one commit holds: 413 CHANGE_TOO_LARGE, nothing written', async () => {
      // 120 strings of 4 KiB: a segment each at any segment size, so more than one commit's 100 items.
      const big = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`k${i}`, 'x'.repeat(4096)]));
      const p = await project({ n: 0 });
      const before = await state(p);
      const r = await batch(p, [
        { op: 'set', path: 'big', value: big },
        { op: 'increment', path: 'n' },
      ]);
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 413, code: 'CHANGE_TOO_LARGE' });
      expect(await state(p)).toEqual(before);
      expect(await strays(p)).toEqual({ orphans: [], dangling: [] });
      // The single route writes it (its new segments first, committed by one transaction).
      expect((await post(p, 'set', { path: 'big', value: big })).status).toBe(200);
      expect((await state(p)).value).toEqual({ n: 0, big });
    });
  });

  describe('validation: each operation as its own route checks it, with its index', () => {
    const ok = { op: 'set', path: 'a', value: 1 };
    it.each<[string, unknown, number, string]>([
      ['set without value', [ok, { op: 'set', path: 'b' }], 1, 'MISSING_VALUE'],
      ['push without value', [ok, ok, { op: 'push', path: 'l' }], 2, 'MISSING_VALUE'],
      ['insert without index', [{ op: 'insert', path: 'l', value: 1 }], 0, 'INVALID_INDEX'],
      ['insert at a fractional index', [ok, { op: 'insert', path: 'l', value: 1, index: 0.5 }], 1, 'INVALID_INDEX'],
      ['an empty path', [ok, { op: 'delete', path: '' }], 1, 'INVALID_PATH'],
      ['a path that is no string', [{ op: 'delete', path: 3 }], 0, 'INVALID_PATH'],
      ['a reserved key', [ok, { op: 'set', path: 'a.__proto__', value: 1 }], 1, 'RESERVED_KEY'],
      ['an amount that is no number', [ok, { op: 'increment', path: 'n', value: '2' }], 1, 'INVALID_AMOUNT'],
      ['an unknown field', [{ op: 'delete', path: 'a', value: 1 }], 0, 'UNKNOWN_FIELD'],
      ['an unknown op', [ok, { op: 'move', path: 'a' }], 1, 'INVALID_BATCH'],
      ['update is no batch operation', [{ op: 'update', content: {} }], 0, 'INVALID_BATCH'],
      ['an operation without op', [ok, { path: 'a', value: 1 }], 1, 'INVALID_BATCH'],
      ['an operation that is no object', [ok, 'set'], 1, 'INVALID_BATCH'],
      ['a test with neither value nor exists', [{ op: 'test', path: 'a' }], 0, 'MISSING_VALUE'],
      ['a test with both', [{ op: 'test', path: 'a', value: 1, exists: true }], 0, 'INVALID_BATCH'],
      ['a test whose exists is no boolean', [{ op: 'test', path: 'a', exists: 0 }], 0, 'INVALID_BODY'],
    ])('%s', async (_name, operations, index, code) => {
      const p = await project({ a: 0 });
      const before = await state(p);
      expectErrorAt(await batch(p, operations), 400, code, index);
      expect(await state(p)).toEqual(before);
    });

    it('the batch stops at its first failing operation, whichever kind of error comes later', async () => {
      const p = await project({ s: 'x' });
      const before = await state(p);
      const r = await batch(p, [
        { op: 'set', path: 'a', value: 1 },
        { op: 'push', path: 's', value: 1 },
        { op: 'set', path: 'b' },
      ]);
      expectErrorAt(r, 400, 'NOT_AN_ARRAY', 1);
      expectErrorAt(await batch(p, [{ op: 'test', path: 's', value: 'y' }, { op: 'move' }]), 409, 'TEST_FAILED', 0);
      expect(await state(p)).toEqual(before);
    });

    it('an operation fails exactly as its route fails the same body', async () => {
      const p = await project({});
      for (const body of [{ path: 'b' }, { path: 'a..b', value: 1 }, { path: 'n', value: 1, index: 0 }]) {
        const alone = await post(p, 'set', body);
        const inBatch = await batch(p, [{ op: 'set', ...body }]);
        expect({ status: inBatch.status, body: inBatch.body }).toEqual({
          status: alone.status,
          body: { ...alone.body, index: 0 },
        });
      }
    });

    it.each<[string, unknown]>([
      ['no operations', []],
      ['101 operations', Array.from({ length: 101 }, () => ({ op: 'increment', path: 'n' }))],
      ['operations that are no array', { op: 'set', path: 'a', value: 1 }],
      ['no operations field', undefined],
    ])('%s: 400 INVALID_BATCH without an index', async (_name, operations) => {
      const p = await project({});
      const r = await post(p, 'batch', operations === undefined ? {} : { operations });
      expectError(r, 400, 'INVALID_BATCH');
    });

    it('a field beside operations: 400 UNKNOWN_FIELD', async () => {
      const p = await project({});
      expectError(
        await post(p, 'batch', { operations: [{ op: 'delete', path: 'a' }], atomic: true }),
        400,
        'UNKNOWN_FIELD',
      );
    });

    it('100 operations are applied', async () => {
      const p = await project({});
      await applied(
        p,
        Array.from({ length: 100 }, () => ({ op: 'increment', path: 'n' })),
      );
      expect((await state(p)).value).toEqual({ n: 100 });
    });
  });

  describe('access', () => {
    const body = [{ op: 'set', path: 'a', value: 1 }];

    it('a read-only key: 403, also for an invalid batch (403 before 400)', async () => {
      const p = await project({});
      const { key } = await newKey(p, ['content:read']);
      expectError(await batch(p, body, undefined, key), 403, 'FORBIDDEN');
      expectError(await batch(p, [], undefined, key), 403, 'FORBIDDEN');
      expect((await state(p)).value).toEqual({});
    });

    it('no credential: 401; another project: 404, before 400', async () => {
      const p = await project({});
      expectError(await call('POST', `${p.content}/batch`, { body: { operations: [] } }), 401, 'UNAUTHORIZED');
      const missing = `/api/${p.username}/nothing-here/content/batch`;
      expectError(await call('POST', missing, { token: p.owner, body: { operations: [] } }), 404, 'PROJECT_NOT_FOUND');
    });

    it('a viewer: 403; an editor writes', async () => {
      const p = await project({});
      const viewer = await newUser(p, 'viewer');
      const editor = await newUser(p, 'editor');
      expectError(await batch(p, body, undefined, viewer.token), 403, 'FORBIDDEN');
      expect((await batch(p, body, undefined, editor.token)).status).toBe(200);
      expect((await state(p)).value).toEqual({ a: 1 });
    });
  });

  describe('If-Match and Idempotency-Key apply to the batch as a whole', () => {
    it('If-Match: the current ETag applies, an older one is a 412 with nothing changed', async () => {
      const p = await project({ n: 1 });
      const { etag } = await state(p);
      const ops = [
        { op: 'increment', path: 'n' },
        { op: 'push', path: 'l', value: 1 },
      ];
      await applied(p, ops, { 'if-match': etag as string });
      const after = await state(p);
      const r = await batch(p, ops, { 'if-match': etag as string });
      expectError(r, 412, 'PRECONDITION_FAILED');
      expect(r.headers.get('etag')).toBe(after.etag);
      expect(await state(p)).toEqual(after);
    });

    it('Idempotency-Key: the same batch twice is applied once and answered the same', async () => {
      const p = await project({ n: 0 });
      const ops = [
        { op: 'increment', path: 'n' },
        { op: 'push', path: 'l', value: 1 },
      ];
      const first = await applied(p, ops, { 'idempotency-key': 'batch-1' });
      const second = await applied(p, ops, { 'idempotency-key': 'batch-1' });
      expect(second.headers.get('etag')).toBe(first.headers.get('etag'));
      expect((await state(p)).value).toEqual({ n: 1, l: [1] });
      const other = await batch(p, [{ op: 'increment', path: 'n' }], { 'idempotency-key': 'batch-1' });
      expectError(other, 422, 'IDEMPOTENCY_KEY_REUSED');
    });
  });

  describe('concurrency: nothing lost', () => {
    /** A batch, retried while the service says too many writers raced it (409 WRITE_CONFLICT). */
    async function until(p: Project, operations: Op[]): Promise<void> {
      for (;;) {
        const r = await batch(p, operations);
        if (r.status === 409 && r.body.code === 'WRITE_CONFLICT') continue;
        expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE } });
        return;
      }
    }

    it('32 concurrent batches on one counter and one array', async () => {
      const p = await project({ n: 0, l: [] });
      await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          until(p, [
            { op: 'increment', path: 'n' },
            { op: 'push', path: 'l', value: i },
          ]),
        ),
      );
      const { value } = await state(p);
      expect(value.n).toBe(32);
      expect([...value.l].sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 32 }, (_, i) => i));
    });

    it('32 concurrent batches whose operations overlap (read, plan, write under the version)', async () => {
      const p = await project({ n: 0 });
      await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          until(p, [
            { op: 'increment', path: 'n' },
            { op: 'increment', path: 'n' },
            { op: 'push', path: 'l', value: i },
            { op: 'insert', path: 'l', value: -i - 1, index: 0 },
          ]),
        ),
      );
      const { value } = await state(p);
      expect(value.n).toBe(64);
      expect([...value.l].sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i - 32));
    });
  });
});

function expectErrorAt(r: Reply, status: number, code: string, index: number): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { message: expect.any(String), code, index } });
}
