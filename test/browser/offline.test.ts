// Offline writes in a real browser (Debian's Chromium via playwright-core): the client's queue kept in IndexedDB
// across a page reload while the network is down, then sent once each, in order, when it is back.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { type Project, baseUrl, newProject, state } from '../support/api';

const CHROMIUM = '/usr/bin/chromium';

let browser: Browser;
let project: Project;
let page: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  project = await newProject();
  // The client's sources as an app bundles them, exposed to the page's scripts.
  const bundle = await build({
    stdin: {
      contents: `import { createClient } from './index';
import { indexedDbStore, offline } from './offline';
Object.assign(window, { createClient, indexedDbStore, offline });`,
      resolveDir: join(process.cwd(), 'client/src'),
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
  });
  page = `<!doctype html><html><body><script>${bundle.outputFiles[0]!.text}</script></body></html>`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
});

describe('offline writes in a browser, kept in IndexedDB', () => {
  it('survive a reload while offline, then are sent once each, in order, when the network is back', async () => {
    const tab = await browser.newPage();
    let online = false;
    // Same origin as the API: the page is served here, the API's requests fail while "offline".
    await tab.route(`${baseUrl()}/offline.html`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: page }),
    );
    const sent: string[] = [];
    await tab.route(`${baseUrl()}/api/**`, (route) => {
      if (!online) return route.abort('internetdisconnected');
      sent.push(route.request().headers()['idempotency-key'] ?? '');
      return route.continue();
    });
    const setup = `const site = createClient({ baseUrl: location.origin, credential: ${JSON.stringify(project.key)}, retries: 0 })
      .project(${JSON.stringify(`${project.username}/${project.slug}`)});`;
    await tab.goto(`${baseUrl()}/offline.html`);
    const made: string[] = await tab.evaluate(`(async () => { ${setup}
      const writer = offline(site, { store: indexedDbStore('app'), retryDelay: 600000 });
      const made = [await writer.push('list', 1), await writer.push('list', 2), await writer.increment('n', 3)];
      await writer.flush();
      return made.map((w) => w.key);
    })()`);
    expect(made).toHaveLength(3);

    // The reload (a restart of the app): the queue is read back from IndexedDB, keys and order kept.
    await tab.reload();
    expect(await tab.evaluate(`indexedDbStore('app').load().then((ws) => ws.map((w) => w.key))`)).toEqual(made);

    online = true;
    const after = await tab.evaluate(`(async () => { ${setup}
      const writer = offline(site, { store: indexedDbStore('app') });
      await writer.flush();
      return { pending: writer.pending.length, kept: (await indexedDbStore('app').load()).length };
    })()`);
    expect(after).toEqual({ pending: 0, kept: 0 });
    expect(sent).toEqual(made);
    expect((await state(project)).value).toEqual({ list: [1, 2], n: 3 });
    await tab.close();
  });
});
