// lib/storage/walk.ts's arrive and lib/storage/chunked.ts's readPlan as tables: where a segment in hand sends a write,
// and how a write reads the segment it goes to, by what this Lambda remembers; exact answers, no engine.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type Json, Stub } from '../../lib/content/json';
import type { ContentOperation } from '../../lib/content/model';
import { toAttribute } from '../../lib/dynamo/attributes';
import { slotAttribute } from '../../lib/schema/attributes';
import { type ReadPlan, readPlan } from '../../lib/storage/chunked';
import type { Grant } from '../../lib/storage/grant';
import { chunkKey } from '../../lib/storage/layout/keys';
import { forgetLocations, learnChunkRange, learnChunked } from '../../lib/storage/memory';
import { readSegment } from '../../lib/storage/segment';
import { type Arrival, type Place, arrive } from '../../lib/storage/walk';

const INC = 'INC';
const SLOT = 4;
const MARK = 'mark-of-this-request';
const grant = { inc: INC, epoch: 1 } as Grant;
/** The array at `/a1/`: its chunks (directory `/a1/c1~`) hold 200 elements, 50 each; two newer ones follow the stub. */
const ARRAY = '/a1/';
const DIR = '/a1/c1~';
const STUB = `${DIR}200`;

/** A stored segment as DynamoDB returns it, at the grant's epoch; `marked`: it holds this request's token. */
function segment(key: string, fragment: Json, { marked = false } = {}) {
  const raw: Record<string, AttributeValue> = {
    pk: { S: `C#${INC}` },
    sk: { S: key },
    content: toAttribute(fragment),
    ver: { N: '7' },
    etag: { S: 'e7' },
    ge: { N: '1' },
    ...(marked ? { [slotAttribute(SLOT)]: { S: MARK } } : {}),
  };
  return readSegment(raw);
}

type Relative = Exclude<ContentOperation, { kind: 'replace' }>;
const at = (key: string, depth: number, first?: string) =>
  first === undefined ? { key, depth } : { key, depth, first };

describe('readPlan: how a write reads the segment it goes to', () => {
  beforeEach(() => {
    forgetLocations(INC);
    learnChunked(INC, ARRAY, STUB, 50);
  });

  it.each<[string, { key: string; first?: string }, Relative, { ifMatch: boolean; chunkMet?: boolean }, ReadPlan]>([
    [
      'no chunked array known there: one UpdateItem tried',
      at('/', 0),
      { kind: 'set', segments: ['x'], value: 1 },
      { ifMatch: false },
      { kind: 'try' },
    ],
    [
      'an element after the chunks: tried as a position after the chunk stub, held by it',
      at(ARRAY, 1),
      { kind: 'set', segments: ['201'], value: 1 },
      { ifMatch: false },
      { kind: 'try', after: { op: { kind: 'set', segments: ['2'], value: 1 }, stub: STUB } },
    ],
    [
      'the same with If-Match: tried as written, not after the stub',
      at(ARRAY, 1),
      { kind: 'set', segments: ['201'], value: 1 },
      { ifMatch: true },
      { kind: 'try' },
    ],
    [
      'an insert among the chunks: the segment and its tail, ceil(190 / 50) + 3 items',
      at(ARRAY, 1),
      { kind: 'insert', segments: [], value: 1, index: 10 },
      { ifMatch: false },
      { kind: 'tail', limit: 7 },
    ],
    [
      'a delete of an element among the chunks: the tail too',
      at(ARRAY, 1),
      { kind: 'delete', segments: ['150'] },
      { ifMatch: false },
      { kind: 'tail', limit: 4 },
    ],
    [
      'a set on an old element whose chunk was never met: tried',
      at(ARRAY, 1),
      { kind: 'set', segments: ['10', 'b'], value: 1 },
      { ifMatch: false },
      { kind: 'try' },
    ],
    [
      'a set on an old element whose chunk was met: both read at once',
      at(ARRAY, 1),
      { kind: 'set', segments: ['10', 'b'], value: 1 },
      { ifMatch: false, chunkMet: true },
      { kind: 'withChunk', chunk: chunkKey(DIR, 0) },
    ],
    [
      'already in a chunk: tried there',
      at(chunkKey(DIR, 0), 1, '10'),
      { kind: 'set', segments: ['10'], value: 1 },
      { ifMatch: false },
      { kind: 'try' },
    ],
  ])('%s', (_name, where, rel, { ifMatch, chunkMet }, plan) => {
    if (chunkMet)
      learnChunkRange(
        INC,
        segment(
          chunkKey(DIR, 0),
          Array.from({ length: 50 }, (_, i) => i),
        ),
      );
    expect(readPlan(INC, where, rel, { ifMatch })).toEqual(plan);
  });
});

describe('arrive: what the segment a write read says', () => {
  beforeEach(() => forgetLocations(INC));
  const token = { slot: SLOT, mark: MARK };
  const root = (fragment: Json, options?: { marked?: boolean }) => segment('/', fragment, options);

  it.each<
    [string, Place, ReturnType<typeof segment> | undefined, { path: string[]; enterLast: boolean } | undefined, Arrival]
  >([
    [
      'its token there: the write landed already',
      { grant, at: at('/', 0) },
      root({ a: 1 }, { marked: true }),
      { path: ['a'], enterLast: false },
      { kind: 'landed' },
    ],
    [
      'a stub on the way: on to its segment, one step down',
      { grant, at: at('/', 0) },
      root({ a: new Stub('/s1/') }),
      { path: ['a', 'b'], enterLast: false },
      { kind: 'next', place: { grant, at: at('/s1/', 1) } },
    ],
    [
      'a stub at the path itself, for a set: acted on here (it replaces the stub)',
      { grant, at: at('/', 0) },
      root({ a: new Stub('/s1/') }),
      { path: ['a'], enterLast: false },
      { kind: 'here', segment: root({ a: new Stub('/s1/') }), path: ['a'] },
    ],
    [
      'an old element of a chunked array: into its chunk, by its logical index',
      { grant, at: at(ARRAY, 1) },
      segment(ARRAY, [new Stub(STUB), 'x', 'y']),
      { path: ['list', '10', 'b'], enterLast: false },
      { kind: 'chunk', segment: segment(ARRAY, [new Stub(STUB), 'x', 'y']), dir: DIR, index: 10 },
    ],
    [
      'a newer element: here, its index as a position after the chunk stub',
      { grant, at: at(ARRAY, 1) },
      segment(ARRAY, [new Stub(STUB), 'x', 'y']),
      { path: ['list', '201'], enterLast: false },
      { kind: 'here', segment: segment(ARRAY, [new Stub(STUB), 'x', 'y']), path: ['2'] },
    ],
    [
      'toward no path (a batch): here',
      { grant, at: at('/', 0) },
      root({ a: 1 }),
      undefined,
      { kind: 'here', segment: root({ a: 1 }), path: [] },
    ],
    [
      'the segment is gone: from the root again, forgetting the array it was in',
      { grant, at: at(chunkKey(DIR, 0), 2, '10'), array: at(ARRAY, 1) },
      undefined,
      { path: ['list', '10'], enterLast: false },
      { kind: 'next', place: { grant, at: at('/', 0) } },
    ],
  ])('%s', async (_name, place, read, toward, arrival) => {
    const answer =
      toward === undefined ? await arrive(place, read, token) : await arrive(place, read, { ...token, toward });
    expect(answer).toEqual(arrival);
  });
});
