// API Gateway HTTP API (payload v2) events and Lambda contexts for invoking handlers in-process, shaped like the
// local server's toEvent (lib/local/server.ts): lower-case headers, routeKey from serverless.yml, path parameters.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { lambdaContext as localLambdaContext } from '../../lib/local/lambda';
import { ROOT } from './config';

export type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface RouteInfo {
  functionName: string;
  method: string;
  path: string;
  handler: string;
}

/** Every content route of serverless.yml by function name (set, push, ..., get). */
export async function contentRoutes(): Promise<Record<string, RouteInfo>> {
  const { loadRoutes } = await import('../../lib/local/server');
  const out: Record<string, RouteInfo> = {};
  for (const r of loadRoutes())
    if (r.path.includes('/content'))
      out[r.functionName] = { functionName: r.functionName, method: r.method, path: r.path, handler: r.handler };
  return out;
}

/** Imports the handler module a route names (functions/set.handler -> functions/set.ts, export `handler`). */
export async function loadHandler(route: RouteInfo): Promise<Handler> {
  const dot = route.handler.lastIndexOf('.');
  const module = (await import(join(ROOT, `${route.handler.slice(0, dot)}.ts`))) as Record<string, Handler>;
  const handler = module[route.handler.slice(dot + 1)];
  if (typeof handler !== 'function') throw new Error(`${route.handler} is not a function`);
  return handler;
}

export function v2Event(
  route: RouteInfo,
  params: { username: string; slug: string },
  options: { token?: string; body?: unknown; query?: Record<string, string>; headers?: Record<string, string> } = {},
): APIGatewayProxyEventV2 {
  const rawPath = route.path.replace('{username}', params.username).replace('{projectSlug}', params.slug);
  const headers: Record<string, string> = {
    host: 'bench.local',
    'user-agent': 'content-api-bench',
    ...options.headers,
  };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  const query = options.query && Object.keys(options.query).length > 0 ? options.query : undefined;
  const now = new Date();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath,
    rawQueryString: query ? new URLSearchParams(query).toString() : '',
    headers,
    queryStringParameters: query,
    pathParameters: { username: params.username, projectSlug: params.slug },
    requestContext: {
      accountId: 'bench',
      apiId: 'bench',
      domainName: 'bench.local',
      domainPrefix: 'bench',
      http: {
        method: route.method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'content-api-bench',
      },
      requestId: randomUUID(),
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body,
    isBase64Encoded: false,
  };
}

/** The local server's Lambda context (lib/local/server.ts), so in-process and HTTP invocations see the same one. */
export const lambdaContext = (functionName: string, timeoutSeconds = 10): Context =>
  localLambdaContext(functionName, timeoutSeconds);
