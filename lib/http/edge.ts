// HTTP edge: the middy chain every Lambda shares: JSON responses, security headers, and the one error handler.
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { Refusal, Unavailable, unavailable } from '../config/errors';
import { jsonText } from '../content/json';
import { type ErrorCode, statusOf } from '../config/error-codes';
import { withDeadline } from '../dynamo/deadline';
import { withUsage } from '../dynamo/usage';
import { logger } from '../config/logger';
import { hostPrintsRequests, publishMetrics, usageOf } from './metrics';
import { traceRequest } from './tracing';

export type Event = APIGatewayProxyEventV2;
export type Result = APIGatewayProxyStructuredResultV2;

/** What a handler returns: a status, a JSON body and extra headers; the edge turns it into the Lambda result. */
export interface Reply {
  statusCode: number;
  body: unknown;
  headers?: Record<string, string>;
}

export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
};

/** The Lambda result of a reply: the security headers added, the body as JSON text (empty when none). */
export function toResult(reply: Reply): Result {
  return {
    statusCode: reply.statusCode,
    headers: { ...SECURITY_HEADERS, ...reply.headers },
    // No body at all (a 304, a 204) is an empty one.
    body: reply.body === undefined ? '' : jsonText(reply.body),
  };
}

/** The headers a refusal's code and data add: a credential challenge, the current ETag, when to retry. */
function refusalHeaders(refusal: Refusal): Record<string, string> {
  const headers: Record<string, string> = {};
  if (refusal.code === 'UNAUTHORIZED') headers['WWW-Authenticate'] = 'Bearer';
  if (refusal.data.etag !== undefined) headers.ETag = refusal.data.etag;
  if (refusal.data.retryAfter !== undefined) headers['Retry-After'] = String(refusal.data.retryAfter);
  return headers;
}

/**
 * The one mapping of what a request ended with to HTTP: a refusal keeps its sentence and gets its code's status; the
 * service being busy is a 503 to retry (its sentence logged, not sent); anything else a 500 that says nothing.
 */
export function errorReply(thrown: unknown, requestId: string | undefined): Reply {
  const error = unavailable(thrown) ?? thrown;
  if (error instanceof Refusal) {
    return { statusCode: statusOf(error.code), body: error.toJSON(), headers: refusalHeaders(error) };
  }
  logger.error('request failed', { requestId, error: error as Error });
  if (error instanceof Unavailable) {
    return {
      statusCode: statusOf(error.code),
      body: { message: 'The service could not complete the request', code: error.code },
      headers: { 'Retry-After': String(error.retryAfter) },
    };
  }
  return { statusCode: 500, body: { message: 'Internal server error', code: 'INTERNAL_ERROR' satisfies ErrorCode } };
}

/** The single error handler, last in the chain: refusals keep their message, anything else is hidden. */
export function httpErrors(): MiddlewareObj<Event, Result> {
  const httpErrorsOnError = async (request: Request<Event, Result, Error, Context>) => {
    request.response = toResult(errorReply(request.error, request.context?.awsRequestId));
  };
  return { onError: httpErrorsOnError };
}

/** One access-log line per request: route, status and duration; never headers or bodies. */
export function accessLog(): MiddlewareObj<Event, Result> {
  const started = new WeakMap<object, number>();
  const accessLogBefore = async (request: Request<Event, Result, Error, Context>) => {
    started.set(request, Date.now());
  };
  const accessLogAfter = async (request: Request<Event, Result, Error, Context>) => {
    // The local server's readable format prints its own line per request.
    if (hostPrintsRequests()) return;
    const status = request.response?.statusCode ?? 500;
    logger[status >= 500 ? 'error' : 'info']('request', {
      route: request.event.routeKey,
      status,
      durationMs: Date.now() - (started.get(request) ?? Date.now()),
    });
  };
  return { before: accessLogBefore, after: accessLogAfter, onError: accessLogAfter };
}

/** Answer before Lambda's timeout: DynamoDB work stops with half a second to spare for the response. */
export const deadlineOf = (context: Context) => Date.now() + Math.max(1000, context.getRemainingTimeInMillis() - 500);

/**
 * `middy().use(...).handler(...)`: the request id in every log line, the access log, the request's metrics (EMF),
 * its trace when tracing is on, and the one error handler; handlers return a Reply and the chain makes it a Lambda
 * result, within the invocation's deadline, with its DynamoDB usage collected for the metrics.
 */
export function httpHandler(fn: (event: Event, context: Context) => Promise<Reply>) {
  return (
    middy<Event, Result>()
      // No resetKeys: nothing appends keys to the logger, so there is nothing to reset between invocations.
      .use(injectLambdaContext(logger))
      .use(accessLog())
      .use(publishMetrics())
      .use(traceRequest())
      .use(httpErrors())
      .handler(async (event, context) =>
        toResult(await withUsage(usageOf(context), () => withDeadline(deadlineOf(context), () => fn(event, context)))),
      )
  );
}
