// The docs say only what the code does: the reference page's texts against the limits and swagger-ui settings they
// describe, every relative link and anchor resolving, and the counts and limits the pages state against their source.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  DEFAULT_SLICE_LIMIT,
  MAX_BODY_BYTES,
  MAX_CONTAINER_DEPTH,
  MAX_CONTENT_BYTES,
  MAX_DEPTH,
  MAX_EXPIRES_IN_SECONDS,
  MAX_KEY_LENGTH,
  MAX_KEYS_PER_PROJECT,
  MAX_MEMBERS_PER_PROJECT,
  MAX_PATH_LENGTH,
  MAX_RESPONSE_BYTES,
  MAX_SLICE_LIMIT,
  MAX_CURSOR_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
  MAX_WEBHOOKS_PER_PROJECT,
  MAX_WRITE_ATTEMPTS,
} from '../../lib/config/limits';
import { MAX_PATCH_OPERATIONS } from '../../lib/http/patch';
import { MAX_BATCH_OPERATIONS } from '../../lib/http/schemas';
import { MAX_MESSAGE_BYTES } from '../../lib/realtime/messages';
import { MAX_CLIENT_MESSAGE_BYTES } from '../../lib/realtime/protocol';
import { MAX_DELIVERY_BODY_BYTES } from '../../lib/webhooks/deliveries';
import { docFiles, findDeadLinks, headingAnchor } from '../../scripts/check-links';
import { ERROR_CODES } from '../../lib/config/error-codes';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { INIT_JS } from '../../lib/openapi/docs-site';

const description = String(buildOpenApiDocument().info.description);

describe('the reference page (OpenAPI description) states the limits as the code enforces them', () => {
  it('names the whole-value limit as a limit on one value that stays whole, not on the content', () => {
    expect(description).not.toMatch(new RegExp(`content ${MAX_CONTENT_BYTES} bytes`));
    expect(description).toContain(`holds at most ${MAX_CONTENT_BYTES}`);
    expect(description).toMatch(/Content has no size limit of its own/);
  });

  it('gives the GET response limit from the same constant the store enforces', () => {
    expect(description).toContain(`${MAX_RESPONSE_BYTES} bytes`);
    expect(ERROR_CODES.RESPONSE_TOO_LARGE.message).toContain(String(MAX_RESPONSE_BYTES));
    expect(ERROR_CODES.CONTENT_TOO_LARGE.message).toMatch(/a value that stays whole/);
  });

  it('does not tell users to press "Try it out" while swagger-ui has it on for every operation', () => {
    expect(INIT_JS).toMatch(/tryItOutEnabled: true/);
    expect(description).not.toMatch(/Try it out/i);
  });
});

describe('every relative link and anchor in README.md and docs/**/*.md resolves (scripts/check-links.ts)', () => {
  const root = join(__dirname, '..', '..');

  it('finds no dead link in the repository', () => {
    expect(findDeadLinks(root)).toEqual([]);
  });

  it('reports a missing file, a missing heading and an anchor into a non-Markdown file, and skips code and URLs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'links-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(
      join(dir, 'README.md'),
      [
        '# Title',
        '## The `content-api` command',
        '## Twice',
        '## Twice',
        '[ok](#the-content-api-command) [ok](#twice-1) [ok](docs/a.md#section-a) [ok](https://example.com/#x)',
        '[gone](docs/b.md) [no heading](#nowhere) [no anchor in json](package.json#x)',
        '`[in code](nowhere.md)`',
        '```',
        '[in a fence](nowhere.md)',
        '```',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'docs', 'a.md'),
      '# A\n## Section A\n[up](../README.md#title) [bad](../README.md#twice-2)\n',
    );
    writeFileSync(join(dir, 'package.json'), '{}');
    const dead = findDeadLinks(dir).map(({ file, target }) => `${file} ${target}`);
    expect(dead.sort()).toEqual(
      [
        'README.md docs/b.md',
        'README.md #nowhere',
        'README.md package.json#x',
        'docs/a.md ../README.md#twice-2',
      ].sort(),
    );
  });

  it('computes GitHub anchors: lower case, punctuation dropped, spaces to hyphens', () => {
    expect(headingAnchor('Versions, If-Match and Idempotency-Key')).toBe('versions-if-match-and-idempotency-key');
    expect(headingAnchor('Identity provider (OIDC) sessions')).toBe('identity-provider-oidc-sessions');
    expect(headingAnchor("API Gateway's own answers (deployed only)")).toBe('api-gateways-own-answers-deployed-only');
  });
});

describe('the README is one page a newcomer reads', () => {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

  it('gives the two commands exactly, in under 250 lines', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toContain('npm ci && npm test');
    expect(readme.split('\n').length).toBeLessThan(250);
  });

  it('never tells anyone to run a package this project does not publish (npx by a bare name, the @content-api scope)', () => {
    const root = join(__dirname, '..', '..');
    for (const file of docFiles(root)) {
      const text = readFileSync(join(root, file), 'utf8');
      expect({ file, hits: text.match(/npx\s+(--yes\s+|-y\s+)?(-p\s+)?@?content-api\S*/g) }).toEqual({
        file,
        hits: null,
      });
    }
  });
});

describe('docs/ is an index and short pages', () => {
  const root = join(__dirname, '..', '..');
  const pages = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md') && name !== 'README.md');

  it('links every page from the index, docs/README.md', () => {
    const index = readFileSync(join(root, 'docs', 'README.md'), 'utf8');
    for (const page of pages) expect({ page, linked: index.includes(`](${page})`) }).toEqual({ page, linked: true });
  });

  it('keeps every page under 150 lines', () => {
    for (const page of pages) {
      const lines = readFileSync(join(root, 'docs', page), 'utf8').split('\n').length;
      expect({ page, short: lines < 150 }).toEqual({ page, short: true });
    }
  });

  it('gives every page with more than one section a table of contents linking each section', () => {
    for (const page of pages) {
      const text = readFileSync(join(root, 'docs', page), 'utf8').replace(/```[\s\S]*?```/g, '');
      const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => headingAnchor(m[1] as string));
      if (sections.length < 2) continue;
      const missing = sections.filter((anchor) => !text.includes(`](#${anchor})`));
      expect({ page, missing }).toEqual({ page, missing: [] });
    }
  });
});

describe('figures the docs state come from the code', () => {
  const root = join(__dirname, '..', '..');
  const read = (file: string) => readFileSync(join(root, file), 'utf8');

  it('counts the functions of serverless.yml as docs/deploy.md does', () => {
    const functions = Object.values(
      (parse(read('serverless.yml')) as { functions: Record<string, { events?: Record<string, unknown>[] }> })
        .functions,
    );
    const http = functions.filter((f) => (f.events ?? []).some((e) => 'httpApi' in e)).length;
    expect(read('docs/deploy.md')).toContain(`${functions.length} functions, one per HTTP route (${http})`);
  });

  it('gives the runtime, memory, timeouts and throttling of serverless.yml as docs/deploy.md does', () => {
    type Params = { throttlingRateLimit: number; throttlingBurstLimit: number };
    const config = parse(read('serverless.yml')) as {
      params: { default: Params; prod: Params };
      provider: { runtime: string; memorySize: number; timeout: number };
      functions: { sweep: { timeout: number } };
    };
    const deploy = read('docs/deploy.md').replace(/\s+/g, ' ');
    const { provider, params } = config;
    const nodeMajor = provider.runtime.replace(/^nodejs(\d+)\.x$/, '$1');
    expect(deploy).toContain(
      `Node.js ${nodeMajor} (\`${provider.runtime}\`), arm64, ${provider.memorySize} MB, ${provider.timeout} s`,
    );
    expect(deploy).toContain(`every 15 minutes (${config.functions.sweep.timeout} s)`);
    expect(deploy).toContain(
      `${params.default.throttlingRateLimit} requests per second with bursts of ${params.default.throttlingBurstLimit} by default, ${params.prod.throttlingRateLimit} and ${params.prod.throttlingBurstLimit} in \`prod\``,
    );
  });

  it('states the limits of docs/limits.md as lib/config/limits.ts and the request schemas enforce them', () => {
    const rows = new Map(
      read('docs/limits.md')
        .split('\n')
        .filter((line) => line.startsWith('| ') && !line.startsWith('| What'))
        .map((line) => [line.split('|')[1]?.trim() ?? '', line] as const),
    );
    const row = (name: string) => rows.get(name) ?? `no row "${name}"`;
    const thousands = (n: number) => n.toLocaleString('en-US');
    expect(row('Request body')).toContain(`${MAX_BODY_BYTES / 1024} KiB`);
    expect(row('Content per project')).toContain(`at most ${MAX_CONTENT_BYTES / 1024} KiB`);
    expect(row('One GET')).toContain(`${MAX_RESPONSE_BYTES / 1024 / 1024} MiB`);
    expect(row('One array slice or page of keys')).toContain(
      `1 to ${thousands(MAX_SLICE_LIMIT)} elements or keys (default ${DEFAULT_SLICE_LIMIT})`,
    );
    expect(row('One array slice or page of keys')).toContain(`${thousands(MAX_CURSOR_LENGTH)} characters`);
    expect(row('Nesting')).toContain(`${MAX_DEPTH} levels`);
    expect(row('Nesting')).toContain(`${MAX_CONTAINER_DEPTH} path segments`);
    expect(row('Path')).toContain(`${MAX_PATH_LENGTH} characters; a segment or object key at most ${MAX_KEY_LENGTH}`);
    expect(row('Operations per batch')).toContain(`1 to ${MAX_BATCH_OPERATIONS}`);
    expect(row('Operations per batch')).toContain(`0 to ${MAX_PATCH_OPERATIONS}`);
    expect(row('API keys per project, members per project, webhooks per project')).toContain(
      `${MAX_KEYS_PER_PROJECT}, ${MAX_MEMBERS_PER_PROJECT}, ${MAX_WEBHOOKS_PER_PROJECT}`,
    );
    expect(row('Webhook URL')).toContain(`${MAX_WEBHOOK_URL_LENGTH} characters`);
    expect(row('Lifetime of an API key or session')).toContain(`(${MAX_EXPIRES_IN_SECONDS} s)`);
    expect(row('Concurrent writers')).toContain(`retry up to ${MAX_WRITE_ATTEMPTS} times`);
  });

  it('states the byte limits the other pages repeat as the code enforces them', () => {
    const kib = (bytes: number) => bytes / 1024;
    const all = docFiles(root)
      .map((file) => read(file).replace(/\s+/g, ' '))
      .join('\n');
    const bodyFigures = [
      ...all.matchAll(/(?:bod(?:y|ies) over|body limit is the same|and) (\d+) KiB(?: body limit|: 413| that)/g),
    ];
    expect(bodyFigures.length).toBeGreaterThanOrEqual(3);
    for (const m of bodyFigures) expect(`${m[0]}`).toContain(`${kib(MAX_BODY_BYTES)} KiB`);
    const errors = read('docs/errors.md').replace(/\s+/g, ' ');
    expect(errors).toContain(`outgrow the ${kib(MAX_CONTENT_BYTES)} KiB one segment holds`);
    expect(errors).toContain(`a GET of more than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB`);
    expect(errors).toContain(`a realtime frame over ${kib(MAX_CLIENT_MESSAGE_BYTES)} KiB`);
    expect(read('docs/realtime.md')).toContain(`A client's frame is at most ${kib(MAX_CLIENT_MESSAGE_BYTES)} KiB`);
    expect(read('docs/realtime.md')).toContain(`over ${kib(MAX_MESSAGE_BYTES)} KB`);
    expect(read('docs/realtime-guide.md').replace(/\s+/g, ' ')).toContain(
      `one over ${kib(MAX_CLIENT_MESSAGE_BYTES)} KiB \`MESSAGE_TOO_LARGE\``,
    );
    expect(read('docs/webhooks.md').replace(/\s+/g, ' ')).toContain(`would exceed ${kib(MAX_DELIVERY_BODY_BYTES)} KiB`);
  });
});
