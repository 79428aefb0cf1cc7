// lib/storage/decide.ts as a table: the decision on a segment in hand (no If-Match, so no read), exact.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { fragmentBytes } from '../../lib/config/env';
import { type Json, Stub } from '../../lib/content/json';
import type { ContentOperation } from '../../lib/content/model';
import { toAttribute } from '../../lib/dynamo/attributes';
import { slotAttribute } from '../../lib/schema/attributes';
import { type Decision, decide } from '../../lib/storage/decide';
import type { Grant } from '../../lib/storage/grant';
import type { WriteRequest } from '../../lib/storage/requests';
import { readSegment } from '../../lib/storage/segment';
import { splitMembers } from '../../lib/storage/batch-load';
import { cut } from '../../lib/storage/layout/cut';
import { add, del, set } from './helpers';

const SLOT = 4;
const MARK = 'mark-of-this-request';
const grant = { inc: 'INC', epoch: 1 } as Grant;
const request = {} as WriteRequest;

/** A stored segment as DynamoDB returns it: fragment, version 7, ETag `e7`, its size estimate, maybe our mark. */
function segment(key: string, fragment: Json, { marked = false, bytes = 100 } = {}) {
  const raw: Record<string, AttributeValue> = {
    pk: { S: 'C#INC' },
    sk: { S: key },
    content: toAttribute(fragment),
    ver: { N: '7' },
    etag: { S: 'e7' },
    ge: { N: '1' },
    bytes: { N: String(bytes) },
    ...(marked ? { [slotAttribute(SLOT)]: { S: MARK } } : {}),
  };
  return readSegment(raw);
}

const relative = (op: ContentOperation) => op as Exclude<ContentOperation, { kind: 'replace' }>;

describe('decide: the decision on the segment in hand', () => {
  it.each<[string, ReturnType<typeof segment>, ContentOperation, Decision]>([
    [
      'our mark in the slot: landed already',
      segment('/', { a: 1 }, { marked: true }),
      set('a', 2),
      { kind: 'applied' },
    ],
    [
      'a delete of what is not there: unchanged, at the ETag',
      segment('/', { a: 1 }),
      del('b'),
      { kind: 'unchanged', etag: 'e7' },
    ],
    [
      'a small set: one write, its size brought to the exact one by adding the difference (no version)',
      segment('/', { a: 1 }, { bytes: 100 }),
      set('a', 2),
      {
        kind: 'write',
        action: { kind: 'set', steps: ['a'], value: 2 },
        // The root is an object (type M); {"a":2} is 7 bytes as DynamoDB counts them, the estimate was 100.
        guards: [{ kind: 'type', steps: [], type: 'M' }],
        size: { added: 7 - 100 },
      },
    ],
    [
      'an element of a chunked array: guarded by the version (its positions hold while its chunk stub does)',
      segment('/L/', [new Stub('/L/C~10'), 'x']),
      set('1', 'y'),
      {
        kind: 'write',
        action: { kind: 'set', steps: [1], value: 'y' },
        // [stub, "y"]: 3 + (1 + 7) + (1 + 1) = 13 bytes.
        guards: [{ kind: 'type', steps: [], type: 'L' }, { kind: 'version' }],
        size: { exact: 13 },
        version: 7,
      },
    ],
  ])('%s', async (_, held, op, expected) => {
    await expect(decide(grant, held, { request, op: relative(op), mark: MARK, slot: SLOT })).resolves.toEqual(expected);
  });

  it.each<[string, Json, ContentOperation, number]>([
    ['a set past the budget: cut, the segment first', { a: 1 }, set('big', { x: 'y'.repeat(fragmentBytes()) }), 2],
    ['a set that replaces a stub: the stub dropped', { s: new Stub('/S/') }, set('s', 1), 1],
  ])('%s', async (_, fragment, op, pieces) => {
    const decision = await decide(grant, segment('/', fragment), { request, op: relative(op), mark: MARK, slot: SLOT });
    expect(decision.kind).toBe('rewrite');
    if (decision.kind !== 'rewrite') return;
    expect(decision.pieces).toHaveLength(pieces);
    expect(decision.pieces[0]?.key).toBe('/');
    expect(decision.version).toBe(7);
  });

  it('an increment: guarded by the room the number has (the sum commutes while it fits)', async () => {
    const decision = await decide(grant, segment('/', { n: 5 }), {
      request,
      op: relative(add('n', 1)),
      mark: MARK,
      slot: SLOT,
    });
    expect(decision).toMatchObject({ kind: 'write', action: { kind: 'add', steps: ['n'] } });
    expect(decision.kind === 'write' && decision.guards.some((g) => g.kind === 'between')).toBe(true);
  });
});

describe('splitMembers: a batch planned on a bucketed object lays its members back into the buckets read', () => {
  let n = 0;
  const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, 'x'.repeat(60)]));
  const pieces = cut('/o/', wide, { limit: 256, target: 128, newId: () => `n${n++}` });
  const stub = (pieces[0] as { fragment: Stub }).fragment;
  const top = segment('/o/', stub);
  // A bucket cut into buckets of its own, and one of those: the batch read that one straight (its Lambda remembered
  // the cut), not the bucket it was cut from.
  const cutFrom = pieces.find((p) => p.key !== '/o/' && p.fragment instanceof Stub) as { key: string; fragment: Stub };
  const read = pieces.find(
    (p) =>
      p.key.startsWith(`${cutFrom.fragment.key}/`) &&
      !(p.fragment instanceof Stub) &&
      Object.keys(p.fragment as object).length > 0,
  );

  it('finds the nested bucket the test needs', () => {
    expect([cutFrom, read].every((p) => p !== undefined)).toBe(true);
  });

  it.each([
    ['the cuts it relied on kept with it: laid back into the bucket read', true],
    ['a cut it did not keep: declined (a member whose bucket was not read)', false],
  ])('%s', (_, kept) => {
    const bucket = segment((read as { key: string }).key, (read as { fragment: Json }).fragment);
    const members = {
      segment: top,
      path: [],
      stub: stub.key,
      buckets: new Map([[bucket.key, bucket]]),
      cuts: new Map(kept ? [[cutFrom.key, cutFrom.fragment.key]] : []),
    };
    const changed = { ...(bucket.fragment as Record<string, Json>) };
    const member = Object.keys(changed)[0] as string;
    changed[member] = 'changed';
    const split = splitMembers(changed, [members], top);
    if (!kept) {
      expect(split).toEqual({ declined: expect.stringMatching(/^no bucket read for a member/) });
      return;
    }
    expect(split).toEqual({
      content: stub,
      rewritten: [{ segment: bucket, pieces: [{ key: bucket.key, fragment: changed }], hub: '/o/' }],
    });
  });
});
