// The deployable package: runs `npm run package` once (no AWS credentials, no deploy) and checks what it wrote to
// .serverless/: routes, functions, per-function IAM, the table, the HTTP API, and every function's zip and bundle.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, posix, resolve } from 'node:path';
import { parse } from 'yaml';
import table from '../../infra/table.json';
import { loadRoutes, readServerlessConfig } from '../../lib/local/server';
import { DIMENSION, METRIC, SERVICE_NAME } from '../../lib/http/metrics';
import { ALARMS, observabilityResources } from '../../infra/observability.mjs';
import { CONNECTION_ACTIONS, STREAM_ACTIONS } from '../../infra/iam-actions.mjs';
import { type Metafile, bundledInputs, dynamodbActionsOf, lazyOutputsOf, outputFor } from './dynamodb-actions';
import { listZip } from './zip';

const ROOT = process.cwd();
const OUT = join(ROOT, '.serverless');
/**
 * Measured at 126-251 KiB per function (2026-11-24; the content functions are the largest: they carry the segment
 * store, with the planning of batches on chunked arrays and bucketed objects; the bundled AWS SDK is most of the
 * startup bundle; lazy modules included, of which Powertools Tracer with the X-Ray SDK is 38 KB zipped and loaded only
 * where tracing is on); ~10 % headroom over the largest. The cold-start bench measures what the size costs. The
 * rules' engines (lib/rules/engines.ts: CEL with its protobuf runtime and RE2, and ajv; 107 KB zipped, minified) are
 * a lazy module of every function that may evaluate rules, loaded only by a request rules concern (a cold start that
 * answers the owner, a member or a key never compiles them): the content functions are ~378 KB (2026-11-27).
 */
const ZIP_BUDGET_BYTES = 420 * 1024;
const CORS_ORIGINS = ['https://app.example.com', 'https://admin.example.com'];

type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
let resources: Record<string, Resource>;
let template: { Resources: Record<string, Resource>; Conditions: Record<string, unknown> };
let metafile: Metafile;
const config = readServerlessConfig() as ReturnType<typeof readServerlessConfig> & {
  service: string;
  provider: { memorySize: number; timeout: number };
  resources: { Resources: Record<string, unknown> };
  params: { default: Record<string, number>; prod: Record<string, unknown> };
  custom: { alarms: Record<string, string>; alarmEmail: string; alarmsEnabled: string };
};
const STAGE = 'dev';
const functionNames = Object.keys(config.functions);
const permissions = parse(readFileSync(join(ROOT, 'infra', 'iam.yml'), 'utf8')) as Record<string, string[]>;

/** The functions behind the HTTP API (the middy chain, credentials); the others take WebSocket, stream, queue or schedule events. */
const httpFunctions = functionNames.filter((n) =>
  (config.functions[n] as { events?: Array<Record<string, unknown>> }).events?.some((e) => e.httpApi),
);
const streamActions = (name: string) => (permissions[name] ?? []).filter((a) => STREAM_ACTIONS.includes(a));
const connectionActions = (name: string) => (permissions[name] ?? []).filter((a) => CONNECTION_ACTIONS.includes(a));
const tableActions = (name: string) =>
  (permissions[name] ?? []).filter((a) => a.startsWith('dynamodb:') && !a.includes('@') && !STREAM_ACTIONS.includes(a));

/** `set` -> `Set`, `projectCreate` -> `ProjectCreate`: osls's logical id prefix for a function. */
const logical = (name: string) => {
  const normalized = name.replace(/-/g, 'Dash').replace(/_/g, 'Underscore');
  return normalized.charAt(0).toUpperCase() + normalized.slice(1);
};
const moduleOf = (name: string) => (config.functions[name] as { handler: string }).handler.replace(/\.[^.]+$/, '');
const entryPointOf = (name: string) => {
  const source = ['.ts', '.mts', '.js', '.mjs']
    .map((ext) => `${moduleOf(name)}${ext}`)
    .find((file) => existsSync(join(ROOT, file)));
  if (!source) throw new Error(`no source for ${name}`);
  return source;
};
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const getAtt = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
/** A bundle's lazy modules (scripts/bundle.mjs) as they sit in its zip: `functions/lazy/lib-auth-jose.mjs`. */
const lazyInZip = (name: string) =>
  lazyOutputsOf(metafile, entryPointOf(name)).map((output) => posix.relative('.serverless/build', output));

beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  // No credentials anywhere: no AWS_* variables, no profile files.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')),
  );
  Object.assign(env, {
    AWS_CONFIG_FILE: join(OUT, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(OUT, 'no-credentials'),
    CORS_ORIGINS: CORS_ORIGINS.join(', '),
  });
  const started = Date.now();
  // With the alarms a dev stage leaves out by default (checked below without packaging twice), to check them.
  execFileSync('npm', ['run', '-s', 'package', '--', '--param=alarms=true'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  console.info(`npm run package: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  template = JSON.parse(readFileSync(join(OUT, 'cloudformation-template-update-stack.json'), 'utf8'));
  resources = template.Resources;
  metafile = JSON.parse(readFileSync(join(OUT, 'build', 'meta.json'), 'utf8')) as Metafile;
}, 180_000);

describe('routes', () => {
  it('serves every route of the local server as an HTTP API route to the same function, and no other', () => {
    const deployed = ofType('AWS::ApiGatewayV2::Route')
      .filter(([, route]) => route.Properties.ApiId?.Ref === 'HttpApi')
      .map(([, route]) => {
        const integrationId = route.Properties.Target['Fn::Join'][1][1].Ref as string;
        const integration = resources[integrationId] as Resource;
        return {
          key: route.Properties.RouteKey,
          fn: integration.Properties.IntegrationUri['Fn::GetAtt'][0],
          payload: integration.Properties.PayloadFormatVersion,
        };
      });
    const local = loadRoutes().map((r) => ({
      key: `${r.method} ${r.path}`,
      fn: `${logical(r.functionName)}LambdaFunction`,
      payload: '2.0',
    }));
    expect(local.length).toBeGreaterThan(0);
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    expect(deployed.sort(byKey)).toEqual(local.sort(byKey));
  });

  it('serves the realtime WebSocket API: $connect, $disconnect and $default to one function, answers as route responses', () => {
    const apis = ofType('AWS::ApiGatewayV2::Api').filter(([, api]) => api.Properties.ProtocolType === 'WEBSOCKET');
    expect(apis.map(([id, api]) => [id, api.Properties.RouteSelectionExpression])).toEqual([
      ['WebsocketsApi', '$request.body.action'],
    ]);
    const routes = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.ApiId?.Ref === 'WebsocketsApi');
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const integrations = ofType('AWS::ApiGatewayV2::Integration').filter(
      ([, i]) => i.Properties.ApiId?.Ref === 'WebsocketsApi',
    );
    expect(integrations.map(([, i]) => JSON.stringify(i.Properties.IntegrationUri))).toEqual([
      expect.stringContaining('RealtimeLambdaFunction'),
    ]);
    expect(ofType('AWS::ApiGatewayV2::RouteResponse').map(([, r]) => r.Properties.RouteResponseKey)).toEqual([
      '$default',
    ]);
  });

  it('feeds the realtime stream consumer from the table stream, in order, with its endpoint', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([id]) => id.startsWith('RealtimeStream'));
    expect(mappings).toHaveLength(1);
    const [, mapping] = mappings[0] as [string, Resource];
    expect(mapping.Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': ['ContentTable', 'StreamArn'] },
      FunctionName: getAtt('RealtimeStreamLambdaFunction'),
      StartingPosition: 'LATEST',
      BatchSize: config.params.default.streamBatchSize,
      // A commit cut at a full batch's end is answered as failed from its first record (batch-cut.ts).
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const fn = resources.RealtimeStreamLambdaFunction as Resource;
    expect(JSON.stringify(fn.Properties.Environment.Variables.REALTIME_ENDPOINT)).toContain('WebsocketsApi');
    // The consumer knows the batch size the event source uses: a batch that full may end inside a commit.
    expect(fn.Properties.Environment.Variables.STREAM_BATCH_SIZE).toBe(String(config.params.default.streamBatchSize));
  });
});

describe('functions', () => {
  it.each(functionNames)(
    '%s: nodejs24.x on arm64, its handler, sized as configured, the table name from the table',
    (name) => {
      const fn = resources[`${logical(name)}LambdaFunction`] as Resource;
      expect(fn.Properties).toMatchObject({
        Handler: (config.functions[name] as { handler: string }).handler,
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: config.provider.memorySize,
        Timeout: (config.functions[name] as { timeout?: number }).timeout ?? config.provider.timeout,
        Environment: { Variables: { TABLE_NAME: { Ref: 'ContentTable' }, NODE_OPTIONS: '--enable-source-maps' } },
        Role: getAtt(`${logical(name)}IamRoleLambdaExecution`),
      });
    },
  );

  it.each(functionNames)(
    '%s: X-Ray active tracing with Powertools Tracer on, and the metrics namespace of its stage',
    (name) => {
      const fn = resources[`${logical(name)}LambdaFunction`] as Resource;
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: `${config.service}-${STAGE}`,
        POWERTOOLS_TRACE_ENABLED: 'true',
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
      });
      // The dimension value the code uses for a route (its Lambda context's functionName).
      expect(fn.Properties.FunctionName).toBe(`${config.service}-${STAGE}-${name}`);
    },
  );

  it.each(functionNames)('%s: its log group keeps logs for the configured days', (name) => {
    expect(resources[`${logical(name)}LogGroup`]?.Properties.RetentionInDays).toBe(
      config.params.default.logRetentionInDays,
    );
  });
});

describe('IAM', () => {
  it('has one role per function and no shared role', () => {
    expect(
      ofType('AWS::IAM::Role')
        .map(([id]) => id)
        .sort(),
    ).toEqual(functionNames.map((n) => `${logical(n)}IamRoleLambdaExecution`).sort());
    expect(ofType('AWS::IAM::Policy')).toEqual([]);
    expect(ofType('AWS::IAM::ManagedPolicy')).toEqual([]);
  });

  it.each(functionNames)(
    "%s: only its infra/iam.yml actions (the table's on the table, an index's on that index, SQS actions on the webhook queue, the stream's on the stream, ManageConnections on the stage's @connections), plus its own log group",
    (name) => {
      const role = resources[`${logical(name)}IamRoleLambdaExecution`] as Resource;
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] },
      ]);
      const statements = role.Properties.Policies.flatMap(
        (p: { PolicyDocument: { Statement: unknown[] } }) => p.PolicyDocument.Statement,
      );
      expect(statements).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: [getAtt(`${logical(name)}LogGroup`)],
        },
        { Effect: 'Allow', Action: tableActions(name), Resource: [getAtt('ContentTable')] },
        ...((permissions[name] ?? []).some((a) => a.startsWith('sqs:'))
          ? [
              {
                Effect: 'Allow',
                Action: (permissions[name] ?? []).filter((a) => a.startsWith('sqs:')),
                Resource: [getAtt('WebhookQueue')],
              },
            ]
          : []),
        // `dynamodb:<Action>@<index>`: that action on that index's ARN only.
        ...(permissions[name] ?? [])
          .filter((action) => action.includes('@'))
          .map((entry) => {
            const [action, index] = entry.split('@') as [string, string];
            return {
              Effect: 'Allow',
              Action: [action],
              Resource: [{ 'Fn::Join': ['', [getAtt('ContentTable'), `/index/${index}`]] }],
            };
          }),
        ...(streamActions(name).length > 0
          ? [
              {
                Effect: 'Allow',
                Action: streamActions(name),
                Resource: [{ 'Fn::GetAtt': ['ContentTable', 'StreamArn'] }],
              },
            ]
          : []),
        ...(connectionActions(name).length > 0
          ? [
              {
                Effect: 'Allow',
                Action: ['execute-api:ManageConnections'],
                Resource: [
                  {
                    'Fn::Join': [
                      '',
                      [
                        'arn:',
                        { Ref: 'AWS::Partition' },
                        ':execute-api:',
                        { Ref: 'AWS::Region' },
                        ':',
                        { Ref: 'AWS::AccountId' },
                        ':',
                        { Ref: 'WebsocketsApi' },
                        `/${STAGE}/POST/@connections/*`,
                      ],
                    ],
                  },
                ],
              },
            ]
          : []),
        // X-Ray's segment actions take no resource ARN.
        { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: ['*'] },
      ]);
      for (const action of statements.flatMap((s: { Action: string[] }) => s.Action)) expect(action).not.toContain('*');
    },
  );

  // The independent check: what the bundled code can send, read from the bundle, not from infra/iam.yml.
  it.each(functionNames)('%s: the actions are exactly the DynamoDB commands its bundle can send', (name) => {
    const needed = dynamodbActionsOf(metafile, entryPointOf(name), ROOT);
    expect(needed.length).toBeGreaterThan(0);
    expect([...new Set(tableActions(name))].sort()).toEqual(needed);
  });

  it('grants SQS actions to the webhook sender only: what its event source and its retries need', () => {
    const withSqs = functionNames.filter((name) => (permissions[name] ?? []).some((a) => a.startsWith('sqs:')));
    expect(withSqs.sort()).toEqual(['realtimeStream', 'webhooksSend']);
    // The stream consumer queues each change's deliveries, and may do nothing else with the queue.
    expect(permissions.realtimeStream?.filter((a) => a.startsWith('sqs:'))).toEqual(['sqs:SendMessage']);
    expect(
      (resources.RealtimeStreamLambdaFunction as Resource).Properties.Environment.Variables.WEBHOOK_QUEUE_URL,
    ).toEqual({ Ref: 'WebhookQueue' });
    expect(permissions.webhooksSend?.filter((a) => a.startsWith('sqs:')).sort()).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ReceiveMessage',
    ]);
  });

  it('only the function with a stream event reads the stream, and only the stream consumer posts to connections', () => {
    const withStream = functionNames.filter((n) =>
      (config.functions[n] as { events?: Array<Record<string, unknown>> }).events?.some((e) => e.stream),
    );
    expect(withStream).toEqual(['realtimeStream']);
    expect(functionNames.filter((n) => streamActions(n).length > 0)).toEqual(withStream);
    expect(streamActions('realtimeStream').sort()).toEqual([...STREAM_ACTIONS].sort());
    expect(functionNames.filter((n) => connectionActions(n).length > 0)).toEqual(['realtimeStream']);
    // The sender's code is the one that can post: it is bundled there and nowhere else.
    for (const n of functionNames) {
      const posts = bundledInputs(metafile, entryPointOf(n)).some((f) => f.endsWith('lib/realtime/sender.ts'));
      expect({ n, posts }).toEqual({ n, posts: n === 'realtimeStream' });
    }
    // Its posts in flight, a stage parameter.
    expect(
      (resources.RealtimeStreamLambdaFunction as Resource).Properties.Environment.Variables.REALTIME_SEND_CONCURRENCY,
    ).toBe(String(config.params.default.realtimeSendConcurrency));
  });
});

describe('sweeper', () => {
  it('runs every 15 minutes, and may Query the sweep index and nothing else beyond the table', () => {
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    const [[, rule]] = rules as [[string, Resource]];
    expect(rule.Properties.ScheduleExpression).toBe('rate(15 minutes)');
    expect(JSON.stringify(rule.Properties.Targets)).toContain('SweepLambdaFunction');
    const statements = (resources.SweepIamRoleLambdaExecution as Resource).Properties.Policies[0].PolicyDocument
      .Statement as Array<{ Action: string[]; Resource: unknown[] }>;
    const onIndex = statements.filter((s) => JSON.stringify(s.Resource).includes('/index/'));
    expect(onIndex).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:Query'],
        Resource: [{ 'Fn::Join': ['', [getAtt('ContentTable'), '/index/sweep']] }],
      },
    ]);
    // No other function reaches an index.
    for (const name of functionNames.filter((n) => n !== 'sweep'))
      expect(JSON.stringify(resources[`${logical(name)}IamRoleLambdaExecution`])).not.toContain('/index/');
    expect(table.GlobalSecondaryIndexes.map((i) => i.IndexName)).toEqual(['sweep']);
  });
});

describe('webhook queue', () => {
  it('is FIFO, encrypted, explicitly deduplicated, with a dead-letter queue past 60 receives', () => {
    expect(resources.WebhookQueue?.Properties).toMatchObject({
      QueueName: `${config.service}-${STAGE}-webhooks.fifo`,
      FifoQueue: true,
      ContentBasedDeduplication: false,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: getAtt('WebhookDeadLetterQueue'), maxReceiveCount: 60 },
    });
    // Retries span 24 h, plus the last backoff: the messages must outlive them.
    expect(resources.WebhookQueue?.Properties.MessageRetentionPeriod).toBeGreaterThanOrEqual(25 * 3600);
    expect(resources.WebhookDeadLetterQueue?.Properties).toMatchObject({ FifoQueue: true, SqsManagedSseEnabled: true });
  });

  it('feeds the sender in batches of 10 with partial batch failures, its visibility above the function timeout', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(([id]) => id.startsWith('WebhooksSend'));
    expect(mappings).toHaveLength(1);
    const [[, mapping]] = mappings as [[string, Resource]];
    expect(mapping.Properties).toMatchObject({
      EventSourceArn: getAtt('WebhookQueue'),
      FunctionName: getAtt('WebhooksSendLambdaFunction'),
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const sender = resources.WebhooksSendLambdaFunction as Resource;
    expect(resources.WebhookQueue?.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(sender.Properties.Timeout);
    expect(sender.Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toEqual({ Ref: 'WebhookQueue' });
  });

  it('never lets a deployed function deliver to loopback', () => {
    for (const name of functionNames) {
      const variables = (resources[`${logical(name)}LambdaFunction`] as Resource).Properties.Environment.Variables;
      expect([name, variables.WEBHOOKS_ALLOW_LOOPBACK, variables.WEBHOOK_BACKOFF_SCALE]).toEqual([
        name,
        undefined,
        undefined,
      ]);
    }
  });
});

describe('table', () => {
  it('is on-demand, recoverable, encrypted, retained and protected, with the keys and TTL of infra/table.json', () => {
    const tables = ofType('AWS::DynamoDB::Table');
    expect(tables.map(([id]) => id)).toEqual(['ContentTable']);
    const [, resource] = tables[0] as [string, Resource];
    expect(resource.DeletionPolicy).toBe('Retain');
    expect(resource.UpdateReplacePolicy).toBe('Retain');
    expect(resource.Properties).toMatchObject({
      AttributeDefinitions: table.AttributeDefinitions,
      KeySchema: table.KeySchema,
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      // The realtime consumer's source: every write with both images.
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      GlobalSecondaryIndexes: table.GlobalSecondaryIndexes,
    });
    expect(table.TimeToLiveAttribute).toBe('ttl');
  });
});

describe('HTTP API', () => {
  it('allows the CORS_ORIGINS given at packaging time, with the headers and methods the API uses', () => {
    const [[, api]] = ofType('AWS::ApiGatewayV2::Api').filter(([, a]) => a.Properties.ProtocolType === 'HTTP') as [
      [string, Resource],
    ];
    expect(api.Properties.CorsConfiguration).toEqual({
      AllowOrigins: CORS_ORIGINS,
      AllowHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key'],
      AllowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      ExposeHeaders: ['ETag', 'Retry-After'],
      MaxAge: 600,
    });
  });

  it('throttles every route by default on the stage, with the stage parameters', () => {
    expect(resources.HttpApiStage?.Properties.DefaultRouteSettings).toEqual({
      DetailedMetricsEnabled: false,
      ThrottlingRateLimit: config.params.default.throttlingRateLimit,
      ThrottlingBurstLimit: config.params.default.throttlingBurstLimit,
    });
    expect(config.params.default.throttlingRateLimit).toBeGreaterThan(0);
    expect(config.params.default.throttlingBurstLimit).toBeGreaterThan(0);
  });

  it('writes a JSON access log per request to its own log group, with the stage retention and no header', () => {
    const stage = resources.HttpApiStage as Resource;
    const { DestinationArn, Format } = stage.Properties.AccessLogSettings as {
      DestinationArn: unknown;
      Format: string;
    };
    expect(DestinationArn).toEqual(getAtt('HttpApiLogGroup'));
    expect(resources.HttpApiLogGroup?.Properties.RetentionInDays).toBe(config.params.default.logRetentionInDays);
    // Valid JSON once API Gateway fills in the variables (quoted ones are strings, bare ones numbers).
    const line = JSON.parse(Format.replace(/"\$context\.[\w.]+"/g, '"x"').replace(/\$context\.[\w.]+/g, '0'));
    expect(Object.keys(line)).toEqual(
      expect.arrayContaining([
        'requestId',
        'routeKey',
        'status',
        'responseLatency',
        'integrationError',
        'integrationRequestId',
      ]),
    );
    expect(Format).toContain('"integrationError":"$context.integrationErrorMessage"');
    expect(Format).toContain('"integrationRequestId":"$context.integration.requestId"');
    // Only $context variables: never a request header (Authorization), never the query string.
    expect(Format).not.toMatch(/authorization|\$request\.|querystring/i);
  });
});

/** `${param:alarmLambdaErrors}` -> `alarmLambdaErrors`: the stage param a threshold comes from. */
const paramOf = (key: string) => /^\$\{param:(\w+)\}$/.exec(config.custom.alarms[key] ?? '')?.[1];

describe('alarms', () => {
  const topic = { AlarmActions: [{ Ref: 'AlarmTopic' }], OKActions: [{ Ref: 'AlarmTopic' }] };

  it('are off by default outside prod (each costs a monthly fee), on in prod, a stage param', () => {
    expect(config.custom.alarmsEnabled).toBe('${param:alarms}');
    expect(config.params.default.alarms).toBe(false);
    expect(config.params.prod.alarms).toBe(true);
    const stage = (alarms: boolean | string) =>
      Object.values(
        observabilityResources({
          service: config.service,
          stage: STAGE,
          functions: functionNames.map((name) => ({
            name,
            logicalId: `${logical(name)}LambdaFunction`,
            lambdaName: name,
          })),
          alarms,
          thresholds: Object.fromEntries(
            Object.entries(config.custom.alarms).map(([k, v]) => [k, config.params.default[paramOf(k) as string] ?? v]),
          ),
          alarmEmail: '',
          api: 'HttpApi',
          table: 'ContentTable',
        }).Resources,
      ).map((r) => (r as Resource).Type);
    const count = (types: string[], type: string) => types.filter((t) => t === type).length;
    for (const off of [false, 'false', '']) {
      expect(count(stage(off), 'AWS::CloudWatch::Alarm')).toBe(0);
      expect(count(stage(off), 'AWS::SNS::Topic')).toBe(0);
      expect(count(stage(off), 'AWS::CloudWatch::Dashboard')).toBe(1);
    }
    const perStage = Object.keys(ALARMS.perFunction).length * functionNames.length + Object.keys(ALARMS.stage).length;
    for (const on of [true, 'true']) expect(count(stage(on), 'AWS::CloudWatch::Alarm')).toBe(perStage);
    // The package above was made with --param=alarms=true: every alarm is there.
    expect(ofType('AWS::CloudWatch::Alarm')).toHaveLength(perStage);
  });

  it('every threshold is a stage param of its own, with a default', () => {
    const keys = [...Object.values(ALARMS.perFunction), ...Object.values(ALARMS.stage)];
    expect(Object.keys(config.custom.alarms).sort()).toEqual([...keys].sort());
    const params = keys.map(paramOf);
    expect(new Set(params).size).toBe(keys.length);
    for (const param of params) expect(config.params.default[param as string]).toEqual(expect.any(Number));
  });

  it.each(functionNames)('%s: Lambda errors and throttles alarms, notifying the alarm topic', (name) => {
    for (const [suffix, key] of Object.entries(ALARMS.perFunction)) {
      const alarm = resources[`${logical(name)}${suffix}Alarm`] as Resource;
      expect(alarm?.Type).toBe('AWS::CloudWatch::Alarm');
      expect(alarm.Properties).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: suffix,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: `${logical(name)}LambdaFunction` } }],
        Threshold: config.params.default[paramOf(key) as string],
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        ...topic,
      });
    }
  });

  it.each(Object.entries(ALARMS.stage))(
    '%s: exists with its threshold param, notifying the alarm topic',
    (suffix, key) => {
      const alarm = resources[`${suffix}Alarm`] as Resource;
      expect(alarm?.Type).toBe('AWS::CloudWatch::Alarm');
      expect(alarm.Properties).toMatchObject({ Threshold: config.params.default[paramOf(key) as string], ...topic });
      expect(alarm.Properties.AlarmName.startsWith(`${config.service}-${STAGE}-`)).toBe(true);
    },
  );

  it('the stage alarms watch what their names say', () => {
    const metricNames = (id: string) => {
      const p = (resources[id] as Resource).Properties;
      return p.Metrics
        ? p.Metrics.filter((m: { MetricStat?: unknown }) => m.MetricStat).map(
            (m: { MetricStat: { Metric: { Namespace: string; MetricName: string } } }) =>
              `${m.MetricStat.Metric.Namespace} ${m.MetricStat.Metric.MetricName}`,
          )
        : [`${p.Namespace} ${p.MetricName}`];
    };
    expect(metricNames('Api5xxRateAlarm')).toEqual(['AWS/ApiGateway 5xx', 'AWS/ApiGateway Count']);
    expect(metricNames('ApiLatencyP99Alarm')).toEqual(['AWS/ApiGateway Latency']);
    expect((resources.ApiLatencyP99Alarm as Resource).Properties.ExtendedStatistic).toBe('p99');
    expect(metricNames('DynamoThrottlesAlarm')).toEqual([
      'AWS/DynamoDB ReadThrottleEvents',
      'AWS/DynamoDB WriteThrottleEvents',
    ]);
    expect(new Set(metricNames('DynamoSystemErrorsAlarm'))).toEqual(new Set(['AWS/DynamoDB SystemErrors']));
    // Ours: a name the code emits, in the stage's namespace.
    expect(metricNames('WriteConflictsAlarm')).toEqual([`${config.service}-${STAGE} ${METRIC.writeConflicts}`]);
  });

  it('one alarm topic; the email subscription only when alarmEmail is set', () => {
    expect(ofType('AWS::SNS::Topic').map(([id]) => id)).toEqual(['AlarmTopic']);
    expect(resources.AlarmEmailSubscription).toMatchObject({
      Condition: 'HasAlarmEmail',
      Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email' },
    });
    expect(template.Conditions.HasAlarmEmail).toEqual({
      'Fn::Not': [{ 'Fn::Equals': [config.params.default.alarmEmail, ''] }],
    });
    expect(config.params.default.alarmEmail).toBe('');
    // Every alarm of the template is one of the above.
    const expected = [
      ...functionNames.flatMap((name) => Object.keys(ALARMS.perFunction).map((s) => `${logical(name)}${s}Alarm`)),
      ...Object.keys(ALARMS.stage).map((s) => `${s}Alarm`),
    ];
    expect(
      ofType('AWS::CloudWatch::Alarm')
        .map(([id]) => id)
        .sort(),
    ).toEqual(expected.sort());
  });
});

describe('dashboard', () => {
  const namespace = () => `${config.service}-${STAGE}`;
  const body = () => {
    const dashboards = ofType('AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const [[, dashboard]] = dashboards as [[string, Resource]];
    expect(dashboard.Properties.DashboardName).toBe(namespace());
    return JSON.parse(dashboard.Properties.DashboardBody['Fn::Sub']) as {
      widgets: Array<{ properties: { metrics: unknown[][] } }>;
    };
  };
  /** The metric names of our namespace on the dashboard: metric rows, and SEARCH expressions. */
  const ours = () => {
    const names: string[] = [];
    const functionDimensions: string[] = [];
    for (const widget of body().widgets)
      for (const row of widget.properties.metrics) {
        const expression = (row[0] as { expression?: string }).expression;
        if (expression) {
          expect(expression).toContain(`{${namespace()},`);
          for (const [, name] of expression.matchAll(/MetricName="(\w+)"/g)) names.push(name as string);
        } else if (row[0] === namespace()) {
          names.push(row[1] as string);
          const at = row.indexOf(DIMENSION.functionName);
          if (at >= 0) functionDimensions.push(row[at + 1] as string);
        }
      }
    return { names, functionDimensions };
  };

  it('names only metrics the code emits, and shows every one of them', () => {
    const { names } = ours();
    const emitted = Object.values(METRIC);
    for (const name of names) expect(emitted).toContain(name);
    expect([...new Set(names)].sort()).toEqual([...emitted].sort());
  });

  it("shows each route by its function's name, the FunctionName dimension the code emits", () => {
    const { functionDimensions } = ours();
    const lambdaNames = functionNames.map(
      (name) => resources[`${logical(name)}LambdaFunction`]?.Properties.FunctionName,
    );
    expect([...new Set(functionDimensions)].sort()).toEqual([...lambdaNames].sort());
  });
});

describe('bundles', () => {
  it.each(functionNames)(
    `%s: a zip under ${ZIP_BUDGET_BYTES / 1024} KB holding only its bundle, its lazy modules and their source maps`,
    (name) => {
      const zip = join(OUT, `${name}.zip`);
      const entries = listZip(zip);
      const files = [`${moduleOf(name)}.mjs`, ...lazyInZip(name)];
      expect(entries.map((e) => e.name).sort()).toEqual(files.flatMap((file) => [file, `${file}.map`]).sort());
      expect(readFileSync(zip).length).toBeLessThanOrEqual(ZIP_BUDGET_BYTES);
    },
  );

  it('loads jose, Powertools Tracer and Powertools idempotency as lazy modules, only in the functions that can reach them', () => {
    const lazy = Object.fromEntries(
      functionNames.map((name) => [name, lazyInZip(name).map((file) => posix.basename(file))]),
    );
    // The WebSocket routes verify JWTs too; the stream consumer never meets one (subscriptions hold principals).
    for (const name of [...httpFunctions, 'realtime']) expect(lazy[name]).toContain('lib-auth-jose.mjs');
    for (const name of httpFunctions) expect(lazy[name]).toContain('lib-http-tracing-powertools.mjs');
    // The webhook sender and the sweeper check no credential and have no middy chain: nothing lazy.
    expect(lazy.webhooksSend).toEqual([]);
    expect(lazy.sweep).toEqual([]);
    const mutations = functionNames.filter((name) =>
      (config.functions[name] as { handler: string }).handler.match(
        /functions\/(set|insert|push|increment|decrement|delete|update|batch|patch|restore)\./,
      ),
    );
    expect(mutations).toHaveLength(10);
    for (const name of functionNames) {
      expect(lazy[name]?.includes('lib-http-idempotency-powertools.mjs')).toBe(mutations.includes(name));
    }
    // Nothing of them in the bundle a cold start loads.
    for (const name of functionNames) {
      const inputs = Object.keys(outputFor(metafile, entryPointOf(name)).inputs);
      expect(
        inputs.filter((file) =>
          /node_modules\/(jose|aws-xray-sdk-core|@aws-lambda-powertools\/(idempotency|jmespath|tracer))\//.test(file),
        ),
      ).toEqual([]);
    }
  });

  it.each(functionNames)(
    '%s: only what the function imports; nothing from lib/local or from other handlers',
    (name) => {
      const inputs = bundledInputs(metafile, entryPointOf(name));
      expect(inputs).toContain(entryPointOf(name));
      expect(inputs.filter((file) => file.startsWith('lib/local/'))).toEqual([]);
      expect(inputs.filter((file) => file.startsWith('functions/') && file !== entryPointOf(name))).toEqual([]);
      expect(
        inputs.filter((file) => /node_modules\/(dynalite|yaml|esbuild|osls|tsx|swagger-ui-dist)\//.test(file)),
      ).toEqual([]);
    },
  );

  it.each(functionNames)(
    '%s: its source maps cover our code only, and map the handler back to its .ts file',
    (name) => {
      const bundle = join(OUT, 'build', `${moduleOf(name)}.mjs`);
      for (const file of [bundle, ...lazyInZip(name).map((lazy) => join(OUT, 'build', lazy))]) {
        const { sources } = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
        expect(sources.filter((source) => source.includes('node_modules'))).toEqual([]);
      }
      // `export{x as handler}`: where x is defined must map to the function's own source.
      const code = readFileSync(bundle, 'utf8');
      const local = /export\{(?:[\w$]+ as [\w$]+,)*([\w$]+) as handler[,}]/.exec(code)?.[1] as string;
      const at = new RegExp(`[;,\\s{}](?:var |let |const )?${local.replace(/\$/g, '\\$')}=(?!=)`).exec(code);
      expect(at).not.toBeNull();
      const offset = (at?.index ?? 0) + 1;
      const lines = code.slice(0, offset).split('\n');
      const entry = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8'))).findEntry(
        lines.length - 1,
        (lines.at(-1) as string).length,
      );
      // Sources are relative to the bundle's folder in the zip, as the .ts files sit relative to the .mjs one.
      const source =
        'originalSource' in entry ? resolve(ROOT, dirname(moduleOf(name)), entry.originalSource) : undefined;
      expect(source).toBe(join(ROOT, entryPointOf(name)));
    },
  );

  it('every bundle loads in a fresh Node process and answers a request with a malformed credential, and one with a JWT', () => {
    // Catches what only shows at run time in Lambda: a CommonJS require the ESM bundle cannot serve, a failing import.
    // The JWT (its key set unreachable) is a 401 only if the lazy jose module loads and runs; a failed load is a 500.
    const script = `
      const results = {};
      for (const [name, file] of Object.entries(JSON.parse(process.argv[1]))) {
        const { handler } = await import(file);
        // A +json type every route takes as JSON, and PATCH as a merge patch (PATCH refuses a body without a type).
        // 'malformed': a request without Authorization is a question to the project's rules (a table read); a
        // credential that is none is the 401 any bundle answers without I/O.
        for (const [kind, headers] of [['malformed', { authorization: 'Bearer not-a-credential' }], ['jwt', { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln', 'content-type': 'application/merge-patch+json' }]]) {
          const event = { version: '2.0', rawPath: '/', headers, isBase64Encoded: false,
            requestContext: { http: { method: 'GET', path: '/' }, requestId: 'package-test' },
            pathParameters: { username: '@someone', projectSlug: 'site', id: 'x', member: '@other' } };
          results[name + ' ' + kind] = (await handler(event, { awsRequestId: 'package-test', getRemainingTimeInMillis: () => 10000 })).statusCode;
        }
      }
      console.log(JSON.stringify(results));`;
    const bundles = Object.fromEntries(
      httpFunctions.map((name) => [name, join(OUT, 'build', `${moduleOf(name)}.mjs`)]),
    );
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(bundles)], {
      cwd: OUT,
      env: {
        PATH: process.env.PATH,
        TABLE_NAME: 'package-test',
        AWS_REGION: 'us-east-1',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks',
        AUTH_ISSUER: 'https://issuer.example',
        AUTH_AUDIENCE: 'content-api',
      },
      encoding: 'utf8',
    });
    const statuses = JSON.parse(output.trim().split('\n').pop() as string) as Record<string, number>;
    expect(Object.keys(statuses).sort()).toEqual(
      httpFunctions.flatMap((name) => [`${name} jwt`, `${name} malformed`]).sort(),
    );
    // 401 for every route today; anything under 500 shows the bundle ran its middy chain to a deliberate answer.
    for (const status of Object.values(statuses)) expect(status).toBeLessThan(500);
    for (const name of httpFunctions) expect(statuses[`${name} jwt`]).toBe(401);
  });

  it('the realtime bundles load in a fresh Node process: a frame gets its answer, an empty stream batch no failures', () => {
    const script = `
      const [socket, stream] = process.argv.slice(1);
      const { handler } = await import(socket);
      const frame = async (body) => handler({ requestContext: { routeKey: '$default', connectionId: 'c1' }, body, isBase64Encoded: false });
      const results = {
        ping: await frame('{"action":"ping"}'),
        bad: await frame('nope'),
        jwt: await frame(JSON.stringify({ action: 'subscribe', project: '@a/b', token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln' })),
        stream: (await (await import(stream)).handler({ Records: [] })) ?? null,
      };
      console.log(JSON.stringify(results));`;
    const output = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        script,
        join(OUT, 'build', `${moduleOf('realtime')}.mjs`),
        join(OUT, 'build', `${moduleOf('realtimeStream')}.mjs`),
      ],
      {
        cwd: OUT,
        env: {
          PATH: process.env.PATH,
          TABLE_NAME: 'package-test',
          AWS_REGION: 'us-east-1',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks',
          AUTH_ISSUER: 'https://issuer.example',
          AUTH_AUDIENCE: 'content-api',
          REALTIME_ENDPOINT: 'http://127.0.0.1:9',
        },
        encoding: 'utf8',
      },
    );
    const results = JSON.parse(output.trim().split('\n').pop() as string);
    expect(results).toEqual({
      ping: { statusCode: 200, body: '{"type":"pong"}' },
      bad: { statusCode: 200, body: expect.stringContaining('"code":"INVALID_MESSAGE"') },
      jwt: { statusCode: 200, body: expect.stringContaining('"code":"UNAUTHORIZED"') },
      // A partial batch response naming no record: the event source moves on past the whole batch.
      stream: { batchItemFailures: [] },
    });
  });

  it('the webhook sender bundle loads in a fresh Node process and answers an empty batch with no failures', () => {
    const script = `
      const { handler } = await import(process.argv[1]);
      console.log(JSON.stringify(await handler({ Records: [] })));`;
    const output = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', script, join(OUT, 'build', `${moduleOf('webhooksSend')}.mjs`)],
      {
        cwd: OUT,
        env: { PATH: process.env.PATH, TABLE_NAME: 'package-test', AWS_REGION: 'us-east-1' },
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(output.trim().split('\n').pop() as string)).toEqual({ batchItemFailures: [] });
  });

  it('a mutation bundle applies a write with Idempotency-Key once, through its lazy Powertools module', async () => {
    // Against the embedded engine: the first request writes, its retry gets the same answer (ETag too) without
    // writing again, and the same key with another body is the 422; every step runs in the lazy module.
    const engine = await startEngine();
    try {
      const script = `
        const [bundle, read, key] = process.argv.slice(1);
        const { handler } = await import(bundle);
        const { handler: get } = await import(read);
        const context = { awsRequestId: 'package-test', getRemainingTimeInMillis: () => 10000 };
        const send = async (body, idempotencyKey) => {
          const path = '/api/@pkg/site/content/push';
          const event = { version: '2.0', routeKey: 'POST /api/{username}/{projectSlug}/content/push', rawPath: path, rawQueryString: '',
            headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
            requestContext: { http: { method: 'POST', path }, requestId: 'package-test', timeEpoch: Date.now() },
            pathParameters: { username: '@pkg', projectSlug: 'site' }, body: JSON.stringify(body), isBase64Encoded: false };
          const result = await handler(event, context);
          return { status: result.statusCode, etag: result.headers?.ETag, code: JSON.parse(result.body).code };
        };
        const content = async () => {
          const path = '/api/@pkg/site/content';
          const event = { version: '2.0', routeKey: 'GET /api/{username}/{projectSlug}/content', rawPath: path, rawQueryString: '',
            headers: { authorization: 'Bearer ' + key }, requestContext: { http: { method: 'GET', path }, requestId: 'package-test' },
            pathParameters: { username: '@pkg', projectSlug: 'site' }, isBase64Encoded: false };
          return JSON.parse((await get(event, context)).body).value;
        };
        const first = await send({ path: 'list', value: 1 }, 'k-1');
        const retry = await send({ path: 'list', value: 1 }, 'k-1');
        const reused = await send({ path: 'list', value: 2 }, 'k-1');
        const other = await send({ path: 'list', value: 3 }, 'k-2');
        console.log(JSON.stringify({ first, retry, reused, other, content: await content() }));`;
      const bundle = (name: string) => join(OUT, 'build', `${moduleOf(name)}.mjs`);
      const output = execFileSync(
        process.execPath,
        ['--input-type=module', '-e', script, bundle('push'), bundle('get'), engine.key],
        {
          cwd: OUT,
          env: {
            PATH: process.env.PATH,
            TABLE_NAME: PACKAGE_TABLE,
            AWS_REGION: 'us-east-1',
            AWS_ACCESS_KEY_ID: 'local',
            AWS_SECRET_ACCESS_KEY: 'local',
            AWS_ENDPOINT_URL_DYNAMODB: engine.endpoint,
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
          encoding: 'utf8',
        },
      );
      const { first, retry, reused, other, content } = JSON.parse(output.trim().split('\n').pop() as string);
      expect(first).toMatchObject({ status: 200 });
      expect(retry).toEqual(first);
      expect(reused).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
      expect(other).toMatchObject({ status: 200 });
      expect(other.etag).not.toBe(first.etag);
      expect(content).toEqual({ list: [1, 3] });
    } finally {
      engine.child.kill('SIGTERM');
    }
  });
});

const PACKAGE_TABLE = 'package-test';

/** The embedded engine in a child process (as `npm start` runs it), with user @pkg, project site and an API key. */
async function startEngine(): Promise<{ child: ChildProcess; endpoint: string; key: string }> {
  const code = `
    const { startRuntime } = await import('./lib/local/runtime.ts');
    await startRuntime({ port: 0, dataDir: null });
    const accounts = await import('./lib/store/accounts.ts');
    await accounts.createUser('@pkg');
    await accounts.createProject({ username: '@pkg', slug: 'site' });
    const { key } = await accounts.createApiKey({ username: '@pkg', slug: 'site' }, { name: 'package', permissions: ['content:read', 'content:write'] });
    console.log(JSON.stringify({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB, key }));`;
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    env: {
      ...env,
      TABLE_NAME: PACKAGE_TABLE,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolveLine, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('\n')) resolveLine(text.slice(0, text.indexOf('\n')));
    });
    child.once('exit', (status) => reject(new Error(`the engine exited with ${status}`)));
  });
  return { child, ...(JSON.parse(line) as { endpoint: string; key: string }) };
}
