// Part 2 worker: the same operation five ways, interleaved per iteration (rotating order, so drift and order effects
// cancel): the floor (one bare, minimal UpdateItem/GetItem with @aws-sdk/client-dynamodb straight to the engine); the
// HTTP floor (the floor's request relayed by a do-nothing HTTP server, bench/relay.ts: what the hop alone costs); the
// handler's own request sent bare (the exact UpdateItem/GetItem the handler sends, captured beforehand from the same
// operation on an identical item, with a fresh request token: what the richer expression costs without any handler
// code); the Lambda handler invoked in this process with a v2 event; and the local HTTP server (lib/local/start.ts).
// Each mode works on its own item with identical content, so item sizes stay equal. Also measures CPU per request
// (this process, the engine, the server) and, last, a CPU-profiled pass of floor vs handler. Started by
// bench/latency.ts with the environment set, stdout to /dev/null (the handlers' access log), results over IPC.
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { type Handler, type RouteInfo, contentRoutes, lambdaContext, loadHandler, v2Event } from './lib/events';
import { floorClient as createFloorClient } from './lib/floor-client';
import { httpClient } from './lib/http';
import { itemKeyAttributes, projectPk } from '../lib/schema/items';
import { type CpuProfile, type ProfileSummary, summarizeProfile } from './lib/profile';
import { randomBytes } from 'node:crypto';
import { median } from './lib/stats';

export interface LatencyConfig {
  inproc: { username: string; slug: string; key: string };
  http: { username: string; slug: string; key: string; url: string };
  /** A third project: the handler runs on it unmeasured, to capture the requests the replay mode sends. */
  capture: { username: string; slug: string; key: string };
  twinPk: string;
  replayPk: string;
  /** The HTTP floor: bench/relay.ts, and the item its requests go to. */
  relay: { url: string; pid: number; pk: string };
  enginePid: number;
  serverPid: number;
  iterations: number;
  /** Consecutive requests of one mode before the next mode's turn (the interleaving unit). */
  runLength: number;
  blocks: number;
  warmup: number;
  profileIterations: number;
  /**
   * A second local server started with --cpu-prof, for the profiled HTTP pass only: the server measured in the
   * blocks runs without a profiler (sampling costs CPU and would inflate the HTTP figures it is compared by).
   */
  profileUrl?: string;
  outDir: string;
}

export type Mode = 'floor' | 'relay' | 'replay' | 'inproc' | 'http';
export const MODES: Mode[] = ['floor', 'relay', 'replay', 'inproc', 'http'];
const byMode = <T>(make: () => T): Record<Mode, T> =>
  Object.fromEntries(MODES.map((mode) => [mode, make()])) as Record<Mode, T>;

export interface OpLatency {
  op: string;
  floorKind: string;
  /** All measured samples, ms, per mode. */
  samples: Record<Mode, number[]>;
  /** Median per block, ms, per mode. */
  blockMedians: Array<Record<Mode, number>>;
  /** The handler's request as captured (first iteration), for the report. */
  handlerRequest?: {
    command: string;
    bytes: number;
    updateExpression?: string;
    conditionExpression?: string;
    projection?: string;
  };
  /** DynamoDB requests the handler made per operation in the capture pass (1 on the fast path). */
  handlerRequestsPerOp: number;
  /** CPU ms per request: this process (client / handler), the engine, the server (local API for HTTP, the relay for the HTTP floor); `*Sys` the kernel part. */
  cpu: Record<Mode, Cpu>;
}

export interface Cpu {
  worker: number;
  workerSys: number;
  engine: number;
  engineSys: number;
  server: number;
  serverSys: number;
}

const zeroCpu = (): Cpu => ({ worker: 0, workerSys: 0, engine: 0, engineSys: 0, server: 0, serverSys: 0 });

export interface LatencyResult {
  ops: OpLatency[];
  /** The profiled HTTP pass, µs on the system's monotonic clock (as CPU profiles' timestamps), and its requests. */
  window?: { from: number; to: number; httpRequests: number };
  contentBytes: number;
  itemBytes: number;
  profile?: {
    requestsPerPhase: number;
    floor: ProfileSummary & { wallMs: number; workerCpuMs: number; engineCpuMs: number };
    handler: ProfileSummary & { wallMs: number; workerCpuMs: number; engineCpuMs: number };
    files: string[];
  };
}

const config = JSON.parse(process.env.BENCH_LATENCY_CONFIG as string) as LatencyConfig;
const TABLE = process.env.TABLE_NAME as string;
const bagSize = Math.max(config.iterations, config.warmup, config.profileIterations, 1);

/** The content every loop starts from: ~6 KB, a list, a counter, an object, and a bag of keys for deletes. */
function initialContent(marker = 0) {
  return {
    data: {
      item: { name: 'lamp', count: 1, marker },
      items: Array.from({ length: 20 }, (_, i) => ({ id: i, label: `item ${i}` })),
      counter: 0,
      bag: Object.fromEntries(Array.from({ length: bagSize }, (_, i) => [`k${i}`, `value-${i}`])),
      text: 'x'.repeat(500),
    },
  };
}

const floorClient = createFloorClient();

const twinKey = itemKeyAttributes(config.twinPk);
const names = (...parts: string[]) => Object.fromEntries(parts.map((p, i) => [`#p${i}`, p]));
const path = (count: number) => Array.from({ length: count }, (_, i) => `#p${i}`).join('.');

interface OpSpec {
  op: string;
  route: string;
  floorKind: string;
  body?: (i: number) => unknown;
  query?: Record<string, string>;
  floor: (i: number) => UpdateItemCommand | GetItemCommand;
}

const update = (expression: string, attributeNames: Record<string, string>, values?: Record<string, unknown>) =>
  new UpdateItemCommand({
    TableName: TABLE,
    Key: twinKey,
    UpdateExpression: expression,
    ExpressionAttributeNames: attributeNames,
    ...(values ? { ExpressionAttributeValues: marshall(values, { removeUndefinedValues: true }) } : {}),
  });

const OPS: OpSpec[] = [
  {
    op: 'set',
    route: 'set',
    floorKind: 'UpdateItem SET a.b.c = :v',
    body: (i) => ({ path: 'data.item.name', value: `name ${i}` }),
    floor: (i) => update(`SET ${path(4)} = :v`, names('content', 'data', 'item', 'name'), { ':v': `name ${i}` }),
  },
  {
    op: 'push',
    route: 'push',
    floorKind: 'UpdateItem list_append',
    body: (i) => ({ path: 'data.items', value: { id: 100 + i } }),
    floor: (i) =>
      update(`SET ${path(3)} = list_append(${path(3)}, :v)`, names('content', 'data', 'items'), {
        ':v': [{ id: 100 + i }],
      }),
  },
  {
    op: 'decrement',
    route: 'decrement',
    floorKind: 'UpdateItem SET n = n - :v',
    body: () => ({ path: 'data.counter', value: 1 }),
    floor: () => update(`SET ${path(3)} = ${path(3)} - :v`, names('content', 'data', 'counter'), { ':v': 1 }),
  },
  {
    op: 'increment',
    route: 'increment',
    floorKind: 'UpdateItem SET n = n + :v',
    body: () => ({ path: 'data.counter' }),
    floor: () => update(`SET ${path(3)} = ${path(3)} + :v`, names('content', 'data', 'counter'), { ':v': 1 }),
  },
  {
    op: 'delete',
    route: 'delete',
    floorKind: 'UpdateItem REMOVE a.b.c',
    body: (i) => ({ path: `data.bag.k${i}` }),
    floor: (i) => update(`REMOVE ${path(4)}`, names('content', 'data', 'bag', `k${i}`)),
  },
  {
    op: 'insert at 0',
    route: 'insert',
    floorKind: 'UpdateItem list_append(:v, l)',
    body: (i) => ({ path: 'data.items', value: { id: 200 + i }, index: 0 }),
    floor: (i) =>
      update(`SET ${path(3)} = list_append(:v, ${path(3)})`, names('content', 'data', 'items'), {
        ':v': [{ id: 200 + i }],
      }),
  },
  {
    op: 'update',
    route: 'update',
    floorKind: 'UpdateItem SET content = :v',
    body: (i) => ({ content: initialContent(i) }),
    floor: (i) => update(`SET ${path(1)} = :v`, names('content'), { ':v': initialContent(i) }),
  },
  {
    op: 'get',
    route: 'get',
    floorKind: 'GetItem (consistent, projection a.b)',
    query: { path: 'data.item' },
    floor: () =>
      new GetItemCommand({
        TableName: TABLE,
        Key: twinKey,
        ConsistentRead: true,
        ProjectionExpression: path(3),
        ExpressionAttributeNames: names('content', 'data', 'item'),
      }),
  },
];

/** utime + stime and stime of a process, ms (clock ticks of 10 ms: fine summed over hundreds of requests). */
function cpuOf(pid: number): { total: number; sys: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { total: (Number(fields[11]) + Number(fields[12])) * 10, sys: Number(fields[12]) * 10 };
  } catch {
    return { total: Number.NaN, sys: Number.NaN };
  }
}
const cpuMsOf = (pid: number) => cpuOf(pid).total;
const workerCpu = () => {
  const u = process.cpuUsage();
  return { total: (u.user + u.system) / 1000, sys: u.system / 1000 };
};
const workerCpuMs = () => workerCpu().total;

interface Captured {
  command: string;
  input: Record<string, any>;
}

/** The request with another key and a fresh request token (the token is the value assigned to the etag). */
function forReplay(captured: Captured, pk: string): UpdateItemCommand | GetItemCommand {
  const input = structuredClone(captured.input);
  input.Key = itemKeyAttributes(pk);
  delete input.ReturnValuesOnConditionCheckFailure;
  if (captured.command === 'GetItemCommand') return new GetItemCommand(input as GetItemCommand['input']);
  const etagName = Object.entries(input.ExpressionAttributeNames ?? {}).find(([, name]) => name === 'etag')?.[0];
  const tokenValue = etagName ? new RegExp(`${etagName} = (:v\\d+)`).exec(input.UpdateExpression)?.[1] : undefined;
  if (!tokenValue) throw new Error(`no request token in ${input.UpdateExpression}`);
  input.ExpressionAttributeValues[tokenValue] = { S: randomBytes(16).toString('base64url') };
  // The handler asks for ALL_OLD on failure; a bare send keeps it, so both cost the same on the engine.
  input.ReturnValuesOnConditionCheckFailure = captured.input.ReturnValuesOnConditionCheckFailure;
  return new UpdateItemCommand(input as UpdateItemCommand['input']);
}

async function main(): Promise<LatencyResult> {
  // The client the handlers use (same module instance): a middleware records what they send, while capturing.
  const { dynamo } = await import('../lib/dynamo/client');
  let capturing: Captured[] | undefined;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      capturing?.push({
        command: context.commandName ?? '?',
        input: structuredClone(args.input as Record<string, unknown>),
      });
      return next(args);
    },
    { step: 'initialize', name: 'benchCapture' },
  );
  const routes = await contentRoutes();
  const handlers = new Map<string, { route: RouteInfo; handler: Handler }>();
  for (const spec of OPS) {
    const route = routes[spec.route];
    if (!route) throw new Error(`serverless.yml has no function ${spec.route}`);
    handlers.set(spec.route, { route, handler: await loadHandler(route) });
  }
  const api = httpClient(config.http.url, 1);
  const relay = httpClient(config.relay.url, 1);

  const invoke = async (
    route: string,
    options: { body?: unknown; query?: Record<string, string> },
    project = config.inproc,
  ) => {
    const { route: info, handler } = handlers.get(route) as { route: RouteInfo; handler: Handler };
    const event = v2Event(info, project, { token: project.key, ...options });
    const context = lambdaContext(info.functionName);
    return handler(event, context);
  };
  const overHttp = (spec: OpSpec, i: number, client = api) => {
    const base = `/api/${config.http.username}/${config.http.slug}/content`;
    if (spec.route === 'get')
      return client.call('GET', `${base}?${new URLSearchParams(spec.query).toString()}`, { token: config.http.key });
    return client.call('POST', `${base}/${spec.route}`, { token: config.http.key, body: spec.body?.(i) });
  };

  const copyItem = async (from: { username: string; slug: string }, pk: string) => {
    const { Item } = await floorClient.send(
      new GetItemCommand({
        TableName: TABLE,
        Key: itemKeyAttributes(projectPk(from)),
        ConsistentRead: true,
      }),
    );
    if (!Item) throw new Error(`project item of ${from.username}/${from.slug} missing`);
    await floorClient.send(new PutItemCommand({ TableName: TABLE, Item: { ...Item, pk: { S: pk } } }));
  };

  /** Same content everywhere: the handler's update on A and C, HTTP on B; A copied to the floor's twin, C to the replay's. */
  async function reset(): Promise<void> {
    const content = initialContent();
    const a = await invoke('update', { body: { content } });
    const c = await invoke('update', { body: { content } }, config.capture);
    const b = await api.call('POST', `/api/${config.http.username}/${config.http.slug}/content/update`, {
      token: config.http.key,
      body: { content },
    });
    if (a.statusCode !== 200 || b.status !== 200 || c.statusCode !== 200)
      throw new Error(`reset failed: ${a.statusCode} ${b.status} ${c.statusCode}`);
    await copyItem(config.inproc, config.twinPk);
    await copyItem(config.capture, config.replayPk);
    await copyItem(config.inproc, config.relay.pk);
  }

  /** Runs the handler on the capture project for iterations 0..n-1 (as A will), recording each request it sends. */
  async function capture(spec: OpSpec, n: number): Promise<{ requests: Captured[]; perOp: number }> {
    const requests: Captured[] = [];
    let total = 0;
    for (let i = 0; i < n; i++) {
      capturing = [];
      const result = await invoke(spec.route, { body: spec.body?.(i), query: spec.query }, config.capture);
      const seen = capturing;
      capturing = undefined;
      if (result.statusCode !== 200) throw new Error(`capture ${spec.op}: ${result.statusCode} ${result.body}`);
      total += seen.length;
      requests.push(seen[seen.length - 1] as Captured);
    }
    return { requests, perOp: total / Math.max(1, n) };
  }
  let replays: Captured[] = [];
  /** False when the captured request's token cannot be found (the compiler changed): the replay mode is skipped. */
  let replayable = true;
  const checkReplayable = (spec: OpSpec) => {
    try {
      if (replays[0]) forReplay(replays[0], config.replayPk);
      replayable = replays.length > 0;
    } catch (error) {
      replayable = false;
      process.stderr.write(
        `bench: ${spec.op}: the handler's request cannot be replayed (${error instanceof Error ? error.message : error}); that mode is skipped\n`,
      );
    }
  };

  const run: Record<Mode, (spec: OpSpec, i: number) => Promise<void>> = {
    floor: async (spec, i) => {
      await floorClient.send(spec.floor(i) as UpdateItemCommand);
    },
    relay: async (spec, i) => {
      const command = spec.floor(i);
      const reply = await relay.call('POST', `/${command instanceof GetItemCommand ? 'GetItem' : 'UpdateItem'}`, {
        body: { ...command.input, Key: { pk: { S: config.relay.pk } } },
      });
      if (reply.status !== 200) throw new Error(`HTTP floor ${spec.op}: ${reply.status}`);
    },
    replay: async (_spec, i) => {
      if (!replayable) return;
      await floorClient.send(forReplay(replays[i] as Captured, config.replayPk) as UpdateItemCommand);
    },
    inproc: async (spec, i) => {
      const result = await invoke(spec.route, { body: spec.body?.(i), query: spec.query });
      if (result.statusCode !== 200) throw new Error(`in-process ${spec.op}: ${result.statusCode} ${result.body}`);
    },
    http: async (spec, i) => {
      const reply = await overHttp(spec, i);
      if (reply.status !== 200) throw new Error(`HTTP ${spec.op}: ${reply.status} ${JSON.stringify(reply.body)}`);
    },
  };

  const results: OpLatency[] = OPS.map((spec) => ({
    op: spec.op,
    floorKind: spec.floorKind,
    samples: byMode(() => []),
    blockMedians: [],
    handlerRequestsPerOp: 0,
    cpu: byMode(zeroCpu),
  }));

  // Warm-up: every path JIT-compiled, connections open.
  for (const spec of OPS) {
    await reset();
    replays = (await capture(spec, config.warmup)).requests;
    checkReplayable(spec);
    for (let i = 0; i < config.warmup; i++) for (const mode of MODES) await run[mode](spec, i);
  }

  for (let block = 0; block < config.blocks; block++) {
    for (const [o, spec] of OPS.entries()) {
      const result = results[o] as OpLatency;
      await reset();
      const captured = await capture(spec, config.iterations);
      replays = captured.requests;
      checkReplayable(spec);
      result.handlerRequestsPerOp = Math.max(result.handlerRequestsPerOp, captured.perOp);
      const first = replays[0];
      if (first && !result.handlerRequest) {
        result.handlerRequest = {
          command: first.command.replace(/Command$/, ''),
          bytes: Buffer.byteLength(JSON.stringify(first.input)),
          updateExpression: first.input.UpdateExpression,
          conditionExpression: first.input.ConditionExpression,
          projection: first.input.ProjectionExpression,
        };
      }
      const blockSamples = byMode<number[]>(() => []);
      // Runs of `runLength` requests per mode, the modes in rotating order (A B C D E, B C D E A, ...): drift cancels,
      // each mode goes first equally often, and every process a mode uses is as warm as the others' (with runs of
      // one, the HTTP servers would sit idle through four other requests before each of its own, the engine never;
      // on this VM an idle process takes up to a millisecond to wake, which would be charged to HTTP alone).
      const runLength = Math.max(1, config.runLength);
      for (let start = 0, turn = 0; start < config.iterations; start += runLength, turn++) {
        for (let k = 0; k < MODES.length; k++) {
          const mode = MODES[(turn + k) % MODES.length] as Mode;
          for (let i = start; i < Math.min(start + runLength, config.iterations); i++) {
            const cpu0 = workerCpu();
            const engine0 = cpuOf(config.enginePid);
            const serverPid = mode === 'http' ? config.serverPid : mode === 'relay' ? config.relay.pid : undefined;
            const server0 = serverPid ? cpuOf(serverPid) : { total: 0, sys: 0 };
            const t0 = process.hrtime.bigint();
            await run[mode](spec, i);
            const ms = Number(process.hrtime.bigint() - t0) / 1e6;
            if (mode === 'replay' && !replayable) continue;
            const cpu1 = workerCpu();
            const engine1 = cpuOf(config.enginePid);
            const c = result.cpu[mode];
            c.worker += cpu1.total - cpu0.total;
            c.workerSys += cpu1.sys - cpu0.sys;
            c.engine += engine1.total - engine0.total;
            c.engineSys += engine1.sys - engine0.sys;
            if (serverPid) {
              const server1 = cpuOf(serverPid);
              c.server += server1.total - server0.total;
              c.serverSys += server1.sys - server0.sys;
            }
            blockSamples[mode].push(ms);
            result.samples[mode].push(ms);
          }
        }
      }
      result.blockMedians.push(
        Object.fromEntries(MODES.map((mode) => [mode, median(blockSamples[mode])])) as Record<Mode, number>,
      );
    }
  }
  for (const result of results) {
    for (const mode of MODES) {
      const c = result.cpu[mode];
      for (const k of Object.keys(c) as Array<keyof Cpu>) c[k] /= Math.max(1, result.samples[mode].length);
    }
  }

  await reset();
  const { Item } = await floorClient.send(new GetItemCommand({ TableName: TABLE, Key: twinKey, ConsistentRead: true }));
  const itemBytes = Buffer.byteLength(JSON.stringify(Item));
  const contentBytes = Buffer.byteLength(JSON.stringify(initialContent()));

  let profile: LatencyResult['profile'];
  if (config.profileIterations > 0) {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    const phase = async (mode: 'floor' | 'inproc') => {
      await reset();
      const wall0 = performance.now();
      const cpu0 = workerCpuMs();
      const engine0 = cpuMsOf(config.enginePid);
      await session.post('Profiler.start');
      for (let i = 0; i < config.profileIterations; i++) for (const spec of OPS) await run[mode](spec, i);
      const { profile: p } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
      const stats = {
        wallMs: performance.now() - wall0,
        workerCpuMs: workerCpuMs() - cpu0,
        engineCpuMs: cpuMsOf(config.enginePid) - engine0,
      };
      const file = join(config.outDir, `latency-${mode === 'floor' ? 'floor' : 'handler'}.cpuprofile`);
      writeFileSync(file, JSON.stringify(p));
      return { ...summarizeProfile(p, 20), ...stats, file };
    };
    const floor = await phase('floor');
    const handler = await phase('inproc');
    session.disconnect();
    profile = {
      requestsPerPhase: config.profileIterations * OPS.length,
      floor,
      handler,
      files: [floor.file, handler.file],
    };
  }
  let window: LatencyResult['window'];
  if (config.profileIterations > 0 && config.profileUrl) {
    // The profiled server's pass: the same operations over HTTP after a warm-up (the window leaves the warm-up out).
    const profiled = httpClient(config.profileUrl, 1);
    await reset();
    for (let i = 0; i < config.warmup; i++) for (const spec of OPS) await overHttp(spec, i, profiled);
    await reset();
    const from = Number(process.hrtime.bigint() / 1000n);
    for (let i = 0; i < config.profileIterations; i++) for (const spec of OPS) await overHttp(spec, i, profiled);
    window = { from, to: Number(process.hrtime.bigint() / 1000n), httpRequests: config.profileIterations * OPS.length };
    profiled.close();
  }
  api.close();
  relay.close();
  floorClient.destroy();
  return { ops: results, window, contentBytes, itemBytes, profile };
}

main().then(
  (result) => process.send?.({ ok: true, result }, () => process.exit(0)),
  (error: unknown) =>
    process.send?.({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }, () =>
      process.exit(1),
    ),
);
