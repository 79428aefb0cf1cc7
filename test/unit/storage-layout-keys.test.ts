// The key grammar of lib/storage/layout/keys.ts, as tables: every key form built, and parsed back to what it names.
import {
  type ParsedKey,
  ROOT_KEY,
  bucketDepth,
  bucketFanout,
  bucketKey,
  bucketKeys,
  bucketStubKey,
  bucketStubOf,
  byChunkStart,
  childKey,
  chunkArrayKey,
  chunkCount,
  chunkDir,
  chunkDirKey,
  chunkKey,
  chunkStart,
  chunkStubKey,
  contentPk,
  incarnationOfPk,
  isSegmentKey,
  parentKey,
  parseKey,
  stubHolderKey,
  subtreePrefix,
} from '../../lib/storage/layout/keys';

describe('layout/keys: building keys', () => {
  it.each<[string, string, string]>([
    ['content partition', contentPk('abcDEF123456'), 'C#abcDEF123456'],
    ['child of the root', childKey(ROOT_KEY, 'AAAAAAAA'), '/AAAAAAAA/'],
    ['child of a child', childKey('/AAAAAAAA/', 'BBBBBBBB'), '/AAAAAAAA/BBBBBBBB/'],
    ['chunk directory', chunkDirKey('/AAAAAAAA/', 'CCCCCCCC'), '/AAAAAAAA/CCCCCCCC~'],
    ['chunk stub for 120 elements', chunkStubKey('/AAAAAAAA/CCCCCCCC~', 120), '/AAAAAAAA/CCCCCCCC~120'],
    ['first chunk (start 0: the largest number)', chunkKey('/A/C~', 0), '/A/C~9999999999/'],
    ['chunk at start 120', chunkKey('/A/C~', 120), '/A/C~9999999879/'],
    ['bucket stub of 8', bucketStubKey('/AAAAAAAA/', 'DDDDDDDD', 8), '/AAAAAAAA/DDDDDDDD#8'],
    ['bucket 3', bucketKey('/A/D#8', 3), '/A/D#8/3/'],
    ['nested bucket 1 of bucket 3', bucketKey(`${bucketKey('/A/D#8', 3)}EEEEEEEE#2`, 1), '/A/D#8/3/EEEEEEEE#2/1/'],
  ])('%s', (_, built, expected) => {
    expect(built).toBe(expected);
  });
});

describe('layout/keys: reading keys', () => {
  it.each<[string, unknown, unknown]>([
    ['incarnation of a content partition', incarnationOfPk('C#abc'), 'abc'],
    ['incarnation of another partition', incarnationOfPk('P#@alice/site'), undefined],
    ['incarnation of no key', incarnationOfPk(undefined), undefined],
    ['a segment key', isSegmentKey('/A/'), true],
    ['a subscription key is none', isSegmentKey('~s/conn/sub'), false],
    ['a marker key is none', isSegmentKey('~p/123'), false],
    ["the root's parent", parentKey(ROOT_KEY), undefined],
    ["a child's parent", parentKey('/A/B/'), '/A/'],
    ["a chunk stub's count", chunkCount('/A/C~120'), 120],
    ["a chunk's start", chunkStart('/A/C~9999999879/'), 120],
    ["a chunk's directory", chunkDir('/A/C~9999999879/'), '/A/C~'],
    ["a chunk's array segment", chunkArrayKey('/A/B/C~9999999879/'), '/A/B/'],
    ["a bucket stub's fan-out", bucketFanout('/A/D#16'), 16],
    ["a bucket's stub", bucketStubOf('/A/D#8/3/'), '/A/D#8'],
    ["a nested bucket's stub", bucketStubOf('/A/D#8/3/E#2/1/'), '/A/D#8/3/E#2'],
    ['depth of an object stub', bucketDepth('/A/D#8'), 2],
    ['depth of a stub in a bucket', bucketDepth('/A/D#8/3/E#2'), 3],
    ['every bucket of a stub', bucketKeys('/A/D#2'), ['/A/D#2/0/', '/A/D#2/1/']],
    ['where a segment stub was written', stubHolderKey('/A/B/'), '/A/'],
    ['where a bucket stub was written', stubHolderKey('/A/D#8'), '/A/'],
    ["a segment's subtree", subtreePrefix('/A/'), '/A/'],
    ["a chunk stub's chunks", subtreePrefix('/A/C~120'), '/A/C~'],
    ["a bucket stub's buckets", subtreePrefix('/A/D#8'), '/A/D#8/'],
    [
      'chunks in element order',
      ['/A/C~9999999879/', '/A/C~9999999999/'].sort(byChunkStart),
      ['/A/C~9999999999/', '/A/C~9999999879/'],
    ],
  ])('%s', (_, read, expected) => {
    expect(read).toEqual(expected);
  });
});

describe('layout/keys: parseKey', () => {
  it.each<[string, ParsedKey]>([
    ['/', { kind: 'root', key: '/' }],
    ['/A/', { kind: 'segment', key: '/A/', parent: '/' }],
    ['/A/B/', { kind: 'segment', key: '/A/B/', parent: '/A/' }],
    ['/A/C~120', { kind: 'chunk-stub', key: '/A/C~120', dir: '/A/C~', count: 120 }],
    ['/A/C~9999999879/', { kind: 'chunk', key: '/A/C~9999999879/', dir: '/A/C~', start: 120, array: '/A/' }],
    ['/A/D#8', { kind: 'bucket-stub', key: '/A/D#8', fanout: 8 }],
    ['/A/D#8/3/', { kind: 'bucket', key: '/A/D#8/3/', stub: '/A/D#8' }],
    ['/A/D#8/3/E#2/1/', { kind: 'bucket', key: '/A/D#8/3/E#2/1/', stub: '/A/D#8/3/E#2' }],
    ['/A/D#8/3/F/', { kind: 'segment', key: '/A/D#8/3/F/', parent: '/A/D#8/3/' }],
    ['~p/1234', { kind: 'other', key: '~p/1234' }],
    ['~s/conn/sub', { kind: 'other', key: '~s/conn/sub' }],
  ])('%s', (key, parsed) => {
    expect(parseKey(key)).toEqual(parsed);
  });

  it.each<[string, string]>([
    ['a chunk built from its directory and start', chunkKey(chunkDirKey('/A/', 'C'), 37)],
    ['a bucket built from its stub', bucketKey(bucketStubKey('/A/', 'D', 4), 2)],
    ['a child built from its parent', childKey('/A/', 'B')],
  ])('parses back what it builds: %s', (_, key) => {
    const parsed = parseKey(key);
    if (parsed.kind === 'chunk') expect(chunkKey(parsed.dir, parsed.start)).toBe(key);
    else if (parsed.kind === 'bucket') expect(parsed.stub).toBe('/A/D#4');
    else expect(parsed).toEqual({ kind: 'segment', key, parent: '/A/' });
  });
});
