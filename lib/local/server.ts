// Local HTTP server: serves every route in serverless.yml by calling the very handler Lambda runs, with a v2 event.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES, createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { serveDocs } from '../openapi/docs-site';
import { serveConsole } from './console-site';
import { ROOT } from './env';
import { SECURITY_HEADERS } from '../http/edge';
import { allowConcurrentRequests } from '../dynamo/deadline';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import { type Drain, trackRequests } from './drain';
import { attachRealtime } from './realtime';
import { lambdaContext, loadHandler } from './lambda';
import { type RequestSummary, sendRequestSummariesTo } from '../http/metrics';
import { readableRequestLines, requestLine } from './request-line';
/** API Gateway's own payload limit; the handlers enforce the service's smaller one. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface Route {
  functionName: string;
  method: string;
  path: string;
  handler: string;
  pattern: RegExp;
  params: string[];
}

interface ServerlessConfig {
  provider: {
    timeout?: number;
    httpApi?: {
      cors?: {
        allowedHeaders?: string[];
        allowedMethods?: string[];
        exposedResponseHeaders?: string[];
        maxAge?: number;
      };
    };
  };
  functions: Record<
    string,
    { handler: string; events?: Array<{ httpApi?: { method: string; path: string }; websocket?: { route: string } }> }
  >;
}

/** The project's serverless.yml, read and parsed. */
export function readServerlessConfig(): ServerlessConfig {
  return parse(readFileSync(join(ROOT, 'serverless.yml'), 'utf8')) as ServerlessConfig;
}

/** Every httpApi event of every function in serverless.yml. */
export function loadRoutes(config = readServerlessConfig()): Route[] {
  const routes: Route[] = [];
  for (const [functionName, fn] of Object.entries(config.functions)) {
    for (const event of fn.events ?? []) {
      if (!event.httpApi) continue;
      const params: string[] = [];
      const source = event.httpApi.path
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\{([^}]+)\}/g, (_, name: string) => {
          params.push(name.replace(/\+$/, ''));
          return name.endsWith('+') ? '(.+)' : '([^/]+)';
        });
      routes.push({
        functionName,
        method: event.httpApi.method.toUpperCase(),
        path: event.httpApi.path,
        handler: fn.handler,
        pattern: new RegExp(`^${source}$`),
        params,
      });
    }
  }
  return routes;
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_REQUEST_BYTES ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const TEXT_TYPE = /^(?:text\/|application\/(?:[\w.+-]+\+)?json|application\/x-www-form-urlencoded)/i;

/**
 * The request target as a URL. Concatenated rather than resolved against a base: a target like `//x` would
 * otherwise be read as a host (or throw). Undefined when it is not a valid target at all.
 */
export function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(`http://localhost${(req.url ?? '/').startsWith('/') ? '' : '/'}${req.url ?? ''}`);
  } catch {
    return undefined;
  }
}

/**
 * The API Gateway HTTP API payload v2 event Lambda would get for a request on a route (header names lower case,
 * repeated values joined, a body that is not UTF-8 as base64).
 */
export function toEvent(
  req: IncomingMessage,
  body: Buffer,
  route: Route,
  match: RegExpExecArray,
): APIGatewayProxyEventV2 {
  const url = requestUrl(req) as URL;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const pathParameters: Record<string, string> = {};
  route.params.forEach((name, i) => {
    const raw = match[i + 1] as string;
    try {
      pathParameters[name] = decodeURIComponent(raw);
    } catch {
      pathParameters[name] = raw;
    }
  });
  const type = headers['content-type'];
  // Bytes that are not UTF-8 go as base64, as they came: as a string they would turn into U+FFFD.
  const binary = body.length > 0 && ((type !== undefined && !TEXT_TYPE.test(type)) || !isUtf8(body));
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie?.split(/;\s*/),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: route.params.length > 0 ? pathParameters : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: route.method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length > 0 ? body.toString(binary ? 'base64' : 'utf8') : undefined,
    isBase64Encoded: binary,
  };
}

/**
 * This process runs overlapping invocations, as Lambda does when AWS_LAMBDA_MAX_CONCURRENCY is set, so it does what
 * Lambda's runtime then does: each invocation runs in its own InvokeStore context, where Powertools Logger keeps the
 * invocation's Lambda context (every log line names its own request and function). Call it before the first AWS SDK
 * request: the SDK creates the process's InvokeStore then, one shared context unless the variable is set.
 */
export function hostConcurrentInvocations(): Promise<InvokeStoreBase> {
  // Any value: Powertools, the SDK, the invoke store and lib/dynamo/deadline only look at whether it is set.
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '1000';
  // Each invocation needs its own deadline too.
  allowConcurrentRequests();
  return InvokeStore.getInstanceAsync(true);
}

export interface ServerOptions {
  port: number;
  host?: string;
  /** Allowed CORS origins; ['*'] allows any. */
  corsOrigins: string[];
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'Content-Length': String(Buffer.byteLength(body)) });
  res.end(body);
}

const jsonError = (message: string, code: string) => JSON.stringify({ message, code });
/** The server's own answers (unknown route, method, oversized body) carry the handlers' headers too. */
const JSON_HEADERS = SECURITY_HEADERS;

/** Node's parser errors that reach `clientError`, as the API answers them (the rest: a malformed request, 400). */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE', 'The request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time'],
};

/**
 * A request Node cannot parse (headers too large, a bad chunked body, Content-Length with Transfer-Encoding) or that
 * does not arrive in time never reaches a handler: it gets the JSON error shape on the socket itself, then the
 * connection closes. Nothing is written once a response has started.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? [
    400,
    'BAD_REQUEST',
    'The request is not valid HTTP',
  ];
  const body = jsonError(message, code);
  const headers = Object.entries({
    ...JSON_HEADERS,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body}`,
  );
}

/** Where this machine reaches a server listening on `host`: loopback for every interface, else the host itself. */
function reachableHost(host: string | undefined): string {
  if (host === undefined || host === '' || host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** Starts the server; routes and CORS settings come from serverless.yml, origins from the options. */
export async function startServer(
  options: ServerOptions,
): Promise<{ server: Server; url: string; routes: Route[]; requests: Drain }> {
  const invocations = await hostConcurrentInvocations();
  const config = readServerlessConfig();
  const routes = loadRoutes(config);
  const handlers = new Map<Route, Handler>();
  for (const route of routes) handlers.set(route, await loadHandler<Handler>(route.handler));
  const cors = config.provider.httpApi?.cors ?? {};
  const timeout = config.provider.timeout ?? 10;

  const corsHeaders = (origin: string | undefined): Record<string, string> => {
    if (origin === undefined) return {};
    const allowed = options.corsOrigins.includes('*') ? '*' : options.corsOrigins.includes(origin) ? origin : undefined;
    if (allowed === undefined) return {};
    return {
      'Access-Control-Allow-Origin': allowed,
      'Access-Control-Expose-Headers': (cors.exposedResponseHeaders ?? []).join(', '),
      ...(allowed === '*' ? {} : { Vary: 'Origin' }),
    };
  };

  // Readable lines (unless LOG_FORMAT=json): each function's figures come here instead of its JSON lines.
  const readable = readableRequestLines();
  const summaries = new Map<string, RequestSummary>();
  sendRequestSummariesTo(readable ? (requestId, summary) => summaries.set(requestId, summary) : undefined);

  const server = createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
    const started = performance.now();
    let requestId: string | undefined;
    /** The request's line, once answered (API routes and the refusals before them; not the docs' assets). */
    const printLine = (status: number, requestId?: string) => {
      const summary = requestId === undefined ? undefined : summaries.get(requestId);
      if (requestId !== undefined) summaries.delete(requestId);
      if (!readable) return;
      const line = requestLine({
        method: req.method ?? 'GET',
        target: req.url ?? '',
        status,
        ms: performance.now() - started,
        dynamo: summary?.dynamo,
      });
      console.log(line);
    };
    void (async () => {
      const origin = req.headers.origin;
      if (requests.closing) {
        // Shutting down (a request on a kept-alive connection): refused whole, as a Lambda being retired would.
        send(
          res,
          503,
          { ...JSON_HEADERS, ...corsHeaders(origin), 'Retry-After': '1', Connection: 'close' },
          jsonError('The server is shutting down; retry shortly', 'SERVICE_UNAVAILABLE'),
        );
        printLine(503);
        return;
      }
      const url = requestUrl(req);
      if (!url) {
        send(
          res,
          400,
          { ...JSON_HEADERS, ...corsHeaders(origin) },
          jsonError('Malformed request target', 'BAD_REQUEST_TARGET'),
        );
        printLine(400);
        return;
      }
      const method = (req.method ?? 'GET').toUpperCase();
      if (method === 'OPTIONS' && req.headers['access-control-request-method']) {
        const headers = corsHeaders(origin);
        if (headers['Access-Control-Allow-Origin']) {
          headers['Access-Control-Allow-Methods'] = (cors.allowedMethods ?? []).join(', ');
          headers['Access-Control-Allow-Headers'] = (cors.allowedHeaders ?? []).join(', ');
          headers['Access-Control-Max-Age'] = String(cors.maxAge ?? 600);
        }
        send(res, 204, headers, '');
        return;
      }
      // The realtime management API (PostToConnection): what API Gateway serves beside a WebSocket API.
      if (realtime?.serve(method, url.pathname, req, res)) return;
      // The API reference (GET /, /openapi.json, /docs/assets/*): local only, never a Lambda route.
      if (serveDocs(method, url.pathname, res)) return;
      // The console (GET /console/*): local only; a deploy serves the same files from a bucket (docs/console.md).
      if (serveConsole(method, url.pathname, res)) return;
      const candidates = routes
        .map((route) => ({ route, match: route.pattern.exec(url.pathname) }))
        .filter((c) => c.match);
      const found = candidates.find((c) => c.route.method === method);
      if (!found) {
        const status = candidates.length > 0 ? 405 : 404;
        const body =
          status === 405
            ? jsonError('Method not allowed', 'METHOD_NOT_ALLOWED')
            : jsonError('Not found', 'ROUTE_NOT_FOUND');
        send(res, status, { ...JSON_HEADERS, ...corsHeaders(origin) }, body);
        printLine(status);
        return;
      }
      const body = await readBody(req);
      if (body === 'too-large') {
        send(
          res,
          413,
          { ...JSON_HEADERS, ...corsHeaders(origin) },
          jsonError('Request entity too large', 'PAYLOAD_TOO_LARGE'),
        );
        printLine(413);
        return;
      }
      const handler = handlers.get(found.route) as Handler;
      const context = lambdaContext(found.route.functionName, timeout);
      const event = toEvent(req, body, found.route, found.match as RegExpExecArray);
      requestId = context.awsRequestId;
      const invocation = { [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId };
      const result = await invocations.run(invocation, () => handler(event, context));
      const headers: Record<string, string> = { ...corsHeaders(origin) };
      for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
      const text = result.isBase64Encoded
        ? Buffer.from(result.body ?? '', 'base64').toString('latin1')
        : (result.body ?? '');
      send(res, result.statusCode ?? 200, headers, text);
      printLine(result.statusCode ?? 200, requestId);
    })().catch((error: unknown) => {
      // The client went away (or sent something clientError already answered): nobody to answer, nothing failed.
      if ((error as { code?: string }).code === 'ECONNRESET') {
        if (requestId !== undefined) summaries.delete(requestId);
        return void res.destroy();
      }
      console.error(JSON.stringify({ level: 'ERROR', message: 'local server failure', error: String(error) }));
      if (!res.headersSent) send(res, 500, JSON_HEADERS, jsonError('Internal server error', 'INTERNAL_ERROR'));
      else res.destroy();
      printLine(500, requestId);
    });
  });
  const requests = trackRequests(server);
  // The realtime WebSocket API (ws://.../realtime), served by the handler of serverless.yml's websocket events.
  const realtime = await attachRealtime(server, config.functions);
  server.keepAliveTimeout = 65_000;
  // A request must arrive whole within the function timeout (Node checks every second here, not every 30 s).
  server.requestTimeout = timeout * 1000;
  server.headersTimeout = timeout * 1000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://${reachableHost(options.host)}:${port}`, routes, requests };
}
