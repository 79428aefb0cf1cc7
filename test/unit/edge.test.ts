import type { Context } from 'aws-lambda';

import { type Event, SECURITY_HEADERS, errorReply, httpHandler, toResult } from '../../lib/http/edge';
import { PreconditionFailed, Refusal, Unauthorized, Unavailable } from '../../lib/config/errors';
import { logger } from '../../lib/config/logger';

const SECURITY = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=63072000; includeSubDomains',
};

/** An internal fault whose message and cause carry what must never reach a client. */
const internal = () =>
  Object.assign(new Error('ResourceNotFoundException: table content-api-prod not found (key AKIAABCDEFGHIJKLMNOP)'), {
    cause: new Error('socket hang up at 10.0.0.1'),
  });

let errorLog: jest.SpyInstance;
beforeEach(() => {
  errorLog = jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  // The handlers' EMF metric lines (Powertools writes them to stdout itself): test/unit/observability.test.ts reads
  // them; here they would only be noise in the test output.
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => jest.restoreAllMocks());

describe('SECURITY_HEADERS', () => {
  it('are the documented set', () => {
    expect(SECURITY_HEADERS).toEqual(SECURITY);
  });
});

describe('toResult', () => {
  it.each([
    [
      'a message',
      { statusCode: 200, body: { message: 'Value set successfully' }, headers: { ETag: '"abc"' } },
      '{"message":"Value set successfully"}',
      { ETag: '"abc"' },
    ],
    ['a value', { statusCode: 200, body: { value: { a: [1, null] } } }, '{"value":{"a":[1,null]}}', {}],
    ['a null value', { statusCode: 200, body: { value: null } }, '{"value":null}', {}],
    ['an error', { statusCode: 404, body: { message: 'm', code: 'C' } }, '{"message":"m","code":"C"}', {}],
  ])('serialises %s with the security headers', (_, reply, body, extra) => {
    expect(toResult(reply)).toEqual({ statusCode: reply.statusCode, headers: { ...SECURITY, ...extra }, body });
  });
});

describe('errorReply', () => {
  it.each<[string, Refusal, number, string, Record<string, string>]>([
    ['a 400', new Refusal('INVALID_PATH', 'path must not be empty'), 400, 'INVALID_PATH', {}],
    ['a 401 with its challenge', new Unauthorized(), 401, 'UNAUTHORIZED', { 'WWW-Authenticate': 'Bearer' }],
    [
      'a 409 with Retry-After',
      new Refusal('WRITE_CONFLICT', 'busy', { retryAfter: 1 }),
      409,
      'WRITE_CONFLICT',
      { 'Retry-After': '1' },
    ],
    ['a 412 with the current ETag', new PreconditionFailed('"v2"'), 412, 'PRECONDITION_FAILED', { ETag: '"v2"' }],
    ['a 412 without an ETag', new PreconditionFailed(undefined), 412, 'PRECONDITION_FAILED', {}],
  ])('keeps the message, code and headers of %s', (_, error, statusCode, code, headers) => {
    expect(errorReply(error, 'req-1')).toEqual({ statusCode, body: { message: error.message, code }, headers });
    expect(errorLog).not.toHaveBeenCalled();
  });

  it('keeps a client error body to message and code, without its cause', () => {
    const error = new Refusal('NUMBER_OUT_OF_RANGE', 'out of range', { cause: internal() });
    expect(JSON.parse(toResult(errorReply(error, 'req-1')).body as string)).toEqual({
      message: 'out of range',
      code: 'NUMBER_OUT_OF_RANGE',
    });
  });

  it.each<[string, unknown]>([
    ['a plain Error', internal()],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'N')")],
    ['a thrown string', 'table content-api-prod is missing'],
    [
      'a thrown object',
      { name: 'ValidationException', message: 'Invalid ConditionExpression', $metadata: { httpStatusCode: 400 } },
    ],
    ['undefined', undefined],
  ])('turns %s into the plain 500 and logs it', (_, error) => {
    const result = toResult(errorReply(error, 'req-1'));
    expect(result).toEqual({
      statusCode: 500,
      headers: SECURITY,
      body: '{"message":"Internal server error","code":"INTERNAL_ERROR"}',
    });
    expect(errorLog).toHaveBeenCalledTimes(1);
  });

  it.each<[string, Error, number, string, Record<string, string>]>([
    [
      'the service unavailable',
      new Unavailable('table content-api-prod throttled', { cause: internal() }),
      503,
      'SERVICE_UNAVAILABLE',
      { 'Retry-After': '1' },
    ],
    [
      'DynamoDB throttling, wrapped',
      new Error('idempotency store failed', {
        cause: Object.assign(new Error('table content-api-prod throttled'), { name: 'ThrottlingException' }),
      }),
      503,
      'SERVICE_UNAVAILABLE',
      { 'Retry-After': '1' },
    ],
  ])('hides the message of %s but keeps its status, code and headers', (_, error, statusCode, code, headers) => {
    const reply = errorReply(error, 'req-1');
    expect(reply).toEqual({ statusCode, body: { message: expect.any(String), code }, headers });
    expect((reply.body as { message: string }).message).not.toContain('content-api-prod');
    expect(errorLog).toHaveBeenCalledTimes(1);
  });
});

describe('httpHandler', () => {
  const event = { routeKey: 'POST /api/{username}/{projectSlug}/content/set', headers: {} } as unknown as Event;
  const context = {
    awsRequestId: 'req-1',
    functionName: 'content-api-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:content-api-test',
    memoryLimitInMB: '128',
    getRemainingTimeInMillis: () => 1000,
  } as unknown as Context;

  it('turns a reply into a result with the security headers', async () => {
    const handler = httpHandler(async () => ({
      statusCode: 200,
      body: { message: 'Value set successfully' },
      headers: { ETag: '"t"' },
    }));
    expect(await handler(event, context)).toEqual({
      statusCode: 200,
      headers: { ...SECURITY, ETag: '"t"' },
      body: '{"message":"Value set successfully"}',
    });
  });

  it('turns a thrown client error into its JSON reply', async () => {
    const handler = httpHandler(async () => {
      throw new Refusal('INVALID_PATH', 'path must not be empty');
    });
    expect(await handler(event, context)).toEqual({
      statusCode: 400,
      headers: SECURITY,
      body: '{"message":"path must not be empty","code":"INVALID_PATH"}',
    });
  });

  it('turns any other thrown error into the plain 500 with no internals in the body', async () => {
    const handler = httpHandler(async () => {
      throw internal();
    });
    const result = await handler(event, context);
    expect(result).toEqual({
      statusCode: 500,
      headers: SECURITY,
      body: '{"message":"Internal server error","code":"INTERNAL_ERROR"}',
    });
    for (const leak of ['content-api-prod', 'AKIA', 'stack', 'at ', '10.0.0.1', 'ResourceNotFound'])
      expect(result.body).not.toContain(leak);
  });
});
