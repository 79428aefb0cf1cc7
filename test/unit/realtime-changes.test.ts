import fc from 'fast-check';
import { ROOT_KEY, chunkStubKey, isBucketKey, isChunkKey, parentKey } from '../../lib/storage/layout/keys';
import { assemble, fragmentsOf } from '../../lib/storage/layout/stubs';
import { chunkStubOf } from '../../lib/storage/layout/chunked';
import { cut } from '../../lib/storage/layout/cut';
import { type Json, type JsonObject, LosslessNumber, Stub, cloneJson, jsonEquals } from '../../lib/content/json';
import {
  type Change,
  commitChanges,
  diffValues,
  stubPaths,
  toWire,
  trimTo,
  valueBelow,
} from '../../lib/storage/feed/changes';
import { asIndex } from '../../lib/paths';

/** Applies changes in order to a copy of `root` the way a client would (set at path, delete at path). */
function apply(root: Json, changes: readonly Change[]): Json {
  const holder: JsonObject = { r: cloneJson(root) };
  for (const change of changes) {
    const path = ['r', ...change.path];
    let node: Json = holder;
    for (const step of path.slice(0, -1))
      node = Array.isArray(node) ? (node[Number(step)] as Json) : ((node as JsonObject)[step] as Json);
    const last = path[path.length - 1] as string;
    if (Array.isArray(node)) {
      const i = asIndex(last) as number;
      if ('value' in change) node[i] = cloneJson(change.value);
      else node.splice(i, 1);
    } else if ('value' in change) (node as JsonObject)[last] = cloneJson(change.value);
    else delete (node as JsonObject)[last];
  }
  return holder.r as Json;
}

const keys = fc.constantFrom('a', 'b', 'c', 'items', 'x.y', '0', 'long');
const leaf = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.string({ maxLength: 40 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant('y'.repeat(120)),
);
const value: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('v'), { maxLength: 5 }),
    fc.dictionary(keys, tie('v'), { maxKeys: 5 }),
  ),
})).v;
const content = fc.dictionary(keys, value, { maxKeys: 6 }) as fc.Arbitrary<JsonObject>;

let n = 0;
const newId = () => String(n++).padStart(8, '0');

/** Changes as sent (without the replaced value the diff keeps for trimming). */
const bare = (changes: Change[]) => changes.map(({ was: _, ...c }) => c);

describe('diffValues', () => {
  test.each<[string, Json, Json, Change[]]>([
    ['an unchanged value: nothing', { a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }, []],
    ['a changed member', { a: 1, b: 2 }, { a: 1, b: 3 }, [{ path: ['b'], value: 3 }]],
    ['a removed member', { a: 1, b: 2 }, { a: 1 }, [{ path: ['b'], deleted: true }]],
    ['a new nested member', { a: {} }, { a: { b: { c: 1 } } }, [{ path: ['a', 'b'], value: { c: 1 } }]],
    ['a pushed element: the tail', { l: [1, 2] }, { l: [1, 2, 3] }, [{ path: ['l', '2'], value: 3 }]],
    ['an element replaced in place', { l: [1, 2, 3] }, { l: [1, 9, 3] }, [{ path: ['l', '1'], value: 9 }]],
    ['an insert at 0 shifts: the whole array', { l: [1, 2] }, { l: [0, 1, 2] }, [{ path: ['l'], value: [0, 1, 2] }]],
    ['a delete shifts: the whole array', { l: [1, 2, 3] }, { l: [2, 3] }, [{ path: ['l'], value: [2, 3] }]],
    [
      'a removed tail: deleted from its end',
      { l: [1, 2, 3] },
      { l: [1] },
      [
        { path: ['l', '2'], deleted: true },
        { path: ['l', '1'], deleted: true },
      ],
    ],
    [
      'a delete near the end: the shifted element, then the last one off',
      { l: [1, 2, 3, 4] },
      { l: [1, 2, 4] },
      [
        { path: ['l', '2'], value: 4 },
        { path: ['l', '3'], deleted: true },
      ],
    ],
    ['a type change', { a: { b: 1 } }, { a: [1] }, [{ path: ['a'], value: [1] }]],
    [
      'exact decimals compared by value',
      { n: new LosslessNumber('12345678901234567890') },
      { n: new LosslessNumber('12345678901234567890') },
      [],
    ],
    ['1.0 equals 1', { n: 1 }, { n: new LosslessNumber('1.0') }, []],
  ])('%s', (_, before, after, expected) => {
    expect(bare(diffValues(before, after, []))).toEqual(expected);
  });

  test('a stub naming the same segment is unchanged; a new stub is a change', () => {
    expect(diffValues({ a: new Stub('/k/') }, { a: new Stub('/k/') }, [])).toEqual([]);
    const changes = diffValues({ a: new Stub('/k/') }, { a: new Stub('/m/') }, []);
    expect(changes).toHaveLength(1);
    expect(changes[0]?.path).toEqual(['a']);
  });

  test('the base path prefixes every change', () => {
    expect(bare(diffValues({ x: 1 }, { x: 2, y: 3 }, ['data', 'item']))).toEqual([
      { path: ['data', 'item', 'x'], value: 2 },
      { path: ['data', 'item', 'y'], value: 3 },
    ]);
  });

  test('property: applying the changes to the old value gives the new one', () => {
    fc.assert(
      fc.property(content, content, (before, after) => {
        expect(jsonEquals(apply(before, diffValues(before, after, [])), after)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('commitChanges over segments (256-byte segments: every content is multi-segment)', () => {
  const pieces = (value: Json) => cut(ROOT_KEY, value, { limit: 256, target: 128, newId });
  const fragments = (ps: { key: string; fragment: Json }[]) => new Map(ps.map((p) => [p.key, p.fragment]));
  /** A lookup as the consumer's: chunk and bucket stubs by all their segments, the root left out. */
  const lookup = (ps: { key: string; fragment: Json }[]) => fragmentsOf(ps.filter((p) => p.key !== ROOT_KEY));

  test('a segment the new fragment still names is unchanged, though a later commit of the batch removed it', () => {
    const later = (key: string) => (key === '/n0000000/' ? ({ inner: 1 } as Json) : undefined);
    const changes = commitChanges({
      base: [],
      before: { nested: new Stub('/n0000000/') },
      after: { nested: new Stub('/n0000000/'), fresh: 1 },
      removed: later,
      written: () => undefined,
    });
    expect(bare(changes)).toEqual([{ path: ['fresh'], value: 1 }]);
  });

  test('property: a rewrite from the root (the old segments removed, new ones written) diffs to the new content', () => {
    fc.assert(
      fc.property(content, content, (before, after) => {
        const old = pieces(before);
        const neu = pieces(after);
        const changes = commitChanges({
          base: [],
          before: fragments(old).get(ROOT_KEY),
          after: fragments(neu).get(ROOT_KEY),
          removed: lookup(old),
          written: lookup(neu),
        });
        for (const c of changes) if ('value' in c) expect(JSON.stringify(c.value)).not.toContain('Stub');
        expect(jsonEquals(apply(before, changes), after)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  test("property: a change inside any child segment is reported at that segment's absolute path", () => {
    fc.assert(
      fc.property(
        content,
        value,
        fc.string({ minLength: 1, maxLength: 6 }),
        fc.nat(),
        (before, added, member, pick) => {
          // Segments of plain objects and arrays (the consumer renumbers chunks and chunked arrays itself: the
          // realtime integration suite covers those at 256-byte segments).
          const ps = pieces(before);
          const plain = ps.filter(
            (p) =>
              p.key !== ROOT_KEY &&
              !isChunkKey(p.key) &&
              !isBucketKey(p.key) &&
              !chunkStubOf(p.fragment) &&
              !(p.fragment instanceof Stub) &&
              ps.every((q) => !(q.fragment instanceof Stub && p.key.startsWith(q.fragment.key))),
          );
          if (plain.length === 0) return;
          const byKey = fragments(ps);
          const child = plain[pick % plain.length] as { key: string; fragment: Json };
          // The child's absolute path: where each ancestor holds the stub of the next.
          const pathOf = (key: string): string[] => {
            const up = parentKey(key);
            if (up === undefined) return [];
            return [...pathOf(up), ...(stubPaths(byKey.get(up) as Json).get(key) as string[])];
          };
          const base = pathOf(child.key);
          const newFragment: Json = Array.isArray(child.fragment)
            ? [...child.fragment, added]
            : { ...(child.fragment as JsonObject), [member]: added };
          const changes = commitChanges({
            base,
            before: child.fragment,
            after: newFragment,
            removed: () => undefined,
            written: () => undefined,
          });
          // Stubs left in values name segments the commit did not change: the client holds them already.
          const full = (v: Json) => assemble(v, lookup(ps));
          const expected = apply(before, [{ path: base, value: full(newFragment) }]);
          const got = apply(
            before,
            changes.map((c) => ('value' in c ? { ...c, value: full(c.value) } : c)),
          );
          expect(jsonEquals(got, expected)).toBe(true);
          for (const c of changes) expect(c.path.slice(0, base.length)).toEqual(base);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a member moved into a new child segment by a cut reports only what changed in it', () => {
    const before = { a: { text: 'x'.repeat(200), n: 1 }, b: 'y'.repeat(60) };
    const after = { a: { text: 'x'.repeat(200), n: 2 }, b: 'y'.repeat(60) };
    const newPieces = pieces(after);
    expect(newPieces.length).toBeGreaterThan(1);
    const neu = fragments(newPieces);
    const changes = commitChanges({
      base: [],
      before,
      after: neu.get(ROOT_KEY),
      removed: () => undefined,
      written: (k) => neu.get(k),
    });
    expect(bare(changes)).toEqual([{ path: ['a', 'n'], value: 2 }]);
  });
});

describe('trimTo', () => {
  const changes: Change[] = [
    { path: ['data', 'items', '3'], value: { id: 3 } },
    { path: ['data', 'title'], value: 'T' },
    { path: ['other'], deleted: true },
  ];
  test.each<[string, string[], Change[]]>([
    ['the whole content: everything', [], changes],
    ['a path above the changes: those below it', ['data'], changes.slice(0, 2)],
    ['a path with nothing changed: nothing', ['data', 'missing'], []],
    [
      'a path below a change: the new value there',
      ['data', 'items', '3', 'id'],
      [{ path: ['data', 'items', '3', 'id'], value: 3 }],
    ],
    [
      'a path below a change that lacks it: deleted',
      ['data', 'items', '3', 'name'],
      [{ path: ['data', 'items', '3', 'name'], deleted: true }],
    ],
    ['a path below a deletion: deleted', ['other', 'x'], [{ path: ['other', 'x'], deleted: true }]],
  ])('%s', (_, path, expected) => {
    expect(bare(trimTo(changes, path))).toEqual(expected);
  });

  test('a change above the path whose replaced value is known: only what changed at the path', () => {
    const replaced: Change[] = [{ path: ['data'], value: { a: { x: 1, y: 2 }, b: 1 }, was: { a: { x: 1 } } }];
    expect(bare(trimTo(replaced, ['data', 'a']))).toEqual([{ path: ['data', 'a', 'y'], value: 2 }]);
    expect(bare(trimTo(replaced, ['data', 'c']))).toEqual([]);
    const created: Change[] = [{ path: ['data'], value: { b: 1 } }];
    expect(bare(trimTo(created, ['data', 'a']))).toEqual([{ path: ['data', 'a'], deleted: true }]);
    expect(bare(diffValues(undefined, { b: 1 }, ['data']))).toEqual(created);
    expect(bare(trimTo(diffValues(undefined, { b: 1 }, ['data']), ['data', 'a']))).toEqual([]);
  });

  test('a whole array replaced, seen from an element', () => {
    expect(trimTo([{ path: ['l'], value: [0, 1, 2] }], ['l', '1'])).toEqual([{ path: ['l', '1'], value: 1 }]);
    expect(trimTo([{ path: ['l'], value: [0] }], ['l', '1'])).toEqual([{ path: ['l', '1'], deleted: true }]);
    // With the array it replaced: only an element that changed.
    expect(bare(trimTo(diffValues([1, 2], [0, 1, 2], ['l']), ['l', '1']))).toEqual([{ path: ['l', '1'], value: 1 }]);
    expect(bare(trimTo(diffValues([1, 2, 3], [0, 2, 3], ['l']), ['l', '1']))).toEqual([]);
  });

  const pathOf = fc.array(keys, { minLength: 1, maxLength: 3 });
  /** `changes` (from `before` to `after`) trimmed to `path` and applied to the old value there give the new one. */
  const expectTrimmedToApply = (changes: Change[], before: JsonObject, after: JsonObject, path: string[]) => {
    const holder = (v: Json | undefined): JsonObject => (v === undefined ? {} : { v });
    // Rebase the trimmed changes onto a holder of the value at the path.
    const rebased = trimTo(changes, path).map((c) => ({ ...c, path: ['v', ...c.path.slice(path.length)] }));
    expect(jsonEquals(apply(holder(valueBelow(before, path)), rebased), holder(valueBelow(after, path)))).toBe(true);
  };

  test('property: trimmed changes applied to the old value at the path give the new value at the path', () => {
    fc.assert(
      fc.property(content, content, pathOf, (before, after, path) => {
        expectTrimmedToApply(diffValues(before, after, []), before, after, path);
      }),
      { numRuns: 500 },
    );
  });

  test('property: the same, when parts of the replaced values are still stubs (segments whose records come later)', () => {
    /**
     * `value` with the nodes whose pre-order position is a set bit of `mask` (mod 31) left as stubs, and some arrays
     * as a chunked array's fragment (its first element's chunk stub first).
     */
    const hide = (value: Json, mask: number): Json => {
      let position = 0;
      const bit = (at: number) => (mask >>> (at % 31)) & 1;
      const walk = (node: Json): Json => {
        if (bit(position++)) return new Stub(`s${position}`);
        if (Array.isArray(node) && node.length > 0 && bit(position + 7))
          return [new Stub(chunkStubKey(`/c${position}~`, 1)), ...node.slice(1).map(walk)];
        if (Array.isArray(node)) return node.map(walk);
        if (node !== null && typeof node === 'object' && !(node instanceof LosslessNumber))
          return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v as Json)]));
        return node;
      };
      return walk(value);
    };
    fc.assert(
      fc.property(content, content, pathOf, fc.integer(), (before, after, path, mask) => {
        const hidden = diffValues(before, after, []).map((c) =>
          c.was === undefined ? c : ({ ...c, was: hide(c.was, mask) } as Change),
        );
        expectTrimmedToApply(hidden, before, after, path);
      }),
      { numRuns: 1000 },
    );
  });

  test('a change above the path whose replaced value holds a stub above it: the new value there, or deleted', () => {
    const removed: Change[] = [{ path: ['a'], deleted: true, was: { list: new Stub('/k/'), n: 1 } }];
    expect(bare(trimTo(removed, ['a', 'list', '0']))).toEqual([{ path: ['a', 'list', '0'], deleted: true }]);
    expect(bare(trimTo(removed, ['a', 'n']))).toEqual([{ path: ['a', 'n'], deleted: true }]);
    expect(bare(trimTo(removed, ['a', 'm']))).toEqual([]);
    const replaced: Change[] = [{ path: ['a'], value: { list: [1] }, was: new Stub('/k/') }];
    expect(bare(trimTo(replaced, ['a', 'list']))).toEqual([{ path: ['a', 'list'], value: [1] }]);
    expect(bare(trimTo(replaced, ['a', 'm']))).toEqual([{ path: ['a', 'm'], deleted: true }]);
    // A chunked array's fragment: its newest elements at the wrong indexes, its chunks a stub.
    const chunked: Change[] = [
      { path: ['a'], value: { list: [7] }, was: { list: [new Stub(chunkStubKey('/k/c~', 2)), 3] } },
    ];
    expect(bare(trimTo(chunked, ['a', 'list', '0']))).toEqual([{ path: ['a', 'list', '0'], value: 7 }]);
    expect(bare(trimTo(chunked, ['a', 'list', '1']))).toEqual([{ path: ['a', 'list', '1'], deleted: true }]);
  });
});

describe('keys and wire form', () => {
  test('parentKey strips the last birth id; the root has none', () => {
    expect(parentKey('/')).toBeUndefined();
    expect(parentKey('/abcdefgh/')).toBe('/');
    expect(parentKey('/abcdefgh/ijklmnop/')).toBe('/abcdefgh/');
  });
  test('stubPaths finds stubs under objects', () => {
    expect([...stubPaths({ a: { b: new Stub('/k/') }, c: new Stub('/m/') })]).toEqual([
      ['/k/', ['a', 'b']],
      ['/m/', ['c']],
    ]);
  });
  test('toWire formats paths with escapes', () => {
    expect(toWire({ path: ['files', 'readme.md'], value: 1 })).toEqual({ path: 'files.readme\\.md', value: 1 });
    expect(toWire({ path: ['a'], deleted: true })).toEqual({ path: 'a', deleted: true });
  });
});
