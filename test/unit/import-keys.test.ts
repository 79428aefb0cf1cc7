// An import's keys (docs/design/backup.md §3): its shadow partition, and a shadow segment's key and stubs as copied into
// the project's partition. Pure: lib/storage/layout/keys.ts and stubs.ts.
import { Stub } from '../../lib/content/json';
import { newSegmentId } from '../../lib/storage/ids';
import {
  COPY_ID_LENGTH,
  ROOT_KEY,
  bucketKey,
  bucketStubKey,
  childKey,
  chunkDirKey,
  chunkKey,
  chunkStubKey,
  copiedKey,
  copyPrefix,
  incarnationOfPk,
  contentPk,
  isShadowIncarnation,
  parseKey,
  parentKey,
  shadowIncarnation,
  withoutCopyId,
} from '../../lib/storage/layout/keys';
import { bucketOf } from '../../lib/storage/layout/bucketed';
import { rekeyStubs, stubsIn } from '../../lib/storage/layout/stubs';
import { feedRecordOf, readStreamBatch } from '../../lib/storage';

const X = 'CopyId12345';
expect(X).toHaveLength(COPY_ID_LENGTH);
const child = childKey(ROOT_KEY, 'abcdefgh');
const deep = childKey(child, 'ijklmnop');
const dir = chunkDirKey(child, 'qrstuvwx');
const bucketStub = bucketStubKey(ROOT_KEY, 'ABCDEFGH', 4);

describe('shadow partition', () => {
  it('is the incarnation, ~ and the session, and only it holds ~', () => {
    const inc = 'AbCdEf-_1234';
    const shadow = shadowIncarnation(inc, 'Zx3k9QpLmN0aBcDe');
    expect(shadow).toBe('AbCdEf-_1234~Zx3k9QpLmN0aBcDe');
    expect(incarnationOfPk(contentPk(shadow))).toBe(shadow);
    expect(isShadowIncarnation(shadow)).toBe(true);
    expect(isShadowIncarnation(inc)).toBe(false);
  });
});

describe('copiedKey: /<rest> becomes /<x><rest>, every key form keeping its kind and parent', () => {
  it.each<[string, string, string]>([
    ['a child of the root', child, `/${X}abcdefgh/`],
    ['a grandchild', deep, `/${X}abcdefgh/ijklmnop/`],
    ['a chunk stub', chunkStubKey(dir, 120), `/${X}abcdefgh/qrstuvwx~120`],
    ['a chunk', chunkKey(dir, 40), `/${X}abcdefgh/qrstuvwx~9999999959/`],
    ['a bucket stub', bucketStub, `/${X}ABCDEFGH#4`],
    ['a bucket', bucketKey(bucketStub, 3), `/${X}ABCDEFGH#4/3/`],
  ])('%s', (_, key, copied) => {
    expect(copiedKey(X, key)).toBe(copied);
    expect(copied.startsWith(copyPrefix(X))).toBe(true);
    expect(parseKey(copied).kind).toBe(parseKey(key).kind);
    const parent = parentKey(key);
    if (parseKey(key).kind === 'segment' && parent !== ROOT_KEY)
      expect(parentKey(copied)).toBe(copiedKey(X, parent as string));
  });

  it('never lies below a key of the content before it (copy ids are longer than birth ids)', () => {
    for (let i = 0; i < 200; i++) {
      const old = [childKey(ROOT_KEY, newSegmentId()), bucketKey(bucketStubKey(ROOT_KEY, newSegmentId(), 8), 1)];
      const copy = copiedKey(X, childKey(ROOT_KEY, newSegmentId()));
      for (const key of old) expect(copy.startsWith(key)).toBe(false);
    }
  });
});

describe('withoutCopyId and the bucket of a member', () => {
  it.each<[string, string]>([
    ['a child of the root', child],
    ['a grandchild', deep],
    ['a bucket stub at the root', bucketStub],
    ['a bucket stub below', bucketStubKey(deep, 'BCDEFGHI', 16)],
    ['a nested bucket stub', bucketStubKey(bucketKey(bucketStub, 2), 'CDEFGHIJ', 4)],
  ])('takes the copy id off %s, and leaves a key the engine made as it is', (_, key) => {
    expect(withoutCopyId(copiedKey(X, key))).toBe(key);
    expect(withoutCopyId(key)).toBe(key);
  });

  it('puts a member of an imported bucketed object in the copy of the bucket it was put in before the copy', () => {
    for (const stub of [bucketStub, bucketStubKey(deep, 'BCDEFGHI', 16)]) {
      for (let i = 0; i < 100; i++) {
        const member = `m${i}`;
        expect(bucketOf(copiedKey(X, stub), member)).toBe(copiedKey(X, bucketOf(stub, member)));
      }
    }
  });
});

describe('rekeyStubs', () => {
  it('rewrites every stub, wherever it is, and nothing else', () => {
    const fragment = {
      a: new Stub(child),
      list: [new Stub(chunkStubKey(dir, 3)), 'x', { b: new Stub(deep) }],
      wide: new Stub(bucketStub),
      n: 1,
      constructor: 'kept',
    };
    const copied = rekeyStubs(fragment, (key) => copiedKey(X, key)) as typeof fragment;
    expect(stubsIn(copied)).toEqual(stubsIn(fragment).map((key) => copiedKey(X, key)));
    expect(copied.n).toBe(1);
    expect(copied.list[1]).toBe('x');
    expect(Object.keys(copied)).toEqual(Object.keys(fragment));
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(stubsIn(fragment)).toEqual([child, chunkStubKey(dir, 3), deep, bucketStub]);
  });

  it('a fragment that is itself a stub (a bucketed root)', () => {
    expect((rekeyStubs(new Stub(bucketStub), (key) => copiedKey(X, key)) as Stub).key).toBe(`/${X}ABCDEFGH#4`);
  });
});

describe('the change feed and a shadow partition', () => {
  const record = (pk: string, sk: string, eventName: 'INSERT' | 'MODIFY' | 'REMOVE') =>
    ({
      eventName,
      dynamodb: {
        Keys: { pk: { S: pk }, sk: { S: sk } },
        NewImage: { pk: { S: pk }, sk: { S: sk }, f: { M: {} }, tx: { S: 'a-commit' } },
        OldImage: { pk: { S: pk }, sk: { S: sk }, f: { M: {} } },
      },
    }) as never;
  const shadow = contentPk(shadowIncarnation('AbCdEf-_1234', 'Zx3k9QpLmN0aBcDe'));

  it.each(['INSERT', 'MODIFY', 'REMOVE'] as const)('drops a shadow %s before anything reads it', (event) => {
    expect(feedRecordOf(record(shadow, ROOT_KEY, event))).toBeUndefined();
    expect(feedRecordOf(record(shadow, child, event))).toBeUndefined();
    const batch = readStreamBatch([record(shadow, child, event)]);
    expect([batch.written.size, batch.removed.size, batch.positions.size]).toEqual([0, 0, 0]);
  });

  it("keeps the project's own records", () => {
    expect(feedRecordOf(record(contentPk('AbCdEf-_1234'), child, 'MODIFY'))).toMatchObject({ kind: 'segment' });
  });
});
