// Docs site for the local server only: GET /openapi.json, and the swagger-ui reference at GET /, all from local files.
import { logger } from '../config/logger';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { buildOpenApiDocument } from './document';
import { serializeDocument } from './serialize';

/** Where the reference page loads its files from; nothing is fetched from anywhere but this server. */
export const ASSETS_PREFIX = '/docs/assets/';

// The only files served from node_modules/swagger-ui-dist: the name in the URL must be one of these keys.
const DIST_FILES = new Map<string, string>([
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
]);

// No `url` query (queryConfigEnabled stays off) and no validator badge: the page never loads another origin's spec.
/** The reference page's swagger-ui settings (init.js); the document's description must match them. */
export const INIT_JS = `// Starts swagger-ui on this server's own document; the key entered under Authorize stays in localStorage.
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    tryItOutEnabled: true,
    persistAuthorization: true,
    displayRequestDuration: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Content API reference</title>
  <link rel="icon" type="image/png" href="${ASSETS_PREFIX}favicon-32x32.png" sizes="32x32">
  <link rel="stylesheet" href="${ASSETS_PREFIX}swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <noscript>The reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
  <script src="${ASSETS_PREFIX}swagger-ui-bundle.js"></script>
  <script src="${ASSETS_PREFIX}init.js"></script>
</body>
</html>
`;

// The browser enforces "local files only": scripts, styles, images and requests may reach this origin and no other.
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };
const COMMON_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

interface Asset {
  type: string;
  body: string | Buffer;
}

/** Built once when the server starts, from lib/openapi (never read from docs/openapi.json); a broken doc never stops the API. */
const DOCUMENT = ((): string | undefined => {
  try {
    return serializeDocument(buildOpenApiDocument());
  } catch (error) {
    logger.error('the OpenAPI document could not be built', { error: String(error) });
    return undefined;
  }
})();

// npm runs every script from the package root (as lib/local/env.ts's ROOT); the docs must not import the runtime.
const distDir = () => join(process.cwd(), 'node_modules', 'swagger-ui-dist');
const distCache = new Map<string, Buffer>();

function asset(name: string): Asset | undefined {
  if (name === 'init.js') return { type: 'text/javascript; charset=utf-8', body: INIT_JS };
  const type = DIST_FILES.get(name);
  if (type === undefined) return undefined;
  let body = distCache.get(name);
  if (body === undefined) {
    // Read on first use: a missing swagger-ui-dist breaks the page, not the API.
    body = readFileSync(join(distDir(), name));
    distCache.set(name, body);
  }
  return { type, body };
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
  res.writeHead(status, { ...COMMON_HEADERS, ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** Answers the docs requests (true), or leaves the request to the API routes (false). */
export function serveDocs(method: string, pathname: string, res: ServerResponse): boolean {
  if (method !== 'GET') return false;
  if (pathname === '/openapi.json') {
    if (DOCUMENT === undefined) {
      send(
        res,
        500,
        JSON_TYPE,
        JSON.stringify({
          message: 'The OpenAPI document could not be built; see the server log',
          code: 'INTERNAL_ERROR',
        }),
      );
    } else {
      send(res, 200, { ...JSON_TYPE, 'Content-Security-Policy': "default-src 'none'" }, DOCUMENT);
    }
    return true;
  }
  if (pathname === '/') {
    send(
      res,
      200,
      { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': PAGE_CSP, 'X-Frame-Options': 'DENY' },
      PAGE,
    );
    return true;
  }
  if (!pathname.startsWith(ASSETS_PREFIX)) return false;
  // Exact names only: `..`, encoded slashes and anything else not in the list are a 404 without touching the disk.
  const found = asset(pathname.slice(ASSETS_PREFIX.length));
  if (!found) {
    send(res, 404, JSON_TYPE, JSON.stringify({ message: 'Not found', code: 'ROUTE_NOT_FOUND' }));
    return true;
  }
  send(res, 200, { 'Content-Type': found.type }, found.body);
  return true;
}
