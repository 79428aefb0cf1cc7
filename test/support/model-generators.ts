// Generators for the model-based property tests: requests (route and raw body) over random paths (integer
// segments, negative indexes, escaped dots and backslashes) and random JSON values within the documented limits,
// with now and then a malformed path or body. A few hot keys make later requests collide with earlier writes, and
// "symbolic" indexes (the length of the array met at that point, one past it, minus the length, ...) are resolved
// against the model's content when the step runs, so the boundaries of every array are hit often.
import Big from 'big.js';
import fc from 'fast-check';
import { LosslessNumber } from 'lossless-json';
import { fragmentBytes } from '../../lib/config/env';
import { type Json, type JsonObject, type Route, formatPath, integerSegment } from './model-reference';

/** An index relative to the array the path meets at that point (or the insert target), resolved when run. */
export type Sym = { sym: 'len' | 'len+1' | 'last' | '-len' | '-len-1' };
export type Segment = string | Sym;
/** A path still to be resolved: its segments, some symbolic. */
export interface SymbolicPath {
  segments: Segment[];
}

const HOT_KEYS = ['a', 'list', 'x.y', '0', 'constructor'];
const KEYS = [
  'b',
  'n',
  'm1',
  'm2',
  'w\\z',
  'a.b.c',
  '1',
  '2',
  '-1',
  '-2',
  '007',
  '-0',
  '1e3',
  'prototype',
  'é',
  'sp ace',
  'ключ',
];
/**
 * Every member name of `Object.prototype` (`constructor`, `toString`, `valueOf`, `hasOwnProperty`, `__defineGetter__`,
 * ...): plain keys to DynamoDB, but found on every object by code that resolves keys with `obj[key]` or `key in obj`.
 * `__proto__` is left to the malformed paths (a 400).
 */
export const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).filter((k) => k !== '__proto__');
export const key = fc.oneof(
  { weight: 16, arbitrary: fc.constantFrom(...HOT_KEYS) },
  { weight: 8, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 6, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
  {
    weight: 1,
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).filter((k) => k !== '__proto__'),
  },
);
const sym: fc.Arbitrary<Sym> = fc
  .constantFrom<Sym['sym']>('len', 'len+1', 'last', '-len', '-len-1')
  .map((s) => ({ sym: s }));
const indexSegment: fc.Arbitrary<Segment> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('0', '1', '2', '-1', '-2', '7') },
  { weight: 3, arbitrary: sym },
);
const segments = fc
  .tuple(key, fc.array(fc.oneof(key, indexSegment), { maxLength: 3, size: 'xsmall' }))
  .map(([head, tail]): Segment[] => [head, ...tail]);
/** Paths into a few hot places, mostly through array indexes: they hit what earlier requests created. */
const hotSegments = fc
  .tuple(
    fc.constantFrom(...HOT_KEYS),
    fc.array(fc.oneof({ weight: 3, arbitrary: indexSegment }, { weight: 1, arbitrary: fc.constantFrom(...HOT_KEYS) }), {
      maxLength: 2,
    }),
  )
  .map(([head, tail]): Segment[] => [head, ...tail]);
/**
 * Paths into the levels of `layeredContent`: members of the bucketed object in a bucket of another (`a.0.m1`, a new
 * `a.0.y2`), of the one in it (`a.0.constructor.m3`), of the outer one (`a.m2.c`), elements of the chunked arrays.
 */
const layeredSegments = fc
  .tuple(
    fc.constantFrom<Segment[]>(['a', '0'], ['a', '0', 'constructor'], ['a'], ['a', 'list'], ['list'], ['a', '0', 'm1']),
    fc.oneof(
      fc.integer({ min: 0, max: 5 }).map((i) => `m${i}`),
      fc.integer({ min: 0, max: 3 }).map((i) => `y${i}`),
      indexSegment,
      fc.constantFrom('b', 'n', 'c'),
    ),
    fc.array(fc.oneof(fc.constantFrom('b', 'n', 'c'), indexSegment), { maxLength: 1 }),
  )
  .map(([head, member, tail]): Segment[] => [...head, member, ...tail]);
/** Mostly well-formed paths, sometimes malformed ones (sent as they are). */
export const path: fc.Arbitrary<SymbolicPath | string> = fc.oneof(
  { weight: 12, arbitrary: hotSegments.map((s) => ({ segments: s })) },
  { weight: 6, arbitrary: layeredSegments.map((s) => ({ segments: s })) },
  { weight: 8, arbitrary: segments.map((s) => ({ segments: s })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'a..b',
      '.a',
      'a.',
      'a\\q',
      'a\\',
      'a\\n',
      '__proto__',
      'list.__proto__',
      Array.from({ length: 32 }, () => 'd').join('.'),
    ),
  },
);

/**
 * A decimal as JSON text: `digits` (a significand) times 10^exponent, written plainly (a big integer, a long
 * fraction, trailing zeros) or with an exponent. Sent as a LosslessNumber, so the body carries these very digits.
 */
function decimalText(negative: boolean, digits: string, exponent: number, plain: boolean): LosslessNumber {
  const sign = negative ? '-' : '';
  if (!plain) return new LosslessNumber(`${sign}${digits}e${exponent}`);
  if (exponent >= 0) return new LosslessNumber(`${sign}${digits}${'0'.repeat(exponent)}`);
  const point = digits.length + exponent;
  const text = point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`;
  return new LosslessNumber(`${sign}${text}`);
}
/** Significands of 1 to `max` digits, first digit non-zero; long ones (past a double's 17) often. */
const significand = (max: number) =>
  fc.oneof(
    fc.stringMatching(new RegExp(`^[1-9][0-9]{0,${Math.min(max, 17) - 1}}$`)),
    fc.stringMatching(new RegExp(`^[1-9][0-9]{15,${max - 1}}$`)),
  );
/** Decimals DynamoDB stores: up to 38 significant digits, magnitudes across 1e-130 to below 1e126. */
export const decimal: fc.Arbitrary<LosslessNumber> = fc
  .tuple(fc.boolean(), significand(38), fc.boolean(), fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([negative, digits, plain, where]) => {
    // digits × 10^e is below 1e126 for e <= 126 - k and at least 1e-130 for e >= -129 - k (k digits).
    const k = digits.length;
    const exponent = Math.round(-129 - k + where * 255);
    return decimalText(negative, digits, exponent, plain && Math.abs(exponent) <= 40);
  });
/** Numbers DynamoDB refuses: 39 to 45 significant digits, or a magnitude beyond the range (1e-400 is not 0). */
export const unstorableDecimal: fc.Arbitrary<LosslessNumber> = fc
  .oneof(
    fc
      .tuple(
        fc.boolean(),
        fc.stringMatching(/^[1-9][0-9]{37,43}[1-9]$/),
        fc.integer({ min: -60, max: 40 }),
        fc.boolean(),
      )
      .map(([n, d, e, plain]) => decimalText(n, d, e, plain)),
    fc
      .tuple(
        fc.boolean(),
        significand(38),
        fc.oneof(fc.integer({ min: 126, max: 400 }), fc.integer({ min: -500, max: -170 })),
      )
      .map(([n, d, e]) => decimalText(n, d, e, false)),
  )
  .filter((n) => {
    const d = new Big(n.value);
    return d.c.length > 38 || d.abs().gte('1e126') || d.abs().lt('1e-130');
  });

export const scalar: fc.Arbitrary<Json> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 2, arbitrary: decimal },
  { weight: 1, arbitrary: fc.constantFrom(0.5, -2.25, 3.14159, 1e15, -7e14, 0) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('x.y', 'a\\b', '0', '{"json":1}', '\u00e9\u4e2d') },
);
export const { value } = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    { weight: 3, arbitrary: scalar },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.dictionary(key, tie('value'), { maxKeys: 3 }) as fc.Arbitrary<Json> },
  ),
}));
export const object = fc.dictionary(key, value, { maxKeys: 4 }) as fc.Arbitrary<JsonObject>;
/** Content with arrays (of scalars, arrays and objects) at the hot keys, for runs to start from. */
export const initialContent = fc.record(
  {
    list: fc.array(value, { maxLength: 5 }),
    a: fc.oneof(
      fc.array(scalar, { maxLength: 4 }),
      fc.record({ list: fc.array(value, { maxLength: 4 }), '0': value }, { requiredKeys: [] }),
    ),
    'x.y': fc.array(fc.array(scalar, { maxLength: 3 }), { maxLength: 3 }),
    '0': fc.oneof(fc.array(fc.record({ list: fc.array(scalar, { maxLength: 3 }) }), { maxLength: 3 }), value),
    constructor: fc.oneof(fc.record({ list: fc.array(scalar, { maxLength: 3 }) }), value),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<JsonObject>;
/**
 * Contents that bucket and chunk at any segment size (scaled to SEGMENT_FRAGMENT_BYTES): at `a` a bucketed object that
 * holds, in its buckets, strings larger than a segment, another bucketed object (`0`, itself holding one more at
 * `constructor`) and a chunked array of objects (`list`); at `list` a chunked array whose elements hold objects. Hot
 * keys and `m1`, `m2` are among their members, so random paths run through each level.
 */
export const layeredContent: fc.Arbitrary<JsonObject> = fc
  .record({
    fill: fc.integer({ min: 0, max: 3 }),
    whole: fc.integer({ min: 0, max: 3 }),
    leaf: scalar,
    tail: fc.array(value, { maxLength: 3 }),
  })
  .map(({ fill, whole, leaf, tail }) => {
    // About 60 values of a 30th of a segment each in every object and array: twice what a segment holds, whatever
    // its size, so each is bucketed or chunked with as few values (and containers to read back) at any size.
    const n = 60;
    const text = (i: number) => `${i}`.padEnd(Math.ceil(fragmentBytes() / 30), 'x');
    const of = (i: number): Json => (i % 7 === 1 ? { n: i, b: leaf } : i % 7 === 3 ? i : text(i));
    const members = (count: number): JsonObject =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`m${i}`, of(i)]));
    const inner = { ...members(n), constructor: members(n), b: leaf };
    // And up to three strings larger than a segment: values that stay whole, each needing a bucket of its own.
    const large = Object.fromEntries(
      Array.from({ length: whole }, (_, i) => [`w${i}`, `w${i}`.padEnd(Math.ceil(fragmentBytes() * 1.5), 'w')]),
    );
    const outer = {
      ...members(n + fill),
      ...large,
      '0': inner,
      list: [...Array.from({ length: n }, (_, i) => of(i)), ...tail],
    };
    return { a: outer, list: Array.from({ length: n }, (_, i) => (i % 7 === 1 ? { b: { n: i } } : of(i))), n: 0 };
  });
/** Exact amounts that keep sums within 38 digits often: 20-digit integers, short fractions, small exponents. */
const exactAmount = fc.oneof(
  fc.stringMatching(/^[1-9][0-9]{15,19}$/).map((d) => new LosslessNumber(d)),
  fc
    .tuple(fc.boolean(), significand(20), fc.integer({ min: -20, max: 5 }), fc.boolean())
    .map(([n, d, e, plain]) => decimalText(n, d, e, plain)),
);
const amount = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 50 }) },
  { weight: 2, arbitrary: exactAmount },
  { weight: 1, arbitrary: decimal },
  { weight: 1, arbitrary: unstorableDecimal },
  { weight: 1, arbitrary: fc.integer({ min: -50, max: 0 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('2', null, true, [1], 1e300, 1e-200, 0.5) },
);
const index: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -4, max: 4 }) },
  { weight: 4, arbitrary: sym },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(0.5, '1', null, 1e20, -9) },
);

export type Body = Record<string, unknown>;
/** One request: the route and its raw body (paths and indexes maybe symbolic). */
export const requests: Array<fc.Arbitrary<[Route, Body]>> = [
  fc.record({ path, value }).map((b) => ['set', b]),
  fc.record({ path, value }).map((b) => ['push', b]),
  fc.record({ path, value, index }).map((b) => ['insert', b]),
  fc.record({ path, value: amount }, { requiredKeys: ['path'] }).map((b) => ['increment', b]),
  fc.record({ path, value: amount }, { requiredKeys: ['path'] }).map((b) => ['decrement', b]),
  fc.record({ path }).map((b) => ['delete', b]),
  fc.record({ path }, { requiredKeys: [] }).map((b) => ['get', b]),
];
/** Whole-content updates, and bodies with a field missing, an unknown field or a bad value. */
export const rare: Array<fc.Arbitrary<[Route, Body]>> = [
  object.map((content) => ['update', { content }]),
  initialContent.map((content) => ['update', { content }]),
  layeredContent.map((content) => ['update', { content }]),
  fc
    .tuple(fc.constantFrom('set', 'push', 'insert'), unstorableDecimal, fc.boolean())
    .map(([route, n, nested]): [Route, Body] => [
      route as Route,
      { path: 'a', value: nested ? { k: [1, n] } : n, ...(route === 'insert' ? { index: 0 } : {}) },
    ]),
  unstorableDecimal.map((n): [Route, Body] => ['update', { content: { a: [n] } }]),
  fc.constantFrom<[Route, Body]>(
    ['update', { content: [1] }],
    ['update', { content: 'x' }],
    ['set', { path: 'a' }],
    ['push', { path: 'list' }],
    ['insert', { path: 'list', value: 1 }],
    ['set', { path: 'a', value: 1, extra: true }],
    ['delete', { path: 'a', value: 1 }],
    ['set', { path: 7, value: 1 }],
    ['set', { path: 'a', value: { '': 1 } }],
    ['set', { path: 'a', value: 1e300 }],
    ['increment', { path: 'a', value: 1e200 }],
  ),
];

/** All requests, the ordinary ones three times as likely as the rare ones. */
export const anyRequest: Array<fc.Arbitrary<[Route, Body]>> = [...requests, ...requests, ...requests, ...rare];

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const isSym = (v: unknown): v is Sym => isObject(v) && typeof v.sym === 'string' && Object.keys(v).length === 1;

function symbolValue(s: Sym, length: number): number {
  switch (s.sym) {
    case 'len':
      return length;
    case 'len+1':
      return length + 1;
    case 'last':
      return length === 0 ? -1 : length - 1;
    case '-len':
      return length === 0 ? 0 : -length;
    case '-len-1':
      return -length - 1;
  }
}

/** Follows the segments through `content` as far as they go, turning symbolic ones into integers. */
function resolveSegments(segments: Segment[], content: JsonObject): { segments: string[]; target: Json | undefined } {
  const out: string[] = [];
  let node: Json | undefined = content;
  for (const s of segments) {
    let segment: string;
    if (typeof s === 'string') segment = s;
    else segment = String(symbolValue(s, Array.isArray(node) ? node.length : 0));
    out.push(segment);
    if (Array.isArray(node)) {
      const i = integerSegment(segment);
      node = i === undefined ? undefined : node[i < 0 ? node.length + i : i];
    } else if (isObject(node)) {
      node = Object.hasOwn(node, segment) ? node[segment] : undefined;
    } else {
      node = undefined;
    }
  }
  return { segments: out, target: node };
}

/** The body as it is sent: symbolic paths and indexes resolved against the model's content. */
export function resolveBody(body: Body, content: JsonObject): Body {
  const out: Body = { ...body };
  let target: Json | undefined;
  if (isObject(body.path) && Array.isArray((body.path as unknown as SymbolicPath).segments)) {
    const resolved = resolveSegments((body.path as unknown as SymbolicPath).segments, content);
    out.path = formatPath(resolved.segments);
    target = resolved.target;
  }
  if (isSym(body.index)) out.index = symbolValue(body.index, Array.isArray(target) ? target.length : 0);
  return out;
}

/** A body for reports: symbolic segments and indexes shown as `{len}`, `{-len-1}`, ... */
export function describeBody(body: Body): string {
  const show = (v: unknown): unknown => {
    if (isSym(v)) return `{${v.sym}}`;
    if (isObject(v) && Array.isArray((v as unknown as SymbolicPath).segments)) {
      return (v as unknown as SymbolicPath).segments
        .map((s) => (typeof s === 'string' ? formatPath([s]) : `{${s.sym}}`))
        .join('.');
    }
    return v;
  };
  return JSON.stringify(Object.fromEntries(Object.entries(body).map(([k, v]) => [k, show(v)])));
}

/** In a batch's test: the value at the path when its turn comes (a test that holds), resolved like a symbolic path. */
export class CurrentValue {
  toJSON(): string {
    return '{current}';
  }
}

/** A batch operation: a request of a mutation route plus `op`, or a test of a value, the current value or existence. */
const batchOperation: fc.Arbitrary<Body> = fc.oneof(
  ...requests
    .slice(0, 6)
    .map((r) => ({ weight: 2, arbitrary: r.map(([route, body]): Body => ({ op: route, ...body })) })),
  // Values set at a fresh key and tests of what is there succeed, so that most batches get past their first steps.
  {
    weight: 3,
    arbitrary: fc.record({ k: key, value }).map(({ k, value: v }): Body => ({ op: 'set', path: k, value: v })),
  },
  { weight: 3, arbitrary: path.map((p): Body => ({ op: 'test', path: p, value: new CurrentValue() })) },
  { weight: 1, arbitrary: fc.record({ path, value }).map((b): Body => ({ op: 'test', ...b })) },
  { weight: 1, arbitrary: fc.record({ path, exists: fc.boolean() }).map((b): Body => ({ op: 'test', ...b })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Body>(
      { op: 'set', path: 'a' },
      { op: 'push', path: 'list', value: 1, extra: true },
      { op: 'increment', path: 'a', value: 1e200 },
      { op: 'test', path: 'a' },
      { op: 'update', content: {} },
    ),
  },
);

/** A batch of 1 to 6 operations (symbolic paths resolved one by one, each on the content the ones before it left). */
export const batchRequest: fc.Arbitrary<Body[]> = fc.array(batchOperation, { minLength: 1, maxLength: 6 });

/**
 * A batch through the levels of `layeredContent`: operations on members of nested bucketed objects and elements of
 * chunked arrays, beside one elsewhere (so that it is planned from a segment above them all).
 */
export const layeredBatchRequest: fc.Arbitrary<Body[]> = fc
  .tuple(
    fc.array(
      fc.oneof(
        fc.record({ path: layeredSegments, value }).map((b): Body => ({ op: 'set', ...b, path: { segments: b.path } })),
        layeredSegments.map((s): Body => ({ op: 'increment', path: { segments: s } })),
        layeredSegments.map((s): Body => ({ op: 'delete', path: { segments: s } })),
        layeredSegments.map((s): Body => ({ op: 'test', path: { segments: s }, value: new CurrentValue() })),
        fc
          .record({ path: layeredSegments, value })
          .map((b): Body => ({ op: 'push', ...b, path: { segments: b.path } })),
      ),
      { minLength: 1, maxLength: 4 },
    ),
    fc.constantFrom<Body>(
      { op: 'increment', path: 'n' },
      { op: 'set', path: 'b', value: null },
      { op: 'push', path: 'list', value: 1 },
      { op: 'increment', path: 'a.m3' },
    ),
    fc.boolean(),
  )
  .map(([ops, other, first]) => (first ? [other, ...ops] : [...ops, other]));
