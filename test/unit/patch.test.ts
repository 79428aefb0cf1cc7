// Patches, without a database: JSON Pointers read into tokens, RFC 6902 / RFC 7396 planned on the batch planner, and
// which patches compile to the batch's one-request form (and to exactly which request).
import { fragmentBytes } from '../../lib/config/env';
import { Refusal } from '../../lib/config/errors';
import { type BatchOperation, planBatch } from '../../lib/content/batch';
import type { Json, JsonObject } from '../../lib/content/json';
import { type MergeOperation, type PatchOperation, fastForms } from '../../lib/content/patch';
import { type AccessCheck, compileBatchWrite } from '../../lib/expressions';
import { formatPointer, parsePath, parsePointer } from '../../lib/paths';
import { thrownBy } from './helpers';

const BUDGET = { maxBytes: 1000, tooLarge: () => new Refusal('CONTENT_TOO_LARGE', 'too large') };
const USER_WRITE: AccessCheck = { ge: 0, inc: 'INC' };
const envelope = { access: USER_WRITE, budget: fragmentBytes(), requestToken: 'tok', slot: 3 };

const p = (op: PatchOperation['op'], path: string, rest: { from?: string; value?: Json } = {}): PatchOperation => ({
  kind: 'patch',
  op,
  path: parsePointer(path),
  ...(rest.from === undefined ? {} : { from: parsePointer(rest.from) }),
  ...('value' in rest ? { value: rest.value } : {}),
});
const merge = (patch: JsonObject): MergeOperation => ({ kind: 'merge', patch });

describe('parsePointer (RFC 6901)', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['/', ['']],
    ['/a/b', ['a', 'b']],
    ['/a.b', ['a.b']],
    ['/~01', ['~1']],
    ['/~10', ['/0']],
    ['/a~1b/c~0d', ['a/b', 'c~d']],
    ['/l/-', ['l', '-']],
    ['/ /x', [' ', 'x']],
    ['/constructor/toString', ['constructor', 'toString']],
  ])('%j is %j, and formats back', (pointer, tokens) => {
    expect(parsePointer(pointer)).toEqual(tokens);
    expect(formatPointer(tokens)).toBe(pointer);
  });

  it('reaches the same keys as the dot path with escapes', () => {
    expect(parsePointer('/files/readme.md/a\\b')).toEqual(parsePath('files.readme\\.md.a\\\\b'));
  });

  it.each<[string, string]>([
    ['a', 'INVALID_PATH'],
    ['#/a', 'INVALID_PATH'],
    ['/a~', 'INVALID_PATH'],
    ['/a~2', 'INVALID_PATH'],
    ['/__proto__', 'RESERVED_KEY'],
    ['/a/__proto__/b', 'RESERVED_KEY'],
    [`/${'k'.repeat(1025)}`, 'INVALID_PATH'],
    ['/a'.repeat(32), 'PATH_TOO_DEEP'],
  ])('%j: 400 %s', (pointer, code) => {
    expect(thrownBy(() => parsePointer(pointer)).code).toBe(code);
  });
});

describe('planBatch with patch operations', () => {
  it.each<[string, JsonObject, BatchOperation[], JsonObject]>([
    ['add inserts into an array', { l: [1, 3] }, [p('add', '/l/1', { value: 2 })], { l: [1, 2, 3] }],
    ['add - appends', { l: [1] }, [p('add', '/l/-', { value: 2 })], { l: [1, 2] }],
    ['add on a member replaces it', { a: 1 }, [p('add', '/a', { value: [1] })], { a: [1] }],
    ['a numeric key of an object is a key', { o: {} }, [p('add', '/o/1', { value: 1 })], { o: { '1': 1 } }],
    ['move within an array', { l: ['a', 'b', 'c'] }, [p('move', '/l/2', { from: '/l/0' })], { l: ['b', 'c', 'a'] }],
    [
      'copy, then change the source',
      { a: { n: 1 } },
      [p('copy', '/b', { from: '/a' }), p('add', '/a/m', { value: 2 })],
      { a: { n: 1, m: 2 }, b: { n: 1 } },
    ],
    ['replace the root', { a: 1 }, [p('replace', '', { value: { b: 1 } })], { b: 1 }],
    [
      'merge: null removes, objects merge, the rest replaces',
      { a: { b: 1, c: 2 }, d: [1], e: 5 },
      [merge({ a: { b: null, x: { y: null, z: 1 } }, d: { k: 1 }, e: null, f: [null] })],
      { a: { c: 2, x: { z: 1 } }, d: { k: 1 }, f: [null] },
    ],
  ])('%s', (_name, root, batch, expected) => {
    const before = structuredClone(root);
    expect(planBatch(root, batch, BUDGET).content).toEqual(expected);
    expect(root).toEqual(before);
  });

  it.each<[string, JsonObject, BatchOperation[], string, number | undefined]>([
    ['remove of a missing member', { a: 1 }, [p('add', '/b', { value: 1 }), p('remove', '/c')], 'PATH_NOT_FOUND', 1],
    ['an index with a leading zero', { l: [1, 2] }, [p('remove', '/l/01')], 'PATH_NOT_FOUND', 0],
    ['add past the end', { l: [] }, [p('add', '/l/1', { value: 1 })], 'INDEX_OUT_OF_RANGE', 0],
    ['add of a key to an array', { l: [] }, [p('add', '/l/k', { value: 1 })], 'INVALID_PATH', 0],
    ['add under a missing parent', {}, [p('add', '/a/b', { value: 1 })], 'PATH_NOT_FOUND', 0],
    ['test of a different type', { a: 10 }, [p('test', '/a', { value: '10' })], 'TEST_FAILED', 0],
    ['remove of the root', { a: 1 }, [p('remove', '')], 'INVALID_CONTENT', 0],
    ['a merge over the budget (no index)', {}, [merge({ a: 'x'.repeat(2000) })], 'CONTENT_TOO_LARGE', undefined],
  ])('%s fails with %s at %s', (_name, root, batch, code, index) => {
    const error = thrownBy(() => planBatch(root, batch, BUDGET));
    expect({ code: error.code, index: error.index }).toEqual({ code, index });
  });
});

describe('the one-request form of a patch', () => {
  it.each<[string, PatchOperation | MergeOperation, boolean]>([
    ['add of a member', p('add', '/a/b', { value: 1 }), true],
    ['remove of a member', p('remove', '/a'), true],
    ['replace of a member', p('replace', '/a', { value: 1 }), true],
    ['a merge of leaves', merge({ a: { b: 1, c: null }, d: [1] }), true],
    ['add at an array position', p('add', '/l/0', { value: 1 }), false],
    ['add at -', p('add', '/l/-', { value: 1 }), false],
    ['a numeric key (an index to a dot path)', p('remove', '/o/7'), false],
    ['an empty key', p('remove', '/'), false],
    ['the root', p('replace', '', { value: {} }), false],
    ['move', p('move', '/b', { from: '/a' }), false],
    ['copy', p('copy', '/b', { from: '/a' }), false],
    ['test', p('test', '/a', { value: 1 }), false],
    ['a merge with an empty object', merge({ a: {} }), false],
    ['a merge with a numeric key', merge({ l: { '0': 1 } }), false],
  ])('%s: %s', (_name, op, fast) => {
    expect(fastForms(op) !== undefined).toBe(fast);
  });

  it('replace requires its target; add requires only the parent, like set', () => {
    const request = compileBatchWrite([p('replace', '/a', { value: 1 }), p('add', '/b/c', { value: 2 })], envelope);
    expect(request?.UpdateExpression).toMatch(/^SET #n0\.#n1 = :v0, #n0\.#n2\.#n3 = :v1, /);
    expect(request?.ConditionExpression).toContain('size(#n0.#n2) >= :v2');
    expect(request?.ConditionExpression).toContain('attribute_exists(#n0.#n1)');
    expect(request?.ConditionExpression).not.toContain('attribute_exists(#n0.#n2');
  });

  it('an empty patch writes nothing (read path: the current ETag)', () => {
    expect(compileBatchWrite([], envelope)).toBeUndefined();
    expect(compileBatchWrite([merge({})], envelope)).toBeUndefined();
  });

  it('overlapping paths have no one-request form', () => {
    expect(
      compileBatchWrite([p('add', '/a', { value: {} }), p('add', '/a/b', { value: 1 })], envelope),
    ).toBeUndefined();
  });
});
