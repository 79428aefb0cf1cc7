// Tracing: Powertools Tracer is loaded only in Lambda with POWERTOOLS_TRACE_ENABLED=true; then each request gets a
// subsegment with its annotations and both DynamoDB clients are captured once. The tracer is replaced by a recorder.
import type { Context } from 'aws-lambda';

const calls: string[] = [];
const subsegment = (name: string) => ({
  addErrorFlag: () => calls.push(`${name} error`),
  addFaultFlag: () => calls.push(`${name} fault`),
  close: () => calls.push(`${name} close`),
});
jest.mock('../../lib/http/tracing-powertools', () => ({
  Tracer: class {
    constructor(options: unknown) {
      calls.push(`new ${JSON.stringify(options)}`);
    }
    captureAWSv3Client(client: { constructor: { name: string } }) {
      calls.push(`capture ${client.constructor.name}`);
      return client;
    }
    getSegment() {
      return {
        addNewSubsegment: (name: string) => {
          calls.push(`open ${name}`);
          return subsegment(name);
        },
      };
    }
    setSegment() {}
    addServiceNameAnnotation() {
      calls.push('service');
    }
    putAnnotation(key: string, value: unknown) {
      calls.push(`${key}=${value}`);
    }
  },
}));

import { httpHandler } from '../../lib/http/edge';
import { logger } from '../../lib/config/logger';
import { tracingEnabled } from '../../lib/http/tracing';

const ENV = ['POWERTOOLS_TRACE_ENABLED', 'AWS_EXECUTION_ENV'] as const;
const saved = Object.fromEntries(ENV.map((name) => [name, process.env[name]]));
afterEach(() => {
  for (const name of ENV) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  calls.length = 0;
  jest.restoreAllMocks();
});
beforeEach(() => {
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(logger, 'error').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
});

const context = { functionName: 'content-api-dev-set', awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 };
const event = { routeKey: 'POST /api/{username}/{projectSlug}/content/set', headers: {}, requestContext: {} };
const run = (statusCode: number) =>
  httpHandler(async () => {
    if (statusCode >= 500) throw new Error('boom');
    return { statusCode, body: {} };
  })(event as never, context as unknown as Context);

describe('tracing', () => {
  it.each([
    ['nothing set (the local server, tests)', {}],
    ['enabled outside Lambda', { POWERTOOLS_TRACE_ENABLED: 'true' }],
    ['in Lambda, not enabled', { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' }],
    ['in Lambda, disabled', { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'false' }],
  ])('is off with %s: the tracer is never loaded', async (_, env) => {
    for (const name of ENV) delete process.env[name];
    Object.assign(process.env, env);
    expect(tracingEnabled()).toBe(false);
    expect((await run(200)).statusCode).toBe(200);
    expect(calls).toEqual([]);
  });

  it('in Lambda with POWERTOOLS_TRACE_ENABLED=true: clients captured once, a subsegment per request', async () => {
    Object.assign(process.env, { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'true' });
    expect(tracingEnabled()).toBe(true);
    expect((await run(200)).statusCode).toBe(200);
    expect((await run(404)).statusCode).toBe(404);
    expect((await run(500)).statusCode).toBe(500);
    const own = '## content-api-dev-set';
    const request = (cold: boolean, status: number, flag?: string) => [
      `open ${own}`,
      `ColdStart=${cold}`,
      'service',
      `route=${event.routeKey}`,
      `status=${status}`,
      ...(flag ? [`${own} ${flag}`] : []),
      `${own} close`,
    ];
    expect(calls).toEqual([
      'new {"serviceName":"content-api","captureHTTPsRequests":false}',
      'capture DynamoDBClient',
      'capture DynamoDBDocumentClient',
      ...request(true, 200),
      ...request(false, 404, 'error'),
      ...request(false, 500, 'fault'),
    ]);
  });
});
