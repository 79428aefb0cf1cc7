// Batches, without a database: the in-memory planner (order, atomicity, each operation's own error with its index)
// and the one-UpdateItem form of a batch (exact merged requests, and when there is none).
import { fragmentBytes } from '../../lib/config/env';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { Refusal } from '../../lib/config/errors';
import { statusOf } from '../../lib/config/error-codes';
import {
  type BatchOperation,
  intoNewest,
  jsonEquals,
  lowestReach,
  planBatch,
  plansOnNewest,
} from '../../lib/content/batch';
import { layTail } from '../../lib/storage/layout/chunked';
import { type Json, type JsonObject, LosslessNumber, Stub, jsonNumber, storedSize } from '../../lib/content/json';
import { type ContentOperation, applyAction, plan } from '../../lib/content/model';
import {
  type AccessCheck,
  MAX_EXPRESSION_LENGTH,
  MAX_EXPRESSION_OPERATORS,
  operatorCount,
  compileBatchWrite,
  compileWrite,
  growthBound,
} from '../../lib/expressions';
import { parsePath } from '../../lib/paths';
import { add, del, insert, push, set, thrownBy, clearingCommit } from './helpers';

const test = (path: string, expected: { value: Json } | { exists: boolean }): BatchOperation => ({
  kind: 'test',
  segments: parsePath(path),
  ...expected,
});
const BUDGET = { maxBytes: 1000, tooLarge: () => new Refusal('CONTENT_TOO_LARGE', 'too large') };
const ops = (...list: unknown[]) => list as BatchOperation[];

describe('planBatch', () => {
  it.each<[string, JsonObject, BatchOperation[], JsonObject]>([
    ['a set seen by an increment', {}, ops(set('a', { n: 1 }), add('a.n', 2)), { a: { n: 3 } }],
    ['a push seen by a test', { l: [] }, ops(push('l', 1), test('l', { value: [1] })), { l: [1] }],
    ['an insert after pushes', {}, ops(push('l', 1), push('l', 3), insert('l', 1, 2)), { l: [1, 2, 3] }],
    ['a delete shifting the index of a set', { l: ['a', 'b'] }, ops(del('l.0'), set('l.0', 'B')), { l: ['B'] }],
    ['the same counter twice', { n: 1 }, ops(add('n', 2), add('n', -5)), { n: -2 }],
    [
      'a set then deleted, then tested absent',
      {},
      ops(set('x.y', 1), del('x.y'), test('x.y', { exists: false })),
      { x: {} },
    ],
  ])('%s', (_name, root, batch, expected) => {
    const before = structuredClone(root);
    const result = planBatch(root, batch, BUDGET);
    expect(result.content).toEqual(expected);
    expect(result.changed).toBe(true);
    expect(root).toEqual(before);
  });

  it('changes nothing for tests and deletes of missing paths, and says so', () => {
    const root = { a: 1 };
    const result = planBatch(root, ops(test('a', { value: 1 }), del('b'), test('b', { exists: false })), BUDGET);
    expect(result).toEqual({ content: root, changed: false, bytes: expect.any(Number) });
    expect(result.content).toBe(root);
  });

  it.each<[string, JsonObject, BatchOperation[], number, number, string]>([
    ['push to what a set made a number', {}, ops(set('a', 1), push('a', 2)), 1, 400, 'NOT_AN_ARRAY'],
    ['increment of a string', { s: 'x' }, ops(add('n', 1), add('s', 1)), 1, 400, 'NOT_A_NUMBER'],
    ['insert beyond the end a push made', {}, ops(push('l', 1), insert('l', 2, 0)), 1, 400, 'INDEX_OUT_OF_RANGE'],
    ['a sum out of range', { n: 9e125 }, ops(add('n', 9e125)), 0, 400, 'NUMBER_OUT_OF_RANGE'],
    ['a failed test', { a: 1 }, ops(set('b', 2), test('a', { value: 2 })), 1, 409, 'TEST_FAILED'],
    ['exists: false on a value', { a: 1 }, ops(test('a', { exists: false })), 0, 409, 'TEST_FAILED'],
    ['exists: true on nothing', {}, ops(set('b', 1), set('c', 1), test('a', { exists: true })), 2, 409, 'TEST_FAILED'],
    ['content over budget', {}, ops(set('a', 'x'.repeat(600)), set('b', 'x'.repeat(600))), 1, 413, 'CONTENT_TOO_LARGE'],
  ])('fails at the first failing operation with its own error: %s', (_name, root, batch, index, statusCode, code) => {
    const before = structuredClone(root);
    const error = thrownBy(() => planBatch(root, batch, BUDGET));
    expect({ statusCode: statusOf(error.code), code: error.code, index: error.index }).toEqual({
      statusCode,
      code,
      index,
    });
    expect(error.toJSON()).toEqual({ message: error.message, code, index });
    expect(root).toEqual(before);
  });

  it("an operation's error is the one plan gives it alone, on the content the ones before it left", () => {
    let content: JsonObject = { l: [1] };
    for (const op of [push('l', 2), set('l.0', 'a')]) content = applyAction(content, plan(content, op)!.action);
    const alone = thrownBy(() => plan(content, insert('l', 5, 0)));
    const inBatch = thrownBy(() =>
      planBatch({ l: [1] }, ops(push('l', 2), set('l.0', 'a'), insert('l', 5, 0)), BUDGET),
    );
    expect({ ...inBatch.toJSON() }).toEqual({ ...alone.toJSON(), index: 2 });
  });
});

describe('planBatch on random batches', () => {
  const segment = fc.constantFrom('a', 'b', 'c', '0', '1', '-1', '2');
  const opPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join('.'));
  const leaf = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('s', null, true));
  const { tree } = fc.letrec<{ tree: Json }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('tree'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', 'c', '0'), tie('tree'), { maxKeys: 3 }),
    ),
  }));
  const root = fc.dictionary(fc.constantFrom('a', 'b', 'c'), tree, { maxKeys: 3 }) as fc.Arbitrary<JsonObject>;
  const operation = fc.oneof(
    fc.tuple(opPath, tree).map(([p, v]) => set(p, v)),
    fc.tuple(opPath, leaf).map(([p, v]) => push(p, v)),
    fc.tuple(opPath, fc.integer({ min: -3, max: 3 }), leaf).map(([p, i, v]) => insert(p, i, v)),
    fc.tuple(opPath, fc.integer({ min: -3, max: 3 })).map(([p, n]) => add(p, n)),
    opPath.map((p) => del(p)),
  );

  it('equals plan and applyAction one by one, counts the bytes exactly and never changes its input', () => {
    fc.assert(
      fc.property(root, fc.array(operation, { minLength: 1, maxLength: 8 }), (initial, batch) => {
        const before = JSON.stringify(initial);
        let expected: JsonObject = initial;
        let failure: { code: string; index: number } | undefined;
        for (const [index, op] of batch.entries()) {
          try {
            const planned = plan(expected, op);
            if (planned) expected = applyAction(expected, planned.action);
          } catch (error) {
            failure = {
              code: thrownBy(() => {
                throw error;
              }).code,
              index,
            };
            break;
          }
        }
        const big = { ...BUDGET, maxBytes: 1e9 };
        if (failure) {
          const error = thrownBy(() => planBatch(initial, ops(...batch), big));
          expect({ code: error.code, index: error.index }).toEqual(failure);
        } else {
          const result = planBatch(initial, ops(...batch), big);
          expect(result.content).toEqual(expected);
          expect(result.bytes).toBe(storedSize(expected));
        }
        expect(JSON.stringify(initial)).toBe(before);
      }),
      { numRuns: 500 },
    );
  });
});

describe('jsonEquals', () => {
  const n = (text: string) => jsonNumber(text);
  it.each<[string, Json, Json, boolean]>([
    ['1 and 1.0', 1, n('1.0'), true],
    ['100 and 1E+2', 100, n('1E+2'), true],
    ['an exact decimal and its double', new LosslessNumber('0.30000000000000001'), 0.3, false],
    ['equal exact decimals', new LosslessNumber('12345678901234567890'), n('12345678901234567890'), true],
    ['objects in another key order', { a: 1, b: [2] }, { b: [2], a: 1 }, true],
    ['an object with a key more', { a: 1 }, { a: 1, b: 2 }, false],
    ['arrays in another order', [1, 2], [2, 1], false],
    ['a number and its string', 1, '1', false],
    ['null and false', null, false, false],
    ['an empty array and an empty object', [], {}, false],
  ])('%s', (_name, a, b, equal) => {
    expect(jsonEquals(a, b)).toBe(equal);
    expect(jsonEquals(b, a)).toBe(equal);
  });
});

describe('compileBatchWrite', () => {
  const ACCESS: AccessCheck = { ge: 3, inc: 'INC' };
  const envelope = { access: ACCESS, budget: fragmentBytes(), requestToken: 'tok', slot: 3 };
  const N = (n: string): AttributeValue => ({ N: n });

  it('merges the fast forms of operations on unrelated paths into one UpdateItem', () => {
    expect(compileBatchWrite(ops(add('n', 1), push('l', 'x'), del('o.k')), envelope)).toEqual(
      clearingCommit({
        UpdateExpression:
          'SET #n0.#n1 = if_not_exists(#n0.#n1, :v0) + :v1, #n0.#n2 = list_append(if_not_exists(#n0.#n2, :v4), :v5),' +
          ' #n5 = #n5 + :v9, #n6 = :v6, #n7 = :v6, #n8 = #n8 + :v10 REMOVE #n0.#n3.#n4',
        ConditionExpression:
          '#n9 = :v7 AND #n10 = :v8 AND NOT #n0.#n1 < :v2 AND NOT #n0.#n1 > :v3' +
          ' AND attribute_exists(#n0.#n3.#n4) AND #n7 <> :v6 AND #n8 <= :v11',
        ExpressionAttributeNames: {
          '#n0': 'content',
          '#n1': 'n',
          '#n2': 'l',
          '#n3': 'o',
          '#n4': 'k',
          '#n5': 'ver',
          '#n6': 'etag',
          '#n7': 'rq3',
          '#n8': 'bytes',
          '#n9': 'ge',
          '#n10': 'inc',
        },
        ExpressionAttributeValues: {
          ':v0': N('0'),
          ':v1': N('1'),
          ':v2': N('-9e+125'),
          ':v3': N('9e+125'),
          ':v4': { L: [] },
          ':v5': { L: [{ S: 'x' }] },
          ':v6': { S: 'tok' },
          ':v7': N('3'),
          ':v8': { S: 'INC' },
          ':v9': N('1'),
          // The growth bounds of the operations, summed: 23 for the counter, 7 for the push.
          ':v10': N('30'),
          ':v11': N(String(fragmentBytes() - 30)),
        },
      }),
    );
  });

  it.each<[string, ContentOperation]>([
    ['set', set('a.b', { c: 1 })],
    ['push', push('l', 1)],
    ['insert at 0', insert('l', 0, 1)],
    ['increment', add('n', 2)],
    ['delete of an element', del('l.0')],
  ])("a batch of one %s is exactly that operation's own fast write", (_name, op) => {
    expect(compileBatchWrite(ops(op), envelope)).toEqual(
      compileWrite({ op }, { ...envelope, size: { growth: growthBound(op) } }),
    );
  });

  it.each<[string, BatchOperation[]]>([
    ['the same path twice', ops(add('n', 1), add('n', 1))],
    ['a path under another', ops(set('a', {}), set('a.b', 1))],
    ['a path above another', ops(set('a.b', 1), del('a'))],
    ['a push and an element of the same list', ops(push('l', 1), set('l.0', 2))],
    ['a test', ops(test('a', { value: 1 }), set('b', 1))],
    ['an element removed beside another operation', ops(del('l.0'), set('m', 1))],
    ['a negative index (needs the length)', ops(set('l.-1', 1), set('m', 1))],
    ['an insert in the middle', ops(insert('l', -1, 1))],
    [
      'an operation its route would refuse (the ones before it may fail first)',
      ops(set('a', 1), { kind: 'invalid', error: new Refusal('CONTENT_TOO_LARGE', 'x') }),
    ],
  ])('has no one-request form for %s (read and plan)', (_name, batch) => {
    expect(compileBatchWrite(batch, envelope)).toBeUndefined();
  });

  it("has none when the merged expression would pass DynamoDB's 4 KB limit", () => {
    const many = ops(...Array.from({ length: 100 }, (_, i) => push(`list${i}`, i)));
    const within = compileBatchWrite(many.slice(0, 40), envelope);
    expect(within?.UpdateExpression.length).toBeLessThanOrEqual(MAX_EXPRESSION_LENGTH);
    expect(compileBatchWrite(many, envelope)).toBeUndefined();
  });

  // Found by import on DynamoDB Local: 100 sets of new members made one ConditionExpression of 301 operators, which
  // DynamoDB refuses (a 500; the embedded engine has no such limit). Every fast form, at every batch size: within
  // DynamoDB's 300 operators in each expression, or no one-request form.
  it.each<[string, (i: number) => unknown]>([
    ['sets of new members', (i) => set(`m${i}`, i)],
    ['sets of nested paths', (i) => set(`o${i}.k`, { v: i })],
    ['pushes', (i) => push(`list${i}`, i)],
    ['increments', (i) => add(`n${i}`, 1)],
    ['deletes', (i) => del(`k${i}`)],
  ])("stays within DynamoDB's 300 operators for %s, at every batch size", (_name, make) => {
    for (const guardStubs of [false, true]) {
      for (let size = 1; size <= 100; size++) {
        const request = compileBatchWrite(ops(...Array.from({ length: size }, (_, i) => make(i))), {
          ...envelope,
          guardStubs,
        });
        if (request === undefined) continue;
        for (const expression of [request.UpdateExpression, request.ConditionExpression])
          expect(operatorCount(expression)).toBeLessThanOrEqual(MAX_EXPRESSION_OPERATORS);
      }
    }
  });

  it.each<[string, number]>([
    ['#a = :a', 1],
    ['attribute_not_exists(#a.#b) AND #c <> :c', 3],
    ['(#ge = :ge AND #inc = :inc) OR NOT begins_with(#s, :p)', 6],
    ['#n BETWEEN :lo AND :hi AND size(#l) >= :s AND #t IN (:x, :y)', 7],
  ])('counts the operators of %s as DynamoDB does, or more', (expression, count) => {
    expect(operatorCount(expression)).toBeGreaterThanOrEqual(count);
  });
});

describe('planning on a chunked array’s newest elements (plansOnNewest, intoNewest)', () => {
  const STUB = new Stub('/a/dir123456~0');
  /** An operation on `log` as the fuzzer makes them: indexes anywhere, from the start or from the end. */
  const operation = (length: number): fc.Arbitrary<BatchOperation> =>
    fc.oneof(
      fc.integer().map((v) => push('log', v)),
      fc.tuple(fc.integer({ min: -length - 2, max: length + 2 }), fc.integer()).map(([i, v]) => insert('log', i, v)),
      fc.tuple(fc.integer({ min: -length - 2, max: length + 2 }), fc.integer()).map(([i, v]) => set(`log.${i}`, v)),
      fc.integer({ min: -length - 2, max: length + 2 }).map((i) => del(`log.${i}`)),
      fc.integer({ min: -length - 2, max: length + 2 }).map((i) => add(`log.${i}`, 1)),
      fc.integer({ min: -length - 2, max: length + 2 }).map((i) => test(`log.${i}`, { value: i })),
      fc.constant(set('other', 1)),
      fc.constant(test('log', { value: [] })),
    ) as fc.Arbitrary<BatchOperation>;
  const outcome = (run: () => JsonObject) => {
    try {
      return { content: run() };
    } catch (error) {
      const e = error as Refusal;
      return { error: `${statusOf(e.code)} ${e.code}` };
    }
  };
  const unbounded = { maxBytes: Number.MAX_SAFE_INTEGER, tooLarge: BUDGET.tooLarge };

  it('when it allows, the result on [stub, newest…] is the whole array’s, the stub first and alone; else a 4xx falls back', () => {
    let allowed = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 12 }).chain((l) => fc.array(operation(l), { minLength: 1, maxLength: 5 })),
        (count, own, batch) => {
          const log = Array.from({ length: count + own }, (_, i) => i);
          if (!plansOnNewest(batch, ['log'], count, own)) return;
          allowed++;
          const whole = outcome(() => planBatch({ log }, batch, unbounded).content);
          const part = outcome(
            () => planBatch({ log: [STUB, ...log.slice(count)] }, intoNewest(batch, ['log'], count), unbounded).content,
          );
          // A 4xx on the part is planned again on the whole (its message is the whole array's).
          if ('error' in part) return;
          expect(whole).toHaveProperty('content');
          const list = part.content?.log as Json[];
          expect(list[0]).toBe(STUB);
          expect(list.slice(1).some((v) => v instanceof Stub)).toBe(false);
          expect({ ...part.content, log: [...log.slice(0, count), ...list.slice(1)] }).toEqual(whole.content);
        },
      ),
      { numRuns: 3000 },
    );
    expect(allowed).toBeGreaterThan(300);
  });

  it('planned on a tail (the chunks from the lowest index reached) and laid back into its chunks, it is the whole array’s', () => {
    let laid = 0;
    let shrunk = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 0, max: 25 }).chain((l) => fc.array(operation(l), { minLength: 1, maxLength: 5 })),
        (sizes, own, batch) => {
          const starts = sizes.map((_, j) => sizes.slice(0, j).reduce((a, b) => a + b, 0));
          const count = sizes.reduce((a, b) => a + b, 0);
          const log = Array.from({ length: count + own }, (_, i) => i);
          const reach = lowestReach(batch, ['log'], count + own);
          if (reach === undefined || reach >= count) return;
          // The tail: from the chunk that holds the lowest index reached.
          const first = starts.filter((s) => s <= reach).length - 1;
          const s = starts[first] as number;
          if (!plansOnNewest(batch, ['log'], s, own + count - s)) return;
          const whole = outcome(() => planBatch({ log }, batch, unbounded).content);
          const stub = new Stub(`/a/dir123456~${s}`);
          const part = outcome(
            () => planBatch({ log: [stub, ...log.slice(s)] }, intoNewest(batch, ['log'], s), unbounded).content,
          );
          if ('error' in part) return;
          expect(whole).toHaveProperty('content');
          const list = part.content?.log as Json[];
          expect(list[0]).toBe(stub);
          expect(list.slice(1).some((v) => v instanceof Stub)).toBe(false);
          const back = layTail(list.slice(1), starts.slice(first), count);
          // A chunk left empty: planned on the whole array instead.
          if (!back) {
            expect(list.length - 1).toBeLessThanOrEqual(count - s - (sizes[sizes.length - 1] as number));
            return;
          }
          laid++;
          if (back.count < count) shrunk++;
          // Every chunk keeps its start and, but the last, its length; the last is never empty.
          for (const [k, chunk] of back.chunks.entries()) {
            if (k < back.chunks.length - 1) expect(chunk).toHaveLength(sizes[first + k] as number);
            else expect(chunk.length).toBeGreaterThan(0);
          }
          expect(back.count).toBe((starts[starts.length - 1] as number) + (back.chunks.at(-1) as Json[]).length);
          expect({ ...part.content, log: [...log.slice(0, s), ...back.chunks.flat(), ...back.newest] }).toEqual(
            whole.content,
          );
        },
      ),
      // A fixed seed: the counts below check the generator's reach, which a random draw left at the bound (10).
      { numRuns: 3000, seed: 20261127 },
    );
    expect(laid).toBeGreaterThan(300);
    expect(shrunk).toBeGreaterThan(10);
  });

  it.each<[string, BatchOperation[], boolean]>([
    ['pushes', ops(push('log', 1), push('log', 2)), true],
    ['a push and a member elsewhere', ops(push('log', 1), set('meta.n', 2)), true],
    ['an element at or after the count', ops(set('log.3.x', 1), del('log.4')), true],
    ['an old element', ops(set('log.2', 1)), false],
    [
      'the last element, then one removed before counting from the end again',
      ops(del('log.-1'), set('log.-2', 0)),
      false,
    ],
    ['from the end within the newest', ops(set('log.-2', 0)), true],
    ['an insert before the newest', ops(insert('log', 1, 0)), false],
    ['an insert at the end', ops(insert('log', 5, 0)), true],
    ['the array read whole', ops(push('log', 1), test('log', { exists: true })), false],
    ['the array replaced', ops(set('log', [])), false],
    ['a test above it', ops(push('log', 1), test('meta', { exists: true })), true],
  ])('%s', (_, batch, expected) => {
    // log = [0, 1, 2 | 3, 4]: three elements in chunks, two newest.
    expect(plansOnNewest(batch, ['log'], 3, 2)).toBe(expected);
  });
});
