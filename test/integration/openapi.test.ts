// The OpenAPI document: valid OpenAPI 3.1, one operation per served route, built from the validators' own schemas,
// committed as generated, and served by the running local API together with its reference page.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importSchemas, managementSchemas, requestSchemas } from '../../lib/http/schemas';
import { loadRoutes } from '../../lib/local/server';
import { buildOpenApiDocument } from '../../lib/openapi/document';
import { ERROR_CODES } from '../../lib/config/error-codes';
import { ROUTES } from '../../lib/openapi/routes';
import { serializeDocument } from '../../lib/openapi/serialize';
import { baseUrl } from '../support/api';

const ROOT = process.cwd();
const document = buildOpenApiDocument();
// swagger-parser's dependencies are ESM-only, which jest's CommonJS runtime cannot load: it runs in Node itself.
const VALIDATE = `import SwaggerParser from '@apidevtools/swagger-parser';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const api = await SwaggerParser.validate(JSON.parse(text));
process.stdout.write(api.openapi);`;

/** Validates a document with @apidevtools/swagger-parser: the OpenAPI version, or the validator's complaint. */
function validate(doc: unknown): { ok: boolean; output: string } {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', VALIDATE], {
    cwd: ROOT,
    input: JSON.stringify(doc),
    encoding: 'utf8',
  });
  return { ok: run.status === 0, output: run.status === 0 ? run.stdout : run.stderr };
}

const operationOf = (method: string, path: string) =>
  document.paths[path]?.[method.toLowerCase()] as Record<string, any> | undefined;

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (swagger-parser, $refs resolved)', () => {
    expect(validate(document)).toEqual({ ok: true, output: '3.1.0' });
  });

  it('would fail that validation if it were broken (the validator is real)', () => {
    const broken = structuredClone(document) as any;
    broken.paths['/api/{username}/{projectSlug}/content'].get.parameters.push({
      $ref: '#/components/parameters/missing',
    });
    const result = validate(broken);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/Missing \$ref pointer/);
  });

  it('has exactly one operation per route in serverless.yml, same method and path', () => {
    const served = loadRoutes()
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    const documented = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(served);
  });

  it.each(Object.keys(requestSchemas) as Array<keyof typeof requestSchemas>)(
    'documents the body of content/%s with the very schema its validator is built from',
    (name) => {
      const body = operationOf('POST', `/api/{username}/{projectSlug}/content/${name}`)?.requestBody;
      expect(body?.required).toBe(true);
      expect(body?.content['application/json'].schema).toEqual(requestSchemas[name]);
      // The table holds the object itself, not a copy that could be edited apart from it.
      expect(ROUTES.find((r) => r.path.endsWith(`/content/${name}`))?.body?.schema).toBe(requestSchemas[name]);
    },
  );

  it('documents every other request body with a schema object from lib/http/schemas.ts, as is', () => {
    const sources: object[] = [
      ...Object.values(requestSchemas),
      ...Object.values(managementSchemas),
      ...Object.values(importSchemas),
    ];
    const withBody = ROUTES.filter((r) => r.body);
    expect(withBody.length).toBeGreaterThan(Object.keys(requestSchemas).length);
    for (const route of withBody) {
      expect({ route: route.operationId, fromSchemas: sources.includes(route.body?.schema as object) }).toEqual({
        route: route.operationId,
        fromSchemas: true,
      });
      const body = operationOf(route.method, route.path)?.requestBody;
      expect(body?.content['application/json'].schema).toEqual(route.body?.schema);
    }
  });

  it("secures every operation with the bearer scheme and answers every error with {message, code}, but API Gateway's 429", () => {
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.components).toMatchObject({ securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } });
    for (const item of Object.values(document.paths)) {
      for (const op of Object.values(item) as Array<Record<string, any>>) {
        expect(op.security).toBeUndefined();
        expect(Object.keys(op.responses)).toContain('500');
        // Deployed, API Gateway's stage throttling answers before any function: its own body, documented as it is.
        expect(op.responses['429']).toMatchObject({
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/GatewayError' },
              example: { message: 'Too Many Requests' },
            },
          },
        });
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          if (Number(status) < 400 || status === '429') continue;
          const media = response.content['application/json'];
          expect(media.schema).toEqual({ $ref: '#/components/schemas/Error' });
          for (const [code, example] of Object.entries(media.examples as Record<string, any>)) {
            expect(example.value).toEqual({ code, message: expect.any(String) });
            expect(ERROR_CODES[code as keyof typeof ERROR_CODES].status).toBe(Number(status));
          }
        }
      }
    }
  });

  it('takes If-Match and Idempotency-Key on every mutation and returns an ETag', () => {
    for (const name of Object.keys(requestSchemas)) {
      const op = operationOf('POST', `/api/{username}/{projectSlug}/content/${name}`);
      expect(op?.parameters).toEqual(
        expect.arrayContaining([
          { $ref: '#/components/parameters/If-Match' },
          { $ref: '#/components/parameters/Idempotency-Key' },
        ]),
      );
      expect(op?.responses['200'].headers).toEqual({ ETag: { $ref: '#/components/headers/ETag' } });
      expect(Object.keys(op?.responses ?? {})).toEqual(
        expect.arrayContaining(['400', '401', '403', '404', '409', '412', '413', '415', '422', '500']),
      );
    }
    const get = operationOf('GET', '/api/{username}/{projectSlug}/content');
    expect(get?.parameters).toContainEqual(expect.objectContaining({ name: 'path', in: 'query', required: false }));
  });

  it('gives no optional parameter a value (the reference page would pre-fill it and send it), only a description', () => {
    const resolve = (p: any) => (p.$ref ? (document as any).components.parameters[p.$ref.split('/').pop()] : p);
    const optional = Object.values(document.paths)
      .flatMap((item: any) => Object.values(item))
      .flatMap((op: any) => (op.parameters ?? []).map(resolve))
      .filter((p: any) => !p.required);
    expect(optional.map((p: any) => p.name)).toEqual(expect.arrayContaining(['If-Match', 'Idempotency-Key', 'path']));
    for (const p of optional) {
      expect({ name: p.name, example: p.example, examples: p.examples, default: p.schema?.default }).toEqual({
        name: p.name,
      });
      expect(p.description).toEqual(expect.stringContaining('Example: `'));
    }
  });

  // That every code thrown is catalogued, with its status, is the compiler's job: the error classes take only
  // catalogued codes of their own status (lib/config/errors.ts). What is left to check: each reaches the document.
  it('documents every catalogued error code, under its status, on some operation', () => {
    const documented = new Map<string, Set<string>>();
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item as Record<string, any>)) {
        for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, any>)) {
          for (const code of Object.keys(response.content?.['application/json']?.examples ?? {})) {
            documented.set(code, new Set([...(documented.get(code) ?? []), status]));
          }
        }
      }
    }
    // ALREADY_EXISTS is the generic conflict of lib/http/management-handlers.ts's accountError, which no route lists
    // today (only a random key id colliding could raise it there): a documentation gap, noted, not hidden.
    // INVALID_MESSAGE and MESSAGE_TOO_LARGE are the realtime WebSocket protocol's own (error frames, no HTTP
    // operation): documented in docs/realtime.md and the README's error table.
    const unlisted = ['ALREADY_EXISTS', 'INVALID_MESSAGE', 'MESSAGE_TOO_LARGE'];
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      const statuses = unlisted.includes(code) ? [] : [String(status)];
      expect({ code, statuses: [...(documented.get(code) ?? [])] }).toEqual({ code, statuses });
    }
  });

  it('is committed as docs/openapi.json exactly as `npm run build` writes it', () => {
    const committed = readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8');
    if (committed !== serializeDocument(document)) {
      throw new Error(
        'docs/openapi.json differs from what lib/openapi builds: run `npm run build` and commit docs/openapi.json',
      );
    }
  });
});

describe('the local server', () => {
  it('serves the same document at GET /openapi.json', async () => {
    const res = await fetch(`${baseUrl()}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual(document);
  });

  it('serves the reference page at GET /, loading only its own files', async () => {
    const res = await fetch(`${baseUrl()}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
      .map((m) => m[1] as string)
      .filter((u) => u.startsWith('/docs/'));
    expect(assets).toEqual(
      expect.arrayContaining([
        '/docs/assets/swagger-ui.css',
        '/docs/assets/swagger-ui-bundle.js',
        '/docs/assets/init.js',
      ]),
    );
    const types = await Promise.all(
      assets.map(async (a) => [a, (await fetch(`${baseUrl()}${a}`)).headers.get('content-type')]),
    );
    expect(Object.fromEntries(types)).toEqual({
      '/docs/assets/favicon-32x32.png': 'image/png',
      '/docs/assets/swagger-ui.css': 'text/css; charset=utf-8',
      '/docs/assets/swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
      '/docs/assets/init.js': 'text/javascript; charset=utf-8',
    });
    const init = await (await fetch(`${baseUrl()}/docs/assets/init.js`)).text();
    expect(init).toMatch(/url: '\/openapi\.json'/);
    expect(init).toMatch(/tryItOutEnabled: true/);
    expect(init).toMatch(/persistAuthorization: true/);
  });

  it.each([
    '/docs/assets/package.json',
    '/docs/assets/..%2Fpackage.json',
    '/docs/assets/%2e%2e/%2e%2e/package.json',
    '/docs/assets/swagger-ui-bundle.js.map',
    '/docs/assets/constructor',
    '/docs/assets/',
  ])('serves nothing else under /docs/assets: %s is a 404', async (path) => {
    const res = await fetch(`${baseUrl()}${path}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });
});
