// The compiled UpdateItem requests, run on an in-memory model of DynamoDB expressions, must do what the content
// model says: a fast write whose condition holds changes the content exactly as plan + applyAction would, and a
// concrete action compiled after a read does the same.
import { fragmentBytes } from '../../lib/config/env';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { type Json, type JsonObject, storedSize } from '../../lib/content/json';
import { type Action, type ContentOperation, type Plan, applyAction, plan } from '../../lib/content/model';
import { fromAttribute, toAttribute } from '../../lib/dynamo/attributes';
import { type WriteEnvelope, compileWrite, growthBound, isAssumptionRefused } from '../../lib/expressions';
import { type Item, InvalidExpression, applyUpdate, conditionHolds } from './expression-evaluator';
import { add, del, insert, push, set } from './helpers';

const SLOT = 5;
const envelope = (op: ContentOperation): WriteEnvelope => ({
  access: { ge: 3, inc: 'INC' },
  budget: fragmentBytes(),
  requestToken: 'new-token',
  slot: SLOT,
  size: op.kind === 'replace' ? { exact: growthBound(op) } : { growth: growthBound(op) },
});

/** A project's head as the store keeps it, owned by @ann, at version 1, grant epoch 3 of incarnation INC. */
function itemOf(content: JsonObject): Item {
  return {
    pk: { S: 'P#@ann/p' },
    content: toAttribute(content),
    ver: { N: '1' },
    etag: { S: 'old-token' },
    [`rq${SLOT}`]: { S: 'old-token' },
    bytes: { N: String(storedSize(content)) },
    owner: { S: '@ann' },
    ge: { N: '3' },
    inc: { S: 'INC' },
  };
}

const contentOf = (item: Item) => fromAttribute(item.content as AttributeValue);

/** What the content model does: the new content, 'unchanged', or the 400's code. */
function modelOutcome(content: JsonObject, op: ContentOperation): JsonObject | 'unchanged' | string {
  try {
    const action = plan(content, op)?.action;
    return action === undefined ? 'unchanged' : applyAction(content, action);
  } catch (error) {
    return (error as { code: string }).code;
  }
}

type FastOutcome = JsonObject | 'read-first' | 'condition-failed' | 'refused';

/**
 * What one fast UpdateItem does: 'read-first' (not compiled), 'condition-failed', 'refused' (the engine refuses
 * the update itself, which the store reads as a failed assumption: it reads and plans), or the new content.
 */
function fastOutcome(content: JsonObject, op: ContentOperation): FastOutcome {
  const request = compileWrite({ op }, envelope(op));
  if (request === undefined) return 'read-first';
  const item = itemOf(content);
  if (!conditionHolds(item, request)) return 'condition-failed';
  let after: Item;
  try {
    after = applyUpdate(item, request);
  } catch (error) {
    if (isAssumptionRefused(error)) return 'refused';
    throw error;
  }
  expect(after.ver).toEqual({ N: '2' });
  expect(after.etag).toEqual({ S: 'new-token' });
  expect(after[`rq${SLOT}`]).toEqual({ S: 'new-token' });
  return contentOf(after) as JsonObject;
}

describe('fast writes on the expression model', () => {
  const CONTENT: JsonObject = { n: 1, s: 'x', l: [1, 2], o: { k: 1, '0': 'zero' }, e: [] };

  it.each<[string, ContentOperation, FastOutcome]>([
    ['set a new key', set('a', 1), { ...CONTENT, a: 1 }],
    ['set a nested key', set('o.k', 2), { ...CONTENT, o: { k: 2, '0': 'zero' } }],
    ['set an element', set('l.0', 9), { ...CONTENT, l: [9, 2] }],
    ['set at index == length', set('l.2', 3), { ...CONTENT, l: [1, 2, 3] }],
    ['set beyond the length: read first', set('l.3', 3), 'condition-failed'],
    ['set with a missing parent: read first', set('x.y', 1), 'condition-failed'],
    ['set an integer key of an object: read first', set('o.0', 1), 'condition-failed'],
    ['set through a scalar: read first', set('n.x', 1), 'condition-failed'],
    ['set through a string: the engine refuses the path, read first', set('s.x', 1), 'refused'],
    ['set through a list by key: the engine refuses the path, read first', set('l.x', 1), 'refused'],
    ['set a negative index: read first', set('l.-1', 1), 'read-first'],
    ['push onto a list', push('l', 3), { ...CONTENT, l: [1, 2, 3] }],
    ['push onto a missing key', push('p', 'a'), { ...CONTENT, p: ['a'] }],
    ['push onto a number: the engine refuses the operand, read first', push('n', 1), 'refused'],
    ['push onto an object: the engine refuses the operand, read first', push('o', 1), 'refused'],
    ['push under a missing parent: read first', push('x.y', 1), 'condition-failed'],
    ['insert at 0', insert('l', 0, 0), { ...CONTENT, l: [0, 1, 2] }],
    ['insert at 0 of a missing key', insert('p', 0, 0), { ...CONTENT, p: [0] }],
    ['insert at the length', insert('l', 2, 3), { ...CONTENT, l: [1, 2, 3] }],
    ['insert at the "length" of an object: the engine refuses the operand, read first', insert('o', 2, 3), 'refused'],
    ['insert in the middle: read first', insert('l', 1, 3), 'condition-failed'],
    ['insert at a negative index: read first', insert('l', -1, 3), 'read-first'],
    ['increment', add('n', 2), { ...CONTENT, n: 3 }],
    ['decrement a missing key', add('m', -1), { ...CONTENT, m: -1 }],
    ['increment a string: the engine refuses the operand, read first', add('s', 1), 'refused'],
    ['increment a list: the engine refuses the operand, read first', add('l', 1), 'refused'],
    ['increment under a missing parent: read first', add('x.y', 1), 'condition-failed'],
    ['increment near the edge of the range: read first', add('n', 9.5e125), 'condition-failed'],
    ['delete a key', del('s'), { n: 1, l: [1, 2], o: { k: 1, '0': 'zero' }, e: [] }],
    ['delete an element', del('l.0'), { ...CONTENT, l: [2] }],
    ['delete a missing key: read first', del('zz'), 'condition-failed'],
    ['delete an integer key of an object: read first', del('o.0'), 'condition-failed'],
  ])('%s', (_, op, outcome) => {
    expect(fastOutcome(CONTENT, op)).toEqual(outcome);
  });

  it('replaces the whole content and records its exact size', () => {
    const op: ContentOperation = { kind: 'replace', content: { b: [true] } };
    const request = compileWrite({ op }, envelope(op)) as NonNullable<ReturnType<typeof compileWrite>>;
    const after = applyUpdate(itemOf(CONTENT), request);
    expect(contentOf(after)).toEqual({ b: [true] });
    expect(after.bytes).toEqual({ N: String(storedSize({ b: [true] })) });
  });

  it('refuses a write that repeats the request token already in its slot', () => {
    const item = { ...itemOf(CONTENT), [`rq${SLOT}`]: { S: 'new-token' } };
    expect(conditionHolds(item, compileWrite({ op: set('a', 1) }, envelope(set('a', 1)))!)).toBe(false);
  });

  it.each<[string, boolean, Partial<Item>]>([
    ['the epoch and incarnation the grant was verified at', true, {}],
    ['an epoch advanced by a revocation', false, { ge: { N: '4' } }],
    ['another incarnation of the project (deleted and re-created)', false, { inc: { S: 'OTHER' } }],
    ['no epoch at all', false, { ge: undefined }],
  ])('a write holds on %s: %p', (_, allowed, change) => {
    const item = { ...itemOf(CONTENT), ...change } as Item;
    if (change.ge === undefined && 'ge' in change) delete item.ge;
    const op = set('a', 1);
    expect(conditionHolds(item, compileWrite({ op }, envelope(op))!)).toBe(allowed);
    const action: Action = { kind: 'set', steps: ['a'], value: 1 };
    expect(conditionHolds(item, compileWrite({ action }, { ...envelope(op), expectedVersion: 1 })!)).toBe(allowed);
  });

  it.each<[string, boolean, string[]]>([
    ['the current etag', true, ['old-token']],
    ['one of several tags', true, ['x', 'old-token']],
    ['another tag', false, ['x']],
    ['a weak tag', false, ['invalid:W/"old-token"']],
  ])('an If-Match naming %s holds: %p', (_, holds, ifMatch) => {
    const request = compileWrite({ op: set('a', 1) }, { ...envelope(set('a', 1)), ifMatch })!;
    expect(conditionHolds(itemOf(CONTENT), request)).toBe(holds);
  });

  it('refuses a write that would pass the segment size budget', () => {
    const item = { ...itemOf(CONTENT), bytes: { N: String(fragmentBytes() - 3) } };
    expect(conditionHolds(item, compileWrite({ op: set('a', 1) }, envelope(set('a', 1)))!)).toBe(false);
    item.bytes = { N: String(fragmentBytes() - 4) };
    expect(conditionHolds(item, compileWrite({ op: set('a', 1) }, envelope(set('a', 1)))!)).toBe(true);
  });
});

describe('the fast path agrees with the content model', () => {
  const key = fc.constantFrom('a', 'b', '0', '1', '-1');
  const scalar = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -100, max: 100 }),
    fc.constantFrom('', 'x'),
  );
  const { tree } = fc.letrec<{ tree: Json }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.array(tie('tree'), { maxLength: 3 }),
      fc.dictionary(key, tie('tree'), { maxKeys: 3 }),
    ),
  }));
  const root = fc.dictionary(key, tree, { maxKeys: 4 }) as fc.Arbitrary<JsonObject>;
  const path = fc
    .array(fc.constantFrom('a', 'b', '0', '1', '2', '3', '-1', '-2'), { minLength: 1, maxLength: 4 })
    .map((s) => s.join('.'));
  const op = fc.oneof(
    fc.tuple(path, tree).map(([p, v]) => set(p, v)),
    fc.tuple(path, tree).map(([p, v]) => push(p, v)),
    fc.tuple(path, fc.integer({ min: -3, max: 3 }), scalar).map(([p, i, v]) => insert(p, i, v)),
    fc.tuple(path, fc.integer({ min: -5, max: 5 })).map(([p, a]) => add(p, a)),
    path.map(del),
  );

  it('a fast write whose condition holds makes the change the model makes; one that fails leaves it to the read path', () => {
    let applied = 0;
    fc.assert(
      fc.property(root, op, (content, operation) => {
        const fast = fastOutcome(content, operation);
        if (fast === 'read-first' || fast === 'condition-failed' || fast === 'refused') return;
        applied++;
        expect(fast).toEqual(modelOutcome(content, operation));
      }),
      { numRuns: 3000 },
    );
    expect(applied).toBeGreaterThan(300); // the property is not vacuous
  });

  it('the concrete action compiled after a read makes the change the model makes', () => {
    let planned = 0;
    fc.assert(
      fc.property(root, op, (content, operation) => {
        let action: Action | undefined;
        try {
          action = plan(content, operation)?.action;
        } catch {
          return;
        }
        if (action === undefined) return;
        planned++;
        const expected = applyAction(content, action);
        const request = compileWrite(
          { action },
          { ...envelope(operation), expectedVersion: 1, size: { exact: storedSize(expected) } },
        )!;
        const item = itemOf(content);
        expect(conditionHolds(item, request)).toBe(true);
        expect(conditionHolds({ ...item, ver: { N: '2' } }, request)).toBe(false);
        const after = applyUpdate(item, request);
        expect(contentOf(after)).toEqual(expected);
        expect(after.bytes).toEqual({ N: String(storedSize(expected)) });
      }),
      { numRuns: 3000 },
    );
    expect(planned).toBeGreaterThan(300);
  });

  it('the guards plan returns with its action hold on the content it planned from, and the write then applies', () => {
    let guarded = 0;
    fc.assert(
      fc.property(root, op, (content, operation) => {
        let planned: Plan | undefined;
        try {
          planned = plan(content, operation);
        } catch {
          return;
        }
        if (planned === undefined) return;
        if (planned.guards.length > 0) guarded++;
        const expected = applyAction(content, planned.action);
        const request = compileWrite(planned, { ...envelope(operation), size: { exact: storedSize(expected) } })!;
        const item = itemOf(content);
        expect(conditionHolds(item, request)).toBe(true);
        expect(contentOf(applyUpdate(item, request))).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
    expect(guarded).toBeGreaterThan(300);
  });

  it('never compiles a request the expression model cannot read (it may refuse a failed assumption)', () => {
    let refused = 0;
    fc.assert(
      fc.property(root, op, (content, operation) => {
        const request = compileWrite({ op: operation }, envelope(operation));
        if (request === undefined) return;
        try {
          if (conditionHolds(itemOf(content), request)) applyUpdate(itemOf(content), request);
        } catch (error) {
          if (isAssumptionRefused(error)) {
            refused++;
            return;
          }
          if (error instanceof InvalidExpression) throw new Error(`${error.message} in ${JSON.stringify(request)}`);
          throw error;
        }
      }),
      { numRuns: 1000 },
    );
    expect(refused).toBeGreaterThan(0); // the engine's refusals are exercised, not just allowed
  });
});
