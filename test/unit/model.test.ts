import type { JsonObject } from '../../lib/content/json';
import { type Action, type ContentOperation, applyAction, plan, valueAt, walk } from '../../lib/content/model';
import { parsePath } from '../../lib/paths';
import { add, badRequest, del, failure, insert, push, replace, set } from './helpers';

/** Plans and applies an operation, as the read-then-write path does. */
function run(content: JsonObject, op: ContentOperation): JsonObject {
  const action = plan(content, op)?.action;
  return action === undefined ? content : applyAction(content, action);
}

const CONTENT: JsonObject = {
  n: 5,
  s: 'text',
  z: null,
  list: [10, 20, 30],
  empty: [],
  obj: { x: 1, '0': 'zero', 'a.b': 2 },
  rows: [{ id: 1 }, { id: 2 }],
};

describe('walk', () => {
  it.each([
    ['a key', 'n', { steps: ['n'], node: 5 }],
    ['nested keys', 'obj.x', { steps: ['obj', 'x'], node: 1 }],
    ['an escaped dot', 'obj.a\\.b', { steps: ['obj', 'a.b'], node: 2 }],
    ['an integer key on an object', 'obj.0', { steps: ['obj', '0'], node: 'zero' }],
    ['an index', 'list.1', { steps: ['list', 1], node: 20 }],
    ['a negative index', 'list.-1', { steps: ['list', 2], node: 30 }],
    ['the first element from the end', 'list.-3', { steps: ['list', 0], node: 10 }],
    ['through an index', 'rows.-1.id', { steps: ['rows', 1, 'id'], node: 2 }],
    ['a null value', 'z', { steps: ['z'], node: null }],
    ['a missing key', 'obj.y', { steps: ['obj'], node: CONTENT.obj, stop: 'missing' }],
    ['a missing first key', 'nope.x', { steps: [], node: CONTENT, stop: 'missing' }],
    ['an index past the end', 'list.3', { steps: ['list'], node: CONTENT.list, stop: 'out-of-range' }],
    ['a negative index past the start', 'list.-4', { steps: ['list'], node: CONTENT.list, stop: 'out-of-range' }],
    ['any index of an empty array', 'empty.0', { steps: ['empty'], node: [], stop: 'out-of-range' }],
    ['a key on an array', 'list.x', { steps: ['list'], node: CONTENT.list, stop: 'key-on-array' }],
    ['-0 on an array', 'list.-0', { steps: ['list'], node: CONTENT.list, stop: 'key-on-array' }],
    ['a leading zero on an array', 'list.01', { steps: ['list'], node: CONTENT.list, stop: 'key-on-array' }],
    ['through a number', 'n.x', { steps: ['n'], node: 5, stop: 'through-scalar' }],
    ['through a string', 's.0', { steps: ['s'], node: 'text', stop: 'through-scalar' }],
    ['through null', 'z.x', { steps: ['z'], node: null, stop: 'through-scalar' }],
    ['an inherited key', 'constructor', { steps: [], node: CONTENT, stop: 'missing' }],
    ['a nested inherited key', 'obj.toString', { steps: ['obj'], node: CONTENT.obj, stop: 'missing' }],
    ['an array method name', 'list.length', { steps: ['list'], node: CONTENT.list, stop: 'key-on-array' }],
  ])('follows %s', (_, path, expected) => {
    expect(walk(CONTENT, parsePath(path))).toEqual(expected);
  });
});

describe('plan', () => {
  it.each<[string, JsonObject, ContentOperation, Action | undefined]>([
    // set
    ['set replaces a key', { a: 1 }, set('a', 2), { kind: 'set', steps: ['a'], value: 2 }],
    ['set adds a key', { a: 1 }, set('b', null), { kind: 'set', steps: ['b'], value: null }],
    [
      'set creates missing parents as objects',
      {},
      set('a.b.c', 1),
      { kind: 'set', steps: ['a'], value: { b: { c: 1 } } },
    ],
    [
      'set creates below the deepest existing key',
      { a: { x: 1 } },
      set('a.b.0', 1),
      { kind: 'set', steps: ['a', 'b'], value: { '0': 1 } },
    ],
    ['set replaces an element', { l: [1, 2] }, set('l.1', 9), { kind: 'set', steps: ['l', 1], value: 9 }],
    ['set replaces an element from the end', { l: [1, 2] }, set('l.-2', 9), { kind: 'set', steps: ['l', 0], value: 9 }],
    ['set at index == length appends', { l: [1, 2] }, set('l.2', 9), { kind: 'set', steps: ['l', 2], value: 9 }],
    ['set at index 0 of an empty array appends', { l: [] }, set('l.0', 9), { kind: 'set', steps: ['l', 0], value: 9 }],
    ['set appends with missing parents', { l: [] }, set('l.0.a', 9), { kind: 'set', steps: ['l', 0], value: { a: 9 } }],
    ['set an integer key on an object', { o: {} }, set('o.0', 1), { kind: 'set', steps: ['o', '0'], value: 1 }],
    ['set a first integer segment as a key', {}, set('0', 1), { kind: 'set', steps: ['0'], value: 1 }],
    ['set an escaped key', {}, set('a\\.b', 1), { kind: 'set', steps: ['a.b'], value: 1 }],
    [
      'set a constructor key',
      {},
      set('constructor.prototype', 1),
      { kind: 'set', steps: ['constructor'], value: { prototype: 1 } },
    ],
    [
      'set replaces a scalar with a container',
      { a: 1 },
      set('a', { b: 1 }),
      { kind: 'set', steps: ['a'], value: { b: 1 } },
    ],
    // insert
    ['insert at 0 prepends', { l: [1, 2] }, insert('l', 0, 9), { kind: 'prepend', steps: ['l'], value: 9 }],
    ['insert at -length prepends', { l: [1, 2] }, insert('l', -2, 9), { kind: 'prepend', steps: ['l'], value: 9 }],
    ['insert at length appends', { l: [1, 2] }, insert('l', 2, 9), { kind: 'append', steps: ['l'], value: 9 }],
    [
      'insert in the middle shifts the tail',
      { l: [1, 2] },
      insert('l', 1, 9),
      { kind: 'insert', steps: ['l'], index: 1, value: 9, length: 2 },
    ],
    [
      'insert at -1 goes before the last',
      { l: [1, 2, 3] },
      insert('l', -1, 9),
      { kind: 'insert', steps: ['l'], index: 2, value: 9, length: 3 },
    ],
    [
      'insert moving more than 100 elements rewrites the list',
      { l: Array.from({ length: 102 }, (_, i) => i) },
      insert('l', 1, 9),
      { kind: 'set', steps: ['l'], value: [0, 9, ...Array.from({ length: 101 }, (_, i) => i + 1)] },
    ],
    ['insert at 0 of an empty array', { l: [] }, insert('l', 0, 9), { kind: 'prepend', steps: ['l'], value: 9 }],
    [
      'insert at 0 of a missing target creates it',
      {},
      insert('a.l', 0, 9),
      { kind: 'set', steps: ['a'], value: { l: [9] } },
    ],
    ['insert a null value', { l: [] }, insert('l', 0, null), { kind: 'prepend', steps: ['l'], value: null }],
    // push
    ['push appends', { l: [1] }, push('l', 2), { kind: 'append', steps: ['l'], value: 2 }],
    [
      'push appends an array as one element',
      { l: [] },
      push('l', [1, 2]),
      { kind: 'append', steps: ['l'], value: [1, 2] },
    ],
    ['push on a missing target creates [value]', {}, push('l', 1), { kind: 'set', steps: ['l'], value: [1] }],
    ['push creates missing parents', {}, push('a.b', 1), { kind: 'set', steps: ['a'], value: { b: [1] } }],
    ['push to an element', { l: [[1]] }, push('l.-1', 2), { kind: 'append', steps: ['l', 0], value: 2 }],
    // add
    ['increment', { n: 1 }, add('n', 2), { kind: 'add', steps: ['n'], amount: 2 }],
    ['decrement', { n: 1 }, add('n', -1), { kind: 'add', steps: ['n'], amount: -1 }],
    ['add to a missing target creates the amount', {}, add('a.n', -1), { kind: 'set', steps: ['a'], value: { n: -1 } }],
    ['add to an element', { l: [1, 2] }, add('l.-1', 5), { kind: 'add', steps: ['l', 1], amount: 5 }],
    ['add appends at index == length', { l: [1] }, add('l.1', 5), { kind: 'set', steps: ['l', 1], value: 5 }],
    // delete
    ['delete a key', { a: 1 }, del('a'), { kind: 'remove', steps: ['a'] }],
    ['delete an element', { l: [1, 2] }, del('l.-1'), { kind: 'remove', steps: ['l', 1] }],
    ['delete a nested key', { a: { b: 1 } }, del('a.b'), { kind: 'remove', steps: ['a', 'b'] }],
    ['delete a missing key', { a: 1 }, del('b'), undefined],
    ['delete below a missing key', {}, del('a.b.c'), undefined],
    ['delete an index past the end', { l: [1] }, del('l.1'), undefined],
    ['delete a key on an array', { l: [1] }, del('l.x'), undefined],
    ['delete through a scalar', { a: 1 }, del('a.b'), undefined],
    ['delete an inherited key', {}, del('toString'), undefined],
    // replace
    ['replace', { a: 1 }, replace({ b: 2 }), { kind: 'set', steps: [], value: { b: 2 } }],
    ['replace with empty content', { a: 1 }, replace({}), { kind: 'set', steps: [], value: {} }],
  ])('%s', (_, content, op, action) => {
    expect(plan(content, op)?.action).toEqual(action);
  });

  it.each<[string, JsonObject, ContentOperation, string]>([
    // set
    ['set beyond length', { l: [1, 2] }, set('l.3', 1), 'INDEX_OUT_OF_RANGE'],
    ['set a negative index past the start', { l: [1, 2] }, set('l.-3', 1), 'INDEX_OUT_OF_RANGE'],
    ['set -1 of an empty array', { l: [] }, set('l.-1', 1), 'INDEX_OUT_OF_RANGE'],
    ['set below an index past the end', { l: [] }, set('l.1.a', 1), 'INDEX_OUT_OF_RANGE'],
    ['set through a number', { a: 1 }, set('a.b', 1), 'NOT_A_CONTAINER'],
    ['set through a string', { a: 'x' }, set('a.0', 1), 'NOT_A_CONTAINER'],
    ['set through null', { a: null }, set('a.b', 1), 'NOT_A_CONTAINER'],
    ['set deep through a scalar', { a: { b: true } }, set('a.b.c.d', 1), 'NOT_A_CONTAINER'],
    ['set a key on an array', { l: [] }, set('l.x', 1), 'INVALID_PATH'],
    ['set -0 on an array', { l: [1] }, set('l.-0', 1), 'INVALID_PATH'],
    // insert
    ['insert beyond length', { l: [1, 2] }, insert('l', 3, 9), 'INDEX_OUT_OF_RANGE'],
    ['insert before -length', { l: [1, 2] }, insert('l', -3, 9), 'INDEX_OUT_OF_RANGE'],
    ['insert at 1 of an empty array', { l: [] }, insert('l', 1, 9), 'INDEX_OUT_OF_RANGE'],
    ['insert at -1 of an empty array', { l: [] }, insert('l', -1, 9), 'INDEX_OUT_OF_RANGE'],
    ['insert at 1 of a missing target', {}, insert('l', 1, 9), 'INDEX_OUT_OF_RANGE'],
    ['insert at -1 of a missing target', {}, insert('l', -1, 9), 'INDEX_OUT_OF_RANGE'],
    ['insert into an object', { o: {} }, insert('o', 0, 9), 'NOT_AN_ARRAY'],
    ['insert into a string', { s: 'ab' }, insert('s', 0, 9), 'NOT_AN_ARRAY'],
    ['insert into null', { z: null }, insert('z', 0, 9), 'NOT_AN_ARRAY'],
    ['insert at 0 through a scalar', { a: 1 }, insert('a.l', 0, 9), 'NOT_A_CONTAINER'],
    // push
    ['push to an object', { o: {} }, push('o', 1), 'NOT_AN_ARRAY'],
    ['push to a number', { n: 1 }, push('n', 1), 'NOT_AN_ARRAY'],
    ['push to null', { z: null }, push('z', 1), 'NOT_AN_ARRAY'],
    ['push through a scalar', { n: 1 }, push('n.l', 1), 'NOT_A_CONTAINER'],
    ['push beyond length', { l: [] }, push('l.1', 1), 'INDEX_OUT_OF_RANGE'],
    ['push to a key on an array', { l: [] }, push('l.x', 1), 'INVALID_PATH'],
    // add
    ['add to a string', { s: '1' }, add('s', 1), 'NOT_A_NUMBER'],
    ['add to null', { z: null }, add('z', 1), 'NOT_A_NUMBER'],
    ['add to an object', { o: {} }, add('o', 1), 'NOT_A_NUMBER'],
    ['add to an array', { l: [] }, add('l', 1), 'NOT_A_NUMBER'],
    ['add to a boolean', { b: true }, add('b', 1), 'NOT_A_NUMBER'],
    ['add through a scalar', { n: 1 }, add('n.m', 1), 'NOT_A_CONTAINER'],
    ['add beyond length', { l: [] }, add('l.2', 1), 'INDEX_OUT_OF_RANGE'],
  ])('%s is a 400 %s', (_, content, op, code) => {
    expect(failure(() => plan(content, op))).toEqual(badRequest(code));
  });
});

describe('plan then applyAction', () => {
  it.each<[string, JsonObject, ContentOperation, JsonObject]>([
    ['set a nested value', { a: { x: 1 } }, set('a.y', 2), { a: { x: 1, y: 2 } }],
    ['set creates parents', { a: 1 }, set('b.c.d', [1]), { a: 1, b: { c: { d: [1] } } }],
    ['set replaces an element', { l: [1, 2, 3] }, set('l.-1', 'x'), { l: [1, 2, 'x'] }],
    ['set appends at index == length', { l: [1] }, set('l.1', 2), { l: [1, 2] }],
    ['set under an element', { l: [{ a: 1 }] }, set('l.0.b', 2), { l: [{ a: 1, b: 2 }] }],
    ['set an integer key on an object', { o: { '1': 'a' } }, set('o.1', 'b'), { o: { '1': 'b' } }],
    ['insert at 0', { l: [1, 2] }, insert('l', 0, 0), { l: [0, 1, 2] }],
    ['insert in the middle', { l: [1, 3] }, insert('l', 1, 2), { l: [1, 2, 3] }],
    ['insert at length', { l: [1, 2] }, insert('l', 2, 3), { l: [1, 2, 3] }],
    ['insert at -1', { l: [1, 3] }, insert('l', -1, 2), { l: [1, 2, 3] }],
    ['insert at -length', { l: [1, 2] }, insert('l', -2, 0), { l: [0, 1, 2] }],
    ['insert into a missing target', {}, insert('l', 0, 'a'), { l: ['a'] }],
    ['push', { l: [1] }, push('l', { a: 1 }), { l: [1, { a: 1 }] }],
    ['push onto a missing target', { a: {} }, push('a.l', null), { a: { l: [null] } }],
    ['increment', { n: 1.5 }, add('n', 2), { n: 3.5 }],
    ['decrement below zero', { n: 0 }, add('n', -3), { n: -3 }],
    ['increment a missing target', {}, add('n', 1), { n: 1 }],
    ['decrement a missing target', {}, add('c.n', -1), { c: { n: -1 } }],
    ['delete a key', { a: 1, b: 2 }, del('a'), { b: 2 }],
    ['delete an element shifts the rest', { l: [1, 2, 3] }, del('l.0'), { l: [2, 3] }],
    ['delete the last element', { l: [1, 2, 3] }, del('l.-1'), { l: [1, 2] }],
    ['delete a missing path', { a: 1 }, del('b.c'), { a: 1 }],
    ['replace', { a: 1 }, replace({ b: [2] }), { b: [2] }],
  ])('%s', (_, content, op, expected) => {
    expect(run(content, op)).toEqual(expected);
  });

  it('never changes the content it is given', () => {
    const content: JsonObject = { a: { b: [1, 2] }, n: 1 };
    const before = JSON.stringify(content);
    for (const op of [set('a.b.0', 9), insert('a.b', 1, 9), push('a.b', 9), add('n', 1), del('a.b.1'), replace({})])
      run(content, op);
    expect(JSON.stringify(content)).toBe(before);
  });

  it('keeps a constructor key as own data without touching Object.prototype', () => {
    const result = run({}, set('constructor.prototype.polluted', true));
    expect(Object.keys(result)).toEqual(['constructor']);
    expect(result).toEqual({ constructor: { prototype: { polluted: true } } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(Object.prototype, 'polluted')).toBe(false);
  });

  it('deletes an own constructor key', () => {
    expect(run({ constructor: 1, a: 2 }, del('constructor'))).toEqual({ a: 2 });
  });
});

describe('valueAt', () => {
  it.each([
    ['a key', 'n', 5],
    ['a nested key', 'obj.x', 1],
    ['an object', 'obj', CONTENT.obj],
    ['an element', 'list.0', 10],
    ['an element from the end', 'list.-1', 30],
    ['through an element', 'rows.1.id', 2],
    ['null', 'z', null],
    ['an integer key on an object', 'obj.0', 'zero'],
  ])('reads %s', (_, path, value) => {
    expect(valueAt(CONTENT, parsePath(path))).toEqual(value);
  });

  it.each([
    ['missing'],
    ['obj.y'],
    ['list.3'],
    ['list.-4'],
    ['list.x'],
    ['n.x'],
    ['z.x'],
    ['constructor'],
    ['obj.hasOwnProperty'],
  ])('%s is a 404 PATH_NOT_FOUND', (path) => {
    expect(failure(() => valueAt(CONTENT, parsePath(path)))).toEqual({ statusCode: 404, code: 'PATH_NOT_FOUND' });
  });
});

describe('applyAction', () => {
  it.each<[string, JsonObject, Action, JsonObject]>([
    ['set at the root', { a: 1 }, { kind: 'set', steps: [], value: { b: 1 } }, { b: 1 }],
    ['set a key', { a: 1 }, { kind: 'set', steps: ['a'], value: [1] }, { a: [1] }],
    ['set an element', { l: [1, 2] }, { kind: 'set', steps: ['l', 0], value: 0 }, { l: [0, 2] }],
    ['append', { l: [1] }, { kind: 'append', steps: ['l'], value: 2 }, { l: [1, 2] }],
    ['prepend', { l: [1] }, { kind: 'prepend', steps: ['l'], value: 0 }, { l: [0, 1] }],
    ['append inside an element', { l: [[1]] }, { kind: 'append', steps: ['l', 0], value: 2 }, { l: [[1, 2]] }],
    ['add', { a: { n: 1 } }, { kind: 'add', steps: ['a', 'n'], amount: -0.5 }, { a: { n: 0.5 } }],
    ['remove a key', { a: 1, b: 2 }, { kind: 'remove', steps: ['b'] }, { a: 1 }],
    ['remove an element', { l: [1, 2, 3] }, { kind: 'remove', steps: ['l', 1] }, { l: [1, 3] }],
  ])('%s', (_, content, action, expected) => {
    expect(applyAction(content, action)).toEqual(expected);
  });
});
