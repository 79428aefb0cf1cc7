// Generators of the multi-process suite: contents shaped to span many 256-byte segments (a long array that chunks,
// a wide object that buckets, nested in another wide object, wide objects of wide objects) and requests that go
// where those shapes are (members of the inner bucketed object, old and new elements of the chunked array, values
// large enough to cut a segment), beside the property suite's own paths and values (test/support/model-generators).
import fc from 'fast-check';
import { fragmentBytes } from '../../lib/config/env';
import { LosslessNumber } from 'lossless-json';
import type { Json, JsonObject, Route } from '../support/model-reference';
import type { PatchOperation } from '../support/model-patch';
import { type Body, type Segment, type Sym, path as anyPath, value as smallValue } from '../support/model-generators';

/** The member names of the wide objects: some exist in every initial content, some are new. */
const member = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 45 }).map((i) => `y${i}`) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 5 }).map((i) => `new${i}`) },
);
const blob = fc.integer({ min: 0, max: 13 }).map((i) => `blob${i}`);
const field = fc.integer({ min: 0, max: 3 }).map((i) => `f${i}`);
const sym = (s: Sym['sym']): Sym => ({ sym: s });
const element: fc.Arbitrary<Segment> = fc.oneof(
  fc.constantFrom<Segment>('0', '1', '5', '-1', '-2', sym('last'), sym('len'), sym('-len')),
  fc.integer({ min: 0, max: 90 }).map(String),
);

/** A string long enough to cut the segment it lands in (256-byte segments), or a short one. */
export const bigString = fc
  .tuple(fc.integer({ min: 120, max: 700 }), fc.constantFrom('a', 'é', 'z'))
  .map(([n, c]) => c.repeat(n));
/** Values that make segments: a long string, a wide object, a long array; or a small value. */
export const value: fc.Arbitrary<Json> = fc.oneof(
  { weight: 5, arbitrary: smallValue },
  { weight: 2, arbitrary: bigString },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 8, max: 40 })
      .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`w${i}`, { n: i }])) as JsonObject),
  },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 60 }).map((n) => Array.from({ length: n }, (_, i) => i)) },
);

/** Paths into the shapes of `initial` (symbolic indexes resolved when run), and now and then any path. */
export const shapePath: fc.Arbitrary<{ segments: Segment[] } | string> = fc
  .oneof(
    {
      weight: 4,
      arbitrary: fc.tuple(member, fc.constantFrom([], ['n'], ['f'])).map(([m, t]) => ['c', 'obj', m, ...t]),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          blob,
          fc.oneof(
            fc.constant([]),
            field.map((f) => [f]),
          ),
        )
        .map(([b, t]) => ['c', b, ...t]),
    },
    { weight: 2, arbitrary: fc.constantFrom(['c', 'n'], ['c', 'obj'], ['c'], ['log'], ['sub', 'n', 'z']) },
    { weight: 3, arbitrary: fc.tuple(element, fc.constantFrom([], ['i'])).map(([e, t]) => ['log', e, ...t]) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: 24 }), fc.constantFrom([], ['f0'], ['f1']))
        .map(([s, t]) => ['sub', 'n', `s${s}`, ...t]),
    },
    { weight: 1, arbitrary: fc.tuple(element, element).map(([a, b]) => ['list', a, 'l', b]) },
  )
  .map((segments) => ({ segments: segments as Segment[] }));
const path = fc.oneof({ weight: 5, arbitrary: shapePath }, { weight: 1, arbitrary: anyPath });

const amount = fc.oneof(
  fc.integer({ min: -5, max: 50 }),
  fc.constantFrom<Json>(0.5, new LosslessNumber('12345678901234567890.5'), '2'),
);
const index = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(sym('len'), sym('last'), sym('-len')));

/** One request (route and raw body) into the shapes. */
export const request: fc.Arbitrary<[Route, Body]> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ path, value }).map((b): [Route, Body] => ['set', b]) },
  { weight: 2, arbitrary: fc.record({ path, value }).map((b): [Route, Body] => ['push', b]) },
  { weight: 2, arbitrary: fc.record({ path, value, index }).map((b): [Route, Body] => ['insert', b]) },
  { weight: 2, arbitrary: fc.record({ path, value: amount }).map((b): [Route, Body] => ['increment', b]) },
  { weight: 1, arbitrary: fc.record({ path, value: amount }).map((b): [Route, Body] => ['decrement', b]) },
  { weight: 2, arbitrary: fc.record({ path }).map((b): [Route, Body] => ['delete', b]) },
  { weight: 2, arbitrary: fc.record({ path }).map((b): [Route, Body] => ['get', b]) },
);

/** A batch of 1 to 5 operations into the shapes: members of the nested bucketed object beside other paths. */
export const batch: fc.Arbitrary<Body[]> = fc.array(
  fc.oneof(
    request.filter(([route]) => route !== 'get').map(([op, body]): Body => ({ op, ...body })),
    fc.record({ m: member, v: smallValue }).map(({ m, v }): Body => ({ op: 'set', path: `c.obj.${m}`, value: v })),
    fc.constant<Body>({ op: 'increment', path: 'c.n' }),
  ),
  { minLength: 1, maxLength: 5 },
);

/** A JSON Patch operation's value resolved from the content when it runs: the value at its path (a test that holds). */
export const CURRENT = { current: true } as unknown as Json;
const pointer = (...tokens: string[]) => tokens.map((t) => `/${t}`).join('');
/** A JSON Patch of 1 to 4 operations into the shapes (well-formed; some fail on the content they meet). */
export const jsonPatch: fc.Arbitrary<PatchOperation[]> = fc.array(
  fc.oneof(
    fc
      .record({ m: member, v: value })
      .map(({ m, v }): PatchOperation => ({ op: 'add', path: pointer('c', 'obj', m), value: v })),
    fc
      .record({ m: member, v: smallValue })
      .map(({ m, v }): PatchOperation => ({ op: 'replace', path: pointer('c', 'obj', m, 'n'), value: v })),
    member.map((m): PatchOperation => ({ op: 'remove', path: pointer('c', 'obj', m) })),
    fc.constantFrom<PatchOperation>(
      { op: 'test', path: '/c/n', value: CURRENT },
      { op: 'test', path: '/c/obj/y3', value: CURRENT },
      { op: 'add', path: '/log/-', value: { i: -1 } },
      { op: 'add', path: '/log/1', value: 'one' },
      { op: 'remove', path: '/log/0' },
      { op: 'replace', path: '/c/n', value: 7 },
      { op: 'add', path: '/sub/n/z', value: 1 },
    ),
    fc
      .record({ b: blob, m: member })
      .map(({ b, m }): PatchOperation => ({ op: 'move', from: pointer('c', b), path: pointer('c', 'obj', m) })),
    fc
      .record({ b: blob, s: fc.integer({ min: 0, max: 30 }) })
      .map(({ b, s }): PatchOperation => ({ op: 'copy', from: pointer('c', b), path: pointer('sub', 'n', `s${s}`) })),
  ),
  { minLength: 1, maxLength: 4 },
);

/** A merge patch into the shapes: members of the nested bucketed object added, replaced or removed, and more. */
export const mergePatch: fc.Arbitrary<JsonObject> = fc
  .record(
    {
      obj: fc.dictionary(member, fc.oneof(fc.constant(null), value, fc.record({ n: fc.integer() })), { maxKeys: 3 }),
      n: fc.integer({ min: 0, max: 99 }),
      blob: fc.tuple(blob, fc.oneof(fc.constant(null), fc.record({ f0: bigString }))),
      z: fc.oneof(fc.constant(null), smallValue),
    },
    { requiredKeys: [] },
  )
  .map(({ obj, n, blob: b, z }) => {
    const c: JsonObject = {};
    if (obj !== undefined) c.obj = obj as JsonObject;
    if (n !== undefined) c.n = n;
    if (b !== undefined) c[b[0]] = b[1] as Json;
    const patch: JsonObject = { c };
    if (z !== undefined) patch.sub = { n: { z } };
    return patch;
  });

/**
 * The initial content: `c` a wide object (bucketed) holding `obj`, a wider one (bucketed inside it), `blob`s of four
 * fields, a counter and up to two strings larger than a segment; `log` a long array (chunked); `sub.n` a wide object
 * of wide objects; `list` arrays in objects in an array.
 */
export const initial: fc.Arbitrary<JsonObject> = fc
  .record({
    members: fc.integer({ min: 20, max: 46 }),
    blobs: fc.integer({ min: 6, max: 14 }),
    log: fc.integer({ min: 20, max: 90 }),
    subs: fc.integer({ min: 4, max: 25 }),
    list: fc.array(fc.record({ l: fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 4 }) }), { maxLength: 4 }),
    whole: fc.integer({ min: 0, max: 2 }),
  })
  .map(({ members, blobs, log, subs, list, whole }) => {
    const c: JsonObject = { n: 0 };
    // Strings larger than a segment: values that stay whole, each in a bucket of its own.
    for (let w = 0; w < whole; w++) c[`w${w}`] = `w${w}`.padEnd(Math.ceil(fragmentBytes() * 1.5), 'w');
    c.obj = Object.fromEntries(Array.from({ length: members }, (_, i) => [`y${i}`, { n: i }]));
    for (let b = 0; b < blobs; b++) c[`blob${b}`] = { f0: `v${b}`, f1: b, f2: true, f3: 'xxxxxxxxxxxx' };
    const n = Object.fromEntries(
      Array.from({ length: subs }, (_, s) => [`s${s}`, { f0: s, f1: 'abcdefghijklmnop', f2: [s, s] }]),
    );
    return { c, log: Array.from({ length: log }, (_, i) => ({ i })), sub: { n }, list } as JsonObject;
  });
