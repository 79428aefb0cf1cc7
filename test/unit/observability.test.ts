// Metrics and capacity without an engine: the DynamoDB clients' middleware (ReturnConsumedCapacity on every request,
// usage recorded per operation) against canned HTTP answers, and the EMF lines the middy chain writes per request.
import type { Context } from 'aws-lambda';
import type * as ClientModule from '../../lib/dynamo/client';
import type * as EdgeModule from '../../lib/http/edge';
import type * as MetricsModule from '../../lib/http/metrics';
import type * as UsageModule from '../../lib/dynamo/usage';

process.env.AWS_REGION = 'us-east-1';
process.env.AWS_ACCESS_KEY_ID = 'test';
process.env.AWS_SECRET_ACCESS_KEY = 'test';
process.env.AWS_ENDPOINT_URL_DYNAMODB = 'http://127.0.0.1:9';
process.env.POWERTOOLS_METRICS_NAMESPACE = 'content-api-test';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

let client: typeof ClientModule;
let edge: typeof EdgeModule;
let m: typeof MetricsModule;
let usage: typeof UsageModule;
let sdk: typeof import('@aws-sdk/client-dynamodb');
let doc: typeof import('@aws-sdk/lib-dynamodb');

/** What the fake DynamoDB answers next (one per HTTP attempt), and the request bodies it received. */
const answers: Array<{ status: number; body: unknown; delayMs?: number }> = [];
const received: Array<{ target: string; body: Record<string, unknown> }> = [];
const DYNAMO_ERROR = 'com.amazonaws.dynamodb.v20120810#';

beforeAll(async () => {
  client = await import('../../lib/dynamo/client');
  edge = await import('../../lib/http/edge');
  m = await import('../../lib/http/metrics');
  usage = await import('../../lib/dynamo/usage');
  sdk = await import('@aws-sdk/client-dynamodb');
  doc = await import('@aws-sdk/lib-dynamodb');
  // Innermost: in place of the HTTP handler (the client's deserializer and retries still run). Added before any
  // request, as lib/dynamo/client.ts requires of anything that adds middleware.
  const fake =
    () =>
    async (args: { request: { headers: Record<string, string>; body: unknown } }): Promise<unknown> => {
      received.push({
        target: args.request.headers['x-amz-target'] ?? '',
        body: JSON.parse(new TextDecoder().decode(args.request.body as unknown as Uint8Array)),
      });
      const answer = answers.shift() ?? { status: 200, body: {} };
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      return {
        response: {
          statusCode: answer.status,
          headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'fake' },
          body: Buffer.from(JSON.stringify(answer.body)),
        },
      };
    };
  for (const c of [client.dynamo, client.documents])
    c.middlewareStack.add(fake as never, { step: 'deserialize', priority: 'low', name: 'fakeDynamo' });
});

beforeEach(() => {
  answers.length = 0;
  received.length = 0;
});

const capacity = (units: number) => ({ TableName: 't', CapacityUnits: units });

describe('DynamoDB client middleware', () => {
  it.each([
    ['GetItem', () => new sdk.GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }), capacity(0.5), [0.5, 0]],
    [
      'UpdateItem',
      () =>
        new sdk.UpdateItemCommand({
          TableName: 't',
          Key: { pk: { S: 'a' } },
          UpdateExpression: 'SET a = :a',
          ExpressionAttributeValues: { ':a': { N: '1' } },
        }),
      capacity(3),
      [0, 3],
    ],
    [
      'TransactWriteItems',
      () =>
        new sdk.TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: 't', Item: { pk: { S: 'a' } } } }] }),
      [capacity(2), { TableName: 'u', CapacityUnits: 4 }],
      [0, 6],
    ],
    [
      'BatchGetItem',
      () => new sdk.BatchGetItemCommand({ RequestItems: { t: { Keys: [{ pk: { S: 'a' } }] } } }),
      [capacity(1.5)],
      [1.5, 0],
    ],
    [
      'Query',
      () =>
        new sdk.QueryCommand({
          TableName: 't',
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': { S: 'a' } },
        }),
      capacity(1),
      [1, 0],
    ],
  ])(
    '%s: asks for TOTAL capacity and records the units the answer reports',
    async (operation, command, consumed, [read, write]) => {
      answers.push({ status: 200, body: { ConsumedCapacity: consumed } });
      const used: UsageModule.DynamoUsage = new Map();
      await usage.withUsage(used, () => client.dynamo.send(command() as never));
      expect(received.map((r) => [r.target, r.body.ReturnConsumedCapacity])).toEqual([
        [`DynamoDB_20120810.${operation}`, 'TOTAL'],
      ]);
      expect(Object.fromEntries(used)).toEqual({
        [operation]: { requests: 1, retries: 0, conditionFailures: 0, readUnits: read, writeUnits: write },
      });
    },
  );

  it.each([
    ['Get', () => new doc.GetCommand({ TableName: 't', Key: { pk: 'a' } }), 'GetItem', [1, 0]],
    ['Put', () => new doc.PutCommand({ TableName: 't', Item: { pk: 'a', n: 1 } }), 'PutItem', [0, 1]],
    [
      'Query',
      () =>
        new doc.QueryCommand({
          TableName: 't',
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': 'a' },
        }),
      'Query',
      [1, 0],
    ],
  ])('lib-dynamodb %s goes through the same middleware', async (_, command, operation, [read, write]) => {
    answers.push({ status: 200, body: { ConsumedCapacity: capacity(1) } });
    const used: UsageModule.DynamoUsage = new Map();
    await usage.withUsage(used, () => client.documents.send(command() as never));
    expect(received[0]?.body.ReturnConsumedCapacity).toBe('TOTAL');
    // The document client's marshalling still happened (native attribute values on the wire).
    expect(JSON.stringify(received[0]?.body)).toMatch(/"S":"a"/);
    expect(usage && used.get(operation)).toMatchObject({ requests: 1, readUnits: read, writeUnits: write });
  });

  it("keeps a caller's own ReturnConsumedCapacity", async () => {
    await client.dynamo.send(
      new sdk.GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } }, ReturnConsumedCapacity: 'INDEXES' }),
    );
    expect(received[0]?.body.ReturnConsumedCapacity).toBe('INDEXES');
  });

  it('counts the SDK retries of a throttled request and a failed condition', async () => {
    answers.push(
      { status: 400, body: { __type: `${DYNAMO_ERROR}ThrottlingException`, message: 'slow down' } },
      { status: 200, body: { ConsumedCapacity: capacity(2) } },
      { status: 400, body: { __type: `${DYNAMO_ERROR}ConditionalCheckFailedException`, message: 'no' } },
    );
    const used: UsageModule.DynamoUsage = new Map();
    const update = () =>
      new sdk.UpdateItemCommand({ TableName: 't', Key: { pk: { S: 'a' } }, UpdateExpression: 'REMOVE a' });
    await usage.withUsage(used, async () => {
      await client.dynamo.send(update());
      await expect(client.dynamo.send(update())).rejects.toBeInstanceOf(sdk.ConditionalCheckFailedException);
    });
    expect(used.get('UpdateItem')).toEqual({
      requests: 2,
      retries: 1,
      conditionFailures: 1,
      readUnits: 0,
      writeUnits: 2,
    });
  });

  it('a call that outlives its request counts towards that request, never the next one', async () => {
    answers.push(
      { status: 200, body: { ConsumedCapacity: capacity(7) }, delayMs: 50 },
      { status: 200, body: { ConsumedCapacity: capacity(1) } },
    );
    const first: UsageModule.DynamoUsage = new Map();
    const second: UsageModule.DynamoUsage = new Map();
    const key = { TableName: 't', Key: { pk: { S: 'a' } } };
    let late: Promise<unknown> = Promise.resolve();
    // The first request gives up on its call (its deadline passed, say) and the next one starts meanwhile.
    await usage.withUsage(first, async () => {
      late = client.dynamo.send(new sdk.UpdateItemCommand({ ...key, UpdateExpression: 'REMOVE a' }));
    });
    await usage.withUsage(second, async () => {
      await client.dynamo.send(new sdk.GetItemCommand(key));
      await late;
    });
    expect(Object.fromEntries(first)).toEqual({
      UpdateItem: { requests: 1, retries: 0, conditionFailures: 0, readUnits: 0, writeUnits: 7 },
    });
    expect(Object.fromEntries(second)).toEqual({
      GetItem: { requests: 1, retries: 0, conditionFailures: 0, readUnits: 1, writeUnits: 0 },
    });
  });

  it('records nothing outside a request (CLI, scripts), and still asks for capacity there', async () => {
    answers.push(
      { status: 200, body: { ConsumedCapacity: capacity(1) } },
      { status: 200, body: { ConsumedCapacity: capacity(1) } },
    );
    const get = () => new sdk.GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } });
    await client.dynamo.send(get());
    expect(received[0]?.body.ReturnConsumedCapacity).toBe('TOTAL');
    const used: UsageModule.DynamoUsage = new Map();
    await usage.withUsage(used, () => client.dynamo.send(get()));
    // Only the request's own call: the one before it went nowhere.
    expect(used.get('GetItem')).toMatchObject({ requests: 1, readUnits: 1 });
  });
});

describe('request metrics (EMF)', () => {
  let lines: Array<Record<string, any>>;
  let write: jest.SpyInstance;
  beforeEach(() => {
    lines = [];
    write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      const text = String(chunk);
      for (const line of text.split('\n')) if (line.includes('"_aws"')) lines.push(JSON.parse(line));
      return true;
    });
  });
  afterEach(() => write.mockRestore());

  const context = (name: string) =>
    ({ functionName: name, awsRequestId: `req-${name}`, getRemainingTimeInMillis: () => 10_000 }) as unknown as Context;
  const event = { routeKey: 'POST /x', headers: {}, requestContext: {} } as unknown as EdgeModule.Event;

  it.each<[string, () => Promise<EdgeModule.Reply>, number, Record<string, number>]>([
    ['a success', async () => ({ statusCode: 200, body: { message: 'ok' } }), 200, { Errors4xx: 0, Errors5xx: 0 }],
    [
      'a 409 WRITE_CONFLICT',
      async () => {
        const { Refusal } = await import('../../lib/config/errors');
        throw new Refusal('WRITE_CONFLICT', 'busy', { retryAfter: 1 });
      },
      409,
      { Errors4xx: 1, Errors5xx: 0, WriteConflicts: 1 },
    ],
    [
      'an unexpected error',
      async () => {
        throw new Error('boom');
      },
      500,
      { Errors4xx: 0, Errors5xx: 1 },
    ],
  ])('%s: one line with requests, status class, latency and the request id', async (_, fn, status, values) => {
    const { logger } = await import('../../lib/config/logger');
    jest.spyOn(logger, 'error').mockImplementation(() => undefined);
    jest.spyOn(logger, 'info').mockImplementation(() => undefined);
    const result = await edge.httpHandler(fn)(event, context('fn-a'));
    expect(result.statusCode).toBe(status);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      service: 'content-api',
      FunctionName: 'fn-a',
      function_request_id: 'req-fn-a',
      Requests: 1,
      ...values,
    });
    if (!('WriteConflicts' in values)) expect(line).not.toHaveProperty('WriteConflicts');
    expect(line?.Latency).toEqual(expect.any(Number));
    expect(line?._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'content-api-test',
        Dimensions: [['service', 'FunctionName'], ['service']],
        Metrics: expect.arrayContaining([{ Name: 'Requests', Unit: 'Count' }]),
      },
    ]);
    jest.restoreAllMocks();
  });

  it('a request that used DynamoDB: one more line per operation, with its capacity', async () => {
    answers.push(
      { status: 200, body: { ConsumedCapacity: capacity(1) } },
      { status: 200, body: { ConsumedCapacity: capacity(4) } },
      { status: 200, body: { ConsumedCapacity: capacity(4) } },
    );
    const { logger } = await import('../../lib/config/logger');
    jest.spyOn(logger, 'info').mockImplementation(() => undefined);
    const key = { TableName: 't', Key: { pk: { S: 'a' } } };
    await edge.httpHandler(async () => {
      await client.dynamo.send(new sdk.GetItemCommand(key));
      await client.dynamo.send(new sdk.UpdateItemCommand({ ...key, UpdateExpression: 'REMOVE a' }));
      await client.dynamo.send(new sdk.UpdateItemCommand({ ...key, UpdateExpression: 'REMOVE b' }));
      return { statusCode: 200, body: {} };
    })(event, context('fn-b'));
    expect(lines).toHaveLength(3);
    const byOperation = Object.fromEntries(lines.slice(1).map((l) => [l.Operation, l]));
    expect(byOperation.GetItem).toMatchObject({
      FunctionName: 'fn-b',
      DynamoDBRequests: 1,
      ConsumedReadCapacityUnits: 1,
      ConsumedWriteCapacityUnits: 0,
      DynamoDBRetries: 0,
    });
    expect(byOperation.UpdateItem).toMatchObject({
      FunctionName: 'fn-b',
      DynamoDBRequests: 2,
      ConsumedReadCapacityUnits: 0,
      ConsumedWriteCapacityUnits: 8,
    });
    expect(byOperation.UpdateItem._aws.CloudWatchMetrics[0].Dimensions).toEqual([
      ['service', 'FunctionName', 'Operation'],
    ]);
    // Every name is one the code declares, and so one the dashboard may use.
    const names = new Set<string>(Object.values(m.METRIC));
    for (const line of lines)
      for (const metric of line._aws.CloudWatchMetrics[0].Metrics) expect(names).toContain(metric.Name);
    jest.restoreAllMocks();
  });
});
