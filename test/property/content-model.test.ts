// Model-based property tests: random sequences of content operations over random paths (numeric segments, negative
// indexes, escaped dots) and random JSON values, run against the real service (over HTTP, on the embedded engine)
// and against the reference model of decisions.md (test/support/model-reference.ts). After every step the status,
// the body's shape, the content and the ETag must agree with the model.
// PROPERTY_RUNS sets the number of runs (25 in `npm test`, more in `npm run test:property`); PROPERTY_SEED replays one.
import fc from 'fast-check';
import { LosslessNumber, parse, stringify } from 'lossless-json';
import { readFileSync } from 'node:fs';
import { MESSAGES, type Project, type Reply, call, newProject } from '../support/api';
import { formatPath } from '../../lib/paths';
import { strays } from '../support/segments';
import {
  type Body,
  CurrentValue,
  anyRequest,
  batchRequest,
  describeBody,
  initialContent,
  layeredBatchRequest,
  layeredContent,
  resolveBody,
} from '../support/model-generators';
import {
  type Json,
  type JsonObject,
  type Route,
  reference,
  referenceBatch,
  sameJson,
} from '../support/model-reference';

/**
 * A mutation answers the ETag of the value it wrote. For a content in one segment (every content under 4 KB, unless
 * SEGMENT_FRAGMENT_BYTES makes segments smaller) that is the whole content's; a content over several segments has a
 * digest of theirs (`"m.…"`), which changes with any of them (checked by the refusals' "unchanged" below).
 */
function expectMutationEtag(reply: string | null, whole: string | null): void {
  if (whole?.startsWith('"m.')) expect(reply).toMatch(/^"[^"]+"$/);
  else expect(reply).toBe(whole);
}

const RUNS = Number(process.env.PROPERTY_RUNS ?? 40);
const MAX_COMMANDS = Number(process.env.PROPERTY_MAX_COMMANDS ?? 30);
const SEED = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED);
/** The error codes docs/errors.md documents. */
const DOCUMENTED_CODES = new Set(
  [...readFileSync('docs/errors.md', 'utf8').matchAll(/`([A-Z][A-Z_]{3,})`/g)].map((m) => m[1] as string),
);

interface Model {
  content: JsonObject;
}
interface Real {
  project: Project;
  etag: string | null;
}

const stats = {
  runs: 0,
  steps: 0,
  byRoute: {} as Record<string, number>,
  byStatus: {} as Record<number, number>,
  codes: {} as Record<string, number>,
  rules: {} as Record<string, number>,
};

function expectErrorShape(reply: Reply): void {
  expect(reply.body).toEqual({ message: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/) });
  expect(DOCUMENTED_CODES).toContain(reply.body.code);
  stats.codes[reply.body.code] = (stats.codes[reply.body.code] ?? 0) + 1;
}

/**
 * Every path an error message quotes is the one the client sent or one above it, whatever segment the store planned
 * on (at small segment sizes a path's value lies segments deep, and the store plans on that segment's fragment).
 */
const PATH_MESSAGES = new Set([
  'NOT_A_CONTAINER',
  'NOT_A_NUMBER',
  'NOT_AN_ARRAY',
  'INVALID_PATH',
  'INDEX_OUT_OF_RANGE',
  'PATH_NOT_FOUND',
  'TEST_FAILED',
]);
function expectMessageNamesPath(reply: Reply, path: unknown, context: string): void {
  if (typeof path !== 'string' || !PATH_MESSAGES.has(reply.body.code)) return;
  const sent = path.split('.');
  // The path sent and those above it, quoted, are right whatever they hold (a key may itself hold a quote); what
  // is quoted in the rest must still be one of them.
  let message = String(reply.body.message);
  for (let i = sent.length; i >= 1; i--) message = message.split(`'${sent.slice(0, i).join('.')}'`).join('');
  for (const [, quoted] of message.matchAll(/'([^']*)'/g)) {
    if (quoted === undefined || quoted === '(root)' || message.includes(`'${quoted}' is not an index`)) continue;
    const named = quoted.split('.');
    if (named.length > sent.length || named.some((s, i) => s !== sent[i]))
      throw new Error(`${context}; the message names '${quoted}', not the path sent or one above it`);
  }
}

/** Every object and array below the root, with its path (at most 4 levels down: the depth the generators reach). */
function containers(value: Json, path: string[] = [], found: Array<[string[], Json]> = []): Array<[string[], Json]> {
  if (path.length > 4 || value === null || typeof value !== 'object' || value instanceof LosslessNumber) return found;
  if (path.length > 0) found.push([path, value]);
  if (Array.isArray(value)) value.forEach((v, i) => containers(v, [...path, String(i)], found));
  else for (const k of Object.keys(value)) containers((value as JsonObject)[k] as Json, [...path, k], found);
  return found;
}

/** A mutation whose body carries exact decimals as their digits (lossless-json writes a LosslessNumber as a number). */
const send = (project: Project, route: Route, body: unknown) =>
  call('POST', `${project.content}/${route}`, {
    token: project.key,
    rawBody: stringify(body),
    headers: { 'content-type': 'application/json' },
  });
/** A reply's body with every number as written (GET writes numbers exactly; JSON.parse would round them). */
const exactly = (reply: Reply) => parse(reply.text) as { value: unknown };

/**
 * A value read is read again shallow and as slices, each checked against the value the model holds: an object's keys
 * each with true, an array's length, a scalar itself; an array's pages like Array.prototype.slice, anything else a
 * 400 NOT_AN_ARRAY. At small segment sizes the values span segments, so shallow reads meet stubs.
 */
async function expectPartialReads(real: Real, path: unknown, value: Json, context: string): Promise<void> {
  const at = `${real.project.content}?${path === undefined ? '' : `path=${encodeURIComponent(String(path))}&`}`;
  const shallow = await call('GET', `${at}shallow=true`, { token: real.project.key });
  const keys = (o: JsonObject) => Object.fromEntries(Object.keys(o).map((k) => [k, true]));
  const view = Array.isArray(value)
    ? { length: value.length }
    : value !== null && typeof value === 'object' && !(value instanceof LosslessNumber)
      ? keys(value as JsonObject)
      : value;
  if (shallow.status !== 200 || !sameJson(exactly(shallow).value, view))
    throw new Error(`${context}; shallow read: ${shallow.status} ${shallow.text}, model ${stringify(view)}`);
  for (const [start, limit] of [
    [-2, 3],
    [1, 2],
  ] as const) {
    const slice = await call('GET', `${at}start=${start}&limit=${limit}`, { token: real.project.key });
    if (!Array.isArray(value)) {
      if (slice.status !== 400 || slice.body?.code !== 'NOT_AN_ARRAY')
        throw new Error(`${context}; slice of a non-array: ${slice.status} ${slice.text}`);
      continue;
    }
    const from = start < 0 ? Math.max(0, value.length + start) : start;
    const page = { value: value.slice(from, from + limit), start: from, length: value.length };
    if (slice.status !== 200 || !sameJson(parse(slice.text), page))
      throw new Error(`${context}; slice ${start},${limit}: ${slice.status} ${slice.text}, model ${stringify(page)}`);
  }
}

class Step implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly route: Route,
    readonly body: Body,
  ) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    stats.steps++;
    stats.byRoute[this.route] = (stats.byRoute[this.route] ?? 0) + 1;
    const body = resolveBody(this.body, model.content);
    const expected = reference(this.route, body, model.content);
    for (const rule of expected.tags) stats.rules[rule] = (stats.rules[rule] ?? 0) + 1;
    const reply =
      this.route === 'get'
        ? await call(
            'GET',
            `${real.project.content}${body.path === undefined ? '' : `?path=${encodeURIComponent(String(body.path))}`}`,
            {
              token: real.project.key,
            },
          )
        : await send(real.project, this.route, body);
    stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
    const context = `${this.route} ${stringify(body)} on ${stringify(model.content)}: expected ${expected.status}, got ${reply.status} ${JSON.stringify(reply.body)}`;
    if (reply.status !== expected.status) throw new Error(context);
    if (expected.status !== 200) {
      expectErrorShape(reply);
      expectMessageNamesPath(reply, body.path, context);
    } else if (this.route === 'get') {
      if (!sameJson(exactly(reply).value, expected.value))
        throw new Error(`${context}; value ${reply.text} != ${stringify(expected.value)}`);
      await expectPartialReads(real, body.path, expected.value as Json, context);
    } else expect(reply.body).toEqual({ message: MESSAGES[this.route] });

    // A successful write read back through its own path: GET resolves a path in the engine (a projection), not
    // only in the service, and the whole-content GET below would never walk it.
    if (this.route !== 'get' && this.route !== 'update' && reply.status === 200) {
      const read = reference('get', { path: body.path }, expected.content);
      const back = await call('GET', `${real.project.content}?path=${encodeURIComponent(String(body.path))}`, {
        token: real.project.key,
      });
      if (back.status !== read.status || (read.status === 200 && !sameJson(exactly(back).value, read.value))) {
        throw new Error(
          `${context}; reading ${JSON.stringify(body.path)} back: ${back.status} ${back.text}, model ${read.status} ${stringify(read.value)}`,
        );
      }
    }

    // The content and the version after every step.
    const after = await call('GET', real.project.content, { token: real.project.key });
    expect(after.status).toBe(200);
    if (!sameJson(exactly(after).value, expected.content)) {
      throw new Error(
        `${this.route} ${stringify(body)} on ${stringify(model.content)}: content ${after.text}, model ${stringify(expected.content)}`,
      );
    }
    const etag = after.headers.get('etag');
    if (this.route !== 'get' && reply.status === 200) {
      // The mutation's ETag is the version it left (a no-op delete answers the current one).
      expectMutationEtag(reply.headers.get('etag'), etag);
    } else if (real.etag !== null) {
      // Refused requests and reads change nothing, not even the version.
      expect(etag).toBe(real.etag);
    }
    real.etag = etag;
    model.content = expected.content;
  }

  toString(): string {
    return `${this.route} ${describeBody(this.body)}`;
  }
}

/** A 413 `CHANGE_TOO_LARGE` for the whole batch (no operation named): more than one commit holds. */
function tooLargeForOneCommit(reply: { status: number; body: Record<string, unknown> }): boolean {
  return reply.status === 413 && reply.body.code === 'CHANGE_TOO_LARGE';
}

/** A batch: the reference model applies its operations one by one on a copy; any failure leaves the content as it was. */
class BatchStep implements fc.AsyncCommand<Model, Real> {
  constructor(readonly operations: Body[]) {}

  check(): boolean {
    return true;
  }

  /** Symbolic paths and current values resolved one by one, each on the content the operations before it left. */
  private resolve(content: JsonObject): Body[] {
    const sent: Body[] = [];
    let current = content;
    for (const { op, ...fields } of this.operations) {
      const body: Body = { op, ...resolveBody(fields, current) };
      if (body.value instanceof CurrentValue) {
        const read = reference('get', { path: body.path }, current);
        body.value = (read.status === 200 ? read.value : null) as Json;
      }
      sent.push(body);
      const step = referenceBatch([body], current);
      if (step.status === 200) current = step.content;
    }
    return sent;
  }

  async run(model: Model, real: Real): Promise<void> {
    stats.steps++;
    stats.byRoute.batch = (stats.byRoute.batch ?? 0) + 1;
    const operations = this.resolve(model.content);
    const expected = referenceBatch(operations, model.content);
    for (const rule of expected.tags) stats.rules[rule] = (stats.rules[rule] ?? 0) + 1;
    const reply = await send(real.project, 'batch' as Route, { operations });
    stats.byStatus[reply.status] = (stats.byStatus[reply.status] ?? 0) + 1;
    const context = `batch ${stringify(operations)} on ${stringify(model.content)}: expected ${expected.status} at ${expected.index}, got ${reply.status} ${JSON.stringify(reply.body)}`;
    if (expected.status === 200 && tooLargeForOneCommit(reply)) {
      // A documented limit the model cannot count: a batch that reads, tests or replaces a value whole plans on all of
      // it, and more than 99 segments in its one commit (small SEGMENT_FRAGMENT_BYTES reach that) is a 413 with
      // nothing changed (docs/batches-and-patches.md). Accepted in place of a 200 only with the content unchanged.
      stats.rules['413 more than one commit holds'] = (stats.rules['413 more than one commit holds'] ?? 0) + 1;
      const after = await call('GET', real.project.content, { token: real.project.key });
      if (!sameJson(exactly(after).value, model.content)) throw new Error(`${context}; content changed: ${after.text}`);
      return;
    }
    if (reply.status !== expected.status) throw new Error(context);
    if (expected.status === 200) {
      expect(reply.body).toEqual({ message: 'Batch applied successfully' });
    } else {
      const { index, ...error } = reply.body;
      if (index !== expected.index) throw new Error(context);
      expectErrorShape({ ...reply, body: error });
      expectMessageNamesPath(reply, operations[index]?.path, context);
    }
    const after = await call('GET', real.project.content, { token: real.project.key });
    expect(after.status).toBe(200);
    if (!sameJson(exactly(after).value, expected.content)) {
      throw new Error(`${context}; content ${after.text}, model ${stringify(expected.content)}`);
    }
    const etag = after.headers.get('etag');
    if (reply.status === 200) expectMutationEtag(reply.headers.get('etag'), etag);
    else if (real.etag !== null) expect(etag).toBe(real.etag);
    real.etag = etag;
    model.content = expected.content;
  }

  toString(): string {
    return `batch [${this.operations.map(describeBody).join(', ')}]`;
  }
}

const batches = batchRequest.map((operations) => new BatchStep(operations));
const layered = layeredBatchRequest.map((operations) => new BatchStep(operations));
const commands = [
  ...anyRequest.map((r) => r.map(([route, body]) => new Step(route, body))),
  batches,
  batches,
  batches,
  layered,
  layered,
];

describe('the service against the reference model', () => {
  afterAll(() => {
    console.log(
      `property: ${stats.runs} runs, ${stats.steps} steps (${RUNS} runs requested, up to ${MAX_COMMANDS} steps each)\n` +
        `  steps by route: ${JSON.stringify(stats.byRoute)}\n  statuses: ${JSON.stringify(stats.byStatus)}\n` +
        `  error codes: ${JSON.stringify(stats.codes)}\n  model rules exercised: ${JSON.stringify(stats.rules)}`,
    );
  });

  it(
    'agrees with the model on status, body, content and version after every step',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof({ weight: 2, arbitrary: initialContent }, { weight: 1, arbitrary: layeredContent }),
          fc.commands(commands, { maxCommands: MAX_COMMANDS, size: 'max' }),
          async (initial, cmds) => {
            stats.runs++;
            const project = await newProject();
            const start = await send(project, 'update', { content: initial });
            expect(start.status).toBe(200);
            const content = reference('update', { content: initial }, {}).content;
            // The whole content's ETag (the update's own is its written value's: the same for one segment).
            const etag = (await call('GET', project.content, { token: project.key })).headers.get('etag');
            const model: Model = { content };
            await fc.asyncModelRun(async () => ({ model, real: { project, etag } }), cmds);
            // Every object and array read back by its path: a subtree's read finds each segment its stubs name,
            // wherever a cut moved the stub (the steps read only the paths they wrote).
            for (const [segments, value] of containers(model.content)) {
              const path = formatPath(segments);
              const read = await call('GET', `${project.content}?path=${encodeURIComponent(path)}`, {
                token: project.key,
              });
              if (read.status !== 200 || !sameJson(exactly(read).value, value))
                throw new Error(`GET ${path}: ${read.status} ${read.text}, model ${stringify(value)}`);
            }
            // The layout behind the content: no segment left behind by a change, no stub leading nowhere.
            expect(await strays(project)).toEqual({ orphans: [], dangling: [] });
          },
        ),
        { numRuns: RUNS, seed: SEED, verbose: 1 },
      );
    },
    60_000 + RUNS * 15_000,
  );
});

describe('the reference model itself, on examples written from decisions.md', () => {
  const run = (content: JsonObject, steps: Array<[Route, Body]>) =>
    steps.reduce<{ content: JsonObject; statuses: number[] }>(
      (state, [route, body]) => {
        const out = reference(route, body, state.content);
        return { content: out.content, statuses: [...state.statuses, out.status] };
      },
      { content, statuses: [] },
    );

  it.each<[string, JsonObject, Array<[Route, Body]>, JsonObject, number[]]>([
    [
      'set creates missing parents as objects',
      {},
      [['set', { path: 'data.item.name', value: 'Lamp' }]],
      { data: { item: { name: 'Lamp' } } },
      [200],
    ],
    [
      'set on an array: replace, append at length, 400 beyond',
      { l: [1] },
      [
        ['set', { path: 'l.0', value: 2 }],
        ['set', { path: 'l.1', value: 3 }],
        ['set', { path: 'l.3', value: 4 }],
      ],
      { l: [2, 3] },
      [200, 200, 400],
    ],
    [
      'negative indexes count from the end',
      { l: [1, 2, 3] },
      [
        ['set', { path: 'l.-1', value: 9 }],
        ['set', { path: 'l.-4', value: 0 }],
      ],
      { l: [1, 2, 9] },
      [200, 400],
    ],
    [
      'an integer segment is a key on an object',
      { o: {} },
      [['set', { path: 'o.0', value: 1 }]],
      { o: { '0': 1 } },
      [200],
    ],
    ['the first segment is a key', {}, [['set', { path: '-1', value: 1 }]], { '-1': 1 }, [200]],
    [
      'walking through a scalar is a 400',
      { a: 5 },
      [
        ['set', { path: 'a.b', value: 1 }],
        ['push', { path: 'a.b', value: 1 }],
      ],
      { a: 5 },
      [400, 400],
    ],
    [
      'escaped dots and backslashes',
      {},
      [
        ['set', { path: 'files.readme\\.md', value: 1 }],
        ['set', { path: 'a\\\\b', value: 2 }],
        ['set', { path: 'x\\y', value: 3 }],
      ],
      { files: { 'readme.md': 1 }, 'a\\b': 2 },
      [200, 200, 400],
    ],
    [
      'empty paths and segments are 400s',
      {},
      [
        ['set', { path: '', value: 1 }],
        ['set', { path: 'a..b', value: 1 }],
        ['set', { path: '.a', value: 1 }],
        ['set', { path: 'a.', value: 1 }],
      ],
      {},
      [400, 400, 400, 400],
    ],
    [
      'insert: -len..len, a missing target only at 0',
      { l: ['b'] },
      [
        ['insert', { path: 'l', value: 'a', index: 0 }],
        ['insert', { path: 'l', value: 'c', index: 2 }],
        ['insert', { path: 'l', value: 'x', index: -1 }],
        ['insert', { path: 'l', value: 'z', index: 5 }],
        ['insert', { path: 'm', value: 1, index: 1 }],
        ['insert', { path: 'm', value: 1, index: 0 }],
        ['insert', { path: 'l', value: 1, index: 0.5 }],
      ],
      { l: ['a', 'b', 'x', 'c'], m: [1] },
      [200, 200, 200, 400, 400, 200, 400],
    ],
    [
      'push: a missing target becomes [value], a non-array is a 400',
      { n: 1 },
      [
        ['push', { path: 'p.q', value: null }],
        ['push', { path: 'n', value: 1 }],
        ['push', { path: 'p.q', value: 2 }],
      ],
      { n: 1, p: { q: [null, 2] } },
      [200, 400, 200],
    ],
    [
      'increment/decrement: missing counts as 0, default 1, non-number 400',
      { s: 'x' },
      [
        ['increment', { path: 'c' }],
        ['decrement', { path: 'd.e', value: 5 }],
        ['increment', { path: 's' }],
        ['increment', { path: 'c', value: '2' }],
      ],
      { s: 'x', c: 1, d: { e: -5 } },
      [200, 200, 400, 400],
    ],
    [
      'delete: removes (elements shift); a missing path is a 200',
      { l: [1, 2, 3], a: 1 },
      [
        ['delete', { path: 'l.0' }],
        ['delete', { path: 'zz.y' }],
        ['delete', { path: 'a.b' }],
        ['delete', { path: 'a' }],
      ],
      { l: [2, 3] },
      [200, 200, 200, 200],
    ],
    [
      'get: a missing path is a 404, an invalid one a 400',
      { a: { b: 1 } },
      [
        ['get', { path: 'a.b' }],
        ['get', { path: 'a.c' }],
        ['get', { path: 'a.b.c' }],
        ['get', { path: 'a..b' }],
        ['get', {}],
      ],
      { a: { b: 1 } },
      [200, 404, 404, 400, 200],
    ],
    [
      'value is required (null is a value); unknown fields are 400s',
      {},
      [
        ['set', { path: 'a' }],
        ['set', { path: 'a', value: null }],
        ['set', { path: 'b', value: 1, x: 1 }],
      ],
      { a: null },
      [400, 200, 400],
    ],
    [
      'values: no empty keys, no __proto__, numbers in range, at most 32 levels',
      {},
      [
        ['set', { path: 'a', value: { '': 1 } }],
        ['set', { path: '__proto__', value: 1 }],
        ['set', { path: 'a', value: 1e126 }],
        ['set', { path: 'a', value: 1e-131 }],
        ['set', { path: 'a', value: JSON.parse(`${'['.repeat(30)}${']'.repeat(30)}`) }],
        ['set', { path: 'b', value: JSON.parse(`${'['.repeat(31)}${']'.repeat(31)}`) }],
      ],
      { a: JSON.parse(`${'['.repeat(30)}${']'.repeat(30)}`) },
      [400, 400, 400, 400, 200, 400],
    ],
    [
      'update replaces the whole content with an object',
      { a: 1 },
      [
        ['update', { content: { b: 2 } }],
        ['update', { content: [1] }],
      ],
      { b: 2 },
      [200, 400],
    ],
  ])('%s', (_, start, steps, content, statuses) => {
    const out = run(start, steps);
    expect(out.statuses).toEqual(statuses);
    expect(sameJson(out.content, content)).toBe(true);
  });
});
