// The report: bench/results/latest.json (everything, samples included), latest.md (tables with targets and
// pass/fail, the machine and the date) and SVG charts where a distribution says more than a table.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Machine, params } from './lib/config';
import { boxPlots, cdfPanels, lineChart } from './lib/svg';
import { fmt } from './lib/stats';
import type { CaseResult, Cred, CredResult } from './requests';
import { CREDS } from './requests';
import { type LatencyReport, TARGETS } from './latency';
import type { ContentionRow, MemoryReport } from './contention';
import { type ColdReport, TARGET as COLD_TARGET } from './coldstart';
import { type CostReport, costMarkdown, writesPerSecond } from './cost';
import { type RealtimeRow, realtimeMarkdown } from './realtime';

export interface BenchReport {
  machine: Machine;
  params: typeof params;
  parts: string[];
  errors: Record<string, string>;
  engine?: { name: string; returnsOldItemOnConditionFailure: boolean };
  durationSeconds?: number;
  requests?: CaseResult[];
  latency?: LatencyReport;
  contention?: ContentionRow[];
  memory?: MemoryReport;
  coldstart?: ColdReport;
  cost?: CostReport;
  realtime?: RealtimeRow[];
  /** Parts not run this time whose results come from the previous latest.json. */
  carriedOver?: { date: string; parts: string[] };
}

const PART_FIELDS: Record<string, Array<keyof BenchReport>> = {
  requests: ['requests'],
  latency: ['latency'],
  contention: ['contention', 'memory'],
  coldstart: ['coldstart'],
  cost: ['cost'],
  realtime: ['realtime'],
};

/** Copies into `report` the results of the parts it did not run from `previous` (a partial run adds its sections). */
export function carryOver(report: BenchReport, previous: BenchReport): void {
  const carried: string[] = [];
  for (const [part, fields] of Object.entries(PART_FIELDS)) {
    if (report.parts.includes(part) || fields.every((f) => previous[f] === undefined)) continue;
    for (const field of fields) (report as unknown as Record<string, unknown>)[field] = previous[field];
    carried.push(part);
  }
  if (carried.length > 0)
    report.carriedOver = { date: previous.carriedOver?.date ?? previous.machine.date, parts: carried };
}

const COLORS = { floor: '#222222', relay: '#2ca02c', replay: '#8c8c8c', inproc: '#1f77b4', http: '#d62728' };
const MODE_LABEL = {
  floor: 'floor (bare minimal request)',
  relay: 'HTTP floor (the floor through a do-nothing HTTP server)',
  replay: "handler's request, sent bare",
  inproc: 'handler in-process',
  http: 'local HTTP server',
};
const mark = (pass: boolean | null | undefined) =>
  pass === true ? '✅ pass' : pass === false ? '❌ **fail**' : 'reported';
const x = (v: number) => `${fmt(v, 2)}×`;
const CRED_LABEL: Record<Cred, string> = { key: 'API key', session: 'stored session', jwt: 'JWT' };

function sequenceText(r: CredResult): string {
  if (r.sequence.length === 0) return 'none';
  return r.sequence.map((s) => (s.endsWith(' P#') ? s.slice(0, -3) : s.replace(' ', '(') + ')')).join(' → ');
}

function requestsSection(report: BenchReport, out: string[]): void {
  const results = report.requests as CaseResult[];
  const allOld = report.engine?.returnsOldItemOnConditionFailure ?? true;
  out.push('## 1. DynamoDB requests per operation', '');
  out.push(
    'Counted exactly by the DynamoDB proxy (`test/support/dynamo-proxy.ts`) between the local API (`lib/local/start.ts`, its own process) and the engine; the proxy also records which item each request touched (`P#` project, `S#` session, `K#` key record, `IDEM#` idempotency record). Each cell is the total and the requests in order (project item unless named). ' +
      `Every credential was used once before the cases (steady state: a warm process has its stored-session cache and the JWKS); the two "first request" rows show the cold case. Each case ran ${report.params.requestRepeats}× and the counts must agree.`,
    '',
  );
  if (!allOld) {
    out.push(
      '> **Engine caveat:** the embedded engine does **not** return the old item with a failed condition (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), so after every failed fast-path condition the service reads the item (`GetItem`) itself; DynamoDB would have sent it with the failure. `lib/local/engine.ts` patches `db.checkConditional` for this, but dynalite 4 deletes request fields it does not know (`validations/index.js` `checkTypes`) before the action runs, so the patch never sees `ReturnValuesOnConditionCheckFailure`. Rows where this costs a request say so ("on DynamoDB: n"); pass/fail is judged on what was measured here.',
      '',
    );
  }
  const groups = [...new Set(results.map((r) => r.group))];
  for (const group of groups) {
    out.push(`**${group}**`, '');
    out.push(`| Case | Target | ${CREDS.map((c) => CRED_LABEL[c]).join(' | ')} | Result | Notes |`);
    out.push(`|---|---|${CREDS.map(() => '---').join('|')}|---|---|`);
    for (const r of results.filter((c) => c.group === group)) {
      const notes = new Set<string>();
      const cells = CREDS.map((cred) => {
        const c = r.perCred[cred];
        if (!c) return '';
        if (!c.stable) notes.add(`repeats differed (statuses ${c.statuses.join('/')})`);
        if (!allOld && c.readsAfterFailedCondition > 0)
          notes.add(
            `+${c.readsAfterFailedCondition} GetItem after a failed condition (engine without ALL_OLD); on DynamoDB: ${c.total - c.readsAfterFailedCondition}`,
          );
        if (c.credentialLookups > 0) notes.add('stored-session lookup: GetItem(S#), then cached per process for 60 s');
        const statuses = [...new Set(c.statuses)].join('/');
        return `**${c.total}** · ${sequenceText(c)}${statuses === '200' ? '' : ` · ${statuses}`}`;
      });
      out.push(`| ${r.label} | ${r.target} | ${cells.join(' | ')} | ${mark(r.pass)} | ${[...notes].join('; ')} |`);
    }
    out.push('');
  }
}

function latencySection(report: BenchReport, out: string[]): void {
  const l = report.latency as LatencyReport;
  out.push('## 2. Latency against the floor', '');
  out.push(
    `Per operation, the five modes interleaved in runs of ${l.config.runLength} consecutive requests, the modes in rotating order (A B C D E, B C D E A, …), ${l.config.iterations} requests per mode × ${l.config.blocks} blocks after ${l.config.warmup} warm-up iterations (runs rather than single requests so that every process a mode uses is equally warm: with one request per mode in turn, the HTTP server would idle through the other modes' requests before each of its own while the engine never idles, and an idle process on this VM takes up to a millisecond to wake): ` +
      "**floor**: one bare, minimal `UpdateItem` (`GetItem` for get) with `@aws-sdk/client-dynamodb` straight to the engine: a client with the transport settings of `lib/dynamo/client.ts` (keep-alive, timeouts, retries) and otherwise as the SDK comes (the service's client also caches its middleware chain and drops the no-op logger middleware; the floor does neither); " +
      "**HTTP floor**: the floor's request sent through `bench/relay.ts`, a node:http server in its own process that does nothing but send it with the floor's client and answer 200: what one local HTTP hop costs on this machine, the least any HTTP service in front of the engine can take; " +
      "**handler's request, sent bare**: the exact request the handler sends for that operation (captured from the same operation on an identical item, fresh request token), sent with the floor's client: what the longer condition/update expression costs with no handler code; " +
      '**in-process**: the Lambda handler (`functions/<op>.ts`) called in the worker process with an API Gateway v2 event and a Lambda context (access log to /dev/null); ' +
      `**HTTP**: the same over the local server (\`lib/local/start.ts\`, its own process, keep-alive). Each mode has its own project item with the same content (${(l.contentBytes / 1024).toFixed(1)} KB of content, ${(l.itemBytes / 1024).toFixed(1)} KB item as JSON), reset before every block. API key credential. The ratio is of medians over all samples; in brackets the min–max of the per-block ratio (noise).`,
    '',
  );
  out.push(
    `| Operation | floor p50 / p99 ms | handler's request bare p50 ms | in-process p50 / p99 ms | HTTP floor p50 ms (÷ floor) | HTTP p50 / p99 ms | in-process ÷ floor (blocks) | ≤ ${TARGETS.inproc}× | HTTP ÷ floor (blocks) | ≤ ${TARGETS.http}× | HTTP ÷ HTTP floor |`,
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of l.rows) {
    out.push(
      `| ${r.op} | ${fmt(r.floor.median)} / ${fmt(r.floor.p99)} | ${fmt(r.replay.median)} | ${fmt(r.inproc.median)} / ${fmt(r.inproc.p99)} | ${fmt(r.relay.median)} (${x(r.ratio.relay)}) | ${fmt(r.http.median)} / ${fmt(r.http.p99)} | ` +
        `**${x(r.ratio.inproc)}** (${fmt(r.blockRatio.inproc.min)}–${fmt(r.blockRatio.inproc.max)}) | ${mark(r.pass.inproc)} | **${x(r.ratio.http)}** (${fmt(r.blockRatio.http.min)}–${fmt(r.blockRatio.http.max)}) | ${mark(r.pass.http)} | ${x(r.ratio.httpOverRelay)} |`,
    );
  }
  const hop = l.rows.map((r) => r.relay.median - r.floor.median).sort((a, b) => a - b)[
    Math.floor(l.rows.length / 2)
  ] as number;
  out.push(
    '',
    `**The HTTP target against the hop:** the HTTP floor alone is ${x(Math.min(...l.rows.map((r) => r.ratio.relay)))}–${x(Math.max(...l.rows.map((r) => r.ratio.relay)))} of the floor (a median ${fmt(hop)} ms for one local HTTP hop: client, loopback TCP, a second process's HTTP parsing and SDK call, on 2 cores shared with the engine). ` +
      `Within ${TARGETS.http}× of the floor, the service would have ${l.rows.map((r) => `${r.op} ${fmt(TARGETS.http * r.floor.median - r.relay.median)} ms`).join(', ')} left for everything it does beyond that hop (authentication, validation, compiling the operation, its longer expression, the v2 event, logging).`,
  );
  out.push(
    '',
    '![Latency distributions: floor, HTTP floor, handler request sent bare, in-process handler, local HTTP](latency.svg)',
    '',
  );
  out.push('### Where the time goes', '');
  out.push(
    "Decomposition per operation: *bare request ÷ floor* is what the handler's longer expression costs (SDK serialisation + the engine evaluating it); *in-process ÷ bare request* is the handler's own code (middy, logger, parsing, validation, auth, compile). CPU per request: this process (SDK + handler), the engine process (`/proc/<pid>/stat`, 10 ms ticks summed over all samples) and the HTTP server; in brackets the kernel (system) part, mostly loopback TCP.",
    '',
  );
  out.push(
    "| Operation | handler requests / op | handler's request (bytes) | bare request ÷ floor | in-process ÷ bare request | engine CPU ms/req: floor → handler's request → in-process | client CPU ms/req: floor → in-process | server CPU ms/req (HTTP) |",
  );
  out.push('|---|---|---|---|---|---|---|---|');
  for (const r of l.rows) {
    out.push(
      `| ${r.op} | ${fmt(r.handlerRequestsPerOp, 0)} | ${r.handlerRequest?.command ?? ''} ${r.handlerRequest?.bytes ?? ''} | ${x(r.ratio.replay)} | ${x(r.ratio.inprocOverReplay)} | ` +
        `${fmt(r.cpu.floor.engine)} → ${fmt(r.cpu.replay.engine)} → ${fmt(r.cpu.inproc.engine)} | ${fmt(r.cpu.floor.worker)} (${fmt(r.cpu.floor.workerSys)}) → ${fmt(r.cpu.inproc.worker)} (${fmt(r.cpu.inproc.workerSys)}) | ${fmt(r.cpu.http.server)} (${fmt(r.cpu.http.serverSys)}) |`,
    );
  }
  const shares = l.rows
    .filter((r) => r.inproc.median > r.floor.median && r.handlerRequest?.command === 'UpdateItem')
    .map((r) => ({
      op: r.op,
      request: (r.replay.median - r.floor.median) / (r.inproc.median - r.floor.median),
      code: r.inproc.median - r.replay.median,
      server: r.http.median - r.inproc.median,
    }));
  if (shares.length > 0) {
    const sorted = (v: number[]) => [...v].sort((a, b) => a - b);
    const mid = (v: number[]) => sorted(v)[Math.floor(v.length / 2)] as number;
    out.push(
      '',
      `**Reading it:** for the mutations, of the in-process handler's time over the floor a median ${fmt(100 * mid(shares.map((s) => s.request)), 0)}% (per operation ${shares.map((s) => `${s.op} ${fmt(100 * s.request, 0)}%`).join(', ')}) is already there when the handler's request is sent bare: the longer UpdateExpression/ConditionExpression (key or role check with expiry, version, ETag, request-token slot, size budget, parent existence or a counter's room) costs the SDK and above all the engine more than the minimal expression (engine CPU column). ` +
        `The handler's own code adds a median ${fmt(mid(shares.map((s) => s.code)), 2)} ms per request; the local HTTP server adds a further median ${fmt(mid(shares.map((s) => s.server)), 2)} ms (client + server + an extra hop; server CPU column). ` +
        "dynalite evaluates expressions in JavaScript on the same 2 cores, so on DynamoDB the expression share of this gap would be far smaller; the handler-code and HTTP shares carry over. (get sends a GetItem with a projection no bigger than the floor's, so it has no expression share.)",
    );
  }
  const set = l.rows.find((r) => r.op === 'set')?.handlerRequest;
  if (set?.conditionExpression) {
    out.push(
      '',
      "The handler's `set` request (fast path), for reference:",
      '',
      '```',
      `UpdateExpression:    ${set.updateExpression}`,
      `ConditionExpression: ${set.conditionExpression}`,
      '```',
    );
  }
  if (l.profile) {
    const p = l.profile;
    const per = (ms: number) => ms / p.requestsPerPhase;
    out.push(
      '',
      `**CPU profile** (V8 sampling profiler, 0.1 ms interval, in the worker; ${p.requestsPerPhase} requests per phase, all eight operations round-robin; profiler overhead inflates both phases alike):`,
      '',
    );
    out.push('| Phase | wall ms/req | sampled busy ms/req | process CPU ms/req | engine CPU ms/req |');
    out.push('|---|---|---|---|---|');
    out.push(
      `| floor | ${fmt(per(p.floor.wallMs))} | ${fmt(per(p.floor.busyMs))} | ${fmt(per(p.floor.workerCpuMs))} | ${fmt(per(p.floor.engineCpuMs))} |`,
    );
    out.push(
      `| handler in-process | ${fmt(per(p.handler.wallMs))} | ${fmt(per(p.handler.busyMs))} | ${fmt(per(p.handler.workerCpuMs))} | ${fmt(per(p.handler.engineCpuMs))} |`,
    );
    const areas = [...new Set([...Object.keys(p.floor.byArea), ...Object.keys(p.handler.byArea)])]
      .map((area) => ({ area, floor: per(p.floor.byArea[area] ?? 0), handler: per(p.handler.byArea[area] ?? 0) }))
      .map((a) => ({ ...a, diff: a.handler - a.floor }))
      .sort((a, b) => b.diff - a.diff)
      .slice(0, 14);
    out.push(
      '',
      'Self time by code area, ms per request (largest increase over the floor first; `(V8 builtins)` includes socket `writev`, in which the sampler also counts time the process waits while the engine runs on the CPU):',
      '',
    );
    out.push('| Area | floor | handler | difference |');
    out.push('|---|---|---|---|');
    for (const a of areas)
      out.push(
        `| ${a.area} | ${fmt(a.floor, 3)} | ${fmt(a.handler, 3)} | ${a.diff >= 0 ? '+' : ''}${fmt(a.diff, 3)} |`,
      );
    out.push('', 'Top functions by self time in the handler phase:', '');
    out.push('| Function | Where | Area | ms / req |');
    out.push('|---|---|---|---|');
    for (const t of p.handler.top.slice(0, 12))
      out.push(`| \`${t.function}\` | ${t.where} | ${t.area} | ${fmt(per(t.selfMs), 3)} |`);
    out.push(
      '',
      `Profiles for DevTools / speedscope: ${p.files.map((f) => `\`${f.slice(f.indexOf('bench/'))}\``).join(', ')} (not committed).`,
    );
  }
  if (l.serverProfile) {
    const sp = l.serverProfile;
    const per = (ms: number) => ms / sp.requests;
    out.push(
      '',
      `**The local HTTP server's CPU profile** (a second server process run with \`node --cpu-prof\` for a profiling pass of its own, so the measured server carries no profiler: ${sp.requests} HTTP requests in ${fmt(sp.windowMs / 1000, 1)} s): ${fmt(per(sp.busyMs), 3)} ms sampled per request, ${fmt(per(sp.busyMs - (sp.top.find((t) => t.function === 'writev')?.selfMs ?? 0)), 3)} ms without socket \`writev\` (compare the server's measured CPU, ${fmt(l.rows.reduce((a, r) => a + r.cpu.http.server, 0) / l.rows.length, 2)} ms/req on average: the sampler charges \`writev\` with the time the process is preempted while its peer runs, which a busy 2-core machine inflates). Self time by area, ms per request:`,
      '',
    );
    out.push('| Area | ms / req |', '|---|---|');
    for (const [area, ms] of Object.entries(sp.byArea)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 14))
      out.push(`| ${area} | ${fmt(per(ms), 3)} |`);
    out.push('', '| Function | Where | ms / req |', '|---|---|---|');
    for (const t of sp.top.slice(0, 10))
      out.push(`| \`${t.function}\` | ${t.where || t.area} | ${fmt(per(t.selfMs), 3)} |`);
    out.push('', `Profile: \`${sp.file.slice(sp.file.indexOf('bench/'))}\` (not committed).`);
  }
  out.push('');
}

function contentionSection(report: BenchReport, out: string[]): void {
  const rows = report.contention as ContentionRow[];
  out.push('## 3. Contention', '');
  out.push(
    `${rows[0]?.clients ?? report.params.clients} concurrent clients (keep-alive HTTP) against one project, ${report.params.contentionOps} operations each, through the local API whose DynamoDB endpoint is the counting proxy (so each request also makes one extra local hop). A 409 \`WRITE_CONFLICT\` applied nothing; a 5xx (e.g. 503 when a request reaches its deadline) may or may not have applied, and the check accepts either, exactly once. The final content is checked against exactly the operations that succeeded. *Retries / op* = (UpdateItem − succeeded) ÷ operations, as the issue defines it; that counts the fast-path guess a middle insert makes first, so *solo* (the UpdateItems of one operation of the scenario run alone just before) and *contention retries / op* = (UpdateItem − solo × operations) ÷ operations separate what contention added. Under \`ALL_OLD\`-less dynalite every failed condition is also followed by a GetItem (see part 1).`,
    '',
  );
  out.push(
    '| Scenario | Path | Operations | Succeeded | Other statuses | Throughput ops/s | p50 ms | p99 ms | DynamoDB requests | Requests / op | Retries / op | Solo UpdateItem / op | Contention retries / op | Nothing lost |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const other =
      Object.entries(r.statuses)
        .filter(([s]) => s !== '200')
        .map(([s, c]) => `${c}× ${s}`)
        .join(', ') || '—';
    const requests = Object.entries(r.requests)
      .map(([op, c]) => `${op} ${c}`)
      .join(', ');
    out.push(
      `| ${r.label} | ${r.path} | ${r.operations} | ${r.succeeded} | ${other} | ${fmt(r.throughput, 0)} | ${fmt(r.latency.median, 1)} | ${fmt(r.latency.p99, 1)} | ${requests} | ${fmt(r.requestsPerOp)} | ${fmt(r.retriesPerOp)} | ${r.soloUpdatesPerOp} | ${fmt(r.contentionRetriesPerOp)} | ${r.exact ? `✅ exact${r.unknownOutcomes ? ` (${r.unknownOutcomes} 5xx: applied or not, never twice)` : ''}` : `❌ ${r.problems.join('; ')}`} |`,
    );
  }
  out.push('', '![Latency under contention](contention.svg)', '');
}

function memorySection(report: BenchReport, out: string[]): void {
  const m = report.memory as MemoryReport;
  out.push('## 5. Memory', '');
  out.push(
    `RSS from \`/proc/<pid>/status\` every ${m.intervalMs} ms; baseline = idle just before the contention run (after parts 1–2 warmed the API), peak = during it, VmHWM = the process's own high-water mark since start. \`npm start\` runs both in one process; here they are separate so each is measured.`,
    '',
  );
  out.push('| Process | Baseline MB | Peak during contention MB | VmHWM MB |');
  out.push('|---|---|---|---|');
  out.push(
    `| local API (lib/local/start.ts) | ${fmt(m.server.baselineMb, 0)} | **${fmt(m.server.peakMb, 0)}** | ${fmt(m.server.hwmMb, 0)} |`,
  );
  out.push(
    `| engine (dynalite, in memory) | ${fmt(m.engine.baselineMb, 0)} | ${fmt(m.engine.peakMb, 0)} | ${fmt(m.engine.hwmMb, 0)} |`,
  );
  if (report.contention) {
    out.push('', '| Scenario | local API peak MB | engine peak MB |', '|---|---|---|');
    for (const r of report.contention)
      out.push(`| ${r.label} | ${fmt(r.rss.serverPeakMb, 0)} | ${fmt(r.rss.enginePeakMb, 0)} |`);
  }
  out.push('', '![RSS during the contention run](memory.svg)', '');
}

function coldSection(report: BenchReport, out: string[]): void {
  const c = report.coldstart as ColdReport;
  out.push('## 4. Cold start', '');
  if (!c.available) {
    out.push(
      `Not measured: ${c.note}. The part runs as soon as \`scripts/bundle.mjs\` exports \`bundleFunctions\` and \`functionsOf\`.`,
      '',
    );
    return;
  }
  out.push(
    `Bundles from \`scripts/bundle.mjs\` (\`bundleFunctions\`, the bundles Lambda gets: ESM, minified, AWS SDK bundled, linked source maps), built into \`bench/.out/bundles\` together with the floor \`bench/coldstart/floor.ts\` (creates the DynamoDB document client, sends one UpdateItem) with the same options. ` +
      `Each sample is a fresh \`node --enable-source-maps\` process (as Lambda's NODE_OPTIONS) that imports one bundle and answers one API Gateway v2 event against the engine; ${c.runs} rounds after one warm-up process per bundle, interleaved (rotating order). *load + first invoke* is from just before \`import()\` to the response; *process total* adds Node's own start-up (performance.now() at the response).`,
    '',
  );
  out.push(
    `| Function | Bundle KB | Zip KB | load p50 ms | first invoke p50 ms | load + first invoke p50 (p90) ms | ÷ floor | per-round ratio p25–p75 | ≤ ${COLD_TARGET}× | process total p50 ms | ÷ floor | RSS MB |`,
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const sizes = new Map(c.bundles.map((b) => [b.name, b]));
  for (const r of c.rows) {
    const b = sizes.get(r.name);
    out.push(
      `| ${r.name === 'floor' ? '**floor**' : r.name} | ${fmt(b?.bundleKb ?? Number.NaN, 0)} | ${fmt(b?.zipKb ?? Number.NaN, 0)} | ${fmt(r.load.median, 1)} | ${fmt(r.invoke.median, 1)} | ${fmt(r.loadPlusInvoke.median, 1)} (${fmt(r.loadPlusInvoke.p90, 1)}) | ${r.name === 'floor' ? '1.00×' : `**${x(r.ratio)}**`} | ${r.name === 'floor' ? '' : `${fmt(r.roundRatio.p25)}–${fmt(r.roundRatio.p75)}`} | ${r.name === 'floor' ? '' : mark(r.pass)} | ${fmt(r.total.median, 1)} | ${x(r.ratioTotal)} | ${fmt(r.rssMb, 0)} |`,
    );
  }
  out.push('', '![Cold start: load + first invoke per bundle](coldstart.svg)', '');
  if (c.profile) {
    const b = c.profile.byBundle;
    const names = Object.keys(b);
    const areas = [...new Set(names.flatMap((name) => Object.keys(b[name] ?? {})))].filter((a) => a !== '(idle)');
    const total = (name: string) => areas.reduce((sum, a) => sum + (b[name]?.[a] ?? 0), 0);
    const rows = areas
      .map((area) => ({ area, values: names.map((name) => b[name]?.[area] ?? 0) }))
      .sort((p, q) => (q.values[1] ?? 0) - (q.values[0] ?? 0) - ((p.values[1] ?? 0) - (p.values[0] ?? 0)))
      .slice(0, 16);
    out.push(
      `**Where a cold start's time goes** (${c.profile.runs} extra profiled cold starts per bundle, not timed; V8 sampling profiler from just before \`import()\` to the response, self time mapped to packages through the bundle's source map; mean ms per cold start, largest increase of \`${names[1] ?? ''}\` over the floor first):`,
      '',
    );
    out.push(`| Area | ${names.join(' | ')} |`, `|---|${names.map(() => '---').join('|')}|`);
    for (const r of rows) out.push(`| ${r.area} | ${r.values.map((v) => fmt(v, 1)).join(' | ')} |`);
    out.push(`| **busy total** | ${names.map((name) => `**${fmt(total(name), 1)}**`).join(' | ')} |`, '');
  }
  const floor = sizes.get('floor');
  out.push(
    `Bundle sizes of every function in serverless.yml, and what each carries beyond the floor (KB of minified output per package or lib folder, from esbuild's metafile). The floor itself: ${
      floor?.composition
        .slice(0, 6)
        .map((a) => `${a.area} ${fmt(a.kb, 0)}`)
        .join(', ') ?? '?'
    }.`,
    '',
  );
  out.push('| Function | Bundle KB | Zip KB | Beyond the floor (largest first) |');
  out.push('|---|---|---|---|');
  const f = new Map((floor?.composition ?? []).map((a) => [a.area, a.kb]));
  for (const b of c.bundles) {
    if (b.name === 'floor') continue;
    const extra = b.composition
      .map((a) => ({ area: a.area, kb: a.kb - (f.get(a.area) ?? 0) }))
      .filter((a) => a.kb > 0.5)
      .sort((a, b2) => b2.kb - a.kb);
    out.push(
      `| ${b.name} | ${fmt(b.bundleKb, 0)} | ${fmt(b.zipKb, 0)} | +${fmt(b.bundleKb - (floor?.bundleKb ?? 0), 0)}: ${extra
        .slice(0, 9)
        .map((a) => `${a.area} ${fmt(a.kb, 0)}`)
        .join(', ')} |`,
    );
  }
  out.push('');
}

function summarySection(report: BenchReport, out: string[]): void {
  out.push('## Summary', '');
  out.push('| Part | Target | Result | |');
  out.push('|---|---|---|---|');
  if (report.requests) {
    const targeted = report.requests.filter((r) => r.pass !== null);
    for (const group of ['fast path', 'read-then-write', 'idempotency']) {
      const rows = targeted.filter((r) => r.group === group);
      if (rows.length === 0) continue;
      const failing = rows.filter((r) => !r.pass);
      const target =
        group === 'fast path' ? '1 request' : group === 'read-then-write' ? '≤ 2 requests' : 'header: +3, none without';
      const engineOnly = failing.filter((f) => f.passWithOldItem);
      const why =
        engineOnly.length > 0
          ? ` (${engineOnly.length === failing.length ? 'all' : engineOnly.length} only because the engine returns no old item with a failed condition: each would pass on DynamoDB)`
          : '';
      out.push(
        `| 1. requests: ${group} (key, session, JWT) | ${target} | ${rows.length - failing.length}/${rows.length} cases pass${failing.length ? `; fail: ${failing.map((f) => f.label).join(', ')}${why}` : ''} | ${mark(failing.length === 0)} |`,
      );
    }
  }
  if (report.latency) {
    const rows = report.latency.rows;
    const worst = (key: 'inproc' | 'http') => rows.reduce((a, b) => (b.ratio[key] > a.ratio[key] ? b : a));
    const wi = worst('inproc');
    const wh = worst('http');
    out.push(
      `| 2. in-process handler ÷ floor (median) | ≤ ${TARGETS.inproc}× | ${rows.filter((r) => r.pass.inproc).length}/${rows.length} operations; worst ${wi.op} ${x(wi.ratio.inproc)} | ${mark(rows.every((r) => r.pass.inproc))} |`,
    );
    out.push(
      `| 2. local HTTP ÷ floor (median) | ≤ ${TARGETS.http}× | ${rows.filter((r) => r.pass.http).length}/${rows.length} operations; worst ${wh.op} ${x(wh.ratio.http)} | ${mark(rows.every((r) => r.pass.http))} |`,
    );
  }
  if (report.contention) {
    const rows = report.contention;
    const refused = rows
      .filter((r) => r.succeeded < r.operations)
      .map(
        (r) =>
          `${r.id}: ${r.operations - r.succeeded}/${r.operations} refused (${Object.entries(r.statuses)
            .filter(([s]) => s !== '200')
            .map(([s, c]) => `${c}× ${s}`)
            .join(', ')})`,
      );
    out.push(
      `| 3. contention: final content exact | nothing lost | ${rows.filter((r) => r.exact).length}/${rows.length} scenarios exact; ${rows.map((r) => `${r.id} ${fmt(r.throughput, 0)} ops/s`).join(', ')}${refused.length ? `; ${refused.join('; ')}` : ''} | ${mark(rows.every((r) => r.exact))} |`,
    );
  }
  if (report.coldstart?.available) {
    const rows = report.coldstart.rows.filter((r) => r.name !== 'floor');
    const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    out.push(
      `| 4. cold start ÷ floor (load + first invoke, median) | ≤ ${COLD_TARGET}× | ${rows.filter((r) => r.pass).length}/${rows.length} functions; worst ${worst.name} ${x(worst.ratio)} | ${mark(rows.every((r) => r.pass))} |`,
    );
  } else if (report.coldstart) {
    out.push(`| 4. cold start | ≤ ${COLD_TARGET}× | not measured: ${report.coldstart.note} | — |`);
  }
  if (report.memory)
    out.push(
      `| 5. local API peak RSS under contention | reported | ${fmt(report.memory.server.peakMb, 0)} MB (baseline ${fmt(report.memory.server.baselineMb, 0)} MB) | reported |`,
    );
  if (report.cost) {
    const set = (label: string) => report.cost?.sizes.find((sz) => sz.label === label);
    const cells = (report.cost.sizes ?? []).map((sz) => {
      const w = sz.rows.find((r) => r.id === 'set');
      return sz.held && w
        ? `${sz.label}: set ${w.wcu} WCU, ${writesPerSecond(w.wcu)} writes/s`
        : `${sz.label}: cannot hold (${sz.stoppedBy?.status} ${sz.stoppedBy?.code ?? ''})`;
    });
    out.push(
      `| 6. cost per operation by content size | reported | ${cells.join('; ')}${set('32 MiB')?.held ? '' : `; growth stopped at ${(report.cost.growth.reachedBytes / 1024).toFixed(0)} KiB after ${report.cost.growth.seconds.toFixed(1)} s`} | reported |`,
    );
  }
  for (const [part, error] of Object.entries(report.errors))
    out.push(`| ${part} | | **error**: ${error.split('\n')[0]} | ❌ |`);
  out.push('');
}

function markdown(report: BenchReport): string {
  const m = report.machine;
  const out: string[] = [];
  out.push('# content-api benchmark', '');
  out.push(`Generated by \`npm run bench\` (bench/run.ts) on **${m.date}** in ${report.durationSeconds ?? '?'} s.`, '');
  out.push(
    `- **Machine:** ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GB RAM (${m.freeMemoryGb} GB free at start), ${m.os}`,
  );
  out.push(`- **Node:** ${m.node}`);
  out.push(
    `- **Load average** (1/5/15 min): ${m.loadAverageStart.join(' / ')} at start, ${m.loadAverageEnd?.join(' / ') ?? '?'} at the end${Math.max(...m.loadAverageStart) > m.cores * 0.5 ? ` — **the machine was busy (other work running); absolute figures are noisy, see the per-block spread**` : ''}`,
  );
  out.push(
    `- **Engine:** ${report.engine?.name ?? 'dynalite'}; returns the old item on a failed condition (ALL_OLD): ${report.engine?.returnsOldItemOnConditionFailure ? 'yes' : '**no**'}`,
  );
  out.push(
    `- **Parameters:** ${Object.entries(report.params)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}; parts: ${report.parts.join(', ')}`,
  );
  if (report.carriedOver)
    out.push(
      `- **Carried over:** ${report.carriedOver.parts.join(', ')} from the run of ${report.carriedOver.date} (this run: ${report.parts.join(', ')})`,
    );
  out.push('');
  summarySection(report, out);
  if (report.requests) requestsSection(report, out);
  if (report.latency) latencySection(report, out);
  if (report.contention) contentionSection(report, out);
  if (report.coldstart) coldSection(report, out);
  if (report.memory) memorySection(report, out);
  if (report.cost) out.push(...costMarkdown(report.cost));
  if (report.realtime) {
    out.push(
      '## 7. Realtime: write response to change message',
      '',
      'One project on the embedded engine, every subscriber on its own WebSocket subscribed to the path written; the time from the HTTP response of a `set` to the `change` frame at each client (negative: the frame came first).',
      '',
      ...realtimeMarkdown(report.realtime),
      '',
    );
  }
  if (Object.keys(report.errors).length > 0) {
    out.push('## Errors', '');
    for (const [part, error] of Object.entries(report.errors)) out.push(`**${part}**`, '', '```', error, '```', '');
  }
  out.push('## Reproduce', '');
  out.push(
    '`npm run bench` (all parts, a few minutes). Environment: `BENCH_PARTS=requests,latency,contention,coldstart,cost,realtime`, `BENCH_ITERATIONS`, `BENCH_RUN_LENGTH`, `BENCH_BLOCKS`, `BENCH_WARMUP`, `BENCH_PROFILE_ITERATIONS` (0: no profile), `BENCH_REQUEST_REPEATS`, `BENCH_CLIENTS`, `BENCH_CONTENTION_OPS`, `BENCH_COLDSTART_RUNS`, `BENCH_COLDSTART_PROFILE_RUNS`, `BENCH_RSS_INTERVAL_MS`, `BENCH_COST_REPEATS`. See bench/README.md.',
    '',
  );
  return `${out.join('\n')}\n`;
}

function charts(report: BenchReport, dir: string): string[] {
  const files: string[] = [];
  // A carried-over part keeps the chart its own run drew.
  const drawn = (part: string) => !report.carriedOver?.parts.includes(part);
  if (report.latency && drawn('latency')) {
    const panels = report.latency.rows.map((r) => ({
      title: `${r.op}  (in-proc ${x(r.ratio.inproc)}, HTTP ${x(r.ratio.http)})`,
      series: (['floor', 'relay', 'replay', 'inproc', 'http'] as const).map((mode) => ({
        label: MODE_LABEL[mode],
        color: COLORS[mode],
        values: report.latency?.samples[r.op]?.[mode] ?? [],
      })),
    }));
    writeFileSync(
      join(dir, 'latency.svg'),
      cdfPanels('Latency per operation: empirical CDF (ms, log scale)', panels, {
        note: `${report.machine.cpu}, ${report.machine.cores} cores, node ${report.machine.node}, ${report.machine.date.slice(0, 10)}; load ${report.machine.loadAverageStart[0]}`,
      }),
    );
    files.push('latency.svg');
  }
  if (report.contention && drawn('contention')) {
    const rows = report.contention.map((r) => ({
      label: r.label,
      series: [{ label: 'latency', color: r.path === 'fast' ? '#1f77b4' : '#ff7f0e', values: r.samples }],
    }));
    writeFileSync(
      join(dir, 'contention.svg'),
      boxPlots(`Latency under contention, ${report.params.clients} clients (ms, log)`, rows, {
        note: 'box p25–p75, bar median, whiskers p1–p99, dot max; blue: one-request path, orange: read-then-write',
      }),
    );
    files.push('contention.svg');
  }
  if (report.coldstart?.available && drawn('coldstart')) {
    const rows = report.coldstart.rows.map((r) => ({
      label: r.name,
      series: [
        {
          label: 'load + first invoke',
          color: r.name === 'floor' ? '#222' : r.pass ? '#2ca02c' : '#d62728',
          values: report.coldstart?.samples[r.name] ?? [],
        },
      ],
    }));
    writeFileSync(
      join(dir, 'coldstart.svg'),
      boxPlots('Cold start: load + first invoke, fresh Node process per sample (ms)', rows, {
        log: false,
        note: `black: floor; green within ${COLD_TARGET}× of the floor's median, red beyond; box p25–p75, whiskers p1–p99`,
      }),
    );
    files.push('coldstart.svg');
  }
  if (report.memory && drawn('contention')) {
    const s = report.memory.series;
    const phases: Array<{ label: string; from: number; to: number }> = [];
    for (const point of s) {
      const last = phases[phases.length - 1];
      if (last && last.label === point.scenario) last.to = point.t / 1000;
      else phases.push({ label: point.scenario, from: point.t / 1000, to: point.t / 1000 });
    }
    writeFileSync(
      join(dir, 'memory.svg'),
      lineChart(
        'RSS during the contention run (MB)',
        [
          { label: 'local API', color: '#1f77b4', points: s.map((p) => [p.t / 1000, p.server]) },
          { label: 'engine (dynalite)', color: '#8c564b', points: s.map((p) => [p.t / 1000, p.engine]) },
        ],
        phases,
        { unit: 'MB' },
      ),
    );
    files.push('memory.svg');
  }
  return files;
}

/** Numbers to 4 decimals in the JSON: the samples stay exact enough and the file stays small. */
const rounding = (_key: string, value: unknown) =>
  typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1e4) / 1e4 : value;

export function writeReport(report: BenchReport, dir: string): string[] {
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(report, rounding)}\n`);
  writeFileSync(join(dir, 'latest.md'), markdown(report));
  return ['latest.md', 'latest.json', ...charts(report, dir)];
}
