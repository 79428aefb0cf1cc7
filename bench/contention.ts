// Part 3 (and 5): contention. N concurrent clients hammer one project over HTTP through the local API, whose
// DynamoDB endpoint is the counting proxy: one counter (increment/decrement), one array (push; middle insert),
// a counter under a negative index (read-then-write) and disjoint paths. Reports throughput, p50/p99, requests
// and retries per operation, and checks the final content is exact. The API's and the engine's RSS are sampled
// from /proc throughout (part 5).
import type { DynamoProxy } from '../test/support/dynamo-proxy';
import type { BenchProject } from './lib/fixtures';
import { httpClient, type Reply } from './lib/http';
import { readRss } from './lib/procs';
import { type Summary, rng, summarize, throughput } from './lib/stats';

interface Scenario {
  id: string;
  label: string;
  path: 'fast' | 'read-then-write' | 'mixed';
  initial: Record<string, unknown>;
  /** The request client c makes as its k-th operation; `effect` is what a 200 must have done. */
  request: (
    c: number,
    k: number,
    random: () => number,
  ) => { route: string; body: Record<string, unknown>; effect: Effect };
  /** Problems with the final content; `unknown` effects (a 5xx or lost connection) may or may not have applied. */
  verify: (content: any, applied: Effect[], failed: Effect[], unknown: Effect[], clients: number) => string[];
}

type Effect = { kind: 'add'; key: string; amount: number } | { kind: 'value'; key: string; value: string };

const sumBy = (effects: Effect[], key: string) =>
  effects.reduce((s, e) => s + (e.kind === 'add' && e.key === key ? e.amount : 0), 0);

/** Whether `actual` is `base` plus the applied amounts plus some subset of the unknown ones (for key `key`). */
function sumMatches(actual: unknown, base: number, applied: Effect[], unknown: Effect[], key: string): boolean {
  const known = base + sumBy(applied, key);
  const maybe = unknown.filter((e) => e.kind === 'add' && e.key === key).map((e) => (e as { amount: number }).amount);
  if (maybe.length > 12) return typeof actual === 'number';
  for (let mask = 0; mask < 2 ** maybe.length; mask++) {
    const total = maybe.reduce((s, a, i) => s + (mask & (1 << i) ? a : 0), known);
    if (actual === total) return true;
  }
  return false;
}

function checkList(
  list: unknown,
  head: string[],
  tail: string[],
  applied: Effect[],
  failed: Effect[],
  unknown: Effect[],
): string[] {
  const problems: string[] = [];
  if (!Array.isArray(list)) return ['the list is gone'];
  const values = applied.map((e) => (e as { value: string }).value);
  const present = new Set(list.map(String));
  const maybe = unknown.map((e) => (e as { value: string }).value).filter((v) => present.has(v)).length;
  if (list.length !== head.length + tail.length + values.length + maybe)
    problems.push(`length ${list.length}, expected ${head.length + tail.length + values.length + maybe}`);
  if (JSON.stringify(list.slice(0, head.length)) !== JSON.stringify(head))
    problems.push(`head ${JSON.stringify(list.slice(0, head.length))}`);
  if (tail.length > 0 && JSON.stringify(list.slice(-tail.length)) !== JSON.stringify(tail))
    problems.push(`tail ${JSON.stringify(list.slice(-tail.length))}`);
  const seen = new Map<string, number>();
  for (const v of list) seen.set(String(v), (seen.get(String(v)) ?? 0) + 1);
  const missing = values.filter((v) => seen.get(v) !== 1);
  if (missing.length > 0)
    problems.push(`${missing.length} applied values not present exactly once (e.g. ${missing[0]})`);
  const twice = unknown.map((e) => (e as { value: string }).value).filter((v) => (seen.get(v) ?? 0) > 1);
  if (twice.length > 0) problems.push(`${twice.length} values of unknown-outcome requests present more than once`);
  const ghosts = failed.map((e) => (e as { value: string }).value).filter((v) => seen.has(v));
  if (ghosts.length > 0) problems.push(`${ghosts.length} values of failed requests present`);
  return problems;
}

const SCENARIOS: Scenario[] = [
  {
    id: 'counter',
    label: 'one counter: increment / decrement',
    path: 'fast',
    initial: { counter: 1000, other: 'x' },
    request: (_c, _k, random) => {
      const amount = 1 + Math.floor(random() * 5);
      return random() < 0.5
        ? {
            route: 'increment',
            body: { path: 'counter', value: amount },
            effect: { kind: 'add', key: 'counter', amount },
          }
        : {
            route: 'decrement',
            body: { path: 'counter', value: amount },
            effect: { kind: 'add', key: 'counter', amount: -amount },
          };
    },
    verify: (content, applied, _failed, unknown) =>
      sumMatches(content?.counter, 1000, applied, unknown, 'counter') && content?.other === 'x'
        ? []
        : [`counter ${content?.counter}, expected ${1000 + sumBy(applied, 'counter')}`],
  },
  {
    id: 'push',
    label: 'one array: push',
    path: 'fast',
    initial: { list: ['start'] },
    request: (c, k) => ({
      route: 'push',
      body: { path: 'list', value: `c${c}-${k}` },
      effect: { kind: 'value', key: 'list', value: `c${c}-${k}` },
    }),
    verify: (content, applied, failed, unknown) => checkList(content?.list, ['start'], [], applied, failed, unknown),
  },
  {
    id: 'insert-middle',
    label: 'one array: insert in the middle',
    path: 'read-then-write',
    initial: { list: ['a', 'b', 'c', 'd'] },
    request: (c, k) => ({
      route: 'insert',
      body: { path: 'list', value: `c${c}-${k}`, index: 2 },
      effect: { kind: 'value', key: 'list', value: `c${c}-${k}` },
    }),
    verify: (content, applied, failed, unknown) =>
      checkList(content?.list, ['a', 'b'], ['c', 'd'], applied, failed, unknown),
  },
  {
    id: 'counter-negative',
    label: 'one counter under a negative index (l.-1.n)',
    path: 'read-then-write',
    initial: { l: [{ n: 0 }, { n: 1000 }] },
    request: (_c, _k, random) => {
      const amount = 1 + Math.floor(random() * 5);
      return { route: 'increment', body: { path: 'l.-1.n', value: amount }, effect: { kind: 'add', key: 'n', amount } };
    },
    verify: (content, applied, _failed, unknown) =>
      content?.l?.length === 2 &&
      content.l[0]?.n === 0 &&
      Object.keys(content).length === 1 &&
      sumMatches(content.l[1]?.n, 1000, applied, unknown, 'n')
        ? []
        : [`content ${JSON.stringify(content)}, expected l[1].n = ${1000 + sumBy(applied, 'n')}`],
  },
  {
    id: 'disjoint',
    label: 'disjoint paths of one project (set + increment)',
    path: 'fast',
    initial: {},
    request: (c, k) =>
      k % 2 === 0
        ? {
            route: 'set',
            body: { path: `clients.c${c}.v${k}`, value: `c${c}-${k}` },
            effect: { kind: 'value', key: `c${c}`, value: `v${k}` },
          }
        : { route: 'increment', body: { path: `clients.c${c}.n` }, effect: { kind: 'add', key: `c${c}`, amount: 1 } },
    verify: (content, applied, _failed, unknown, clients) => {
      const problems: string[] = [];
      for (let c = 0; c < clients; c++) {
        const key = `c${c}`;
        const mine = applied.filter((e) => e.key === key);
        const maybe = unknown.filter((e) => e.key === key);
        const actual: Record<string, unknown> = { ...(content?.clients?.[key] ?? {}) };
        if (!sumMatches(actual.n, 0, mine, maybe, key))
          problems.push(`${key}.n = ${actual.n}, expected ${sumBy(mine, key)}`);
        delete actual.n;
        for (const e of mine) {
          if (e.kind !== 'value') continue;
          if (actual[e.value] !== `${key}-${e.value.slice(1)}`) problems.push(`${key}.${e.value} missing`);
          delete actual[e.value];
        }
        for (const e of maybe) if (e.kind === 'value') delete actual[e.value];
        if (Object.keys(actual).length > 0) problems.push(`${key}: unexpected ${Object.keys(actual).join(', ')}`);
      }
      return problems.slice(0, 3);
    },
  },
];

/** The disjoint scenario's subtrees exist up front, so every set has its parent (fast path). */
function initialFor(s: Scenario, clients: number): Record<string, unknown> {
  if (s.id !== 'disjoint') return s.initial;
  return { clients: Object.fromEntries(Array.from({ length: clients }, (_, c) => [`c${c}`, { n: 0 }])) };
}

export interface ContentionRow {
  id: string;
  label: string;
  path: Scenario['path'];
  clients: number;
  operations: number;
  succeeded: number;
  statuses: Record<string, number>;
  wallMs: number;
  throughput: number;
  latency: Summary;
  requests: Record<string, number>;
  requestsPerOp: number;
  /** (UpdateItem - succeeded) / operations: extra conditional writes, i.e. retries. */
  retriesPerOp: number;
  /** UpdateItems one operation of this scenario costs alone (measured before the run: 2 for a middle insert, whose first write is the fast-path guess). */
  soloUpdatesPerOp: number;
  /** (UpdateItem - solo x operations) / operations: the conditional writes contention added. */
  contentionRetriesPerOp: number;
  exact: boolean;
  problems: string[];
  /** Requests answered 5xx (or not at all): their effect may or may not be in the content; either is accepted once. */
  unknownOutcomes: number;
  rss: { serverPeakMb: number; enginePeakMb: number };
  samples: number[];
}

export interface MemoryReport {
  intervalMs: number;
  server: { baselineMb: number; peakMb: number; hwmMb: number };
  engine: { baselineMb: number; peakMb: number; hwmMb: number };
  series: Array<{ t: number; server: number; engine: number; scenario: string }>;
}

export async function runContention(ctx: {
  url: string;
  proxy: DynamoProxy;
  newProject: (slug: string) => Promise<BenchProject>;
  serverPid: number;
  enginePid: number;
  clients: number;
  opsPerClient: number;
  rssIntervalMs: number;
  log: (line: string) => void;
}): Promise<{ rows: ContentionRow[]; memory: MemoryReport }> {
  const api = httpClient(ctx.url, ctx.clients + 2);
  const series: MemoryReport['series'] = [];
  const started = performance.now();
  let current = 'baseline';
  const sample = () => {
    const server = readRss(ctx.serverPid);
    const engine = readRss(ctx.enginePid);
    if (server && engine)
      series.push({ t: performance.now() - started, server: server.rssMb, engine: engine.rssMb, scenario: current });
  };
  // Baseline: the API after parts 1-2 warmed it, idle, for a moment.
  for (let i = 0; i < 10; i++) {
    sample();
    await new Promise((resolve) => setTimeout(resolve, ctx.rssIntervalMs));
  }
  const baseline = {
    server: Math.max(...series.map((s) => s.server)),
    engine: Math.max(...series.map((s) => s.engine)),
  };
  // Warm-up, untimed: when this part runs alone (BENCH_PARTS=contention) nothing has exercised the API's hot paths
  // yet, and the first scenario would measure the JIT's warm-up instead of contention (a 320-operation counter
  // run read 197 ops/s cold and 440 warm on the same build). Every client makes a few increments first.
  const warm = await ctx.newProject('contention-warmup');
  await api.call('POST', `${warm.content}/update`, { token: warm.key, body: { content: { n: 0 } } });
  await Promise.all(
    Array.from({ length: ctx.clients }, async () => {
      for (let k = 0; k < 5; k++)
        await api.call('POST', `${warm.content}/increment`, { token: warm.key, body: { path: 'n', value: 1 } });
    }),
  );
  const timer = setInterval(sample, ctx.rssIntervalMs);
  const rows: ContentionRow[] = [];
  try {
    for (const [index, scenario] of SCENARIOS.entries()) {
      const project = await ctx.newProject(`contention-${scenario.id}`);
      const setup = await api.call('POST', `${project.content}/update`, {
        token: project.key,
        body: { content: initialFor(scenario, ctx.clients) },
      });
      if (setup.status !== 200) throw new Error(`contention setup failed: ${setup.status}`);
      current = scenario.id;
      const applied: Effect[] = [];
      const failed: Effect[] = [];
      const unknown: Effect[] = [];
      const statuses: Record<string, number> = {};
      const latencies: number[] = [];
      // One operation alone first: what it costs without contention (counted, and part of the expected content).
      const solo = scenario.request(0, ctx.opsPerClient, rng(7 + index));
      ctx.proxy.reset();
      const soloReply = await api.call('POST', `${project.content}/${solo.route}`, {
        token: project.key,
        body: solo.body,
      });
      if (soloReply.status !== 200)
        throw new Error(
          `${scenario.id}: the solo operation failed: ${soloReply.status} ${JSON.stringify(soloReply.body)}`,
        );
      applied.push(solo.effect);
      const soloUpdatesPerOp = ctx.proxy.counts().UpdateItem ?? 0;
      ctx.proxy.reset();
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: ctx.clients }, async (_, c) => {
          const random = rng(1 + index * 1000 + c);
          for (let k = 0; k < ctx.opsPerClient; k++) {
            const { route, body, effect } = scenario.request(c, k, random);
            const s = performance.now();
            let reply: Reply;
            try {
              reply = await api.call('POST', `${project.content}/${route}`, { token: project.key, body });
            } catch (error) {
              reply = { status: 0, body: String(error), headers: {} };
            }
            latencies.push(performance.now() - s);
            const key = reply.status === 200 ? '200' : `${reply.status} ${reply.body?.code ?? ''}`.trim();
            statuses[key] = (statuses[key] ?? 0) + 1;
            if (reply.status === 200) applied.push(effect);
            // A 409 WRITE_CONFLICT (and any 4xx) applied nothing; a 5xx or a lost connection may or may not have.
            else if (reply.status >= 400 && reply.status < 500) failed.push(effect);
            else unknown.push(effect);
          }
        }),
      );
      const wallMs = performance.now() - t0;
      const counts = ctx.proxy.counts();
      const final = await api.call('GET', project.content, { token: project.key });
      const operations = ctx.clients * ctx.opsPerClient;
      const problems =
        final.status === 200
          ? scenario.verify(final.body.value, applied, failed, unknown, ctx.clients)
          : [`final GET ${final.status}`];
      const scenarioSamples = series.filter((s) => s.scenario === scenario.id);
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      rows.push({
        id: scenario.id,
        label: scenario.label,
        path: scenario.path,
        clients: ctx.clients,
        operations,
        succeeded: applied.length - 1,
        statuses,
        wallMs,
        throughput: throughput(applied.length - 1, wallMs),
        latency: summarize(latencies),
        requests: counts,
        requestsPerOp: total / operations,
        retriesPerOp: ((counts.UpdateItem ?? 0) - (applied.length - 1)) / operations,
        soloUpdatesPerOp,
        contentionRetriesPerOp: ((counts.UpdateItem ?? 0) - soloUpdatesPerOp * operations) / operations,
        exact: problems.length === 0,
        problems,
        unknownOutcomes: unknown.length,
        rss: {
          serverPeakMb: scenarioSamples.length > 0 ? Math.max(...scenarioSamples.map((s) => s.server)) : Number.NaN,
          enginePeakMb: scenarioSamples.length > 0 ? Math.max(...scenarioSamples.map((s) => s.engine)) : Number.NaN,
        },
        samples: latencies,
      });
      const row = rows[rows.length - 1] as ContentionRow;
      ctx.log(
        `  ${scenario.id}: ${row.succeeded}/${operations} ok in ${(wallMs / 1000).toFixed(1)} s, ${row.throughput.toFixed(0)} ops/s, ` +
          `retries/op ${row.retriesPerOp.toFixed(2)} (contention ${row.contentionRetriesPerOp.toFixed(2)}), ${problems.length === 0 ? 'exact' : `NOT EXACT: ${problems.join('; ')}`}`,
      );
    }
  } finally {
    clearInterval(timer);
    api.close();
  }
  sample();
  const during = series.filter((s) => s.scenario !== 'baseline');
  const hwm = {
    server: readRss(ctx.serverPid)?.hwmMb ?? Number.NaN,
    engine: readRss(ctx.enginePid)?.hwmMb ?? Number.NaN,
  };
  return {
    rows,
    memory: {
      intervalMs: ctx.rssIntervalMs,
      server: { baselineMb: baseline.server, peakMb: Math.max(...during.map((s) => s.server)), hwmMb: hwm.server },
      engine: { baselineMb: baseline.engine, peakMb: Math.max(...during.map((s) => s.engine)), hwmMb: hwm.engine },
      series,
    },
  };
}
