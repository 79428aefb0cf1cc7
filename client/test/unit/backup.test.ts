// The backup codecs (client/src/backup.ts): a JSON text cut into pieces under random budgets and random chunk splits,
// then written back, is the same value to the last digit; the pieces obey docs/design/backup.md §1's order rules.
import fc from 'fast-check';
import { parseJson } from '../../src/json';
import { jsonToPieces, piecesToJson, pointerKey, pointerToken } from '../../src/backup';
import type { Piece } from '../../src/index';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

/** A JSON value as text parts: numbers stay the text they were generated as. */
type Json =
  | { number: string }
  | { string: string }
  | { literal: 'true' | 'false' | 'null' }
  | { array: Json[] }
  | { object: Array<[string, Json]> };

const ODD_KEYS = [
  '',
  '/',
  '~',
  '~0',
  '~1',
  'a/b~c',
  'constructor',
  'toString',
  'hasOwnProperty',
  '0',
  '10',
  '😀',
  '"',
  '\\',
  '\u0000',
  '\u2028',
  'é',
];
const key = fc
  .oneof(fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom(...ODD_KEYS))
  .filter((k) => k !== '__proto__');
const number = fc
  .stringMatching(/^-?(0|[1-9][0-9]{0,29})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?$/)
  .map((text): Json => ({ number: text }));
const leaf: fc.Arbitrary<Json> = fc.oneof(
  number,
  fc
    .oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('"', '\\', '\u0000', '/', '\u2028', '😀x'))
    .map((s): Json => ({ string: s })),
  fc.constantFrom<Json>({ literal: 'true' }, { literal: 'false' }, { literal: 'null' }),
);
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('json'), { maxLength: 8 }).map((items): Json => ({ array: items })),
    fc
      .uniqueArray(fc.tuple(key, tie('json')), { maxLength: 8, selector: ([k]) => k })
      .map((entries): Json => ({ object: entries })),
    // A long array of small values: many pieces in one open container.
    fc.array(leaf, { minLength: 50, maxLength: 300 }).map((items): Json => ({ array: items })),
  ),
}));
const document = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .uniqueArray(fc.tuple(key, json), { maxLength: 10, selector: ([k]) => k })
      .map((entries): Json => ({ object: entries })),
  },
  { weight: 1, arbitrary: json },
);

/** The text of `value`, with `space` between tokens (the same every time, or none). */
function write(value: Json, space = ''): string {
  if ('number' in value) return value.number;
  if ('string' in value) return JSON.stringify(value.string);
  if ('literal' in value) return value.literal;
  if ('array' in value) return `[${space}${value.array.map((v) => write(v, space)).join(`${space},${space}`)}${space}]`;
  return `{${space}${value.object.map(([k, v]) => `${JSON.stringify(k)}${space}:${space}${write(v, space)}`).join(`${space},${space}`)}${space}}`;
}

/** A canonical text of a parsed value: keys sorted, numbers as the text they keep (JSON.rawJSON) or print as. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (
    value !== null &&
    typeof value === 'object' &&
    !(JSON as { isRawJSON?: (v: unknown) => boolean }).isRawJSON?.(value)
  ) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The model's canonical text: what `canonical(parse(write(value)))` must be if no digit and no key was lost. */
function canonicalOf(value: Json): string {
  // A number's text is kept as written (JSON.rawJSON) unless its double prints the same: either way, this text.
  if ('number' in value) return value.number;
  if ('array' in value) return `[${value.array.map(canonicalOf).join(',')}]`;
  if ('object' in value) {
    const sorted = [...value.object].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${sorted.map(([k, v]) => `${JSON.stringify(k)}:${canonicalOf(v)}`).join(',')}}`;
  }
  return write(value);
}

/** Cuts `text` at `cuts` (positions modulo its length), as strings or as UTF-8 bytes (cut inside characters too). */
function chunks(text: string, cuts: number[], bytes: boolean): Array<string | Uint8Array> {
  const whole = bytes ? new TextEncoder().encode(text) : text;
  const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const parts: Array<string | Uint8Array> = [];
  let from = 0;
  for (const to of [...at, whole.length]) {
    parts.push(whole.slice(from, to));
    from = to;
  }
  return parts;
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;
const isOpening = (value: unknown) => typeof value === 'object' && value !== null && Object.keys(value).length === 0;

/** The order rules, checked independently of the codec: root first, each piece a member of an open container. */
function assertOrder(pieces: Piece[]): void {
  expect(pieces[0]?.path).toBe('');
  const chain: Array<{ path: string; array: boolean; next: number; keys: Set<string> }> = [];
  pieces.forEach(({ path, value }, i) => {
    if (i > 0) {
      const parent = path.slice(0, path.lastIndexOf('/'));
      while (chain.length > 0 && chain.at(-1)?.path !== parent) chain.pop();
      const open = chain.at(-1);
      expect(open).toBeDefined(); // its container was sent open, and nothing after it has closed it
      const token = path.slice(parent.length + 1);
      if (open?.array) expect(token).toBe(String(open.next++));
      else {
        expect(open?.keys.has(token)).toBe(false);
        open?.keys.add(token);
      }
    }
    if (isOpening(value)) chain.push({ path, array: Array.isArray(value), next: 0, keys: new Set() });
  });
}

/** The value at a JSON Pointer. */
const at = (root: unknown, path: string): unknown =>
  path === ''
    ? root
    : path
        .slice(1)
        .split('/')
        .reduce<unknown>((v, token) => (v as Record<string, unknown>)[pointerKey(token)], root);

describe('jsonToPieces then piecesToJson', () => {
  it('round-trips any JSON exactly, under any budget and any chunking; pieces obey the order rules', async () => {
    await fc.assert(
      fc.asyncProperty(
        document,
        fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 5000 })),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.boolean(),
        fc.constantFrom('', ' ', '\n  ', '\t\r\n'),
        async (value, budget, cuts, bytes, space) => {
          const text = write(value, space);
          const pieces = await collect(jsonToPieces(chunks(text, cuts, bytes), { pieceBytes: budget }));
          assertOrder(pieces);
          const out = (await collect(piecesToJson(pieces))).join('');
          expect(canonical(parseJson(out))).toBe(canonicalOf(value));
          for (const piece of pieces) {
            if (isOpening(piece.value)) {
              // Sent open only when the whole container's text was over the budget (an empty one is whole).
              const whole = at(parseJson(out), piece.path);
              if (space === '' && !isOpening(whole)) expect(bytesOf(whole)).toBeGreaterThan(budget);
            } else if (
              typeof piece.value === 'object' &&
              piece.value !== null &&
              !(JSON as any).isRawJSON(piece.value)
            ) {
              expect(bytesOf(piece.value)).toBeLessThanOrEqual(budget);
            }
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('keeps numbers of 30 digits and exponents to the last digit, and a document 40 levels deep', async () => {
    const numbers = '[123456789012345678901234567890,-0,1.0,1E+2,0.30000000000000001,-1.5e-130,1e400]';
    const deep = `${'{"a":['.repeat(40)}${numbers}${']}'.repeat(40)}`;
    for (const budget of [1, 16, 100, 10_000]) {
      const pieces = await collect(jsonToPieces([deep], { pieceBytes: budget }));
      expect((await collect(piecesToJson(pieces))).join('')).toBe(deep);
    }
  });

  it('writes pieces as they come: a piece is out before the rest of the text is read', async () => {
    let read = 0;
    async function* slowly() {
      for (let i = 0; i < 1000; i++) {
        read++;
        yield i === 0 ? '[' : `"${'x'.repeat(98)}",`;
      }
      yield '0]';
    }
    const pieces = jsonToPieces(slowly(), { pieceBytes: 1000 });
    await pieces.next(); // the root, open
    await pieces.next(); // element 0
    expect(read).toBeLessThan(30);
    await pieces.return(undefined);
  });
});

describe('jsonToPieces refuses', () => {
  it('a __proto__ key at any depth, in a piece or in an open container, whatever the budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        json,
        fc.array(fc.boolean(), { maxLength: 6 }),
        fc.integer({ min: 1, max: 400 }),
        async (value, wraps, budget) => {
          let text = `{"ok":${write(value)},"__proto__":{"polluted":true}}`;
          for (const inArray of wraps) text = inArray ? `[${write(value)},${text}]` : `{"k":${text}}`;
          await expect(collect(jsonToPieces([text], { pieceBytes: budget }))).rejects.toThrow(
            /"__proto__" cannot be used as a key/,
          );
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a text cut short, or with more after the value', async () => {
    await fc.assert(
      fc.asyncProperty(document, fc.nat(), fc.integer({ min: 1, max: 300 }), async (value, cut, budget) => {
        const text = write(value);
        fc.pre(text.startsWith('{') || text.startsWith('['));
        const short = text.slice(0, cut % text.length);
        await expect(collect(jsonToPieces([short], { pieceBytes: budget }))).rejects.toThrow(SyntaxError);
        await expect(collect(jsonToPieces([`${text} 1`], { pieceBytes: budget }))).rejects.toThrow(SyntaxError);
      }),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['{"a":1,}', 'expected a key at position 7'],
    ['[1,]', 'unexpected "]" at position 3'],
    ['{"a" 1}', 'expected ":" at position 5'],
    ['[1 2]', 'expected "," or the end of the array at position 3'],
    ['{"a":1}}', 'text after the JSON value at position 7'],
    ['', 'unexpected end at position 0'],
    ['{"a":tru}', 'position 5'],
    ['{"a":"\\x"}', 'position 5'],
  ])('%j (%s)', async (text, message) => {
    await expect(collect(jsonToPieces([text], { pieceBytes: 1 }))).rejects.toThrow(message);
  });

  it('bytes that are not UTF-8', async () => {
    await expect(collect(jsonToPieces([new Uint8Array([0x22, 0xff, 0x22])]))).rejects.toThrow(/not UTF-8/);
  });
});

describe('piecesToJson refuses pieces out of order', () => {
  it.each<[string, Piece[]]>([
    ['no pieces', []],
    ['a first piece not at the root', [{ path: '/a', value: 1 }]],
    [
      'a member of a container not sent open',
      [
        { path: '', value: {} },
        { path: '/a/b', value: 1 },
      ],
    ],
    [
      'an element skipped',
      [
        { path: '', value: [] },
        { path: '/1', value: 1 },
      ],
    ],
    [
      'a piece after the document is complete',
      [
        { path: '', value: { a: 1 } },
        { path: '/b', value: 1 },
      ],
    ],
    [
      'a __proto__ key',
      [
        { path: '', value: {} },
        { path: '/__proto__', value: 1 },
      ],
    ],
    ['a piece without a value', [{ path: '', value: undefined }]],
  ])('%s', async (_why, pieces) => {
    await expect(collect(piecesToJson(pieces))).rejects.toThrow(TypeError);
  });

  it('escapes keys as JSON Pointer tokens both ways', () => {
    for (const k of ODD_KEYS) expect(pointerKey(pointerToken(k))).toBe(k);
    expect(pointerToken('a/b~c')).toBe('a~1b~0c');
  });
});
