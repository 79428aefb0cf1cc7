// Load without loss (`npm run test:soak`, not part of `npm test`): SOAK_CLIENTS clients (default 32) run mixed
// operations against one project for SOAK_SECONDS (default 120) while the API process's RSS is sampled every second.
// Each client owns a list (push, insert at 0, delete of the first element) whose
// exact expected state it tracks, and a key it sets; all clients share counters they increment and decrement. These
// are the one-request operations README promises unlimited concurrent writers for (read-then-write ones, like
// middle inserts, may answer 409 WRITE_CONFLICT under contention, by design, so they are not in the mix). Then:
// no errors, every list exactly as its client expects, every counter equal to the sum of its acknowledged amounts,
// and no memory growth: the last quarter's low RSS (10th percentile) at most SOAK_RSS_GROWTH (default 1.2) x the third
// quarter's. The first half is warm-up: under this load RSS climbs for 30-40 s (141 to 330 MiB) as V8 sizes its heap,
// and then stays level, so a climb that stops is not a leak, one that goes on is. RSS swings by 30 MB as V8 grows its
// heap and then collects it, so medians and peaks measure when the last major GC happened; what a leak raises is the
// level RSS returns to after a collection, which the low percentile tracks.
import { type Stack, type StackProject, percentile, request, rssKiB, startStack } from '../support/hardening-stack';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 120);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 32);
const GROWTH = Number(process.env.SOAK_RSS_GROWTH ?? 1.2);
const COUNTERS = ['a', 'b', 'c', 'd'];
/** Per-client lists stay short, so the content stays far below its 350 KiB limit however long the soak runs. */
const MAX_LIST = 12;

const median = (xs: number[]) => percentile(xs, 50);
const low = (xs: number[]) => percentile(xs, 10);

describe('soak', () => {
  let stack: Stack;
  let p: StackProject;

  beforeAll(async () => {
    stack = await startStack();
    p = await stack.newProject();
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it(
    `${CLIENTS} clients for ${SECONDS} s: no errors, exact final content, no memory growth`,
    async () => {
      const initial = {
        lists: Object.fromEntries(Array.from({ length: CLIENTS }, (_, c) => [`c${c}`, []])),
        counters: Object.fromEntries(COUNTERS.map((k) => [k, 0])),
        sets: {},
      };
      expect((await request(`${p.content}/update`, { token: p.key, body: { content: initial } })).status).toBe(200);

      const rss: Array<{ t: number; kib: number }> = [];
      const t0 = Date.now();
      const deadline = t0 + SECONDS * 1000;
      const sampler = setInterval(() => {
        const kib = rssKiB(stack.pid);
        if (kib !== undefined) rss.push({ t: (Date.now() - t0) / 1000, kib });
      }, 1000);

      const latencies: number[] = [];
      const errors: string[] = [];
      const byOp: Record<string, number> = {};
      const expectedCounters: Record<string, number> = Object.fromEntries(COUNTERS.map((k) => [k, 0]));
      const expectedLists: string[][] = Array.from({ length: CLIENTS }, () => []);
      const expectedSets: Record<string, number> = {};

      async function client(c: number): Promise<void> {
        const list = expectedLists[c] as string[];
        const path = `lists.c${c}`;
        let n = 0;
        while (Date.now() < deadline) {
          n++;
          const x = Math.random();
          const token = x < 0.1 ? p.owner : p.key;
          let route: string;
          let body: Record<string, unknown> | undefined;
          let apply: () => void = () => undefined;
          if (x < 0.25) {
            const v = `c${c}-${n}`;
            route = 'push';
            body = { path, value: v };
            apply = () => list.push(v);
          } else if (x < 0.33) {
            const v = `c${c}-${n}`;
            route = 'insert';
            body = { path, value: v, index: 0 };
            apply = () => list.unshift(v);
          } else if (x < 0.5 || list.length > MAX_LIST) {
            route = 'delete';
            body = { path: `${path}.0` };
            apply = () => void list.shift();
          } else if (x < 0.65) {
            const k = COUNTERS[n % COUNTERS.length] as string;
            const amount = 1 + (n % 7);
            route = 'increment';
            body = { path: `counters.${k}`, value: amount };
            apply = () => void (expectedCounters[k] = (expectedCounters[k] as number) + amount);
          } else if (x < 0.75) {
            const k = COUNTERS[(n + 1) % COUNTERS.length] as string;
            route = 'decrement';
            body = { path: `counters.${k}` };
            apply = () => void (expectedCounters[k] = (expectedCounters[k] as number) - 1);
          } else if (x < 0.82) {
            route = 'set';
            body = { path: `sets.c${c}`, value: n };
            apply = () => void (expectedSets[`c${c}`] = n);
          } else {
            route = 'get';
          }
          byOp[route] = (byOp[route] ?? 0) + 1;
          try {
            const r =
              route === 'get'
                ? await request(x < 0.91 ? p.content : `${p.content}?path=${encodeURIComponent(`lists.c${c}`)}`, {
                    token,
                  })
                : await request(`${p.content}/${route}`, { token, body });
            latencies.push(r.ms);
            if (r.status !== 200) errors.push(`${route} ${JSON.stringify(body)}: ${r.status} ${r.text.slice(0, 200)}`);
            else apply();
          } catch (error) {
            errors.push(`${route} ${JSON.stringify(body)}: ${String(error)}`);
          }
        }
      }

      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      clearInterval(sampler);
      const elapsed = (Date.now() - t0) / 1000;

      const final = (await request(p.content, { token: p.key })).body.value as {
        lists: Record<string, string[]>;
        counters: Record<string, number>;
        sets: Record<string, number>;
      };
      const quarters = [0, 1, 2, 3].map((i) =>
        rss.slice(Math.floor((i * rss.length) / 4), Math.floor(((i + 1) * rss.length) / 4)).map((s) => s.kib),
      );
      const mb = (kib: number) => (kib / 1024).toFixed(1);
      console.log(
        `soak: ${CLIENTS} clients, ${elapsed.toFixed(0)} s, ${latencies.length} requests, ${(latencies.length / elapsed).toFixed(0)} req/s, ` +
          `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(0)} ms, errors ${errors.length}\n` +
          `  operations: ${JSON.stringify(byOp)}\n` +
          `  API RSS (MiB) by quarter, p10 / median [min-max]: ${quarters.map((t) => `${mb(low(t))} / ${mb(median(t))} [${mb(Math.min(...t))}-${mb(Math.max(...t))}]`).join(', ')} (${rss.length} samples)\n` +
          `  RSS samples every 10 s: ${rss
            .filter((_, i) => i % 10 === 0)
            .map((s) => mb(s.kib))
            .join(' ')}`,
      );

      expect(final.counters).toEqual(expectedCounters);
      expect(final.sets).toEqual(expectedSets);
      for (let c = 0; c < CLIENTS; c++)
        expect({ client: c, list: final.lists[`c${c}`] }).toEqual({ client: c, list: expectedLists[c] });
      expect(errors.slice(0, 20)).toEqual([]);
      expect(rss.length).toBeGreaterThanOrEqual(Math.min(30, SECONDS - 2));
      expect(low(quarters[3] as number[])).toBeLessThanOrEqual(GROWTH * low(quarters[2] as number[]));
    },
    (SECONDS + 120) * 1000,
  );
});
