// Three API processes over one engine (test/support/servers.ts), as AWS runs many warm Lambdas over one table: each
// process remembers where paths live, which chunks and buckets it met, and that memory goes stale whenever another
// process cuts, folds or moves a segment. With 256-byte segments the contents chunk (a long array) and bucket (a wide
// object inside another wide one). Random operation sequences (fast-check) go through random processes and are
// compared with the reference model (test/support/model-reference.ts, model-patch.ts) after every step, each read
// through yet another process:
// - sequential steps: every route, batches, JSON Patch and merge patch;
// - lost answers: a mutation with an Idempotency-Key whose answer is discarded, then writes beside its path (a large
//   value that cuts the segment holding it, or more small writes than a segment has request-token slots), a read of
//   its path through the retrying process, then the retry there with the same key: applied once. Half of them go
//   through a fourth, lossy process whose DynamoDB answers to content writes are lost after the engine applied them
//   (the service answers 5xx, so no success is remembered and only the segments' request tokens can recognise the
//   retry); the others are answered (a discarded 200, which the idempotency record answers again);
// - concurrent bursts across processes of disjoint or commutative operations, checked after the burst (a 409
//   WRITE_CONFLICT or 503 is retried with the same key, as a client does);
// - realtime across processes: a subscriber to the whole content sees every committed change made through any
//   process, once (no revision twice), in order (revisions grow), its mirror equal to the model after every step.
//   The subscriber connects to the first process: it plays API Gateway's WebSocket API and runs the table's one
//   stream consumer (the embedded engine's stream exists only in the process that serves the engine, and one
//   consumer per process would handle each record three times; see test/support/servers.ts).
// Seeds are fixed (one per property, MULTIPROCESS_RUNS runs each, at most MULTIPROCESS_TIME_LIMIT_MS per property,
// shrinking included); a failure prints the seed, fast-check's path and the shrunk command list; MULTIPROCESS_SEED
// (with MULTIPROCESS_PATH) replays it (bursts replay their commands, not their interleaving).
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { parse, stringify } from 'lossless-json';
import { MESSAGES, type Project, type Reply, newProject } from '../support/api';
import { type Body, CurrentValue, describeBody, resolveBody } from '../support/model-generators';
import {
  type Json,
  type JsonObject,
  type Route,
  formatPath,
  parsePath,
  reference,
  referenceBatch,
  sameJson,
} from '../support/model-reference';
import { type PatchOperation, pointerTokens, referenceJsonPatch, referenceMergePatch } from '../support/model-patch';
import { type DynamoProxy, type ProxyRequest, startDynamoProxy } from '../support/dynamo-proxy';
import { type LocalApi, startLocalApi, stopProcess } from '../support/local-api';
import { Client, WAIT_MS, applyChanges } from '../support/realtime';
import { strays } from '../support/segments';
import { CURRENT, batch, bigString, initial, jsonPatch, mergePatch, request, value } from './generators';

const URLS = (process.env.MULTIPROCESS_URLS ?? '').split(' ').filter(Boolean);
const RUNS = Number(process.env.MULTIPROCESS_RUNS ?? 30);
const MAX_COMMANDS = Number(process.env.MULTIPROCESS_MAX_COMMANDS ?? 20);
/**
 * Each property stops after this long, runs and shrinking included (CI's budget: four properties in about four
 * minutes per engine); a failure found by then is reported, shrunk as far as the time allowed.
 */
const TIME_LIMIT_MS = Number(process.env.MULTIPROCESS_TIME_LIMIT_MS ?? 45_000);
/** How long a subscriber waits for a change to arrive before calling it lost (shorter makes shrinking faster). */
const REALTIME_WAIT_MS = Number(process.env.MULTIPROCESS_WAIT_MS ?? WAIT_MS);
const SEED = process.env.MULTIPROCESS_SEED === undefined ? undefined : Number(process.env.MULTIPROCESS_SEED);
/** With MULTIPROCESS_SEED, fast-check's `path` of a reported failure replays that (shrunk) case alone. */
const PATH = process.env.MULTIPROCESS_PATH;
/** ...and the command list's `replayPath` (printed at the end of the counterexample as /*replayPath="…"*\/). */
const REPLAY_PATH = process.env.MULTIPROCESS_REPLAY_PATH;
const server = fc.integer({ min: 0, max: Math.max(0, URLS.length - 1) });

interface Model {
  content: JsonObject;
}
interface Real {
  project: Project;
  subscriber?: Subscriber;
}

const stats = { runs: 0, steps: {} as Record<string, number>, statuses: {} as Record<string, number>, frames: 0 };
const count = (table: Record<string, number>, key: string) => {
  table[key] = (table[key] ?? 0) + 1;
};

/** Where two values differ (at most 6 paths, each with both values), for failure messages shorter than contents. */
function differences(real: unknown, model: unknown, at = '', found: string[] = []): string[] {
  if (found.length >= 6 || sameJson(real, model)) return found;
  const container = (v: unknown) => typeof v === 'object' && v !== null && !('isLosslessNumber' in v);
  if (container(real) && container(model) && Array.isArray(real) === Array.isArray(model)) {
    const keys = new Set([...Object.keys(real as object), ...Object.keys(model as object)]);
    for (const k of keys) differences((real as never)[k], (model as never)[k], at ? `${at}.${k}` : k, found);
    if (Array.isArray(real) && real.length !== (model as unknown[]).length)
      found.push(`${at}: length ${real.length}, model ${(model as unknown[]).length}`);
    return found;
  }
  const show = (v: unknown) => (v === undefined ? 'missing' : (stringify(v as never) ?? '').slice(0, 200));
  found.push(`${at || '(root)'}: ${show(real)}, model ${show(model)}`);
  return found;
}

// ---- HTTP through one process ----

/**
 * One more API process over the same engine, its DynamoDB requests through a proxy that can lose the engine's
 * answers after the engine applied them (test/support/dynamo-proxy.ts): a Lambda whose write landed but which
 * answered 500 or 503, so that no success was remembered for its Idempotency-Key. Started by the suite below.
 */
const LOSSY = -1;
let lossy: { url: string; proxy: DynamoProxy; api: LocalApi } | undefined;
const urlOf = (at: number) => (at === LOSSY ? (lossy?.url as string) : URLS[at]);
/** A write of content segments (their sort keys start with `C#`), not of the idempotency or account records. */
const isContentWrite = (r: ProxyRequest) =>
  (r.operation === 'UpdateItem' || r.operation === 'TransactWriteItems') && r.body.includes('"S":"C#');

/** A request sent to one process; the body's numbers keep their digits both ways (lossless-json). */
async function http(
  at: number,
  project: Project,
  method: string,
  suffix: string,
  options: { body?: string; type?: string; key?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${project.key}` };
  if (options.body !== undefined) headers['content-type'] = options.type ?? 'application/json';
  if (options.key) headers['idempotency-key'] = options.key;
  const res = await fetch(`${urlOf(at)}${project.content}${suffix}`, { method, headers, body: options.body });
  const text = await res.text();
  let body: any = text;
  try {
    body = text === '' ? undefined : parse(text);
  } catch {
    // left as text
  }
  return { status: res.status, body, headers: res.headers, text };
}
const readPath = (at: number, project: Project, path?: unknown) =>
  http(at, project, 'GET', path === undefined ? '' : `?path=${encodeURIComponent(String(path))}`);

/** The whole content read through `at` equals the model's. */
async function expectContent(at: number, real: Real, model: Model, context: string): Promise<void> {
  const read = await readPath(at, real.project);
  if (read.status !== 200 || !sameJson(read.body?.value, model.content))
    throw new Error(
      `${context}\n  content through server ${at}: ${read.status} ${read.status === 200 ? differences(read.body.value, model.content).join('; ') : read.text}`,
    );
  await real.subscriber?.settle(model.content, context);
}

// ---- one request of any kind, its expected outcome from the models ----

type Kind = 'route' | 'batch' | 'json-patch' | 'merge-patch';
interface Prepared {
  describe: string;
  method: string;
  suffix: string;
  body?: string;
  type?: string;
  expected: { status: number; content: JsonObject; value?: Json; index?: number };
  route: Route | 'batch' | 'patch';
  /** The same request with its paths and values resolved: what a retry sends again, on whatever content it meets. */
  resolved: Request;
}

/** A request as generated (paths maybe symbolic), resolved against the content when its turn comes. */
class Request {
  constructor(
    readonly kind: Kind,
    readonly payload: unknown,
  ) {}

  prepare(content: JsonObject): Prepared {
    if (this.kind === 'route') {
      const [route, raw] = this.payload as [Route, Body];
      const body = resolveBody(raw, content);
      const expected = reference(route, body, content);
      const describe = `${route} ${stringify(body)}`;
      if (route === 'get') {
        const suffix = body.path === undefined ? '' : `?path=${encodeURIComponent(String(body.path))}`;
        return { describe, method: 'GET', suffix, expected, route, resolved: new Request('route', [route, body]) };
      }
      const resolved = new Request('route', [route, body]);
      return { describe, method: 'POST', suffix: `/${route}`, body: stringify(body), expected, route, resolved };
    }
    if (this.kind === 'batch') {
      const operations: Body[] = [];
      let current = content;
      for (const { op, ...fields } of this.payload as Body[]) {
        const body: Body = { op, ...resolveBody(fields, current) };
        if (body.value instanceof CurrentValue) {
          const read = reference('get', { path: body.path }, current);
          body.value = (read.status === 200 ? read.value : null) as Json;
        }
        operations.push(body);
        const step = referenceBatch([body], current);
        if (step.status === 200) current = step.content;
      }
      const expected = referenceBatch(operations, content);
      const text = stringify({ operations }) as string;
      const resolved = new Request('batch', operations);
      return {
        describe: `batch ${text}`,
        method: 'POST',
        suffix: '/batch',
        body: text,
        expected,
        route: 'batch',
        resolved,
      };
    }
    if (this.kind === 'json-patch') {
      const operations = (this.payload as PatchOperation[]).map((o) => {
        if (o.value !== CURRENT) return o;
        const read = reference('get', { path: pointerTokens(o.path).join('.') }, content);
        return { ...o, value: (read.status === 200 ? read.value : null) as Json };
      });
      const text = stringify(operations) as string;
      const type = 'application/json-patch+json';
      const expected = referenceJsonPatch(operations, content);
      const resolved = new Request('json-patch', operations);
      return {
        describe: `json-patch ${text}`,
        method: 'PATCH',
        suffix: '',
        body: text,
        type,
        expected,
        route: 'patch',
        resolved,
      };
    }
    const patch = this.payload as JsonObject;
    const text = stringify(patch) as string;
    const type = 'application/merge-patch+json';
    const expected = referenceMergePatch(patch, content);
    return {
      describe: `merge-patch ${text}`,
      method: 'PATCH',
      suffix: '',
      body: text,
      type,
      expected,
      route: 'patch',
      resolved: new Request('merge-patch', patch),
    };
  }

  toString(): string {
    if (this.kind === 'route') {
      const [route, body] = this.payload as [Route, Body];
      return `${route} ${describeBody(body)}`;
    }
    return `${this.kind} ${JSON.stringify(this.payload)}`;
  }
}

const send = (at: number, project: Project, p: Prepared, key?: string) =>
  http(at, project, p.method, p.suffix, { body: p.body, type: p.type, key });

/** The reply agrees with the model's outcome: status, success message or error code, index, value read. */
function expectReply(p: Prepared, reply: Reply, context: string): void {
  count(stats.statuses, String(reply.status));
  const fail = (why: string) => {
    throw new Error(
      `${context}\n  ${why}: expected ${p.expected.status}${p.expected.index === undefined ? '' : ` at ${p.expected.index}`}, got ${reply.status} ${reply.text}`,
    );
  };
  if (reply.status !== p.expected.status) fail('status');
  if (reply.status !== 200) {
    if (typeof reply.body?.code !== 'string' || typeof reply.body?.message !== 'string') fail('error body');
    if (p.expected.index !== undefined && Number(reply.body.index) !== p.expected.index) fail('index');
    return;
  }
  if (p.route === 'get') {
    if (!sameJson(reply.body?.value, p.expected.value)) fail(`value (model ${stringify(p.expected.value)})`);
  } else {
    const message =
      p.route === 'batch'
        ? 'Batch applied successfully'
        : p.route === 'patch'
          ? 'Content patched successfully'
          : MESSAGES[p.route as keyof typeof MESSAGES];
    if (reply.body?.message !== message) fail('message');
  }
}

// ---- commands ----

/** One request through one process, the content then read through another. */
class Step implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly request: Request,
    readonly at: number,
    readonly reader: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    count(stats.steps, this.request.kind);
    const p = this.request.prepare(model.content);
    const context = `${p.describe} through server ${this.at}`;
    expectReply(p, await send(this.at, real.project, p), context);
    model.content = p.expected.content;
    await expectContent(this.reader, real, model, context);
  }
  toString = () => `${this.request} @${this.at} (read @${this.reader})`;
}

/** The dot path a request names first (a batch's first operation, a patch's first pointer), for writes beside it. */
function pathOf(p: Prepared): string | undefined {
  if (p.body === undefined) return undefined;
  const body = parse(p.body) as { path?: unknown; operations?: Array<{ path?: unknown }> } | PatchOperation[];
  if (Array.isArray(body)) return typeof body[0]?.path === 'string' ? pointerTokens(body[0].path).join('.') : undefined;
  if (p.route === 'patch') return 'c.obj';
  const path = body.path ?? body.operations?.[0]?.path;
  return typeof path === 'string' ? path : undefined;
}

/** The path `key` beside `path`, `up` levels above it (the root for a malformed path). */
function besidePath(path: string | undefined, up: number, key: string): string {
  let segments: string[] = [];
  try {
    segments = path === undefined ? [] : parsePath(path);
  } catch {
    // a malformed path: beside the root
  }
  return formatPath([...segments.slice(0, Math.max(0, segments.length - up)), key]);
}

/**
 * More small writes beside the path a lost request wrote than a segment has request-token slots (32): each takes a
 * slot of that segment, so a retry can no longer count on finding its own token there.
 */
class WritesNear {
  constructor(
    readonly count: number,
    readonly at: number,
  ) {}
  near(path: string | undefined): Step[] {
    const where = besidePath(path, 1, 'tick');
    return Array.from(
      { length: this.count },
      () => new Step(new Request('route', ['increment', { path: where }]), this.at, this.at),
    );
  }
  toString = () => `${this.count} × increment <parent>.tick @${this.at}`;
}

/**
 * A large value set beside the path a lost request wrote, `up` levels above it (its parent, or the parent's parent):
 * it cuts the segment that holds the path, so the path moves to a new segment before the retry.
 */
class CutNear {
  constructor(
    readonly up: number,
    readonly key: string,
    readonly value: Json,
    readonly at: number,
  ) {}
  near(path: string | undefined): Step[] {
    const where = besidePath(path, this.up, this.key);
    return [new Step(new Request('route', ['set', { path: where, value: this.value }]), this.at, this.at)];
  }
  toString = () => `set <${this.up} up>.${this.key} = <${stringify(this.value)?.length} chars> @${this.at}`;
}

/**
 * A lost answer: the request goes through `first` with an Idempotency-Key and its answer is discarded; writes beside
 * it follow (values that cut its segment); the retrying process reads the request's path; the retry goes through it
 * with the same key. A success is applied once and answered again; an error is not remembered, so the retry runs anew.
 */
class LostAnswer implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly request: Request,
    readonly first: number,
    readonly beside: Array<Step | CutNear | WritesNear>,
    readonly retry: number,
    /** Sent through the lossy process: every content write lands and its answer is lost (the service answers 5xx). */
    readonly lost: boolean,
  ) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    count(stats.steps, this.lost ? 'lost answer (5xx)' : 'lost answer');
    const key = `mp-${randomUUID()}`;
    const original = this.request.prepare(model.content);
    const first = this.lost ? LOSSY : this.first;
    const context = `${original.describe} with Idempotency-Key through server ${first === LOSSY ? 'lossy' : first}, answer discarded`;
    // The client never sees this answer; the test checks it, so that a failure here is not blamed on the retry.
    let remembered = original.expected.status === 200;
    if (!this.lost) expectReply(original, await send(first, real.project, original, key), context);
    else {
      lossy?.proxy.setFaults((r) => (isContentWrite(r) ? { when: 'after', kind: 'internal' } : undefined));
      const reply = await send(first, real.project, original, key).finally(() => lossy?.proxy.setFaults(undefined));
      count(stats.statuses, `lost ${reply.status}`);
      // A refusal may be the engine's answer to a conditional write (the one-request forms): lost too, hence a 5xx.
      if (reply.status < 500) expectReply(original, reply, context);
      remembered = reply.status === 200;
      // What an unanswered write leaves: all of it, or (a change refused after its answer was lost) none of it.
      const read = await readPath(this.retry, real.project);
      const landed = sameJson(read.body?.value, original.expected.content);
      if (!landed && !sameJson(read.body?.value, model.content))
        throw new Error(
          `${context}\n  after a ${reply.status}, the content is neither before nor after the request: ${differences(read.body?.value, original.expected.content).join('; ')}`,
        );
      if (!landed) original.expected = { ...original.expected, content: model.content };
    }
    const applied = original.expected.content !== model.content;
    model.content = original.expected.content;
    await expectContent(this.retry, real, model, `${context}; then`);
    const path = pathOf(original);
    for (const step of this.beside)
      for (const each of step instanceof Step ? [step] : step.near(path)) await each.run(model, real);
    if (path !== undefined) await readPath(this.retry, real.project, path);
    // A remembered success is answered again; a write that landed unanswered is recognised by its token (nothing
    // applied twice); anything else runs anew on the content it meets.
    const again: Prepared =
      remembered || applied
        ? { ...original, expected: { ...original.expected, status: 200, index: undefined, content: model.content } }
        : original.resolved.prepare(model.content);
    const retried = `${context}; after ${this.beside.length} writes beside it, retried through server ${this.retry}`;
    let reply = await send(this.retry, real.project, again, key);
    // A duplicate while the first is still on record as running (a lost answer may leave it so for a while).
    for (let i = 0; i < 40 && reply.status === 409 && reply.body?.code === 'IDEMPOTENCY_IN_PROGRESS'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      reply = await send(this.retry, real.project, again, key);
    }
    expectReply(again, reply, retried);
    model.content = again.expected.content;
    await expectContent(this.retry === 0 ? 1 : 0, real, model, retried);
  }
  toString = () =>
    `lost answer${this.lost ? ' (5xx)' : ''}: ${this.request} @${this.lost ? 'lossy' : this.first}, beside [${this.beside.join('; ')}], retried @${this.retry}`;
}

/**
 * Whether the burst's outcome on this content is the same in any order: each request's answer, and the content after
 * all of them (tried in every rotation of the drawn order, forward and backward). The generator draws disjoint or
 * commutative requests for the content it expects, but the steps before may have changed it: a JSON Patch `add`
 * whose parent a set beside it creates (after `delete c.obj`), a merge patch that makes a string `c` an object beside
 * a set below `c`. Such a burst's outcome is the order's, so it is not drawn on that content.
 */
function commutes(requests: ReadonlyArray<[Request, number]>, content: JsonObject): boolean {
  const resolved = prepareInOrder(
    requests.map(([request]) => request),
    content,
  ).prepared.map((p) => p.resolved);
  const outcome = (order: number[]) => {
    const { prepared, after } = prepareInOrder(
      order.map((i) => resolved[i] as Request),
      content,
    );
    const answers: string[] = [];
    order.forEach((i, k) => {
      const { expected } = prepared[k] as Prepared;
      answers[i] = `${expected.status} ${expected.index}`;
    });
    return { answers: answers.join(), after };
  };
  const n = resolved.length;
  const first = outcome([...Array(n).keys()]);
  for (let start = 0; start < n; start++) {
    const rotation = Array.from({ length: n }, (_, k) => (start + k) % n);
    for (const order of [rotation, [...rotation].reverse()]) {
      const other = outcome(order);
      if (other.answers !== first.answers || !sameJson(other.after, first.after)) return false;
    }
  }
  return true;
}

/** Requests prepared one after another on the content each leaves (as the model runs them in that order). */
function prepareInOrder(
  requests: readonly Request[],
  content: JsonObject,
): { prepared: Prepared[]; after: JsonObject } {
  let after = content;
  const prepared = requests.map((request) => {
    const p = request.prepare(after);
    after = p.expected.content;
    return p;
  });
  return { prepared, after };
}

/** Disjoint or commutative requests sent at once through random processes; the content checked after all answered. */
class Burst implements fc.AsyncCommand<Model, Real> {
  constructor(readonly requests: Array<[Request, number]>) {}
  check = (model: Readonly<Model>) => commutes(this.requests, model.content);
  async run(model: Model, real: Real): Promise<void> {
    count(stats.steps, 'burst');
    const inOrder = prepareInOrder(
      this.requests.map(([request]) => request),
      model.content,
    );
    const content = inOrder.after;
    const prepared = inOrder.prepared.map((p, i) => ({ p, at: (this.requests[i] as [Request, number])[1] }));
    const context = `burst [${prepared.map(({ p, at }) => `${p.describe} @${at}`).join('; ')}]`;
    const replies = await Promise.all(
      prepared.map(async ({ p, at }) => {
        const key = `mp-${randomUUID()}`;
        let reply = await send(at, real.project, p, key);
        // A client retries a refused race (409 WRITE_CONFLICT or IDEMPOTENCY_IN_PROGRESS) or a 503 with its key.
        for (let attempt = 1; attempt < 8 && (reply.status === 409 || reply.status === 503); attempt++) {
          if (reply.status === 409 && p.expected.status === 409) break;
          await new Promise((r) => setTimeout(r, 20 * attempt));
          reply = await send((at + attempt) % URLS.length, real.project, p, key);
        }
        return reply;
      }),
    );
    prepared.forEach(({ p }, i) => expectReply(p, replies[i] as Reply, `${context}\n  request ${i}`));
    model.content = content;
    await expectContent(0, real, model, context);
  }
  toString = () => `burst [${this.requests.map(([r, at]) => `${r} @${at}`).join('; ')}]`;
}

// ---- realtime: a subscriber to the whole content, its mirror kept as a client keeps one ----

class Subscriber {
  private mirror: Record<string, unknown> = {};
  private read = 0;
  private last = '';
  private constructor(
    readonly client: Client,
    readonly project: Project,
  ) {}

  static async open(project: Project): Promise<Subscriber> {
    const s = new Subscriber(await Client.open(), project);
    const { snapshot } = await s.client.subscribe({
      project: `${project.username}/${project.slug}`,
      token: project.key,
    });
    s.read = s.client.texts.length;
    s.mirror = (parse(s.client.texts[s.read - 1] as string) as { value: Record<string, unknown> }).value ?? {};
    s.last = snapshot.revision;
    return s;
  }

  /** Applies the frames come so far: a change only with a revision above the last (no repeat, no reordering). */
  private async apply(context: string): Promise<void> {
    while (this.read < this.client.texts.length) {
      const text = this.client.texts[this.read++] as string;
      stats.frames++;
      const frame = parse(text) as { type: string; revision: string; changes: never };
      if (frame.type === 'change' || frame.type === 'changed') {
        if (frame.revision <= this.last)
          throw new Error(
            `${context}\n  realtime: revision ${frame.revision} after ${this.last} (repeated or out of order): ${text}`,
          );
        this.last = frame.revision;
      }
      if (frame.type === 'change') applyChanges(this.mirror, frame.changes);
      else if (frame.type === 'changed') this.mirror = (await readPath(0, this.project)).body.value;
      else throw new Error(`${context}\n  realtime: unexpected frame ${text}`);
    }
  }

  /** Waits until the mirror equals the model (every committed change delivered). */
  async settle(content: JsonObject, context: string): Promise<void> {
    const deadline = Date.now() + REALTIME_WAIT_MS;
    for (;;) {
      await this.apply(context);
      if (sameJson(this.mirror, content)) return;
      if (Date.now() > deadline || this.client.closed)
        throw new Error(
          `${context}\n  realtime: after ${REALTIME_WAIT_MS} ms the subscriber's mirror differs: ${differences(this.mirror, content).join('; ')}\n  last frames: ${this.client.texts
            .slice(-4)
            .map((t) => t.slice(0, 300))
            .join('\n    ')}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.client.close();
  }
}

// ---- the properties ----

const routeRequest = request.map((r) => new Request('route', r));
const anyRequest = fc.oneof(
  { weight: 6, arbitrary: routeRequest },
  { weight: 2, arbitrary: batch.map((b) => new Request('batch', b)) },
  { weight: 1, arbitrary: jsonPatch.map((p) => new Request('json-patch', p)) },
  { weight: 1, arbitrary: mergePatch.map((p) => new Request('merge-patch', p)) },
);
const mutation = anyRequest.filter((r) => r.kind !== 'route' || (r.payload as [Route])[0] !== 'get');
const step = fc.tuple(anyRequest, server, server).map(([r, at, reader]) => new Step(r, at, reader));
/** Writes that cut segments where the lost request wrote: large values beside it, in its parent and the parent's. */
const besideStep = fc
  .tuple(fc.integer({ min: 1, max: 2 }), fc.constantFrom('big', 'big2', 'y1'), bigString, server)
  .map(([up, key, v, at]) => new CutNear(up, key, v, at));
const lostAnswer = fc
  .tuple(
    mutation,
    server,
    fc.array(
      fc.oneof(
        { weight: 12, arbitrary: besideStep as fc.Arbitrary<Step | CutNear | WritesNear> },
        { weight: 3, arbitrary: step },
        // Rare: 33 to 36 requests each.
        {
          weight: 1,
          arbitrary: fc.tuple(fc.integer({ min: 33, max: 36 }), server).map(([n, at]) => new WritesNear(n, at)),
        },
      ),
      { maxLength: 3 },
    ),
    server,
    // Mostly through the lossy process: only there does a retry depend on the segments' request tokens.
    fc.integer({ min: 0, max: 2 }).map((i) => i > 0),
  )
  .map(
    ([r, first, beside, retry, lost]) =>
      new LostAnswer(r, first, beside, retry === first ? (retry + 1) % URLS.length : retry, lost),
  );

/** Requests on disjoint targets (members, blobs, arrays), plus increments of one counter (they commute). */
const target = fc.oneof(
  fc.integer({ min: 0, max: 45 }).map((i) => `c.obj.y${i}`),
  fc.integer({ min: 0, max: 13 }).map((i) => `c.blob${i}`),
  fc.integer({ min: 0, max: 24 }).map((i) => `sub.n.s${i}`),
  fc.constantFrom('log', 'list', 'c.obj.new0', 'c.obj.new1'),
);
const onTarget = (t: string): fc.Arbitrary<Request> => {
  const m = t.split('.').at(-1) as string;
  const route = (r: Route, b: Body) => new Request('route', [r, b]);
  if (t === 'log' || t === 'list') return value.map((v) => route('push', { path: t, value: v }));
  return fc.oneof(
    value.map((v) => route('set', { path: `${t}.f1`, value: v })),
    bigString.map((v) => route('set', { path: t, value: { n: 1, f0: v } })),
    fc.constant(route('increment', { path: `${t}.n` })),
    fc.constant(route('delete', { path: t })),
    value.map(
      (v) =>
        new Request('batch', [
          { op: 'set', path: `${t}.g`, value: v },
          { op: 'increment', path: 'c.n' },
        ]),
    ),
    value.map(
      (v) =>
        new Request(
          'merge-patch',
          t.startsWith('c.obj')
            ? { c: { obj: { [m as string]: { f2: v } } } }
            : t.startsWith('c.')
              ? { c: { [m as string]: { f2: v } } }
              : { sub: { n: { [m as string]: { f2: v } } } },
        ),
    ),
    value.map((v) => new Request('json-patch', [{ op: 'add', path: `/${t.split('.').join('/')}`, value: v }])),
  );
};
const burst = fc
  .tuple(fc.uniqueArray(target, { minLength: 2, maxLength: 6 }), fc.integer({ min: 0, max: 3 }))
  .chain(([targets, counters]) =>
    fc.tuple(
      ...targets.map((t) => fc.tuple(onTarget(t), server)),
      ...Array.from({ length: counters }, () =>
        fc.tuple(fc.constant(new Request('route', ['increment', { path: 'c.n', value: 2 }])), server),
      ),
    ),
  )
  .map((requests) => new Burst(requests as Array<[Request, number]>));

async function property(
  name: string,
  seed: number,
  commands: Array<fc.Arbitrary<fc.AsyncCommand<Model, Real>>>,
  options: { realtime?: boolean; layout?: boolean } = {},
): Promise<void> {
  const runSeed = SEED ?? seed;
  try {
    await fc.assert(
      fc.asyncProperty(
        initial,
        fc.commands(commands, {
          maxCommands: MAX_COMMANDS,
          size: 'max',
          ...(REPLAY_PATH ? { replayPath: REPLAY_PATH } : {}),
        }),
        async (start, cmds) => {
          stats.runs++;
          const project = await newProject();
          const real: Real = { project };
          const model: Model = { content: start };
          const update = await http(0, project, 'POST', '/update', { body: stringify({ content: start }) });
          if (update.status !== 200) throw new Error(`initial update: ${update.status} ${update.text}`);
          try {
            if (options.realtime) real.subscriber = await Subscriber.open(project);
            await fc.asyncModelRun(async () => ({ model, real }), cmds);
            if (options.layout) expect(await strays(project)).toEqual({ orphans: [], dangling: [] });
          } finally {
            real.subscriber?.close();
          }
        },
      ),
      {
        numRuns: RUNS,
        seed: runSeed,
        ...(SEED !== undefined && PATH ? { path: PATH, endOnFailure: true } : {}),
        verbose: 0,
        interruptAfterTimeLimit: TIME_LIMIT_MS,
        markInterruptAsFailure: false,
      },
    );
  } catch (error) {
    (error as Error).message =
      `${name}: replay with MULTIPROCESS_SEED=${runSeed} (and MULTIPROCESS_PATH=<path> MULTIPROCESS_REPLAY_PATH=<replayPath> below for the shrunk case) npm run test:multiprocess -- -t '${name}'\n${(error as Error).message}`;
    throw error;
  }
}

describe(`${URLS.length} API processes over one engine, against the reference model`, () => {
  beforeAll(async () => {
    const proxy = await startDynamoProxy(process.env.AWS_ENDPOINT_URL_DYNAMODB as string);
    const api = await startLocalApi({
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: ':memory:',
        AWS_ENDPOINT_URL_DYNAMODB: proxy.url,
        LOCAL_STREAM_CONSUMER: 'off',
        REALTIME_ENDPOINT: URLS[0],
      },
      // Its log is the 503s the lost answers cause.
      stdio: 'ignore',
    });
    lossy = { url: api.url, proxy, api };
  }, 90_000);

  afterAll(async () => {
    if (lossy) {
      await stopProcess(lossy.api.child);
      await lossy.proxy.close();
    }
    console.log(
      `multiprocess: ${stats.runs} runs, steps ${JSON.stringify(stats.steps)}, statuses ${JSON.stringify(stats.statuses)}, realtime frames ${stats.frames}`,
    );
  });

  it('sequential steps through random processes', () =>
    property('sequential steps through random processes', 2701, [step], { layout: true }));

  it('lost answers retried on another process with the same Idempotency-Key apply once', () =>
    property(
      'lost answers retried on another process with the same Idempotency-Key apply once',
      2702,
      [lostAnswer, lostAnswer, lostAnswer, step],
      {
        layout: true,
      },
    ));

  it('concurrent bursts of disjoint or commutative requests across processes', () =>
    property('concurrent bursts of disjoint or commutative requests across processes', 2703, [burst, step]));

  it('a subscriber on one process sees every change made through any process, once, in order', () =>
    property(
      'a subscriber on one process sees every change made through any process, once, in order',
      2704,
      [step, lostAnswer, burst],
      {
        realtime: true,
      },
    ));
});
