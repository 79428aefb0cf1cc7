// The API reference in a real browser (Debian's Chromium via playwright-core): it renders every route, loads nothing
// from another origin, and a person can authorize with an API key and try a request against the local API.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { loadRoutes } from '../../lib/local/server';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { baseUrl, content, newProject, post, type Project } from '../support/api';

// Debian's Chromium only: no tool may download a browser of its own.
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = join(process.cwd(), 'docs', 'screenshot.png');

let browser: Browser;
let page: Page;
let project: Project;
const requested: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  project = await newProject();
  expect((await post(project, 'set', { path: 'data.greeting', value: 'hello from the docs' })).status).toBe(200);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (request) => requested.push(request.url()));
  // A CSP violation (anything not from this server) or a script error shows up here.
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${baseUrl()}/`, { waitUntil: 'load' });
  await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 30000 });
});

afterAll(async () => {
  await browser?.close();
});

const operation = (method: string, path: string) =>
  page.locator(`.opblock-${method.toLowerCase()}:has(.opblock-summary-path[data-path="${path}"])`);

describe('the API reference page at GET /', () => {
  it('renders the title and one operation per route in serverless.yml', async () => {
    await expect(page.title()).resolves.toBe('Content API reference');
    expect(await page.locator('.info .title').innerText()).toContain('Content API');
    const routes = loadRoutes();
    for (const route of routes) {
      const op = operation(route.method, route.path);
      expect({ route: `${route.method} ${route.path}`, count: await op.count() }).toEqual({
        route: `${route.method} ${route.path}`,
        count: 1,
      });
      await expect(op.locator('.opblock-summary-method').innerText()).resolves.toBe(route.method);
      expect(await op.isVisible()).toBe(true);
    }
    expect(await page.locator('.opblock').count()).toBe(routes.length);
  });

  it('shows each operation summary from the document', async () => {
    const document = buildOpenApiDocument();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        await expect(operation(method, path).locator('.opblock-summary-description').innerText()).resolves.toBe(
          op.summary,
        );
      }
    }
  });

  it('has an Authorize button for the bearer credential', async () => {
    await expect(page.locator('.auth-wrapper button.authorize').isVisible()).resolves.toBe(true);
  });

  it('tries GET content with an API key entered through Authorize, and shows the 200', async () => {
    await page.locator('.auth-wrapper button.authorize').click();
    await page.locator('#auth-bearer-value').fill(project.key);
    await page.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('.auth-btn-wrapper button.btn-done').click();

    const get = operation('GET', '/api/{username}/{projectSlug}/content');
    await get.locator('.opblock-summary-control').click();
    // tryItOutEnabled: the parameters are editable at once, no "Try it out" click needed.
    await get.locator('tr[data-param-name="username"] input').fill(project.username);
    await get.locator('tr[data-param-name="projectSlug"] input').fill(project.slug);
    await get.locator('tr[data-param-name="path"] input').fill('data.greeting');
    const [apiRequest] = await Promise.all([
      page.waitForRequest((r) => r.url().includes('/content?path=')),
      get.locator('button.execute').click(),
    ]);
    expect(await apiRequest.headerValue('authorization')).toBe(`Bearer ${project.key}`);
    expect(apiRequest.url()).toBe(
      `${baseUrl()}/api/${encodeURIComponent(project.username)}/${project.slug}/content?path=data.greeting`,
    );

    const live = get.locator('.live-responses-table .response');
    await live.first().waitFor({ state: 'visible' });
    await expect(live.locator('.response-col_status').first().innerText()).resolves.toBe('200');
    await expect(live.locator('.response-col_description').first().innerText()).resolves.toContain(
      'hello from the docs',
    );

    await get.scrollIntoViewIfNeeded();
    mkdirSync(join(process.cwd(), 'docs'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('tries a write (set) with the optional headers left as the page offers them, then reads it back with GET', async () => {
    const set = operation('POST', '/api/{username}/{projectSlug}/content/set');
    await set.locator('.opblock-summary-control').click();
    // Optional headers start empty: a pre-filled If-Match would be a 412, a fixed Idempotency-Key a 422 on a second try.
    for (const header of ['If-Match', 'Idempotency-Key']) {
      await expect(set.locator(`tr[data-param-name="${header}"] input`).inputValue()).resolves.toBe('');
    }
    await set.locator('tr[data-param-name="username"] input').fill(project.username);
    await set.locator('tr[data-param-name="projectSlug"] input').fill(project.slug);
    const tries = [
      { path: 'data.fromDocs', value: 'written in the browser' },
      { path: 'data.fromDocs', value: 'written again, another body' },
    ];
    for (const body of tries) {
      await set.locator('textarea.body-param__text').fill(JSON.stringify(body));
      const [apiResponse] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/content/set')),
        set.locator('button.execute').click(),
      ]);
      const apiRequest = apiResponse.request();
      expect(apiRequest.method()).toBe('POST');
      expect(JSON.parse(apiRequest.postData() ?? '')).toEqual(body);
      expect(await apiRequest.headerValue('if-match')).toBeNull();
      expect(await apiRequest.headerValue('idempotency-key')).toBeNull();
      expect({ status: apiResponse.status(), body: await apiResponse.json() }).toEqual({
        status: 200,
        body: { message: 'Value set successfully' },
      });
      const live = set.locator('.live-responses-table .response');
      await live.first().waitFor({ state: 'visible' });
      await expect(live.locator('.response-col_status').first().innerText()).resolves.toBe('200');
    }

    const get = operation('GET', '/api/{username}/{projectSlug}/content');
    await get.locator('tr[data-param-name="path"] input').fill('data.fromDocs');
    const [read] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/content?path=data.fromDocs')),
      get.locator('button.execute').click(),
    ]);
    expect({ status: read.status(), body: await read.json() }).toEqual({
      status: 200,
      body: { value: 'written again, another body' },
    });
    // The page shows the new answer in place of the earlier GET's.
    await get
      .locator('.live-responses-table .response .response-col_description', { hasText: 'written again, another body' })
      .waitFor({ state: 'visible' });
    await expect(get.locator('.live-responses-table .response .response-col_status').first().innerText()).resolves.toBe(
      '200',
    );
    await expect(content(project, 'data.fromDocs')).resolves.toBe('written again, another body');
  });

  it('tries PATCH content with a JSON Patch, the media type chosen on the page, and reads the result back', async () => {
    const patch = operation('PATCH', '/api/{username}/{projectSlug}/content');
    await patch.locator('.opblock-summary-control').click();
    await patch.locator('tr[data-param-name="username"] input').fill(project.username);
    await patch.locator('tr[data-param-name="projectSlug"] input').fill(project.slug);
    await patch.locator('.opblock-section-request-body select').first().selectOption('application/json-patch+json');
    const body = [{ op: 'add', path: '/data/patchedInBrowser', value: [1, 2] }];
    await patch.locator('textarea.body-param__text').fill(JSON.stringify(body));
    const [apiResponse] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().endsWith('/content')),
      patch.locator('button.execute').click(),
    ]);
    const apiRequest = apiResponse.request();
    expect(await apiRequest.headerValue('content-type')).toBe('application/json-patch+json');
    expect(JSON.parse(apiRequest.postData() ?? '')).toEqual(body);
    expect({ status: apiResponse.status(), body: await apiResponse.json() }).toEqual({
      status: 200,
      body: { message: 'Content patched successfully' },
    });
    await expect(content(project, 'data.patchedInBrowser')).resolves.toEqual([1, 2]);
  });

  it('realtime: a page subscribes over a WebSocket, another client writes, the page shows the change', async () => {
    // A page of the API's own origin (a page elsewhere may not reach a local address: Private Network Access).
    const live = await browser.newPage();
    try {
      await live.goto(`${baseUrl()}/`, { waitUntil: 'load' });
      const url = `${baseUrl().replace(/^http/, 'ws')}/realtime`;
      const subscribe = JSON.stringify({
        action: 'subscribe',
        project: `${project.username}/${project.slug}`,
        path: 'data',
        token: project.key,
      });
      // The page's own script (a string: this file is compiled without the DOM's types).
      await live.evaluate(`(() => {
        const list = document.createElement('ul');
        list.id = 'messages';
        document.body.append(list);
        const socket = new WebSocket(${JSON.stringify(url)});
        socket.onopen = () => socket.send(${JSON.stringify(subscribe)});
        socket.onclose = (event) => {
          const item = document.createElement('li');
          item.className = 'closed';
          item.textContent = String(event.code);
          list.append(item);
        };
        socket.onmessage = (event) => {
          const message = JSON.parse(event.data);
          const item = document.createElement('li');
          item.className = message.type;
          item.textContent = JSON.stringify(message.type === 'snapshot' ? message.value : message.changes);
          list.append(item);
        };
      })()`);
      await live
        .locator('#messages li.snapshot')
        .waitFor({ timeout: 15000 })
        .catch(async (error: Error) => {
          throw new Error(`${error.message}; the page got: ${await live.locator('#messages').innerText()}`);
        });
      expect(JSON.parse(await live.locator('#messages li.snapshot').innerText())).toMatchObject({
        greeting: 'hello from the docs',
      });
      expect((await post(project, 'set', { path: 'data.live', value: 'seen in the browser' })).status).toBe(200);
      await live.locator('#messages li.change').waitFor({ timeout: 15000 });
      expect(JSON.parse(await live.locator('#messages li.change').innerText())).toEqual([
        { path: 'data.live', value: 'seen in the browser' },
      ]);
    } finally {
      await live.close();
    }
  });

  it('loaded nothing from any other origin, and logged no errors', () => {
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => !url.startsWith(`${baseUrl()}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(requested).toEqual(
      expect.arrayContaining([`${baseUrl()}/openapi.json`, `${baseUrl()}/docs/assets/swagger-ui-bundle.js`]),
    );
    expect(pageErrors).toEqual([]);
  });
});
