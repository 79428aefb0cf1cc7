// POST content/decrement and content/increment: add or subtract a finite amount (default 1) with DynamoDB's decimal
// arithmetic; a missing target counts as 0; a non-number target is a 400.
import { call, expectError, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
type CounterOp = 'decrement' | 'increment';
const MESSAGE: Record<CounterOp, string> = {
  decrement: 'Value decremented successfully',
  increment: 'Value incremented successfully',
};
const OPS: CounterOp[] = ['decrement', 'increment'];
const sign = (op: CounterOp) => (op === 'increment' ? 1 : -1);

const raw = (p: Project, op: string, text: string) =>
  call('POST', `${p.content}/${op}`, { token: p.key, rawBody: text, headers: { 'content-type': 'application/json' } });

async function rejected(p: Project, op: CounterOp, body: unknown, status: number, code: string): Promise<void> {
  const before = await state(p);
  expectError(typeof body === 'string' ? await raw(p, op, body) : await post(p, op, body), status, code);
  expect(await state(p)).toEqual(before);
}

async function count(p: Project, op: CounterOp, body: unknown): Promise<Reply> {
  const r = await post(p, op, body);
  expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
  expect(r.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  return r;
}
// -----------------------------------------------------------------------------------------------------------------

describe.each(OPS)('POST content/%s', (op) => {
  const s = sign(op);

  it.each<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]>([
    ['the default amount is 1', { n: 10 }, { path: 'n' }, { n: 10 + s }],
    ['an integer amount', { n: 10 }, { path: 'n', value: 3 }, { n: 10 + 3 * s }],
    ['a decimal amount', { n: 10 }, { path: 'n', value: 0.5 }, { n: 10 + 0.5 * s }],
    ['a negative amount goes the other way', { n: 10 }, { path: 'n', value: -2 }, { n: 10 - 2 * s }],
    ['an amount of 0 leaves the number as it is', { n: 10 }, { path: 'n', value: 0 }, { n: 10 }],
    ['a negative target', { n: -5 }, { path: 'n', value: 5 }, { n: -5 + 5 * s }],
    ['crossing zero', { n: 1 }, { path: 'n', value: 2 }, { n: 1 + 2 * s }],
    ['a large amount', { n: 1 }, { path: 'n', value: 1e20 }, { n: 1 + 1e20 * s }],
    ['a missing target counts as 0', { a: 1 }, { path: 'n' }, { a: 1, n: s }],
    ['a missing target counts as 0, with an amount', {}, { path: 'n', value: 7 }, { n: 7 * s }],
    ['missing parents are created as objects', {}, { path: 'a.b.c', value: 5 }, { a: { b: { c: 5 * s } } }],
    ['a missing target below an existing object', { a: { k: 'v' } }, { path: 'a.n' }, { a: { k: 'v', n: s } }],
    ['a number inside an array', { l: [1, 2, 3] }, { path: 'l.1' }, { l: [1, 2 + s, 3] }],
    ['a number addressed by -1', { l: [1, 2, 3] }, { path: 'l.-1', value: 2 }, { l: [1, 2, 3 + 2 * s] }],
    ['a number in an object inside an array', { l: [{ n: 1 }] }, { path: 'l.0.n' }, { l: [{ n: 1 + s }] }],
    ['an integer key of an object', { o: { '0': 5 } }, { path: 'o.0' }, { o: { '0': 5 + s } }],
    ['a missing integer key of an object counts as 0', { o: {} }, { path: 'o.3' }, { o: { '3': s } }],
    ['an escaped key', { 'a.b': 1 }, { path: 'a\\.b' }, { 'a.b': 1 + s }],
    // Not settled by the docs: the element at index == length is "missing" and is appended, as set does.
    ['index == length appends the amount to the array', { l: [5] }, { path: 'l.1', value: 2 }, { l: [5, 2 * s] }],
  ])('%s', async (_name, initial, body, expected) => {
    const p = await project(initial);
    await count(p, op, body);
    expect((await state(p)).value).toEqual(expected);
  });

  describe('decimal arithmetic (DynamoDB numbers, not binary floating point)', () => {
    it.each<[number, number, number]>([
      [0.1, 0.2, 0.3],
      [1.1, 2.2, 3.3],
      [0.7, 0.1, 0.8],
      [100.01, 0.02, 100.03],
      [1e-10, 2e-10, 3e-10],
      [0, 0.1, 0.1],
    ])('%p and %p', async (start, amount, sum) => {
      // increment: start + amount == sum; decrement: sum - amount == start.
      const p = await project({ n: op === 'increment' ? start : sum });
      await count(p, op, { path: 'n', value: amount });
      expect((await state(p)).value).toEqual({ n: op === 'increment' ? sum : start });
    });

    it('ten steps of 0.1 from a missing target land exactly on 1', async () => {
      const p = await project();
      for (let i = 0; i < 10; i++) await count(p, op, { path: 'n', value: 0.1 });
      expect((await state(p)).value).toEqual({ n: s });
    });
  });

  it('repeated calls add up', async () => {
    const p = await project({ n: 0 });
    for (let i = 0; i < 5; i++) await count(p, op, { path: 'n' });
    expect((await state(p)).value).toEqual({ n: 5 * s });
  });

  describe('rejections leave the content exactly as it was', () => {
    it.each<[string, Record<string, unknown>, unknown, string]>([
      ['target a string', { n: 'abc' }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target a numeric string', { n: '5' }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target an empty string', { n: '' }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target null', { n: null }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target true', { n: true }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target false', { n: false }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target an object', { n: { v: 1 } }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target an empty object', { n: {} }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target an array', { n: [1] }, { path: 'n' }, 'NOT_A_NUMBER'],
      ['target a string in an array', { l: ['a'] }, { path: 'l.0' }, 'NOT_A_NUMBER'],
      ['walking through a number', { n: 1 }, { path: 'n.x' }, 'NOT_A_CONTAINER'],
      ['walking through a string', { n: 's' }, { path: 'n.x.y' }, 'NOT_A_CONTAINER'],
      ['an array index beyond length', { l: [1] }, { path: 'l.5' }, 'INDEX_OUT_OF_RANGE'],
      ['a negative index beyond -length', { l: [1] }, { path: 'l.-2' }, 'INDEX_OUT_OF_RANGE'],
      ['amount a numeric string', { n: 1 }, { path: 'n', value: '1' }, 'INVALID_AMOUNT'],
      ['amount null', { n: 1 }, { path: 'n', value: null }, 'INVALID_AMOUNT'],
      ['amount true', { n: 1 }, { path: 'n', value: true }, 'INVALID_AMOUNT'],
      ['amount an object', { n: 1 }, { path: 'n', value: { a: 1 } }, 'INVALID_AMOUNT'],
      ['amount an array', { n: 1 }, { path: 'n', value: [1] }, 'INVALID_AMOUNT'],
      ['amount an empty string', { n: 1 }, { path: 'n', value: '' }, 'INVALID_AMOUNT'],
      ['amount 1e126 (not storable)', { n: 1 }, { path: 'n', value: 1e126 }, 'INVALID_AMOUNT'],
      ['amount 1e-131 (not storable)', { n: 1 }, { path: 'n', value: 1e-131 }, 'INVALID_AMOUNT'],
      ['amount 1e400 (Infinity after parsing)', { n: 1 }, '{"path":"n","value":1e400}', 'INVALID_AMOUNT'],
      ['amount -1e400 (-Infinity after parsing)', { n: 1 }, '{"path":"n","value":-1e400}', 'INVALID_AMOUNT'],
      ['path missing', { n: 1 }, { value: 1 }, 'INVALID_PATH'],
      ['path not a string', { n: 1 }, { path: 1 }, 'INVALID_PATH'],
      ['an unknown field', { n: 1 }, { path: 'n', amount: 1 }, 'UNKNOWN_FIELD'],
    ])('%s', async (_name, initial, body, code) => {
      const p = await project(initial);
      await rejected(p, op, body, 400, code);
    });

    it('a result beyond the storable range is a 400 NUMBER_OUT_OF_RANGE', async () => {
      const p = await project({ n: 9e125 * s });
      await rejected(p, op, { path: 'n', value: 9e125 }, 400, 'NUMBER_OUT_OF_RANGE');
    });

    it('a non-zero result below the smallest storable magnitude (1e-130) is a 400 NUMBER_OUT_OF_RANGE', async () => {
      // -+1e-130 moved by 1.5e-130 lands on +-5e-131.
      const p = await project({ n: -s * 1e-130 });
      await rejected(p, op, { path: 'n', value: 1.5e-130 }, 400, 'NUMBER_OUT_OF_RANGE');
    });

    it.each<[number, number]>([
      [1e30, 1e-10],
      [0.1, 1e38],
      [1, 1e-100],
    ])('a result of more than 38 significant digits (%p and %p) is a 400 NUMBER_TOO_PRECISE', async (start, amount) => {
      const p = await project({ n: start });
      await rejected(p, op, { path: 'n', value: amount }, 400, 'NUMBER_TOO_PRECISE');
    });
  });

  it('a result of exactly 38 significant digits is accepted (1e37 + 1, 1e37 - 1)', async () => {
    const p = await project({ n: 1e37 });
    await count(p, op, { path: 'n', value: 1 });
    // Exactly: 1e37 ± 1, all 38 digits (GET writes it the way JavaScript prints numbers of that size).
    const text = (await call('GET', p.content, { token: p.key })).text;
    expect(text).toBe(
      op === 'increment' ? `{"value":{"n":1.${'0'.repeat(36)}1e+37}}` : `{"value":{"n":9.${'9'.repeat(36)}e+36}}`,
    );
  });
});
