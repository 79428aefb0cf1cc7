// Part `realtime`: from an HTTP write's response to the change message at subscribed WebSocket clients, locally, with
// 1, 100 and 1,000 subscribers of one project; fan-out throughput and the local API's memory (the consumer runs in
// it). Its own local API with the embedded engine in the same process (the engine's stream is in-process), as
// `npm start` runs it.
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { baseEnv } from './lib/config';
import { readRss } from './lib/procs';
import { quantile } from './lib/stats';
import { startLocalApi, stopProcess } from '../test/support/local-api';

export interface RealtimeRow {
  subscribers: number;
  writes: number;
  /** Write response → change message at a client, every client of every write (ms; negative: before the response). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Messages delivered per second: subscribers ÷ (last arrival − response), median over the writes. */
  fanOutPerSecond: number;
  rssBaselineMb: number;
  rssPeakMb: number;
}

interface Subscriber {
  ws: WebSocket;
  /** Arrival time of each change, by revision. */
  arrivals: Map<string, number>;
}

async function subscriber(url: string, project: string, token: string): Promise<Subscriber> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const arrivals = new Map<string, number>();
  const snapshot = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no snapshot within 60 s')), 60_000);
    ws.on('message', (data) => {
      const at = performance.now();
      const message = JSON.parse(String(data));
      if (message.type === 'snapshot') {
        clearTimeout(timer);
        resolve();
      } else if (message.type === 'change') arrivals.set(message.revision, at);
      else if (message.type === 'error') reject(new Error(String(data)));
    });
  });
  ws.send(JSON.stringify({ action: 'subscribe', project, token, path: 'n' }));
  await snapshot;
  return { ws, arrivals };
}

export async function runRealtime(options: {
  subscribers: number[];
  writes: (subscribers: number) => number;
  log: (line: string) => void;
}): Promise<RealtimeRow[]> {
  let stdout = '';
  const api = await startLocalApi({
    env: baseEnv({ PORT: '0', LOCAL_DYNAMODB_PORT: '0', DATA_DIR: ':memory:', TABLE_NAME: 'content-api-bench-rt' }),
    stdio: ['ignore', 'pipe', 'inherit'],
    onSpawn: (child) => child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString())),
  });
  const rows: RealtimeRow[] = [];
  try {
    // npm start's demo project and key (printed on its first start).
    const key = /API key (capi_\S+)/.exec(stdout)?.[1];
    if (!key) throw new Error('the local API printed no demo key');
    const project = '@demo/site';
    const wsUrl = `${api.url.replace(/^http/, 'ws')}/realtime`;
    const write = async (value: number) => {
      const res = await fetch(`${api.url}/api/${project}/content/set`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ path: 'n', value }),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`write answered ${res.status}`);
      return performance.now();
    };
    let value = 0;
    for (const count of options.subscribers) {
      const subs: Subscriber[] = [];
      // Connect in waves: API Gateway allows 500 new connections a second, the local server has 2 cores.
      for (let i = 0; i < count; i += 50) {
        subs.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(50, count - i) }, () => subscriber(wsUrl, project, key)),
          )),
        );
      }
      const baseline = readRss(api.pid);
      let peak = baseline?.hwmMb ?? Number.NaN;
      const sampler = setInterval(() => {
        const rss = readRss(api.pid);
        if (rss) peak = Math.max(peak, rss.rssMb);
      }, 20);
      const latencies: number[] = [];
      const fanOut: number[] = [];
      const writes = options.writes(count);
      for (let w = 0; w < writes; w++) {
        const before = new Set(subs[0]?.arrivals.keys());
        const answered = await write(++value);
        // Every subscriber's arrival of the change this write made (the one revision the first client had not seen).
        const deadline = Date.now() + 60_000;
        let revision: string | undefined;
        while (Date.now() < deadline) {
          revision ??= [...(subs[0]?.arrivals.keys() ?? [])].find((r) => !before.has(r));
          if (revision && subs.every((s) => s.arrivals.has(revision as string))) break;
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        if (!revision || !subs.every((s) => s.arrivals.has(revision as string))) {
          throw new Error(`not every subscriber got write ${w} within 60 s`);
        }
        const times = subs.map((s) => (s.arrivals.get(revision as string) as number) - answered);
        latencies.push(...times);
        fanOut.push(count / (Math.max(...times.map((t) => Math.max(t, 0.001))) / 1000));
      }
      clearInterval(sampler);
      const row: RealtimeRow = {
        subscribers: count,
        writes,
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        maxMs: Math.max(...latencies),
        fanOutPerSecond: quantile(fanOut, 0.5),
        rssBaselineMb: baseline?.rssMb ?? Number.NaN,
        rssPeakMb: peak,
      };
      rows.push(row);
      options.log(
        `  ${String(count).padStart(5)} subscribers, ${writes} writes: p50 ${row.p50Ms.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms, max ${row.maxMs.toFixed(1)} ms; fan-out ${row.fanOutPerSecond.toFixed(0)} msg/s; local API RSS ${row.rssBaselineMb.toFixed(0)} → peak ${row.rssPeakMb.toFixed(0)} MB`,
      );
      for (const s of subs) s.ws.terminate();
      // Let the server run $disconnect for them before the next round.
      await new Promise((resolve) => setTimeout(resolve, 1000 + count));
    }
  } finally {
    await stopProcess(api.child);
  }
  return rows;
}

/** The part's table for bench/results/realtime.md. */
export function realtimeMarkdown(rows: readonly RealtimeRow[]): string[] {
  return [
    '| Subscribers | Writes | p50 (ms) | p99 (ms) | max (ms) | Fan-out (messages/s) | Local API RSS baseline → peak (MB) |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.subscribers} | ${r.writes} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.maxMs.toFixed(1)} | ${r.fanOutPerSecond.toFixed(0)} | ${r.rssBaselineMb.toFixed(0)} → ${r.rssPeakMb.toFixed(0)} |`,
    ),
  ];
}
