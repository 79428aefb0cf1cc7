import { fragmentBytes } from '../../lib/config/env';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import fc from 'fast-check';
import { type Json, type JsonNumber, type JsonObject, isStorableNumber, storedSize } from '../../lib/content/json';
import { type Action, type ContentOperation, applyAction, plan } from '../../lib/content/model';
import {
  type AccessCheck,
  type UpdateRequest,
  type WriteEnvelope,
  ExpressionState,
  assumeSteps,
  compileAccess,
  compileAction,
  compileEnvelope,
  compileFastOperation,
  compileRead,
  compileWrite,
  growthBound,
} from '../../lib/expressions';
import { parseIfMatch } from '../../lib/http/request';
import { parsePath } from '../../lib/paths';
import { add, del, insert, push, replace, set, clearingCommit } from './helpers';

const N = (n: string): AttributeValue => ({ N: n });
const S = (s: string): AttributeValue => ({ S: s });

/** A grant verified at epoch 3 of incarnation INC: what every write's condition checks. */
const ACCESS: AccessCheck = { ge: 3, inc: 'INC' };

/** Everything a state accumulated, as plain data. */
function contents(state: ExpressionState) {
  return {
    sets: [...state.sets],
    removes: [...state.removes],
    conditions: [...state.conditions],
    names: state.attributeNames(),
    values: state.buildUpdate().ExpressionAttributeValues,
  };
}

describe('ExpressionState', () => {
  it('numbers names in first-use order and reuses the placeholder of a repeated name', () => {
    const state = new ExpressionState();
    expect([state.name('a'), state.name('b'), state.name('a'), state.name('content'), state.name('b')]).toEqual([
      '#n0',
      '#n1',
      '#n0',
      '#n2',
      '#n1',
    ]);
    expect(state.attributeNames()).toEqual({ '#n0': 'a', '#n1': 'b', '#n2': 'content' });
  });

  it('gives every value its own placeholder, equal values included', () => {
    const state = new ExpressionState();
    expect([state.value(S('x')), state.value(S('x')), state.number(0), state.number(-2.5)]).toEqual([
      ':v0',
      ':v1',
      ':v2',
      ':v3',
    ]);
    expect(state.buildUpdate().ExpressionAttributeValues).toEqual({
      ':v0': S('x'),
      ':v1': S('x'),
      ':v2': N('0'),
      ':v3': N('-2.5'),
    });
  });

  it.each<[string, (string | number)[], string, Record<string, string>]>([
    ['the content root', [], '#n0', { '#n0': 'content' }],
    ['a key', ['a'], '#n0.#n1', { '#n0': 'content', '#n1': 'a' }],
    ['an index', ['a', 0], '#n0.#n1[0]', { '#n0': 'content', '#n1': 'a' }],
    ['nested indexes', ['a', 3, 12, 'b'], '#n0.#n1[3][12].#n2', { '#n0': 'content', '#n1': 'a', '#n2': 'b' }],
    ['a repeated key', ['a', 'b', 'a'], '#n0.#n1.#n2.#n1', { '#n0': 'content', '#n1': 'a', '#n2': 'b' }],
    ['a key named content', ['content', 'content'], '#n0.#n0.#n0', { '#n0': 'content' }],
    ['a key that looks like an index', ['0', '-1'], '#n0.#n1.#n2', { '#n0': 'content', '#n1': '0', '#n2': '-1' }],
    [
      'keys with expression syntax',
      ['a.b', 'c[0]', '#n0', ':v0'],
      '#n0.#n1.#n2.#n3.#n4',
      { '#n0': 'content', '#n1': 'a.b', '#n2': 'c[0]', '#n3': '#n0', '#n4': ':v0' },
    ],
  ])('writes the path of %s', (_, steps, path, names) => {
    const state = new ExpressionState();
    expect(state.path(steps)).toBe(path);
    expect(state.attributeNames()).toEqual(names);
  });

  it('joins SET clauses and adds REMOVE only when there is something to remove', () => {
    const state = new ExpressionState();
    state.sets.push('#a = :b', '#c = :d');
    state.conditions.push('x', 'y', 'z');
    expect(state.buildUpdate()).toEqual({
      UpdateExpression: 'SET #a = :b, #c = :d',
      ConditionExpression: 'x AND y AND z',
      ExpressionAttributeNames: {},
      ExpressionAttributeValues: {},
    });
    state.removes.push('#e', '#f[1]');
    expect(state.buildUpdate().UpdateExpression).toBe('SET #a = :b, #c = :d REMOVE #e, #f[1]');
  });
});

describe('assumeSteps', () => {
  it.each<[string, (string | number)[] | undefined]>([
    ['a', ['a']],
    ['a.b.c', ['a', 'b', 'c']],
    ['0', ['0']],
    ['-1', ['-1']],
    ['12.a', ['12', 'a']],
    ['a.0', ['a', 0]],
    ['a.12.b.3', ['a', 12, 'b', 3]],
    ['a.007', ['a', '007']],
    ['a.-0', ['a', '-0']],
    ['a.1e3', ['a', '1e3']],
    ['a.-1', undefined],
    ['a.0.-2.b', undefined],
  ])('%s -> %j', (path, steps) => {
    expect(assumeSteps(parsePath(path))).toEqual(steps);
  });
});

describe('compileFastOperation', () => {
  it.each<[string, ContentOperation, ReturnType<typeof contents>]>([
    [
      'set a top-level key: the root is always an object, no condition',
      set('a', 1),
      {
        sets: ['#n0.#n1 = :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'a' },
        values: { ':v0': N('1') },
      },
    ],
    [
      'set a nested key: the parent must have a size (a missing one fails the condition, a non-object the path)',
      set('a.b', { x: [true, null] }),
      {
        sets: ['#n0.#n1.#n2 = :v0'],
        removes: [],
        conditions: ['size(#n0.#n1) >= :v1'],
        names: { '#n0': 'content', '#n1': 'a', '#n2': 'b' },
        values: { ':v0': { M: { x: { L: [{ BOOL: true }, { NULL: true }] } } }, ':v1': N('0') },
      },
    ],
    [
      'set an index: every indexed container is a list, the parent one at least that long',
      set('a.b.0', 'x'),
      {
        sets: ['#n0.#n1.#n2[0] = :v1'],
        removes: [],
        conditions: ['attribute_type(#n0.#n1.#n2, :v0)', 'size(#n0.#n1.#n2) >= :v2'],
        names: { '#n0': 'content', '#n1': 'a', '#n2': 'b' },
        values: { ':v0': S('L'), ':v1': S('x'), ':v2': N('0') },
      },
    ],
    [
      'set a key below an index',
      set('a.3.a', 's'),
      {
        sets: ['#n0.#n1[3].#n1 = :v1'],
        removes: [],
        conditions: ['attribute_type(#n0.#n1, :v0)', 'size(#n0.#n1[3]) >= :v2'],
        names: { '#n0': 'content', '#n1': 'a' },
        values: { ':v0': S('L'), ':v1': S('s'), ':v2': N('0') },
      },
    ],
    [
      'set through two indexes: one list check per index step',
      set('a.0.b.2', 1),
      {
        sets: ['#n0.#n1[0].#n2[2] = :v2'],
        removes: [],
        conditions: [
          'attribute_type(#n0.#n1, :v0)',
          'attribute_type(#n0.#n1[0].#n2, :v1)',
          'size(#n0.#n1[0].#n2) >= :v3',
        ],
        names: { '#n0': 'content', '#n1': 'a', '#n2': 'b' },
        values: { ':v0': S('L'), ':v1': S('L'), ':v2': N('1'), ':v3': N('2') },
      },
    ],
    [
      'set with an integer first segment: always a key',
      set('7', 0),
      {
        sets: ['#n0.#n1 = :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': '7' },
        values: { ':v0': N('0') },
      },
    ],
    [
      'push: if_not_exists makes a missing target an empty list (a non-list one the engine refuses)',
      push('list', { k: true }),
      {
        sets: ['#n0.#n1 = list_append(if_not_exists(#n0.#n1, :v0), :v1)'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'list' },
        values: { ':v0': { L: [] }, ':v1': { L: [{ M: { k: { BOOL: true } } }] } },
      },
    ],
    [
      'push an array as one element, below an index',
      push('a.1', [1]),
      {
        sets: ['#n0.#n1[1] = list_append(if_not_exists(#n0.#n1[1], :v1), :v2)'],
        removes: [],
        conditions: ['attribute_type(#n0.#n1, :v0)', 'size(#n0.#n1) >= :v3'],
        names: { '#n0': 'content', '#n1': 'a' },
        values: { ':v0': S('L'), ':v1': { L: [] }, ':v2': { L: [{ L: [N('1')] }] }, ':v3': N('1') },
      },
    ],
    [
      'insert at 0: prepends to the list or an empty one',
      insert('list', 0, null),
      {
        sets: ['#n0.#n1 = list_append(:v0, if_not_exists(#n0.#n1, :v1))'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'list' },
        values: { ':v0': { L: [{ NULL: true }] }, ':v1': { L: [] } },
      },
    ],
    [
      'insert at n > 0: appends when the list has exactly n elements',
      insert('a.list', 3, 's'),
      {
        sets: ['#n0.#n1.#n2 = list_append(#n0.#n1.#n2, :v0)'],
        removes: [],
        conditions: ['size(#n0.#n1.#n2) = :v1'],
        names: { '#n0': 'content', '#n1': 'a', '#n2': 'list' },
        values: { ':v0': { L: [S('s')] }, ':v1': N('3') },
      },
    ],
    [
      'add: a missing target counts as 0, the operand is bounded',
      add('n', -1),
      {
        sets: ['#n0.#n1 = if_not_exists(#n0.#n1, :v0) + :v1'],
        removes: [],
        conditions: ['NOT #n0.#n1 < :v2 AND NOT #n0.#n1 > :v3'],
        names: { '#n0': 'content', '#n1': 'n' },
        values: { ':v0': N('0'), ':v1': N('-1'), ':v2': N('-9e+125'), ':v3': N('9e+125') },
      },
    ],
    [
      'add a large amount: the bound leaves room for it',
      add('a.0', 5e125),
      {
        sets: ['#n0.#n1[0] = if_not_exists(#n0.#n1[0], :v1) + :v2'],
        removes: [],
        conditions: [
          'attribute_type(#n0.#n1, :v0)',
          'size(#n0.#n1) >= :v3',
          'NOT #n0.#n1[0] < :v4 AND NOT #n0.#n1[0] > :v5',
        ],
        names: { '#n0': 'content', '#n1': 'a' },
        values: {
          ':v0': S('L'),
          ':v1': N('0'),
          ':v2': N('5e+125'),
          ':v3': N('0'),
          ':v4': N('-9e+125'),
          ':v5': N('4.0000000000000005e+125'), // 9e125 - 5e125 in binary floating point
        },
      },
    ],
    [
      'delete: the target must exist',
      del('a.0'),
      {
        sets: [],
        removes: ['#n0.#n1[0]'],
        conditions: ['attribute_type(#n0.#n1, :v0)', 'attribute_exists(#n0.#n1[0])'],
        names: { '#n0': 'content', '#n1': 'a' },
        values: { ':v0': S('L') },
      },
    ],
    [
      'delete a key',
      del('a.b'),
      {
        sets: [],
        removes: ['#n0.#n1.#n2'],
        conditions: ['attribute_exists(#n0.#n1.#n2)'],
        names: { '#n0': 'content', '#n1': 'a', '#n2': 'b' },
        values: {},
      },
    ],
    [
      'replace: the whole content, no condition',
      replace({ a: [1], constructor: 'c' }),
      {
        sets: ['#n0 = :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content' },
        values: { ':v0': { M: { a: { L: [N('1')] }, constructor: S('c') } } },
      },
    ],
  ])('%s', (_, op, expected) => {
    const state = new ExpressionState();
    expect(compileFastOperation(state, op)).toBe(true);
    expect(contents(state)).toEqual(expected);
  });

  it.each<[string, ContentOperation]>([
    ['insert at a negative index', insert('list', -1, 1)],
    ['insert at -length', insert('list', -3, 1)],
    ['set through a negative index', set('a.-1.b', 1)],
    ['push to a negative index', push('a.-2', 1)],
    ['add at a negative index', add('a.-1', 1)],
    ['delete a negative index', del('a.-1')],
  ])('cannot compile %s without reading', (_, op) => {
    const state = new ExpressionState();
    expect(compileFastOperation(state, op)).toBe(false);
    expect(state.sets).toEqual([]);
    expect(state.removes).toEqual([]);
    expect(state.conditions).toEqual([]);
  });
});

describe('compileAction', () => {
  it.each<[string, Action, ReturnType<typeof contents>]>([
    [
      'set below an index',
      { kind: 'set', steps: ['a', 0, 'b'], value: { x: [1] } },
      {
        sets: ['#n0.#n1[0].#n2 = :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'a', '#n2': 'b' },
        values: { ':v0': { M: { x: { L: [N('1')] } } } },
      },
    ],
    [
      'set the whole content',
      { kind: 'set', steps: [], value: { x: 1 } },
      {
        sets: ['#n0 = :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content' },
        values: { ':v0': { M: { x: N('1') } } },
      },
    ],
    [
      'append',
      { kind: 'append', steps: ['l'], value: 'x' },
      {
        sets: ['#n0.#n1 = list_append(#n0.#n1, :v0)'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'l' },
        values: { ':v0': { L: [S('x')] } },
      },
    ],
    [
      'prepend',
      { kind: 'prepend', steps: ['l', 2], value: 1 },
      {
        sets: ['#n0.#n1[2] = list_append(:v0, #n0.#n1[2])'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'l' },
        values: { ':v0': { L: [N('1')] } },
      },
    ],
    [
      'add',
      { kind: 'add', steps: ['n'], amount: 2.5 },
      {
        sets: ['#n0.#n1 = #n0.#n1 + :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'n' },
        values: { ':v0': N('2.5') },
      },
    ],
    [
      'add a negative amount',
      { kind: 'add', steps: ['a', 1], amount: -3 },
      {
        sets: ['#n0.#n1[1] = #n0.#n1[1] + :v0'],
        removes: [],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'a' },
        values: { ':v0': N('-3') },
      },
    ],
    [
      'remove, with a repeated key',
      { kind: 'remove', steps: ['a', 'a', 3] },
      { sets: [], removes: ['#n0.#n1.#n1[3]'], conditions: [], names: { '#n0': 'content', '#n1': 'a' }, values: {} },
    ],
    [
      'remove a key that looks like an index',
      { kind: 'remove', steps: ['o', '0'] },
      {
        sets: [],
        removes: ['#n0.#n1.#n2'],
        conditions: [],
        names: { '#n0': 'content', '#n1': 'o', '#n2': '0' },
        values: {},
      },
    ],
  ])('%s', (_, action, expected) => {
    const state = new ExpressionState();
    compileAction(state, action);
    expect(contents(state)).toEqual(expected);
  });
});

describe('compileAccess', () => {
  it('checks the grant epoch and the incarnation the credential was verified at: two comparisons', () => {
    const state = new ExpressionState();
    expect(compileAccess(state, ACCESS)).toBe('#n0 = :v0 AND #n1 = :v1');
    expect(state.attributeNames()).toEqual({ '#n0': 'ge', '#n1': 'inc' });
    expect(state.buildUpdate().ExpressionAttributeValues).toEqual({ ':v0': N('3'), ':v1': S('INC') });
  });

  it('is the same for a fast write and a write after a read, whatever the credential', () => {
    const envelope: WriteEnvelope = {
      access: ACCESS,
      budget: fragmentBytes(),
      requestToken: 'tok',
      slot: 1,
      size: { growth: 10 },
    };
    const fast = compileWrite({ op: set('a', 1) }, envelope);
    const guarded = compileWrite({ action: { kind: 'set', steps: ['a'], value: 1 } }, envelope);
    for (const request of [fast, guarded]) {
      const [, ge, inc] = /^(#n\d+) = :v\d+ AND (#n\d+) = :v\d+ AND /.exec(request?.ConditionExpression ?? '') ?? [];
      expect([request?.ExpressionAttributeNames[ge ?? ''], request?.ExpressionAttributeNames[inc ?? '']]).toEqual([
        'ge',
        'inc',
      ]);
    }
  });
});

describe('compileEnvelope', () => {
  const base = { budget: fragmentBytes(), requestToken: 'tok', slot: 3 };
  it.each<[string, WriteEnvelope, string, string, Record<string, string>, Record<string, AttributeValue>]>([
    [
      'a user, growth bound',
      { ...base, access: ACCESS, size: { growth: 10 } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n3 = #n3 + :v4',
      '#n4 = :v1 AND #n5 = :v2 AND #n2 <> :v0 AND #n3 <= :v5',
      { '#n0': 'ver', '#n1': 'etag', '#n2': 'rq3', '#n3': 'bytes', '#n4': 'ge', '#n5': 'inc' },
      {
        ':v0': S('tok'),
        ':v1': N('3'),
        ':v2': S('INC'),
        ':v3': N('1'),
        ':v4': N('10'),
        ':v5': N(String(fragmentBytes() - 10)),
      },
    ],
    [
      'a stamped write (who and how, for the history): one more SET, no condition',
      { ...base, access: ACCESS, stamp: '{"nonce":"n"}', size: { exact: 1234 } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n6 = :v4, #n3 = :v5',
      '#n4 = :v1 AND #n5 = :v2 AND #n2 <> :v0',
      { '#n0': 'ver', '#n1': 'etag', '#n2': 'rq3', '#n3': 'bytes', '#n4': 'ge', '#n5': 'inc', '#n6': 'wb' },
      { ':v0': S('tok'), ':v1': N('3'), ':v2': S('INC'), ':v3': N('1'), ':v4': S('{"nonce":"n"}'), ':v5': N('1234') },
    ],
    [
      'a user, exact size: no size condition',
      { ...base, access: ACCESS, size: { exact: 1234 } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n3 = :v4',
      '#n4 = :v1 AND #n5 = :v2 AND #n2 <> :v0',
      { '#n0': 'ver', '#n1': 'etag', '#n2': 'rq3', '#n3': 'bytes', '#n4': 'ge', '#n5': 'inc' },
      { ':v0': S('tok'), ':v1': N('3'), ':v2': S('INC'), ':v3': N('1'), ':v4': N('1234') },
    ],
    [
      'If-Match with one tag, growth 0 (no size budget)',
      { ...base, access: ACCESS, ifMatch: ['abc'], size: { growth: 0 } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0',
      '#n3 = :v1 AND #n4 = :v2 AND #n2 <> :v0 AND #n1 IN (:v4)',
      { '#n0': 'ver', '#n1': 'etag', '#n2': 'rq3', '#n3': 'ge', '#n4': 'inc' },
      { ':v0': S('tok'), ':v1': N('3'), ':v2': S('INC'), ':v3': N('1'), ':v4': S('abc') },
    ],
    [
      'a user, If-Match with several tags, expected version, exact size',
      {
        ...base,
        slot: 31,
        access: ACCESS,
        ifMatch: ['e1', 'e2', 'invalid:W/"e3"'],
        expectedVersion: 7,
        size: { exact: 120 },
      },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n3 = :v8',
      '#n4 = :v1 AND #n5 = :v2 AND #n2 <> :v0 AND #n1 IN (:v4, :v5, :v6) AND #n0 = :v7',
      { '#n0': 'ver', '#n1': 'etag', '#n2': 'rq31', '#n3': 'bytes', '#n4': 'ge', '#n5': 'inc' },
      {
        ':v0': S('tok'),
        ':v1': N('3'),
        ':v2': S('INC'),
        ':v3': N('1'),
        ':v4': S('e1'),
        ':v5': S('e2'),
        ':v6': S('invalid:W/"e3"'),
        ':v7': N('7'),
        ':v8': N('120'),
      },
    ],
    [
      'expected version 0 and growth',
      { ...base, slot: 0, access: ACCESS, expectedVersion: 0, size: { growth: fragmentBytes() } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n3 = #n3 + :v5',
      '#n4 = :v1 AND #n5 = :v2 AND #n2 <> :v0 AND #n0 = :v4 AND #n3 <= :v6',
      { '#n0': 'ver', '#n1': 'etag', '#n2': 'rq0', '#n3': 'bytes', '#n4': 'ge', '#n5': 'inc' },
      {
        ':v0': S('tok'),
        ':v1': N('3'),
        ':v2': S('INC'),
        ':v3': N('1'),
        ':v4': N('0'),
        ':v5': N(String(fragmentBytes())),
        ':v6': N('0'),
      },
    ],
  ])('%s', (_, envelope, update, condition, names, values) => {
    const state = new ExpressionState();
    compileEnvelope(state, envelope);
    expect(state.buildUpdate()).toEqual(
      clearingCommit({
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  });

  it('puts the access check first, before the operation conditions', () => {
    const state = new ExpressionState();
    state.conditions.push('OP');
    compileEnvelope(state, { budget: fragmentBytes(), requestToken: 't', slot: 1, access: ACCESS, size: { exact: 1 } });
    expect(state.conditions).toEqual(['#n4 = :v1 AND #n5 = :v2', 'OP', '#n2 <> :v0']);
  });

  it('fills the token slot with the mark when one is given (the etag stays the token), and conditions on the mark', () => {
    const state = new ExpressionState();
    compileEnvelope(state, {
      budget: fragmentBytes(),
      requestToken: 'token',
      slotMark: 'mark',
      slot: 7,
      access: ACCESS,
      size: { exact: 1 },
    });
    const { ExpressionAttributeNames: names = {}, ExpressionAttributeValues: values = {} } = state.buildUpdate();
    const value = (placeholder: string) => values[placeholder]?.S;
    const assigned = Object.fromEntries(
      state.sets.map((s) => s.split(' = ') as [string, string]).map(([n, v]) => [names[n], value(v)]),
    );
    expect([assigned.etag, assigned.rq7]).toEqual(['token', 'mark']);
    const guard = state.conditions.find((c) => c.includes('<>')) as string;
    expect(guard.split(' <> ').map((x, i) => (i === 0 ? names[x] : value(x)))).toEqual(['rq7', 'mark']);
  });

  // `If-Match: ,` names no usable tag: like any garbage If-Match it must never match (412). `etag IN ()` is not a
  // valid DynamoDB condition (ValidationException, which the store turns into a 500), so it must not be compiled.
  it.each([[','], [', ,']])('compiles If-Match %j to a valid condition that stays conditional', (header) => {
    const ifMatch = parseIfMatch({ headers: { 'if-match': header } } as unknown as APIGatewayProxyEventV2);
    expect(ifMatch).toBeDefined();
    const envelope: WriteEnvelope = {
      budget: fragmentBytes(),
      requestToken: 'tok',
      slot: 0,
      access: ACCESS,
      size: { growth: 4 },
    };
    const unconditional = compileWrite({ op: set('a', 1) }, envelope);
    const request = compileWrite({ op: set('a', 1) }, { ...envelope, ifMatch });
    expect(request?.ConditionExpression).not.toBe(unconditional?.ConditionExpression);
    expect(request?.ConditionExpression).not.toMatch(/IN \(\s*\)/);
  });
});

describe('compileCommitStamp (through compileEnvelope)', () => {
  const base = { budget: fragmentBytes(), requestToken: 'tok', slot: 3, access: ACCESS, size: { exact: 1 } };
  it.each<[string, WriteEnvelope, string, Record<string, string>]>([
    [
      'a write of its own: the token an earlier commit left is removed (tx, rt, pa)',
      base,
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n3 = :v4 REMOVE #n6, #n7, #n8',
      { '#n6': 'tx', '#n7': 'rt', '#n8': 'pa' },
    ],
    [
      "a commit's top segment: its token in tx",
      { ...base, commit: { token: 'T' } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n6 = :v4, #n3 = :v5',
      { '#n6': 'tx' },
    ],
    [
      "a chunked array's segment beside a commit's top one: tx, rt and pa",
      { ...base, commit: { token: 'T', tail: true, partner: true } },
      'SET #n0 = #n0 + :v3, #n1 = :v0, #n2 = :v0, #n6 = :v4, #n7 = :v4, #n8 = :v4, #n3 = :v5',
      { '#n6': 'tx', '#n7': 'rt', '#n8': 'pa' },
    ],
  ])('%s', (_, envelope, update, stampNames) => {
    const state = new ExpressionState();
    compileEnvelope(state, envelope);
    const built = state.buildUpdate();
    expect(built.UpdateExpression).toBe(update);
    expect(built.ConditionExpression).toBe('#n4 = :v1 AND #n5 = :v2 AND #n2 <> :v0');
    expect(built.ExpressionAttributeNames).toEqual({
      '#n0': 'ver',
      '#n1': 'etag',
      '#n2': 'rq3',
      '#n3': 'bytes',
      '#n4': 'ge',
      '#n5': 'inc',
      ...stampNames,
    });
    if (envelope.commit) expect(built.ExpressionAttributeValues[':v4']).toEqual({ S: 'T' });
  });
});

describe('compileWrite', () => {
  const envelope = (op: ContentOperation): WriteEnvelope => ({
    access: ACCESS,
    budget: fragmentBytes(),
    requestToken: 'tok',
    slot: 5,
    size: { growth: growthBound(op) },
  });

  it.each<[string, ContentOperation, string, string, Record<string, string>, Record<string, AttributeValue>]>([
    [
      'set',
      set('a.b', 'x'),
      'SET #n0.#n1.#n2 = :v0, #n3 = #n3 + :v5, #n4 = :v2, #n5 = :v2, #n6 = #n6 + :v6',
      '#n7 = :v3 AND #n8 = :v4 AND size(#n0.#n1) >= :v1 AND #n5 <> :v2 AND #n6 <= :v7',
      {
        '#n0': 'content',
        '#n1': 'a',
        '#n2': 'b',
        '#n3': 'ver',
        '#n4': 'etag',
        '#n5': 'rq5',
        '#n6': 'bytes',
        '#n7': 'ge',
        '#n8': 'inc',
      },
      {
        ':v0': S('x'),
        ':v1': N('0'),
        ':v2': S('tok'),
        ':v3': N('3'),
        ':v4': S('INC'),
        ':v5': N('1'),
        ':v6': N('3'),
        ':v7': N(String(fragmentBytes() - 3)),
      },
    ],
    [
      'push',
      push('l', 1),
      'SET #n0.#n1 = list_append(if_not_exists(#n0.#n1, :v0), :v1), #n2 = #n2 + :v5, #n3 = :v2, #n4 = :v2, #n5 = #n5 + :v6',
      '#n6 = :v3 AND #n7 = :v4 AND #n4 <> :v2 AND #n5 <= :v7',
      {
        '#n0': 'content',
        '#n1': 'l',
        '#n2': 'ver',
        '#n3': 'etag',
        '#n4': 'rq5',
        '#n5': 'bytes',
        '#n6': 'ge',
        '#n7': 'inc',
      },
      {
        ':v0': { L: [] },
        ':v1': { L: [N('1')] },
        ':v2': S('tok'),
        ':v3': N('3'),
        ':v4': S('INC'),
        ':v5': N('1'),
        ':v6': N('8'),
        ':v7': N(String(fragmentBytes() - 8)),
      },
    ],
    [
      'insert at 0',
      insert('l', 0, 1),
      'SET #n0.#n1 = list_append(:v0, if_not_exists(#n0.#n1, :v1)), #n2 = #n2 + :v5, #n3 = :v2, #n4 = :v2, #n5 = #n5 + :v6',
      '#n6 = :v3 AND #n7 = :v4 AND #n4 <> :v2 AND #n5 <= :v7',
      {
        '#n0': 'content',
        '#n1': 'l',
        '#n2': 'ver',
        '#n3': 'etag',
        '#n4': 'rq5',
        '#n5': 'bytes',
        '#n6': 'ge',
        '#n7': 'inc',
      },
      {
        ':v0': { L: [N('1')] },
        ':v1': { L: [] },
        ':v2': S('tok'),
        ':v3': N('3'),
        ':v4': S('INC'),
        ':v5': N('1'),
        ':v6': N('8'),
        ':v7': N(String(fragmentBytes() - 8)),
      },
    ],
    [
      'insert at 2',
      insert('l', 2, 1),
      'SET #n0.#n1 = list_append(#n0.#n1, :v0), #n2 = #n2 + :v5, #n3 = :v2, #n4 = :v2, #n5 = #n5 + :v6',
      '#n6 = :v3 AND #n7 = :v4 AND size(#n0.#n1) = :v1 AND #n4 <> :v2 AND #n5 <= :v7',
      {
        '#n0': 'content',
        '#n1': 'l',
        '#n2': 'ver',
        '#n3': 'etag',
        '#n4': 'rq5',
        '#n5': 'bytes',
        '#n6': 'ge',
        '#n7': 'inc',
      },
      {
        ':v0': { L: [N('1')] },
        ':v1': N('2'),
        ':v2': S('tok'),
        ':v3': N('3'),
        ':v4': S('INC'),
        ':v5': N('1'),
        ':v6': N('8'),
        ':v7': N(String(fragmentBytes() - 8)),
      },
    ],
    [
      'increment',
      add('n', 1),
      'SET #n0.#n1 = if_not_exists(#n0.#n1, :v0) + :v1, #n2 = #n2 + :v7, #n3 = :v4, #n4 = :v4, #n5 = #n5 + :v8',
      '#n6 = :v5 AND #n7 = :v6 AND NOT #n0.#n1 < :v2 AND NOT #n0.#n1 > :v3 AND #n4 <> :v4 AND #n5 <= :v9',
      {
        '#n0': 'content',
        '#n1': 'n',
        '#n2': 'ver',
        '#n3': 'etag',
        '#n4': 'rq5',
        '#n5': 'bytes',
        '#n6': 'ge',
        '#n7': 'inc',
      },
      {
        ':v0': N('0'),
        ':v1': N('1'),
        ':v2': N('-9e+125'),
        ':v3': N('9e+125'),
        ':v4': S('tok'),
        ':v5': N('3'),
        ':v6': S('INC'),
        ':v7': N('1'),
        ':v8': N('23'),
        ':v9': N(String(fragmentBytes() - 23)),
      },
    ],
    [
      'delete (it cannot grow the content: no size budget)',
      del('a.0'),
      'SET #n2 = #n2 + :v4, #n3 = :v1, #n4 = :v1 REMOVE #n0.#n1[0]',
      '#n5 = :v2 AND #n6 = :v3 AND attribute_type(#n0.#n1, :v0) AND attribute_exists(#n0.#n1[0]) AND #n4 <> :v1',
      {
        '#n0': 'content',
        '#n1': 'a',
        '#n2': 'ver',
        '#n3': 'etag',
        '#n4': 'rq5',
        '#n5': 'ge',
        '#n6': 'inc',
      },
      { ':v0': S('L'), ':v1': S('tok'), ':v2': N('3'), ':v3': S('INC'), ':v4': N('1') },
    ],
    [
      'a path that reuses the names of item attributes',
      set('keys.ver', true),
      'SET #n0.#n1.#n2 = :v0, #n2 = #n2 + :v5, #n3 = :v2, #n4 = :v2, #n5 = #n5 + :v6',
      '#n6 = :v3 AND #n7 = :v4 AND size(#n0.#n1) >= :v1 AND #n4 <> :v2 AND #n5 <= :v7',
      {
        '#n0': 'content',
        '#n1': 'keys',
        '#n2': 'ver',
        '#n3': 'etag',
        '#n4': 'rq5',
        '#n5': 'bytes',
        '#n6': 'ge',
        '#n7': 'inc',
      },
      {
        ':v0': { BOOL: true },
        ':v1': N('0'),
        ':v2': S('tok'),
        ':v3': N('3'),
        ':v4': S('INC'),
        ':v5': N('1'),
        ':v6': N('5'),
        ':v7': N(String(fragmentBytes() - 5)),
      },
    ],
  ])('compiles a fast %s', (_, op, update, condition, names, values) => {
    expect(compileWrite({ op }, envelope(op))).toEqual(
      clearingCommit({
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  });

  it('compiles a replace with its exact size', () => {
    expect(
      compileWrite(
        { op: replace({ a: 1 }) },
        { access: ACCESS, budget: fragmentBytes(), requestToken: 'tok', slot: 5, size: { exact: 7 } },
      ),
    ).toEqual(
      clearingCommit({
        UpdateExpression: 'SET #n0 = :v0, #n1 = #n1 + :v4, #n2 = :v1, #n3 = :v1, #n4 = :v5',
        ConditionExpression: '#n5 = :v2 AND #n6 = :v3 AND #n3 <> :v1',
        ExpressionAttributeNames: {
          '#n0': 'content',
          '#n1': 'ver',
          '#n2': 'etag',
          '#n3': 'rq5',
          '#n4': 'bytes',
          '#n5': 'ge',
          '#n6': 'inc',
        },
        ExpressionAttributeValues: {
          ':v0': { M: { a: N('1') } },
          ':v1': S('tok'),
          ':v2': N('3'),
          ':v3': S('INC'),
          ':v4': N('1'),
          ':v5': N('7'),
        },
      }),
    );
  });

  it.each<[string, ContentOperation]>([
    ['insert at a negative index', insert('l', -1, 1)],
    ['set at a negative index', set('l.-1', 1)],
    ['delete at a negative index', del('l.-1')],
  ])('returns undefined for %s: it needs a read', (_, op) => {
    expect(compileWrite({ op }, envelope(op))).toBeUndefined();
  });

  it('compiles a concrete action with If-Match and the version that was read', () => {
    const action: Action = { kind: 'remove', steps: ['a', 1] };
    expect(
      compileWrite(
        { action },
        {
          access: ACCESS,
          budget: fragmentBytes(),
          requestToken: 'tok',
          slot: 9,
          ifMatch: ['e1', 'e2'],
          expectedVersion: 41,
          size: { exact: 120 },
        },
      ),
    ).toEqual(
      clearingCommit({
        UpdateExpression: 'SET #n2 = #n2 + :v3, #n3 = :v0, #n4 = :v0, #n5 = :v7 REMOVE #n0.#n1[1]',
        ConditionExpression: '#n6 = :v1 AND #n7 = :v2 AND #n4 <> :v0 AND #n3 IN (:v4, :v5) AND #n2 = :v6',
        ExpressionAttributeNames: {
          '#n0': 'content',
          '#n1': 'a',
          '#n2': 'ver',
          '#n3': 'etag',
          '#n4': 'rq9',
          '#n5': 'bytes',
          '#n6': 'ge',
          '#n7': 'inc',
        },
        ExpressionAttributeValues: {
          ':v0': S('tok'),
          ':v1': N('3'),
          ':v2': S('INC'),
          ':v3': N('1'),
          ':v4': S('e1'),
          ':v5': S('e2'),
          ':v6': N('41'),
          ':v7': N('120'),
        },
      }),
    );
  });

  const GUARD = '#n6 = :v2 AND #n7 = :v3 AND #n4 <> :v1 AND #n2 = :v5';
  it.each<[string, Action, string, string]>([
    [
      'set',
      { kind: 'set', steps: ['l'], value: [1, 9, 2] },
      'SET #n0.#n1 = :v0, #n2 = #n2 + :v4, #n3 = :v1, #n4 = :v1, #n5 = :v6 REMOVE #n8, #n9, #n10',
      GUARD,
    ],
    [
      'append',
      { kind: 'append', steps: ['l'], value: 1 },
      'SET #n0.#n1 = list_append(#n0.#n1, :v0), #n2 = #n2 + :v4, #n3 = :v1, #n4 = :v1, #n5 = :v6 REMOVE #n8, #n9, #n10',
      GUARD,
    ],
    [
      'prepend',
      { kind: 'prepend', steps: ['l'], value: 1 },
      'SET #n0.#n1 = list_append(:v0, #n0.#n1), #n2 = #n2 + :v4, #n3 = :v1, #n4 = :v1, #n5 = :v6 REMOVE #n8, #n9, #n10',
      GUARD,
    ],
    [
      'add',
      { kind: 'add', steps: ['l'], amount: -1 },
      'SET #n0.#n1 = #n0.#n1 + :v0, #n2 = #n2 + :v4, #n3 = :v1, #n4 = :v1, #n5 = :v6 REMOVE #n8, #n9, #n10',
      GUARD,
    ],
    [
      'remove',
      { kind: 'remove', steps: ['l'] },
      'SET #n2 = #n2 + :v3, #n3 = :v0, #n4 = :v0, #n5 = :v5 REMOVE #n0.#n1, #n8, #n9, #n10',
      '#n6 = :v1 AND #n7 = :v2 AND #n4 <> :v0 AND #n2 = :v4',
    ],
  ])('compiles a concrete %s guarded only by access, token and version', (_, action, update, condition) => {
    const request = compileWrite(
      { action },
      {
        access: ACCESS,
        budget: fragmentBytes(),
        requestToken: 'tok',
        slot: 1,
        expectedVersion: 3,
        size: { exact: 50 },
      },
    );
    expect(request?.UpdateExpression).toBe(update);
    expect(request?.ConditionExpression).toBe(condition);
  });

  // A segment's root array whose index 0 is a chunk stub: an insert at an index known to be after the stub is the
  // fast append, held by the stub itself (a rollover or a shift among the chunks replaces it); without the stub known,
  // the chunk stub makes the write refuse; before the stub there is no such write.
  it('an insert into a chunked array after the chunk stub it knows: append while that stub is index 0', () => {
    const op = { kind: 'insert', segments: [], index: 4, value: 'x' } as const;
    const known = compileWrite({ op }, { ...envelope(op), chunkStub: 'a~12' }) as UpdateRequest;
    const names = known.ExpressionAttributeNames as Record<string, string>;
    const values = known.ExpressionAttributeValues as Record<string, AttributeValue>;
    const conditions = (known.ConditionExpression as string).split(' AND ');
    const onStub = conditions.find((c) => c.startsWith('#n0[0] = ')) as string;
    expect(names['#n0']).toBe('content');
    expect(Buffer.from(values[onStub.split(' = ')[1] as string]?.B as Uint8Array).toString()).toBe('a~12');
    expect(conditions.some((c) => c.startsWith('size(#n0) = ') && values[c.split(' = ')[1] as string]?.N === '4')).toBe(
      true,
    );
    expect(known.ConditionExpression).not.toContain('attribute_type');
    expect(known.UpdateExpression).toContain('#n0 = list_append(#n0, ');
    const unknown = compileWrite({ op }, envelope(op)) as UpdateRequest;
    expect(unknown.ConditionExpression).toContain('NOT attribute_type(#n0[0], ');
    const front = { ...op, index: 0 };
    expect(compileWrite({ op: front }, { ...envelope(front), chunkStub: 'a~12' })).toBeUndefined();
  });

  // The same for a write to one of the newest elements: the path's first step is a position after the stub.
  it('a write to a chunked array element after the chunk stub it knows: the first step an index, held by the stub', () => {
    const op = set('3.x', 1);
    const known = compileWrite({ op }, { ...envelope(op), chunkStub: 'a~12' }) as UpdateRequest;
    const values = known.ExpressionAttributeValues as Record<string, AttributeValue>;
    const conditions = (known.ConditionExpression as string).split(' AND ');
    const onStub = conditions.find((c) => c.startsWith('#n0[0] = ')) as string;
    expect(Buffer.from(values[onStub.split(' = ')[1] as string]?.B as Uint8Array).toString()).toBe('a~12');
    expect(known.UpdateExpression).toMatch(/^SET #n0\[3\]\.#n1 = /);
    // Without the stub the first step is a key (an array segment refuses the path, and the write reads).
    expect((compileWrite({ op }, envelope(op)) as UpdateRequest).UpdateExpression).toMatch(/^SET #n0\.#n1\.#n2 = /);
    // Position 0 is the stub itself, a negative one needs the length: neither has a one-request form.
    for (const path of ['0.x', '-1.x']) {
      const other = set(path, 1);
      expect(compileWrite({ op: other }, { ...envelope(other), chunkStub: 'a~12' })).toBeUndefined();
    }
  });
});

describe('compileRead', () => {
  it.each<[string, readonly string[] | undefined | null, string, Record<string, string>]>([
    [
      'the whole content',
      undefined,
      'pk, #n0, #n1, #n2, #n3, #n4',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content' },
    ],
    [
      'no content at all (the epoch only)',
      null,
      'pk, #n0, #n1, #n2, #n3',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc' },
    ],
    [
      'a path of keys',
      parsePath('a.b.c'),
      'pk, #n0, #n1, #n2, #n3, #n4.#n5.#n6.#n7',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content', '#n5': 'a', '#n6': 'b', '#n7': 'c' },
    ],
    [
      'a path cut at its first later integer segment',
      parsePath('a.b.2.c'),
      'pk, #n0, #n1, #n2, #n3, #n4.#n5.#n6',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content', '#n5': 'a', '#n6': 'b' },
    ],
    [
      'a path cut at a negative index',
      parsePath('a.-1.b'),
      'pk, #n0, #n1, #n2, #n3, #n4.#n5',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content', '#n5': 'a' },
    ],
    [
      'an integer first segment, always a key',
      parsePath('0.1.x'),
      'pk, #n0, #n1, #n2, #n3, #n4.#n5',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content', '#n5': '0' },
    ],
    [
      'a path that looks like an index only with a leading zero',
      parsePath('a.01'),
      'pk, #n0, #n1, #n2, #n3, #n4.#n5.#n6',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content', '#n5': 'a', '#n6': '01' },
    ],
    [
      'a path whose names repeat those of the epoch check',
      parsePath('ge.inc'),
      'pk, #n0, #n1, #n2, #n3, #n4.#n2.#n3',
      { '#n0': 'etag', '#n1': 'ver', '#n2': 'ge', '#n3': 'inc', '#n4': 'content' },
    ],
  ])('projects %s', (_, segments, projection, names) => {
    expect(compileRead(segments)).toEqual({
      ProjectionExpression: projection,
      ExpressionAttributeNames: names,
    });
  });
});

describe('growthBound', () => {
  it.each<[string, number, ContentOperation]>([
    ['set a number', 2 + 2, set('a', 1)],
    ['set a string under a multi-byte key', 1 + 3 + 2, set('x.bé', 'xy')],
    ['set an object', 2 + (3 + 1 + 1 + 1), set('a', { b: null })],
    ['set an index', 1 + 2 + 1, set('l.10', true)],
    ['push', 2 + 4 + (3 + 1 + 2), push('l', [1])],
    ['insert', 5 + 4 + 1, insert('list', 3, 'x')],
    ['add', 2 + 21, add('n', 1)],
    ['add under a longer key', 6 + 21, add('a.count', -1)],
    ['delete', 0, del('a')],
    ['replace', 3 + (1 + 1 + 2), replace({ a: 1 })],
  ])('%s grows the content by at most %d bytes', (_, bound, op) => {
    expect(growthBound(op)).toBe(bound);
  });

  // The fast path adds the bound to the stored byte count: it must never be below the real growth.
  it('bounds the real growth of every operation the fast path can apply', () => {
    const key = fc.constantFrom('a', 'b', '0', '1', 'é');
    const { tree } = fc.letrec<{ tree: Json; scalar: Json }>((tie) => ({
      scalar: fc.oneof(
        fc.constant(null),
        fc.boolean(),
        fc.integer({ min: -1e6, max: 1e6 }),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e20, max: 1e20 }),
        fc.string({ maxLength: 6 }),
      ),
      tree: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        tie('scalar'),
        fc.array(tie('tree'), { maxLength: 3 }),
        fc.dictionary(key, tie('tree'), { maxKeys: 3 }),
      ),
    }));
    const root = fc.dictionary(key, tree, { maxKeys: 4 });
    const segment = fc.constantFrom('a', 'b', '0', '1', '2', 'é');
    const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('.'));
    const op = fc.oneof(
      fc.tuple(path, tree).map(([p, v]) => set(p, v)),
      fc.tuple(path, tree).map(([p, v]) => push(p, v)),
      fc.tuple(path, fc.integer({ min: 0, max: 3 }), tree).map(([p, i, v]) => insert(p, i, v)),
      fc.tuple(path, fc.integer({ min: -1e6, max: 1e6 })).map(([p, a]) => add(p, a)),
      path.map(del),
    );
    fc.assert(
      fc.property(root, op, (content, operation) => {
        let action: Action | undefined;
        try {
          action = plan(content as JsonObject, operation)?.action;
        } catch {
          return; // a 400: nothing is written
        }
        if (action === undefined || operation.kind === 'replace') return;
        // The fast path applies only where the assumed steps are the real ones (no parent is created).
        if (JSON.stringify(action.steps) !== JSON.stringify(assumeSteps(operation.segments))) return;
        const after = applyAction(content as JsonObject, action);
        // A sum DynamoDB cannot store (out of range, or over 38 digits: 1e19 + 1e-20) is refused: nothing is written.
        const sum = action.steps.reduce<Json>(
          (node, step) => (node as Record<string | number, Json>)[step] as Json,
          after,
        );
        if (action.kind === 'add' && !isStorableNumber(sum as JsonNumber)) return;
        const growth = storedSize(after) - storedSize(content as JsonObject);
        expect(growth).toBeLessThanOrEqual(growthBound(operation));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('compileAction: middle insert', () => {
  it('moves each element from the insert point up one place, then writes the value', () => {
    const state = new ExpressionState();
    compileAction(state, { kind: 'insert', steps: ['l'], index: 1, value: 'x', length: 3 });
    expect(state.buildUpdate()).toEqual({
      UpdateExpression: 'SET #n0.#n1[3] = #n0.#n1[2], #n0.#n1[2] = #n0.#n1[1], #n0.#n1[1] = :v0',
      ConditionExpression: '',
      ExpressionAttributeNames: { '#n0': 'content', '#n1': 'l' },
      ExpressionAttributeValues: { ':v0': { S: 'x' } },
    });
  });
});
