// Fuzzed bad input: requests that are wrong by construction (wrong types, malformed JSON, odd content types, huge
// strings, deep nesting, empty keys, out-of-range numbers, malformed escapes, odd URLs and methods, very long slugs,
// percent-encoded garbage, unusable credentials and headers, odd ids in the path, webhook URLs to IPv6 forms of private
// IPv4s) always get a 4xx with {"message","code"}, never a 5xx,
// never crash the API, and never change content: a sentinel project's content and ETag are checked after each one.
// Wherever the case allows it, the request would change the sentinel if it were accepted (a valid body on a route
// of the sentinel), so a request wrongly applied shows up as changed content. FUZZ_RUNS scales the generated cases.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { baseUrl, call, newKey, newProject, type Project } from '../support/api';
import { unstorableDecimal } from '../support/model-generators';

const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
/** The error codes docs/errors.md documents; the local server adds its own two for unknown routes and methods. */
const DOCUMENTED_CODES = new Set([
  ...[...readFileSync('docs/errors.md', 'utf8').matchAll(/`([A-Z][A-Z_]{3,})`/g)].map((m) => m[1] as string),
  'ROUTE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
]);

const SENTINEL = {
  keep: 'me',
  list: [1, 2, 3],
  nested: { deep: { x: 1 } },
  big: 9e125,
  small: -9e125,
  tiny: 1e-130,
  text: 'hello',
  n: 5,
  arr: [[1], [2]],
  'x.y': { z: 1 },
};

type Mutation = 'set' | 'insert' | 'push' | 'increment' | 'decrement' | 'delete' | 'update';
const MUTATIONS: Mutation[] = ['set', 'insert', 'push', 'increment', 'decrement', 'delete', 'update'];
/** A body per route that WOULD change the sentinel: cases that must fail for another reason send it. */
const VALID: Record<Mutation, Record<string, unknown>> = {
  set: { path: 'fuzz.set', value: 1 },
  insert: { path: 'list', value: 0, index: 0 },
  push: { path: 'list', value: 4 },
  increment: { path: 'n' },
  decrement: { path: 'n', value: 2 },
  delete: { path: 'keep' },
  update: { content: { replaced: true } },
};
const REQUIRED: Record<Mutation, string[]> = {
  set: ['path', 'value'],
  insert: ['path', 'value', 'index'],
  push: ['path', 'value'],
  increment: ['path'],
  decrement: ['path'],
  delete: ['path'],
  update: ['content'],
};
const ALLOWED: Record<Mutation, string[]> = { ...REQUIRED, increment: ['path', 'value'], decrement: ['path', 'value'] };

interface Case {
  kind: string;
  method: string;
  /** Below the API's base URL, e.g. /api/@u/p/content/set */
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The bearer credential; default the sentinel's read/write key; null sends no Authorization. */
  token?: string | null;
  /** When the answer is known exactly: the status and the route's code (else any 4xx with a documented code). */
  expect?: { status: number; code: string };
}

const json = (v: unknown) => JSON.stringify(v);
const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
const nested = (depth: number, leaf: string, open: string, close: string) =>
  open.repeat(depth) + leaf + close.repeat(depth);

/**
 * One request. A method fetch would warn about (it prints `[UNDICI-FETCH-patch] Warning` for a lower-case `patch`,
 * noise in the test output) and node:http would upper-case goes out on a socket exactly as written.
 */
async function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<{ status: number; text: string; headers: { get(name: string): string | null } }> {
  if (method === method.toUpperCase()) {
    const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    return { status: res.status, text: await res.text(), headers: res.headers };
  }
  const { hostname, port, pathname, search } = new URL(url);
  const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
  const head = Object.entries({ ...headers, host: `${hostname}:${port}`, 'content-length': String(payload.length) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const answer = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => {
      socket.write(`${method} ${pathname}${search} HTTP/1.1\r\n${head}connection: close\r\n\r\n`);
      socket.end(payload);
    });
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer within 30 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
  const text = answer.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const lines = text.slice(0, split).split('\r\n');
  const fields = new Map(
    lines
      .slice(1)
      .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return {
    status: Number(lines[0]?.split(' ')[1]),
    text: text.slice(split + 4),
    headers: { get: (name) => fields.get(name.toLowerCase()) ?? null },
  };
}

// ---- generators ----------------------------------------------------------------------------------------------
const nonString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);
const nonNumber = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);
const nonObject = fc.oneof(
  fc.integer(),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
);
const fraction = fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((d) => !Number.isInteger(d));
const unsafeInteger = fc.oneof(
  fc.constantFrom(2 ** 53, -(2 ** 53), 1e20, -1e300, 1e300),
  fc.double({ min: 2 ** 53, max: 1e300, noNaN: true }),
);
/** Numbers DynamoDB cannot store: magnitude 1e126 and above, or below 1e-130 but not zero. */
const unstorable = fc.oneof(
  fc.double({ min: 1e126, max: 1.7e308, noNaN: true }),
  fc.double({ min: -1.7e308, max: -1e126, noNaN: true }),
  fc.double({ min: 5e-324, max: 9.9e-131, noNaN: true }),
  fc.double({ min: -9.9e-131, max: -5e-324, noNaN: true }),
);
/** A value that is JSON but breaks a storage rule (as raw JSON text, so `__proto__` keys survive). */
const badValueText = fc.oneof(
  fc.integer({ min: 0, max: 5 }).map((d) => nested(d, '{"":1}', '{"k":', '}')),
  fc.integer({ min: 0, max: 5 }).map((d) => nested(d, '{"__proto__":1}', '[', ']')),
  fc.integer({ min: 0, max: 3 }).chain((d) => unstorable.map((n) => nested(d, json(n), '[', ']'))),
  // Written as digits: over 38 significant digits, or beyond the range (1e-400 must not become 0).
  fc.integer({ min: 0, max: 3 }).chain((d) => unstorableDecimal.map((n) => nested(d, n.value, '{"k":[1,', ']}'))),
  // An escaped lone surrogate in a string or a key (DynamoDB refuses invalid UTF-16).
  fc
    .tuple(fc.integer({ min: 0xd800, max: 0xdfff }), fc.boolean(), fc.integer({ min: 0, max: 3 }))
    .map(([unit, asKey, d]) => {
      const escaped = `x\\u${unit.toString(16)}`;
      return nested(d, asKey ? `{"${escaped}":1}` : `"${escaped}"`, '[', ']');
    }),
  fc.integer({ min: 1025, max: 5000 }).map((n) => json({ [`k${'x'.repeat(n)}`]: 1 })),
  fc.integer({ min: 31, max: 400 }).map((d) => nested(d, '1', '[', ']')),
  fc.integer({ min: 31, max: 400 }).map((d) => nested(d, '1', '{"a":', '}')),
);
const mutation = fc.constantFrom(...MUTATIONS);

/** A path that is wrong by construction. */
const badPath = fc.oneof(
  fc.constant(''),
  fc
    .array(fc.constantFrom('a', 'b', '0'), { minLength: 1, maxLength: 4 })
    .chain((segs) =>
      fc.integer({ min: 0, max: segs.length }).map((i) => [...segs.slice(0, i), '', ...segs.slice(i)].join('.')),
    ),
  fc
    .tuple(fc.stringMatching(/^[a-z]{0,5}$/), fc.constantFrom('q', 'n', 'u0041', 'x', ' ', '/', '"', ''))
    .map(([a, b]) => `${a}\\${b}`),
  fc.constantFrom('__proto__', 'a.__proto__', '__proto__.x', 'list.0.__proto__'),
  fc.integer({ min: 32, max: 200 }).map((n) => Array.from({ length: n }, (_, i) => `s${i % 10}`).join('.')),
  fc.integer({ min: 2049, max: 20000 }).map((n) => 'p'.repeat(n)),
  fc.integer({ min: 1025, max: 2000 }).map((n) => `a.${'k'.repeat(n)}`),
);

/** Bodies with one field of the wrong type, a field missing or an unknown field; everything else valid. */
function wrongTypeBodies(url: (op: string) => string): fc.Arbitrary<Case> {
  return fc
    .tuple(
      mutation,
      fc.constantFrom('path', 'missing', 'unknown', 'index', 'amount', 'content', 'value', 'badpath'),
      nonString,
      nonNumber,
      nonObject,
      fc.oneof(fraction, unsafeInteger, unstorable),
      unstorable,
      fc.string({ minLength: 1, maxLength: 12 }),
      badValueText,
      badPath,
    )
    .map(([op, what, ns, nn, no, badIndex, badAmount, field, valueText, path]) => {
      const body: Record<string, unknown> = { ...VALID[op] };
      let text: string | undefined;
      let kind = what;
      if (what === 'path' && op !== 'update') body.path = ns;
      else if (what === 'badpath' && op !== 'update') body.path = path;
      else if (what === 'missing') delete body[REQUIRED[op][(field.length * 7) % REQUIRED[op].length] as string];
      else if (what === 'index' && op === 'insert') body.index = field.length % 2 === 0 ? nn : badIndex;
      else if (what === 'amount' && (op === 'increment' || op === 'decrement'))
        body.value = field.length % 2 === 0 ? nn : badAmount;
      else if (what === 'content' && op === 'update') body.content = no;
      else if (what === 'value' && (op === 'set' || op === 'push' || op === 'insert')) {
        text = json(body).replace(/"value":[^,}]*/, `"value":${valueText}`);
      } else if (what === 'value' && op === 'update') text = `{"content":{"x":${valueText}}}`;
      else {
        kind = 'unknown';
        const name = ALLOWED[op].includes(field) ? `${field}_extra` : field;
        text = `{${json(name)}:1,${json(body).slice(1)}`;
      }
      return {
        kind: `wrong body: ${kind}`,
        method: 'POST',
        url: url(op),
        headers: { 'content-type': 'application/json' },
        body: text ?? json(body),
      };
    });
}

/** A JSON Pointer, valid or not: escapes, `-`, indexes, prototype names, and malformed ones. */
const pointer = fc.oneof(
  fc
    .array(
      fc.oneof(
        fc.constantFrom('a', 'b', 'list', '0', '1', '-', '~0', '~1', '__proto__', 'constructor', ''),
        fc.string({ maxLength: 4 }),
      ),
      {
        maxLength: 4,
      },
    )
    .map((tokens) => tokens.map((t) => `/${t}`).join('')),
  fc.constantFrom('a', '~', '/~2', '/a~', '/-/x', '/list/01', '/list/-1', '/list/1e3'),
);
const patchOp = fc.record(
  {
    op: fc.oneof(
      fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'),
      fc.string({ maxLength: 6 }),
      nonString,
    ),
    path: fc.oneof(pointer, nonString),
    from: fc.oneof(pointer, nonString),
    value: fc.jsonValue({ maxDepth: 3 }),
  },
  { requiredKeys: [] },
);

/**
 * PATCH bodies that must fail whatever else they hold: a JSON Patch of random operations ending with a test that
 * cannot hold (or one that is no array), a merge patch holding a value our content rules refuse (or no object).
 */
function patchBodies(p: Project): fc.Arbitrary<Case> {
  const jsonPatch = fc
    .tuple(fc.array(patchOp, { maxLength: 5 }), fc.boolean())
    .map(([ops, asArray]) =>
      asArray ? json([...ops, { op: 'test', path: '/fuzz-missing', value: 1 }]) : json(Object.assign({}, ...ops)),
    );
  const mergePatch = fc.oneof(
    fc
      .tuple(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), badValueText)
      .map(([doc, bad]) => `{"fuzz":{"x":${bad}},${json(doc).slice(1)}`),
    nonObject.map((v) => json(v)),
  );
  // A value copied into itself over and over doubles each time (into an object member, or at an array's end): past
  // what one change may write, a 413 at once; a shorter chain meets the failing test at the end.
  const copyChain = fc
    .tuple(fc.integer({ min: 12, max: 100 }), fc.constantFrom('/nested', '/x.y', '/list', '/arr', '/nested/deep'))
    .map(([n, from]) =>
      json([
        ...Array.from({ length: n }, (_, i) => ({
          op: 'copy',
          from,
          path: from === '/list' || from === '/arr' ? `${from}/-` : `${from}/k${i}`,
        })),
        { op: 'test', path: '/fuzz-missing', value: 1 },
      ]),
    );
  // Tens of thousands of members, nearly all naming nothing, and one that breaks a rule (at the end, or the start).
  const largeMerge = fc
    .tuple(
      fc.integer({ min: 1000, max: 34_000 }),
      badValueText.filter((t) => t.length < 20_000),
      fc.boolean(),
    )
    .map(([n, bad, first]) => {
      const nulls = Array.from({ length: n }, (_, i) => `"z${i}":null`).join(',');
      return first ? `{"fuzz":${bad},${nulls}}` : `{${nulls},"keep":{"x":${bad}}}`;
    });
  return fc
    .oneof(
      { weight: 4, arbitrary: jsonPatch.map((body) => ({ type: 'application/json-patch+json', body, what: '' })) },
      { weight: 4, arbitrary: mergePatch.map((body) => ({ type: 'application/merge-patch+json', body, what: '' })) },
      {
        weight: 1,
        arbitrary: copyChain.map((body) => ({ type: 'application/json-patch+json', body, what: ' (copy chain)' })),
      },
      {
        weight: 1,
        arbitrary: largeMerge.map((body) => ({ type: 'application/merge-patch+json', body, what: ' (large)' })),
      },
    )
    .map(({ type, body, what }) => ({
      kind: `patch: ${type}${what}`,
      method: 'PATCH',
      url: p.content,
      headers: { 'content-type': type },
      body,
    }));
}

/** Byte sequences that are not UTF-8: truncated, overlong, lone continuations, surrogates in UTF-8, past U+10FFFF. */
const notUtf8 = fc.oneof(
  fc.tuple(fc.integer({ min: 0xc2, max: 0xf4 }), fc.constantFrom(0x20, 0x22, 0x41)).map(([lead, next]) => [lead, next]),
  fc.tuple(fc.constantFrom(0xe0, 0xf0), fc.integer({ min: 0x80, max: 0xbf })).map(([lead, cont]) => [lead, cont]),
  fc.array(fc.integer({ min: 0x80, max: 0xbf }), { minLength: 1, maxLength: 3 }),
  fc.tuple(fc.constantFrom(0xc0, 0xc1), fc.integer({ min: 0x80, max: 0xbf })).map(([lead, cont]) => [lead, cont]),
  fc
    .tuple(fc.integer({ min: 0xa0, max: 0xbf }), fc.integer({ min: 0x80, max: 0xbf }))
    .map(([b2, b3]) => [0xed, b2, b3]),
  fc
    .tuple(fc.integer({ min: 0x90, max: 0xbf }), fc.integer({ min: 0x80, max: 0xbf }))
    .map(([b2, b3]) => [0xf4, b2, b3, 0x80]),
  fc.integer({ min: 0xf5, max: 0xff }).map((b) => [b]),
);

/** A body that would change the sentinel, with bytes that are not UTF-8 inside a string (the path, or a key). */
function notUtf8Bodies(url: (op: string) => string): fc.Arbitrary<Case> {
  return fc
    .tuple(
      mutation,
      notUtf8,
      fc.nat(),
      fc.constantFrom<Record<string, string>>({ 'content-type': 'application/json' }, {}),
    )
    .map(([op, bytes, n, headers]) => {
      const text = json(VALID[op]);
      // Inside the first string value (`"fuzz.set"` -> `"f<bytes>uzz.set"`), or update's first key.
      const quote = text.indexOf(':"');
      const at = quote > 0 ? quote + 2 + (n % 2) : text.indexOf('{"', 1) + 2;
      const body = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]);
      return { kind: 'not UTF-8', method: 'POST', url: url(op), headers, body: new Uint8Array(body) };
    });
}

/** Text that is not JSON at all, JSON cut short, or JSON that is not an object. */
function malformedJson(url: (op: string) => string): fc.Arbitrary<Case> {
  const truncated = fc.tuple(mutation, fc.nat()).map(([op, n]) => {
    const full = json(VALID[op]);
    return [op, full.slice(0, n % full.length)] as const;
  });
  const garbled = fc
    .tuple(
      mutation,
      fc.nat(),
      fc.constantFrom("'", '"', ',', '}', '{', ']', ':', 'NaN', 'undefined', '\\', '\u0000', '//', '\ufeff'),
    )
    .map(([op, n, junk]) => {
      const full = json(VALID[op]);
      const at = n % (full.length + 1);
      return [op, full.slice(0, at) + junk + full.slice(at)] as const;
    });
  const random = fc.tuple(mutation, fc.string({ unit: 'binary', maxLength: 200 })).map(([op, s]) => [op, s] as const);
  const notObject = fc
    .tuple(
      mutation,
      fc.jsonValue({ maxDepth: 3 }).filter((v) => typeof v !== 'object' || v === null || Array.isArray(v)),
    )
    .map(([op, v]) => [op, json(v)] as const);
  return fc
    .oneof(truncated, garbled, random, notObject)
    .filter(([, text]) => {
      if (!isJson(text)) return true;
      const v = JSON.parse(text);
      return typeof v !== 'object' || v === null || Array.isArray(v);
    })
    .chain(([op, text]) =>
      fc.constantFrom<Record<string, string>>({ 'content-type': 'application/json' }, {}).map((headers) => ({
        kind: isJson(text) ? 'JSON but not an object' : 'malformed JSON',
        method: 'POST',
        url: url(op),
        headers,
        body: text,
      })),
    );
}

/** A valid body under a Content-Type that is not JSON: 415 (it would change the sentinel if read as JSON). */
function oddContentTypes(url: (op: string) => string): fc.Arbitrary<Case> {
  const type = fc.oneof(
    fc.constantFrom(
      'text/plain',
      'text/html; charset=utf-8',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      'image/png',
      'application/javascript',
      'text/json-ish',
      'application/jsonp',
      'application/json-patch',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application',
      '*/*',
      ';',
      'application/ json',
    ),
    fc.tuple(fc.stringMatching(/^[a-z]{1,10}$/), fc.stringMatching(/^[a-z0-9.+-]{1,12}$/)).map(([a, b]) => `${a}/${b}`),
  );
  return fc
    .tuple(mutation, type)
    .filter(
      ([, t]) =>
        !/^application\/([\w.+-]+\+)?json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i.test(t.trim()) && t.trim() !== '',
    )
    .map(([op, t]) => ({
      kind: 'odd content type',
      method: 'POST',
      url: url(op),
      headers: { 'content-type': t },
      body: json(VALID[op]),
    }));
}

/** Odd URLs: unknown routes, percent-encoded garbage, very long or malformed usernames and slugs. */
function oddUrls(p: Project): fc.Arbitrary<Case> {
  const garbage = fc.oneof(
    fc.constantFrom(
      '%',
      '%ZZ',
      '%00',
      '%ff',
      '%C0%AF',
      '%2e%2e',
      '..',
      '%2F',
      '%u0041',
      '%E2%82',
      '@',
      '@@',
      '~',
      '%40',
      '%',
    ),
    fc
      .string({ unit: 'binary', minLength: 1, maxLength: 20 })
      .map((s) => encodeURIComponent(s).replace(/%2[Ee]/g, '.')),
    fc.integer({ min: 101, max: 6000 }).map((n) => 'x'.repeat(n)),
    fc.integer({ min: 40, max: 3000 }).map((n) => `@${'u'.repeat(n)}`),
  );
  const segment = fc.oneof(garbage, fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/));
  return fc.oneof(
    // garbage user or slug on a content route: never the sentinel (its names are random hex)
    fc.tuple(garbage, fc.constantFrom(...MUTATIONS)).map(([g, op]) => ({
      kind: 'odd URL: user',
      method: 'POST',
      url: `/api/${g}/${p.slug}/content/${op}`,
      body: json(VALID[op]),
    })),
    fc.tuple(garbage, fc.constantFrom(...MUTATIONS)).map(([g, op]) => ({
      kind: 'odd URL: slug',
      method: 'POST',
      url: `/api/${p.username}/${g}/content/${op}`,
      body: json(VALID[op]),
    })),
    // unknown routes under the sentinel
    fc
      .tuple(fc.constantFrom(...MUTATIONS), fc.constantFrom('/', '/x', 'x', '/..', '%00', '.json', '/%2e%2e'))
      .map(([op, tail]) => ({
        kind: 'odd URL: route',
        method: 'POST',
        url: `${p.content}/${op}${tail}`,
        body: json(VALID[op]),
      })),
    fc.tuple(fc.array(segment, { minLength: 0, maxLength: 6 }), fc.constantFrom('', '/')).map(([segs, slash]) => ({
      kind: 'odd URL: anywhere',
      method: 'POST',
      url: `/${segs.join('/')}${slash}`,
      body: json(VALID.set),
    })),
    fc.tuple(fc.array(segment, { minLength: 0, maxLength: 4 }), fc.constantFrom('', '/')).map(([segs, slash]) => ({
      kind: 'odd URL: leading //',
      method: 'POST',
      url: `//${segs.join('/')}${slash}`,
      body: json(VALID.set),
    })),
    fc
      .constantFrom(
        '/api',
        '/api/',
        `/api/${p.username}`,
        `/api/${p.username}/${p.slug}/content/`,
        `/api/${p.username}/${p.slug}/CONTENT/set`,
        `/api//${p.slug}/content/set`,
        `//api/${p.username}/${p.slug}/content/set`,
      )
      .map((url) => ({
        kind: 'odd URL: near miss',
        method: 'POST',
        url,
        body: json(VALID.set),
      })),
  );
}

/** Methods a route does not take (405), and the management routes with an API key (403: keys never manage). */
function oddMethods(p: Project): fc.Arbitrary<Case> {
  return fc.oneof(
    fc
      .tuple(
        fc.constantFrom('PUT', 'PATCH', 'DELETE', 'GET', 'OPTIONS', 'PROPFIND', 'PURGE', 'MKCOL', 'SEARCH', 'LINK'),
        fc.constantFrom(...MUTATIONS),
      )
      .map(([method, op]) => ({
        kind: 'odd method: content route',
        method,
        url: `${p.content}/${op}`,
        headers: { 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : json(VALID[op]),
      })),
    fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE').map((method) => ({
      kind: 'odd method: content',
      method,
      url: p.content,
      headers: { 'content-type': 'application/json' },
      body: method === 'DELETE' ? undefined : json({ content: { replaced: true } }),
    })),
    fc
      .constantFrom(
        ['DELETE', ''],
        ['POST', ''],
        ['POST', '/keys'],
        ['DELETE', '/keys/0123456789abcdef'],
        ['PUT', '/members/@someone'],
        ['DELETE', '/members/@someone'],
        ['GET', '/keys'],
        ['GET', '/members'],
      )
      .map(([method, tail]) => ({
        kind: 'management with an API key',
        method: method as string,
        url: `/api/${p.username}/${p.slug}${tail}`,
        headers: { 'content-type': 'application/json' },
        body:
          method === 'GET' || method === 'DELETE'
            ? undefined
            : json({ name: 'x', permissions: ['content:read'], role: 'editor' }),
      })),
  );
}

/** Unusable credentials and headers with a body that would otherwise change the sentinel. */
function badHeaders(p: Project, others: { readOnly: string; otherProject: string }): fc.Arbitrary<Case> {
  const flip = (s: string, i: number) => {
    const at = 22 + (i % (s.length - 22));
    const c = s.charAt(at);
    return s.slice(0, at) + (c === 'A' ? 'B' : 'A') + s.slice(at + 1);
  };
  const authorization = fc.oneof(
    fc.nat().map((i) => `Bearer ${flip(p.key, i)}`),
    fc.nat({ max: p.key.length - 1 }).map((n) => `Bearer ${p.key.slice(0, n)}`),
    fc.constantFrom(
      `Basic ${Buffer.from(`user:${p.key}`).toString('base64')}`,
      'Bearer',
      'Bearer ',
      `Bearer ${p.key} extra`,
      `Token ${p.key}`,
      `${p.key}`,
      `Bearer ${p.key}x`,
      `Bearer capi_${'0'.repeat(16)}_${'A'.repeat(43)}`,
      `Bearer csess_${'A'.repeat(43)}`,
      'Bearer a.b.c',
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      `Bearer ${others.readOnly}`,
      `Bearer ${others.otherProject}`,
      `Bearer ${'x'.repeat(8000)}`,
    ),
    fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => `Bearer ${s.replace(/[\r\n\0]/g, '')}`),
  );
  return fc.oneof(
    fc.tuple(mutation, authorization).map(([op, auth]) => ({
      kind: 'unusable credential',
      method: 'POST',
      url: `${p.content}/${op}`,
      token: null,
      headers: { 'content-type': 'application/json', authorization: auth },
      body: json(VALID[op]),
    })),
    fc
      .tuple(
        mutation,
        fc.constantFrom(
          '"nope"',
          'W/"nope"',
          '"a", "b"',
          'nope',
          Array.from({ length: 21 }, (_, i) => `"e${i}"`).join(','),
          '""',
        ),
      )
      .map(([op, ifMatch]) => ({
        kind: 'If-Match that does not match',
        method: 'POST',
        url: `${p.content}/${op}`,
        headers: { 'content-type': 'application/json', 'if-match': ifMatch },
        body: json(VALID[op]),
      })),
    fc
      .tuple(
        mutation,
        fc.oneof(
          fc.constantFrom('has space', 'tab\there', 'x'.repeat(256), 'caf\u00e9', '\u00ff'),
          fc.integer({ min: 256, max: 2000 }).map((n) => 'k'.repeat(n)),
        ),
      )
      .map(([op, key]) => ({
        kind: 'invalid Idempotency-Key',
        method: 'POST',
        url: `${p.content}/${op}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: json(VALID[op]),
      })),
  );
}

/** GETs of paths that are invalid or name nothing. */
function badReads(p: Project): fc.Arbitrary<Case> {
  return fc.oneof(
    // Kept under API Gateway's 10 KiB request line (the local server's Node parser answers a bare 431 past 16 KiB).
    badPath
      .filter((path) => encodeURIComponent(path).length < 8000)
      .map((path) => ({ kind: 'GET bad path', method: 'GET', url: `${p.content}?path=${encodeURIComponent(path)}` })),
    fc
      .constantFrom('%ZZ', '%', '%00', 'zz%C0%AF', 'keep.x', 'list.3', 'list.-4', 'list.x', 'nested.deep.x.y', 'n.0')
      .map((q) => ({ kind: 'GET odd path', method: 'GET', url: `${p.content}?path=${q}` })),
    // shallow, start and limit with any value they do not take (GET content?shallow=&start=&limit=).
    fc
      .tuple(
        fc.constantFrom('shallow', 'start', 'limit'),
        fc.string({ maxLength: 24 }),
        fc.constantFrom('', 'path=list&'),
      )
      .filter(([name, value]) => !VALID_QUERY[name]!.test(value))
      .map(([name, value, path]) => ({
        kind: `GET bad ${name}`,
        method: 'GET',
        url: `${p.content}?${path}${name}=${encodeURIComponent(value)}`,
      })),
    fc
      .tuple(fc.constantFrom('start=0', 'start=-1&limit=2', 'start=0&after=x'), fc.constantFrom('', 'path=list&'))
      .map(([slice, path]) => ({
        kind: 'GET shallow with a slice',
        method: 'GET',
        url: `${p.content}?${path}shallow=true&${slice}`,
      })),
    // A page of keys: after that is no cursor this service made (any text, or any JSON in base64url), or a page of an
    // array's or a scalar's keys, or after without shallow=true.
    fc
      .tuple(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? '').toString('base64url')),
        ),
        fc.constantFrom(
          'shallow=true&',
          'shallow=true&limit=3&',
          'path=keep&shallow=true&',
          'path=list&shallow=true&',
          '',
        ),
      )
      .map(([after, query]) => ({
        kind: 'GET bad cursor',
        method: 'GET',
        url: `${p.content}?${query}after=${encodeURIComponent(after)}`,
      })),
    fc
      .tuple(fc.constantFrom('path=list&', 'path=n&', 'path=list.0&'), fc.constantFrom('limit=1', 'limit=1000'))
      .map(([path, limit]) => ({
        kind: 'GET keys of a non-object',
        method: 'GET',
        url: `${p.content}?${path}shallow=true&${limit}`,
      })),
    fc
      .tuple(
        fc.constantFrom('', 'path=keep&', 'path=n&', 'path=nested&', 'path=list.0&'),
        fc.constantFrom('start=0', 'limit=3', 'start=-2'),
      )
      .map(([path, slice]) => ({
        kind: 'GET slice of a non-array',
        method: 'GET',
        url: `${p.content}?${path}${slice}`,
      })),
  );
}

/**
 * Ids and names in the path that name nothing: over-long (past DynamoDB's key size), too short, upper case, odd
 * characters, percent-encoded anything. Each route answers its own 404, never a 500 from DynamoDB's key limit.
 */
const oddId = fc
  .oneof(
    fc.integer({ min: 17, max: 6000 }).map((n) => 'a'.repeat(n)),
    fc
      .integer({ min: 17, max: 3000 })
      .chain((n) => fc.constantFrom('0', 'f', 'Z', '-', '_', '~').map((c) => c.repeat(n))),
    fc.stringMatching(/^[0-9a-f]{1,15}$/),
    fc.stringMatching(/^[0-9a-fA-F]{16}$/).filter((id) => /[A-F]/.test(id)),
    fc.stringMatching(/^[0-9a-f]{16}[^/?#]{1,40}$/),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
    fc.integer({ min: 200, max: 2500 }).map((n) => '\u00e9\u{1F600}'.repeat(n)),
  )
  .map(encodeURIComponent)
  // A `.` or `..` segment is resolved away by the URL, another route: the odd-URL cases cover those.
  .filter((id) => id !== '.' && id !== '..');
const oddMember = fc.oneof(
  oddId,
  oddId.map((id) => `%40${id}`),
  fc.integer({ min: 40, max: 6000 }).map((n) => `%40${'u'.repeat(n)}`),
);

/** Management routes named by an id or a member in the path, with the owner's session: each answers its own 404. */
function oddIds(p: Project): fc.Arbitrary<Case> {
  const base = `/api/${p.username}/${p.slug}`;
  const route = (method: string, tail: string, code: string, body?: string): Case => ({
    kind: `odd id: ${method} ${tail.replace(/\/[^/]*$/, '/{id}')}`,
    method,
    url: `${base}${tail}`,
    token: p.owner,
    headers: { 'content-type': 'application/json' },
    body,
    expect: { status: 404, code },
  });
  return fc.oneof(
    oddId.map((id) => route('DELETE', `/keys/${id}`, 'KEY_NOT_FOUND')),
    oddId.map((id) => route('DELETE', `/webhooks/${id}`, 'WEBHOOK_NOT_FOUND')),
    oddMember.map((m) => route('DELETE', `/members/${m}`, 'MEMBER_NOT_FOUND')),
    oddMember.map((m) => route('PUT', `/members/${m}`, 'USER_NOT_FOUND', json({ role: 'viewer' }))),
  );
}

/** The IPv4 addresses a webhook must never reach, written into every IPv6 form that carries one. */
function forbiddenWebhooks(p: Project): fc.Arbitrary<Case> {
  const ipv4 = fc.constantFrom('127.0.0.1', '169.254.169.254', '10.0.0.1', '172.16.5.4', '192.168.0.1', '100.64.0.1');
  const hex = (v4: string, invert = false) => {
    const b = v4.split('.').map((x) => Number(x) ^ (invert ? 0xff : 0));
    return `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  };
  const forms: Array<(v4: string) => string> = [
    (v4) => `::${v4}`,
    (v4) => `::${hex(v4)}`,
    (v4) => `0:0:0:0:0:0:${v4}`,
    (v4) => `64:ff9b::${v4}`,
    (v4) => `64:ff9b:1::${hex(v4)}`,
    (v4) => `2002:${hex(v4)}::1`,
    (v4) => `2001:0:4136:e378:8000:63bf:${hex(v4, true)}`,
  ];
  return fc
    .tuple(ipv4, fc.constantFrom(...forms), fc.constantFrom('', ':443', ':8443'), fc.constantFrom('/', '/hook?x=1'))
    .map(([v4, form, port, path]) => ({
      kind: 'webhook to an IPv6 form of a private IPv4',
      method: 'POST',
      url: `/api/${p.username}/${p.slug}/webhooks`,
      token: p.owner,
      headers: { 'content-type': 'application/json' },
      body: json({ url: `https://[${form(v4)}]${port}${path}` }),
      expect: { status: 400, code: 'FORBIDDEN_DESTINATION' },
    }));
}

/** What GET content's query parameters take (lib/http/schemas.ts); the fuzz sends everything else. */
const VALID_QUERY: Record<string, RegExp> = {
  shallow: /^(true|false)$/,
  start: /^(0|-?[1-9][0-9]{0,14})$/,
  limit: /^([1-9][0-9]{0,2}|1000)$/,
};

// -----------------------------------------------------------------------------------------------------------------

describe('fuzzed bad input', () => {
  let p: Project;
  let others: { readOnly: string; otherProject: string; expired: string; revoked: string };
  let etag: string | null;
  const counts: Record<string, number> = {};
  const statuses: Record<number, number> = {};
  let total = 0;

  beforeAll(async () => {
    p = await newProject();
    const set = await call('POST', `${p.content}/update`, { token: p.key, body: { content: SENTINEL } });
    expect(set.status).toBe(200);
    etag = set.headers.get('etag');
    const other = await newProject();
    const accounts = await import('../../lib/store/accounts');
    const expired = await newKey(p, ['content:read', 'content:write'], 1);
    const revoked = await newKey(p, ['content:read', 'content:write']);
    await accounts.revokeApiKey({ username: p.username, slug: p.slug }, revoked.id);
    others = {
      readOnly: (await newKey(p, ['content:read'])).key,
      otherProject: other.key,
      expired: expired.key,
      revoked: revoked.key,
    };
    await new Promise((resolve) => setTimeout(resolve, 2100)); // let the short-lived key expire
  });

  afterAll(() => {
    const kinds = Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => `    ${String(n).padStart(5)}  ${k}`)
      .join('\n');
    console.log(`fuzz: ${total} cases, statuses ${JSON.stringify(statuses)}\n${kinds}`);
  });

  /** Sends one case and checks: 4xx, {message, code}, the sentinel untouched (content and ETag), the API serving. */
  async function check(c: Case, options: { parserLevel?: boolean } = {}): Promise<void> {
    total++;
    counts[c.kind] = (counts[c.kind] ?? 0) + 1;
    const headers: Record<string, string> = { ...c.headers };
    const token = c.token === undefined ? p.key : c.token;
    if (token !== null) headers.authorization ??= `Bearer ${token}`;
    const res = await send(c.method, `${baseUrl()}${c.url}`, headers, c.body);
    const text = res.text;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    const what = `${c.kind}: ${c.method} ${c.url.slice(0, 200)} ${typeof c.body === 'string' ? c.body.slice(0, 200) : ''} -> ${res.status} ${text.slice(0, 300)}`;
    if (res.status < 400 || res.status > 499) throw new Error(`not a 4xx: ${what}`);
    if (options.parserLevel) {
      await sentinelUnchanged(what);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`not JSON: ${what}`);
    }
    const b = body as Record<string, unknown>;
    if (typeof b?.message !== 'string' || typeof b?.code !== 'string' || !/^[A-Z_]+$/.test(b.code))
      throw new Error(`not {message, code}: ${what}`);
    if (!DOCUMENTED_CODES.has(b.code)) throw new Error(`code ${b.code} is not documented in docs/errors.md: ${what}`);
    if (c.expect && (res.status !== c.expect.status || b.code !== c.expect.code))
      throw new Error(`not ${c.expect.status} ${c.expect.code}: ${what}`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    await sentinelUnchanged(what);
  }

  async function sentinelUnchanged(what: string): Promise<void> {
    const after = await call('GET', p.content, { token: p.key });
    if (after.status !== 200) throw new Error(`the API stopped serving after ${what}: ${after.status}`);
    expect(after.body.value).toEqual(SENTINEL);
    if (after.headers.get('etag') !== etag) throw new Error(`the sentinel's version changed after ${what}`);
  }

  it('hand-written nasty cases: 4xx with {message, code}, nothing changed', async () => {
    const url = (op: string) => `${p.content}/${op}`;
    const raw = (
      kind: string,
      op: string,
      body: string | Uint8Array,
      headers: Record<string, string> = { 'content-type': 'application/json' },
    ): Case => ({ kind, method: 'POST', url: url(op), headers, body });
    const cases: Case[] = [
      ...MUTATIONS.flatMap((op) => [
        raw('empty body', op, ''),
        raw('empty body, no content type', op, '', {}),
        raw('JSON null', op, 'null'),
        raw('JSON array', op, '[]'),
        raw('JSON string', op, '"{}"'),
        raw('JSON number', op, '1'),
        raw('truncated', op, '{'),
        raw('trailing comma', op, `${json(VALID[op]).slice(0, -1)},}`),
        raw('single quotes', op, json(VALID[op]).replace(/"/g, "'")),
        raw('600 KiB of junk', op, 'x'.repeat(600 * 1024)),
        raw('600 KiB of valid JSON', op, json({ ...VALID[op], pad: 'x'.repeat(600 * 1024) })),
        raw(
          '512 KiB + 1 byte of valid JSON',
          op,
          (() => {
            const base = json({ ...VALID[op], pad: '' });
            return base.replace('"pad":""', `"pad":"${'x'.repeat(512 * 1024 + 1 - base.length)}"`);
          })(),
        ),
        raw('100 000 levels of nesting, unclosed', op, '['.repeat(100_000)),
        raw('invalid UTF-8', op, Uint8Array.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])),
        raw('invalid UTF-8, no content type', op, Uint8Array.from([0xc0, 0xaf, 0xed, 0xa0, 0x80]), {}),
        // A body that would change the sentinel but for one byte sequence that is not UTF-8 in a string.
        ...[[0xc3, 0x28], [0xe2, 0x82], [0xc0, 0xaf], [0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff]].map(
          (bad) => {
            const text = json(VALID[op]);
            const at = text.indexOf(':"') > 0 ? text.indexOf(':"') + 3 : 2;
            return raw(
              'invalid UTF-8 inside a valid body',
              op,
              new Uint8Array(
                Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bad), Buffer.from(text.slice(at))]),
              ),
            );
          },
        ),
        raw('text/plain', op, json(VALID[op]), { 'content-type': 'text/plain' }),
      ]),
      raw('100 000 levels of nesting in a value', 'set', `{"path":"a","value":${nested(100_000, '1', '[', ']')}}`),
      raw('50 000 levels of objects in a value', 'set', `{"path":"a","value":${nested(50_000, '1', '{"a":', '}')}}`),
      raw('100 000 levels in update', 'update', `{"content":{"a":${nested(100_000, '1', '[', ']')}}}`),
      raw('value 31 deep under one segment', 'set', `{"path":"a","value":${nested(31, '1', '[', ']')}}`),
      raw('push 30 deep under one segment', 'push', `{"path":"a","value":${nested(30, '1', '[', ']')}}`),
      raw('value with 1e400', 'set', '{"path":"a","value":1e400}'),
      raw('value with 1e-400 (not 0)', 'set', '{"path":"a","value":1e-400}'),
      raw('value with 42 digits', 'set', '{"path":"a","value":123456789012345678901234567890123456789012}'),
      raw('update with 39 digits', 'update', '{"content":{"a":[0.123456789012345678901234567890123456789]}}'),
      raw('amount with 39 digits', 'increment', '{"path":"n","value":123456789012345678901234567890123456789}'),
      raw('a lone surrogate in a value', 'set', '{"path":"a","value":"\\ud800"}'),
      raw('a lone surrogate in a key', 'update', '{"content":{"k\\udfff":1}}'),
      raw('a lone surrogate in the path', 'delete', '{"path":"keep\\ud800"}'),
      raw('value with -1e400', 'set', '{"path":"a","value":-1e400}'),
      raw('value with NaN', 'set', '{"path":"a","value":NaN}'),
      raw('value with a leading zero', 'set', '{"path":"a","value":01}'),
      raw('value with a bad string escape', 'set', '{"path":"a","value":"\\x41"}'),
      raw('index 1e400', 'insert', '{"path":"list","value":1,"index":1e400}'),
      raw('amount 1e400', 'increment', '{"path":"n","value":1e400}'),
      raw('amount -1e400', 'decrement', '{"path":"n","value":-1e400}'),
      raw('__proto__ in a value', 'set', '{"path":"a","value":{"__proto__":{"polluted":true}}}'),
      raw('__proto__ in update', 'update', '{"content":{"__proto__":{"polluted":true}}}'),
      raw('__proto__ as the body', 'set', '{"__proto__":{"path":"a","value":1}}'),
      raw('constructor.prototype body', 'set', '{"constructor":{"prototype":{"path":"a"}},"value":1}'),
      raw('empty key in update', 'update', '{"content":{"":1}}'),
      raw('increment overflows', 'increment', json({ path: 'big', value: 9e125 })),
      raw('decrement overflows', 'decrement', json({ path: 'small', value: 9e125 })),
      raw('increment underflows to below 1e-130', 'decrement', json({ path: 'tiny', value: 1e-130 * 0.5 })),
      raw('increment on a string', 'increment', json({ path: 'text' })),
      raw('increment on an object', 'increment', json({ path: 'nested' })),
      raw('push on a number', 'push', json({ path: 'n', value: 1 })),
      raw('insert into an object', 'insert', json({ path: 'nested', value: 1, index: 0 })),
      raw('insert beyond the end', 'insert', json({ path: 'list', value: 1, index: 4 })),
      raw('insert before the start', 'insert', json({ path: 'list', value: 1, index: -4 })),
      raw('insert into a missing array at 1', 'insert', json({ path: 'missing', value: 1, index: 1 })),
      raw('set beyond the end', 'set', json({ path: 'list.4', value: 1 })),
      raw('set before the start', 'set', json({ path: 'list.-4', value: 1 })),
      raw('set through a scalar', 'set', json({ path: 'n.x', value: 1 })),
      raw('set through a string', 'set', json({ path: 'text.0', value: 1 })),
      raw('set a key on an array', 'set', json({ path: 'list.x', value: 1 })),
      raw('set through null index', 'set', json({ path: 'arr.-3.x', value: 1 })),
      raw('content too large', 'set', json({ path: 'huge', value: 'x'.repeat(360 * 1024) })),
      raw('content too large (push)', 'push', json({ path: 'list', value: 'x'.repeat(360 * 1024) })),
      raw('content too large (update)', 'update', json({ content: { huge: 'x'.repeat(360 * 1024) } })),
      raw(
        'many keys too large',
        'update',
        json({ content: Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, i])) }),
      ),
      ...[
        'a\\',
        '\\',
        'a\\u002e',
        'a\\x',
        'a\\ b',
        'a..b',
        '.',
        '..',
        'a.',
        '.a',
        '__proto__',
        'x.__proto__.polluted',
        'k'.repeat(1025),
        'p'.repeat(2049),
        Array.from({ length: 32 }, () => 'd').join('.'),
      ].map((path) => raw(`bad path ${path.slice(0, 20)}`, 'set', json({ path, value: 1 }))),
      ...[
        ['content type with a parameter', 'application/json; charset=utf-8; foo=bar'],
        ['content type latin1', 'application/json; charset=iso-8859-1'],
        ['content type form', 'application/x-www-form-urlencoded'],
        ['content type multipart', 'multipart/form-data; boundary=----x'],
        ['content type garbage', 'garbage'],
      ].map(([kind, type]) => raw(kind as string, 'set', json(VALID.set), { 'content-type': type as string })),
      {
        kind: 'no credential',
        method: 'POST',
        url: url('set'),
        token: null,
        headers: { 'content-type': 'application/json' },
        body: json(VALID.set),
      },
      {
        kind: 'expired key',
        method: 'POST',
        url: url('set'),
        token: others.expired,
        headers: { 'content-type': 'application/json' },
        body: json(VALID.set),
      },
      {
        kind: 'revoked key',
        method: 'POST',
        url: url('set'),
        token: others.revoked,
        headers: { 'content-type': 'application/json' },
        body: json(VALID.set),
      },
      {
        kind: 'read-only key writes',
        method: 'POST',
        url: url('set'),
        token: others.readOnly,
        headers: { 'content-type': 'application/json' },
        body: json(VALID.set),
      },
      {
        kind: 'key of another project',
        method: 'POST',
        url: url('set'),
        token: others.otherProject,
        headers: { 'content-type': 'application/json' },
        body: json(VALID.set),
      },
      {
        kind: 'very long slug (8000)',
        method: 'POST',
        url: `/api/${p.username}/${'s'.repeat(8000)}/content/set`,
        body: json(VALID.set),
      },
      {
        kind: 'very long username (8000)',
        method: 'POST',
        url: `/api/@${'u'.repeat(8000)}/${p.slug}/content/set`,
        body: json(VALID.set),
      },
      {
        kind: 'percent-encoded NUL user',
        method: 'POST',
        url: `/api/%00/${p.slug}/content/set`,
        body: json(VALID.set),
      },
      {
        kind: 'broken percent user',
        method: 'POST',
        url: `/api/%E0%A4%A/${p.slug}/content/set`,
        body: json(VALID.set),
      },
      {
        kind: 'user without @',
        method: 'POST',
        url: `/api/${p.username.slice(1)}/${p.slug}/content/set`,
        body: json(VALID.set),
      },
      {
        kind: 'traversal',
        method: 'POST',
        url: `/api/${p.username}/${p.slug}/content/../content/set/..`,
        body: json(VALID.set),
      },
      { kind: 'GET empty path', method: 'GET', url: `${p.content}?path=` },
      { kind: 'GET bad escape', method: 'GET', url: `${p.content}?path=${encodeURIComponent('a\\q')}` },
      { kind: 'GET __proto__', method: 'GET', url: `${p.content}?path=__proto__` },
      { kind: 'GET constructor (missing)', method: 'GET', url: `${p.content}?path=constructor` },
      { kind: 'GET path twice', method: 'GET', url: `${p.content}?path=keep&path=n` },
      { kind: 'GET through a scalar', method: 'GET', url: `${p.content}?path=n.0` },
      { kind: 'GET key on an array', method: 'GET', url: `${p.content}?path=list.length` },
      {
        kind: 'GET with read-only key, missing path',
        method: 'GET',
        url: `${p.content}?path=zz`,
        token: others.readOnly,
      },
    ];
    for (const c of cases) await check(c);
  });

  it('odd request targets (a leading //): 4xx with {message, code}', async () => {
    for (const url of [
      '//',
      '///',
      '//%ZZ/x',
      '//@/x',
      '//%/a',
      '//x:99999/a',
      `//${p.username}/${p.slug}/content/set`,
      `//api/${p.username}/${p.slug}/content/set`,
    ]) {
      await check({
        kind: 'odd request target',
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        body: json(VALID.set),
      });
    }
  });

  it('requests the HTTP parser refuses (unknown methods, a request line over 16 KiB): a 4xx, the API still serving', async () => {
    // The local server's Node parser answers these itself (a bare 400 or 431, no JSON body), before any route
    // code runs; in AWS, API Gateway answers them before any Lambda. Nothing may change and the API must go on.
    const cases: Case[] = [
      { kind: 'unknown method FOO', method: 'FOO', url: `${p.content}/set`, body: json(VALID.set) },
      { kind: 'lower-case method', method: 'patch', url: `${p.content}/set`, body: json(VALID.set) },
      { kind: '20 KiB URL', method: 'GET', url: `${p.content}?path=${'p'.repeat(20_000)}` },
      {
        kind: '64 KiB slug',
        method: 'POST',
        url: `/api/${p.username}/${'s'.repeat(65_536)}/content/set`,
        body: json(VALID.set),
      },
    ];
    for (const c of cases) await check(c, { parserLevel: true });
  }, 120_000);

  it(
    'generated bad requests: 4xx with {message, code}, nothing changed, the API still serving',
    async () => {
      const url = (op: string) => `${p.content}/${op}`;
      const anyCase = fc.oneof(
        { weight: 4, arbitrary: wrongTypeBodies(url) },
        { weight: 3, arbitrary: malformedJson(url) },
        { weight: 2, arbitrary: notUtf8Bodies(url) },
        { weight: 2, arbitrary: oddContentTypes(url) },
        { weight: 2, arbitrary: oddUrls(p) },
        { weight: 2, arbitrary: oddMethods(p) },
        { weight: 2, arbitrary: badHeaders(p, others) },
        { weight: 1, arbitrary: badReads(p) },
        { weight: 3, arbitrary: patchBodies(p) },
        { weight: 2, arbitrary: oddIds(p) },
        { weight: 1, arbitrary: forbiddenWebhooks(p) },
      );
      const short = (c: Case) =>
        Object.defineProperty(c, fc.toStringMethod, {
          value: () =>
            `${c.kind}: ${c.method} ${c.url.slice(0, 160)} ${typeof c.body === 'string' ? c.body.slice(0, 160) : (c.body?.length ?? '')}`,
        });
      await fc.assert(
        // Request lines stay under API Gateway's 10 KiB (past 16 KiB the local server's Node parser answers a bare 431,
        // see the test above). Request targets starting with // have their own test above, so that one known failure
        // does not hide what else the generator finds.
        fc.asyncProperty(
          anyCase.filter((c) => c.url.length < 8000 && !c.url.startsWith('//')).map(short),
          async (c) => {
            await check(c);
          },
        ),
        { numRuns: RUNS, verbose: 1 },
      );
    },
    60_000 + RUNS * 500,
  );
});
