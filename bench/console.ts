// The console in Chromium (issue 33): its size, its first load, and browsing an object of 100,000 keys held over
// many buckets (too large for one answer, so it is read in key pages as it scrolls). Prints a table and writes
// bench/results/console.md. Run: `npm run bench:console` (Debian's chromium at /usr/bin/chromium).
// CONSOLE_MEMBERS (default 100000), CONSOLE_MEMBER_BYTES (default 48: the object is then over the 4 MiB answer).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { buildConsole } from '../lib/local/console-site';
import { RESULTS_DIR, baseEnv, engineChoice, machine } from './lib/config';
import { type Child, startApiServer, startEngineProcess } from './lib/procs';

const MEMBERS = Number(process.env.CONSOLE_MEMBERS ?? 100_000);
const MEMBER_BYTES = Number(process.env.CONSOLE_MEMBER_BYTES ?? 48);
// A merge patch touches every bucket its new members fall in, and one request may rewrite at most 99 segments.
const PER_PATCH = 30;
const log = (line: string) => console.error(line);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] ?? 0;

async function main(): Promise<void> {
  const children: Child[] = [];
  const info = machine();
  try {
    const engine = await startEngineProcess(engineChoice().endpoint);
    children.push(engine);
    Object.assign(process.env, baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint }), { PATH: process.env.PATH });
    const fixtures = await import('./lib/fixtures');
    const { httpClient } = await import('./lib/http');
    const idp = await fixtures.startIdentityProvider();
    await fixtures.createUsers();
    const server = await startApiServer(engine.endpoint, idp.env);
    children.push(server);
    const api = httpClient(server.url, 2);
    const project = await fixtures.createBenchProject(`console-${Date.now().toString(36)}`);
    const token = project.key;

    log(`writing an object of ${MEMBERS} members of ~${MEMBER_BYTES} bytes...`);
    const filler = 'x'.repeat(Math.max(1, MEMBER_BYTES - 12));
    for (let start = 0; start < MEMBERS; start += PER_PATCH) {
      const members: Record<string, string> = {};
      for (let i = start; i < Math.min(MEMBERS, start + PER_PATCH); i++) members[`m${i}`] = filler;
      const r = await api.call('PATCH', project.content, {
        token,
        body: { wide: members },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      if (r.status !== 200) throw new Error(`PATCH at member ${start}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const whole = await api.call('GET', `${project.content}?path=wide`, { token });
    log(`GET of the whole object: ${whole.status}`);

    const files = buildConsole();
    const sizes = [...files].map(([name, f]) => ({ name, bytes: f.body.length, gzipped: gzipSync(f.body).length }));

    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox'],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const t0 = performance.now();
    await page.goto(`${server.url}/console/`, { waitUntil: 'load' });
    const loaded = performance.now() - t0;
    await page.getByLabel('Project').fill(`${project.username}/${project.slug}`);
    await page.getByLabel('Credential').fill(token);
    const t1 = performance.now();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.row[data-path="wide"]').waitFor();
    const firstTree = performance.now() - t1;
    const t2 = performance.now();
    await page.locator('.row[data-path="wide"]').click();
    await page.locator('.row[data-path="wide"] .twisty').click();
    await page.locator('.row[aria-level="3"]').first().waitFor();
    const opened = performance.now() - t2;

    // Scroll to the bottom of what is loaded, again and again: each time the "more" row comes into view the next
    // page of keys is read. Each step's time is from the scroll to the next painted frame.
    const steps: number[] = [];
    const t3 = performance.now();
    let rows = 0;
    for (let i = 0; i < 400; i++) {
      steps.push(
        await page.locator('.tree').evaluate(
          (tree) =>
            new Promise<number>((resolve) => {
              // In the page: the DOM's requestAnimationFrame (this file is typed for Node).
              const frame = (globalThis as unknown as { requestAnimationFrame(f: () => void): number })
                .requestAnimationFrame;
              const started = performance.now();
              tree.scrollBy(0, 1200);
              frame(() => frame(() => resolve(performance.now() - started)));
            }),
        ),
      );
      rows = await page.locator('.row').count();
      if ((await page.locator(`.row[data-path="wide.m${MEMBERS - 1}"]`).count()) > 0) break;
      if (i % 20 === 0) await page.waitForTimeout(50);
    }
    const loadedKeys = await page.locator('.tree').evaluate((t) => Math.round(t.scrollHeight / 28));
    const scrolled = performance.now() - t3;
    await browser.close();

    const lines = [
      `# Console (bench/console.ts)`,
      '',
      `${new Date().toISOString()}, ${info.cpu}, ${info.cores} cores, node ${info.node}, embedded engine.`,
      '',
      '| File | Bytes | Gzipped |',
      '|---|---|---|',
      ...sizes.map((s) => `| ${s.name} | ${s.bytes} | ${s.gzipped} |`),
      `| total (first load) | ${sizes.reduce((n, s) => n + s.bytes, 0)} | ${sizes.reduce((n, s) => n + s.gzipped, 0)} |`,
      '',
      '| Step | Figure |',
      '|---|---|',
      `| Page load (HTML, CSS, script; local) | ${loaded.toFixed(0)} ms |`,
      `| Sign in to the first rows of the tree | ${firstTree.toFixed(0)} ms |`,
      `| Open the object of ${MEMBERS} members (GET ${whole.status}, then key pages) | ${opened.toFixed(0)} ms |`,
      `| Scroll steps of 1,200 px to the next frame: median / p95 | ${median(steps).toFixed(1)} / ${p95(steps).toFixed(1)} ms over ${steps.length} steps |`,
      `| Rows in the page while scrolling (of ${loadedKeys} loaded) | ${rows} |`,
      `| Scrolled ${steps.length} steps: keys loaded on the way (pages of 1,000 as the end comes into view), time | ${loadedKeys - 2} keys, ${(scrolled / 1000).toFixed(1)} s |`,
    ];
    const text = `${lines.join('\n')}\n`;
    console.log(text);
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, 'console.md'), text);
  } finally {
    for (const c of children.reverse()) await c.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
