// Pages of an object's keys (pure): the cursor's round trip and its validation, and pages of an object held whole.
import fc from 'fast-check';
import { MAX_KEY_LENGTH } from '../../lib/config/limits';
import {
  type KeyCursor,
  decodeCursor,
  encodeCursor,
  layoutOf,
  orderOfObject,
  pageOfObject,
  pageOfValue,
} from '../../lib/content/key-pages';

const bucketPath = fc
  .tuple(
    fc.nat(1 << 20),
    fc.array(fc.tuple(fc.stringMatching(/^[A-Za-z0-9_-]{8}$/), fc.integer({ min: 1, max: 1 << 20 }), fc.nat(1 << 20)), {
      maxLength: 4,
    }),
  )
  .map(([r, cuts]) => `/${r}/${cuts.map(([id, f, q]) => `${id}#${f}/${q}/`).join('')}`);
const key = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' });

describe('the cursor', () => {
  it('decodes to what was encoded: an object held whole, and a bucket with or without its last key', () => {
    const cursors: fc.Arbitrary<KeyCursor> = fc.oneof(
      key.map((k) => ({ layout: '', key: k })),
      fc
        .tuple(fc.string(), bucketPath, fc.option(key, { nil: undefined }))
        .map(([stub, bucket, k]) => ({ layout: layoutOf(stub), bucket, ...(k === undefined ? {} : { key: k }) })),
    );
    fc.assert(
      fc.property(cursors, (cursor) => {
        const text = encodeCursor(cursor);
        expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(decodeCursor(text)).toEqual(cursor);
      }),
    );
  });

  it('anything else is a 400 INVALID_CURSOR, never a read elsewhere', () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const bad = [
      '',
      'a+b',
      '!',
      b64('x'),
      b64(null),
      b64([]),
      b64({ l: '' }),
      b64({ l: '', k: '' }),
      b64({ l: '', k: 'x'.repeat(MAX_KEY_LENGTH + 1) }),
      b64({ l: 'short', k: 'a' }),
      b64({ l: layoutOf('s'), k: 'a' }),
      b64({ l: layoutOf('s'), b: '/01/', k: 'a' }),
      b64({ l: layoutOf('s'), b: '/1/../', k: 'a' }),
      b64({ l: layoutOf('s'), b: '/1/abc#4/0/', k: 'a' }),
      b64({ l: '', b: '/1/', k: 'a' }),
      b64({ l: '', k: 'a', extra: 1 }),
    ];
    for (const after of bad) {
      expect(() => decodeCursor(after)).toThrow(expect.objectContaining({ code: 'INVALID_CURSOR' }));
    }
  });
});

describe('pageOfObject', () => {
  it('pages of any size give every key once, in UTF-16 code unit order, and end with next null', () => {
    fc.assert(
      fc.property(fc.uniqueArray(key, { maxLength: 60 }), fc.integer({ min: 1, max: 70 }), (keys, limit) => {
        const given: string[] = [];
        let after: KeyCursor | undefined;
        for (let pages = 0; ; pages++) {
          const page = pageOfObject(keys, limit, after);
          const got = Object.keys(page.value);
          expect(got.length).toBeLessThanOrEqual(limit);
          given.push(...got.sort());
          if (page.next === null) break;
          after = decodeCursor(page.next);
          expect(pages).toBeLessThan(keys.length);
        }
        expect(given).toEqual([...keys].sort());
      }),
    );
  });

  it("orders a page's keys, each with the cursor that resumes just after it (an export stopping mid-page)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(key, { minLength: 1, maxLength: 40 }), fc.nat(), (keys, pick) => {
        const order = orderOfObject(keys, keys.length, undefined);
        expect(order.map(([k]) => k)).toEqual([...keys].sort());
        const at = pick % order.length;
        const [, after] = order[at] as [string, string];
        const rest = orderOfObject(keys, keys.length, decodeCursor(after)).map(([k]) => k);
        expect(rest).toEqual(order.slice(at + 1).map(([k]) => k));
      }),
    );
  });

  it('a cursor of a bucketed layout is a 409 STALE_CURSOR; a value that is no object a 400 NOT_AN_OBJECT', () => {
    expect(() => pageOfObject(['a'], 1, { layout: layoutOf('s'), bucket: '/0/' })).toThrow(
      expect.objectContaining({ code: 'STALE_CURSOR' }),
    );
    for (const value of [[1], 'a', 3, null, true]) {
      expect(() => pageOfValue(value, { limit: 1, where: "the value at 'x'" })).toThrow(
        expect.objectContaining({ code: 'NOT_AN_OBJECT', message: expect.stringContaining("'x'") }),
      );
    }
  });
});
