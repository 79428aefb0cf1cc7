// The console for the local server: GET /console serves the page, its stylesheet and its script, bundled from
// console/src with esbuild once, at the first request (the same build `npm run build:console` writes for a deploy).
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/** Where the console is served. */
export const CONSOLE_PATH = '/console';

const ROOT = join(process.cwd(), 'console');

/** The console's files by name: the page, the stylesheet and the bundled script. */
export function buildConsole(): Map<string, { type: string; body: string }> {
  const bundle = buildSync({
    entryPoints: [join(ROOT, 'src', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    write: false,
    legalComments: 'none',
  });
  return new Map([
    ['index.html', { type: 'text/html; charset=utf-8', body: readFileSync(join(ROOT, 'index.html'), 'utf8') }],
    ['console.css', { type: 'text/css; charset=utf-8', body: readFileSync(join(ROOT, 'console.css'), 'utf8') }],
    ['console.js', { type: 'text/javascript; charset=utf-8', body: bundle.outputFiles[0]?.text ?? '' }],
  ]);
}

// Same origin only: the page may talk to this server (HTTP and its WebSocket) and load nothing from elsewhere.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

let files: Map<string, { type: string; body: string }> | undefined;

/** Serves GET /console and its files; false for any other request. */
export function serveConsole(method: string, pathname: string, res: ServerResponse): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (pathname === CONSOLE_PATH) {
    res.writeHead(308, { Location: `${CONSOLE_PATH}/` }).end();
    return true;
  }
  if (!pathname.startsWith(`${CONSOLE_PATH}/`)) return false;
  const name = pathname.slice(CONSOLE_PATH.length + 1) || 'index.html';
  files ??= buildConsole();
  const file = files.get(name);
  if (!file) return false;
  res.writeHead(200, {
    'Content-Type': file.type,
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  });
  res.end(method === 'HEAD' ? undefined : file.body);
  return true;
}
