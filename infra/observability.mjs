// Observability resources for one stage, added to the CloudFormation template by infra/osls-plugin.mjs: an SNS topic
// the alarms notify (plus an email subscription when `alarmEmail` is set), the alarms (thresholds from the stage's
// params, serverless.yml `custom.alarms`; only where the stage's `alarms` param is true, by default prod alone:
// CloudWatch bills each alarm every month), and one CloudWatch dashboard. Metric names of our own namespace are the
// ones lib/http/metrics.ts emits (METRIC there); test/package/template.test.ts checks the two agree.

/** Our metrics (lib/http/metrics.ts METRIC): named here as plain strings, since osls loads this file with require(). */
const OURS = {
  requests: 'Requests',
  errors4xx: 'Errors4xx',
  errors5xx: 'Errors5xx',
  latency: 'Latency',
  writeConflicts: 'WriteConflicts',
  idempotentReplays: 'IdempotentReplays',
  dynamoRequests: 'DynamoDBRequests',
  dynamoRetries: 'DynamoDBRetries',
  dynamoConditionFailures: 'DynamoDBConditionFailures',
  readCapacity: 'ConsumedReadCapacityUnits',
  writeCapacity: 'ConsumedWriteCapacityUnits',
  sweptMarkers: 'SweptMarkers',
  sweptAbandoned: 'SweptAbandonedChanges',
  sweptSegments: 'SweptSegments',
};

/** The operations the functions send (infra/iam.yml) and the ones planned: DynamoDB's per-operation metrics. */
const DYNAMODB_OPERATIONS = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'BatchGetItem',
  'Query',
  'TransactWriteItems',
];

/**
 * Every alarm: its logical id suffix, the `custom.alarms` key of its threshold, and what it means (README, runbook).
 * Per-function alarms are created once per function (`<Function>ErrorsAlarm`).
 */
export const ALARMS = {
  perFunction: {
    Errors: 'lambdaErrors',
    Throttles: 'lambdaThrottles',
  },
  stage: {
    Api5xxRate: 'api5xxPercent',
    ApiLatencyP99: 'apiLatencyP99Ms',
    DynamoThrottles: 'dynamoThrottles',
    DynamoSystemErrors: 'dynamoSystemErrors',
    WriteConflicts: 'writeConflicts',
  },
};

const PERIOD = 300;

/**
 * @param {{ service: string, stage: string, region: unknown, functions: Array<{ name: string, logicalId: string,
 *   lambdaName: string }>, alarms: boolean | string, thresholds: Record<string, number>, alarmEmail: string,
 *   api: string, table: string }} options
 * @returns {{ Resources: Record<string, object>, Conditions: Record<string, object> }}
 */
export function observabilityResources({
  service,
  stage,
  functions,
  alarms,
  thresholds: given,
  alarmEmail,
  api,
  table,
}) {
  // `--param="alarms=true"` arrives as a string; anything but true (or "true") leaves the stage without alarms.
  const alarmsOn = alarms === true || alarms === 'true';
  // `--param="alarmLambdaErrors=5"` arrives as a string.
  const thresholds = Object.fromEntries(
    Object.entries(given).map(([key, value]) => [
      key,
      typeof value === 'string' && value !== '' ? Number(value) : value,
    ]),
  );
  const namespace = `${service}-${stage}`;
  const prefix = `${service}-${stage}`;
  const missing = [...Object.values(ALARMS.perFunction), ...Object.values(ALARMS.stage)].filter(
    (key) => typeof thresholds[key] !== 'number' || !Number.isFinite(thresholds[key]),
  );
  if (missing.length > 0)
    throw new Error(`serverless.yml custom.alarms: no numeric threshold for ${missing.join(', ')}`);

  const Resources = {};
  const Conditions = {};
  if (alarmsOn) {
    Conditions.HasAlarmEmail = { 'Fn::Not': [{ 'Fn::Equals': [alarmEmail ?? '', ''] }] };
    Resources.AlarmTopic = { Type: 'AWS::SNS::Topic', Properties: { TopicName: `${prefix}-alarms` } };
    Resources.AlarmEmailSubscription = {
      Type: 'AWS::SNS::Subscription',
      Condition: 'HasAlarmEmail',
      Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: alarmEmail ?? '' },
    };
  }
  const notify = { AlarmActions: [{ Ref: 'AlarmTopic' }], OKActions: [{ Ref: 'AlarmTopic' }] };
  const alarm = (id, name, description, threshold, properties) => {
    if (!alarmsOn) return;
    Resources[`${id}Alarm`] = {
      Type: 'AWS::CloudWatch::Alarm',
      Properties: {
        AlarmName: `${prefix}-${name}`,
        AlarmDescription: `${description} (README, Deploy: alarms runbook)`,
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        ...notify,
        ...properties,
      },
    };
  };

  for (const fn of functions) {
    const dimensions = [{ Name: 'FunctionName', Value: { Ref: fn.logicalId } }];
    const lambda = { Namespace: 'AWS/Lambda', Dimensions: dimensions, Statistic: 'Sum', Period: PERIOD };
    const prefixId = fn.logicalId.replace(/LambdaFunction$/, '');
    alarm(
      `${prefixId}Errors`,
      `${fn.name}-errors`,
      `${fn.name}: invocations that failed (an unhandled error, a timeout, out of memory) in 5 minutes`,
      thresholds.lambdaErrors,
      { ...lambda, MetricName: 'Errors' },
    );
    alarm(
      `${prefixId}Throttles`,
      `${fn.name}-throttles`,
      `${fn.name}: invocations Lambda refused for lack of concurrency in 5 minutes`,
      thresholds.lambdaThrottles,
      { ...lambda, MetricName: 'Throttles' },
    );
  }

  const apiDimensions = [
    { Name: 'ApiId', Value: { Ref: api } },
    { Name: 'Stage', Value: '$default' },
  ];
  const apiMetric = (id, name) => ({
    Id: id,
    ReturnData: false,
    MetricStat: {
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: name, Dimensions: apiDimensions },
      Period: PERIOD,
      Stat: 'Sum',
    },
  });
  alarm(
    'Api5xxRate',
    'api-5xx-rate',
    'Percentage of API requests answered 5xx (by the functions or by API Gateway itself) in 5 minutes',
    thresholds.api5xxPercent,
    {
      Metrics: [
        apiMetric('errors', '5xx'),
        apiMetric('requests', 'Count'),
        { Id: 'rate', Label: '5xx %', Expression: 'IF(requests > 0, 100 * errors / requests, 0)', ReturnData: true },
      ],
    },
  );
  alarm(
    'ApiLatencyP99',
    'api-latency-p99',
    'p99 of API Gateway latency (request received to response sent), in ms, over 5 minutes',
    thresholds.apiLatencyP99Ms,
    {
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      Dimensions: apiDimensions,
      ExtendedStatistic: 'p99',
      Period: PERIOD,
    },
  );

  const tableDimension = { Name: 'TableName', Value: { Ref: table } };
  const tableMetric = (id, name, extra = []) => ({
    Id: id,
    ReturnData: false,
    MetricStat: {
      Metric: { Namespace: 'AWS/DynamoDB', MetricName: name, Dimensions: [tableDimension, ...extra] },
      Period: PERIOD,
      Stat: 'Sum',
    },
  });
  alarm(
    'DynamoThrottles',
    'dynamodb-throttles',
    'Read and write throttle events on the table (on-demand: a partition over its limit, or the account limit) in 5 minutes',
    thresholds.dynamoThrottles,
    {
      Metrics: [
        tableMetric('reads', 'ReadThrottleEvents'),
        tableMetric('writes', 'WriteThrottleEvents'),
        { Id: 'throttles', Label: 'throttle events', Expression: 'reads + writes', ReturnData: true },
      ],
    },
  );
  const operations = DYNAMODB_OPERATIONS.map((operation, i) =>
    tableMetric(`op${i}`, 'SystemErrors', [{ Name: 'Operation', Value: operation }]),
  );
  alarm(
    'DynamoSystemErrors',
    'dynamodb-system-errors',
    'Requests DynamoDB failed with a 500 (its own fault) in 5 minutes',
    thresholds.dynamoSystemErrors,
    {
      Metrics: [
        ...operations,
        {
          Id: 'systemErrors',
          Label: 'system errors',
          Expression: operations.map((m) => m.Id).join(' + '),
          ReturnData: true,
        },
      ],
    },
  );
  alarm(
    'WriteConflicts',
    'write-conflicts',
    'Requests answered 409 WRITE_CONFLICT (read-then-write retries exhausted) in 5 minutes, all routes',
    thresholds.writeConflicts,
    {
      Namespace: namespace,
      MetricName: OURS.writeConflicts,
      Dimensions: [{ Name: 'service', Value: service }],
      Statistic: 'Sum',
      Period: PERIOD,
    },
  );

  Resources.Dashboard = {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: {
      DashboardName: prefix,
      DashboardBody: { 'Fn::Sub': JSON.stringify(dashboardBody({ service, namespace, functions })) },
    },
  };
  return { Resources, Conditions };
}

/** `${name}`: filled in by the Fn::Sub around the dashboard body (a logical id's Ref, or a pseudo parameter). */
const placeholder = (name) => `\${${name}}`;

/** The dashboard: API, per-route metrics of our own, DynamoDB (ours by operation and the table's), Lambda. */
function dashboardBody({ service, namespace, functions }) {
  const api = ['ApiId', placeholder('HttpApi'), 'Stage', '$default'];
  const table = ['TableName', placeholder('ContentTable')];
  const ours = (name, stat = 'Sum') =>
    functions.map((fn) => [
      namespace,
      name,
      'service',
      service,
      'FunctionName',
      fn.lambdaName,
      { stat, label: fn.name },
    ]);
  const search = (name) =>
    `SEARCH('{${namespace},service,FunctionName,Operation} MetricName="${name}"', 'Sum', ${PERIOD})`;
  const lambda = (name, stat = 'Sum') =>
    functions.map((fn) => ['AWS/Lambda', name, 'FunctionName', fn.lambdaName, { stat, label: fn.name }]);
  let y = 0;
  const row = (...widgets) => {
    const width = 24 / widgets.length;
    const placed = widgets.map(([title, metrics, extra = {}], i) => ({
      type: 'metric',
      x: i * width,
      y,
      width,
      height: 6,
      properties: {
        title,
        region: placeholder('AWS::Region'),
        period: PERIOD,
        view: 'timeSeries',
        stacked: false,
        metrics,
        ...extra,
      },
    }));
    y += 6;
    return placed;
  };
  return {
    widgets: [
      ...row(
        [
          'API requests and errors (API Gateway)',
          [
            ['AWS/ApiGateway', 'Count', ...api, { stat: 'Sum' }],
            ['AWS/ApiGateway', '4xx', ...api, { stat: 'Sum' }],
            ['AWS/ApiGateway', '5xx', ...api, { stat: 'Sum' }],
          ],
        ],
        [
          'API latency (ms)',
          [
            ['AWS/ApiGateway', 'Latency', ...api, { stat: 'p50' }],
            ['AWS/ApiGateway', 'Latency', ...api, { stat: 'p99' }],
            ['AWS/ApiGateway', 'IntegrationLatency', ...api, { stat: 'p99' }],
          ],
        ],
      ),
      ...row(
        ['Requests by route', ours(OURS.requests)],
        ['5xx rate by route (0-1)', ours(OURS.errors5xx, 'Average')],
        ['4xx rate by route (0-1)', ours(OURS.errors4xx, 'Average')],
      ),
      ...row(
        ['Latency p99 by route (ms, in the function)', ours(OURS.latency, 'p99')],
        [
          'Write conflicts and idempotent replays',
          [
            [namespace, OURS.writeConflicts, 'service', service, { stat: 'Sum' }],
            [namespace, OURS.idempotentReplays, 'service', service, { stat: 'Sum' }],
          ],
        ],
        [
          'Sweeper: interrupted changes over 100 items settled, segments deleted',
          [
            [namespace, OURS.sweptMarkers, 'service', service, { stat: 'Sum' }],
            [namespace, OURS.sweptAbandoned, 'service', service, { stat: 'Sum' }],
            [namespace, OURS.sweptSegments, 'service', service, { stat: 'Sum' }],
          ],
        ],
      ),
      ...row(
        ['Write capacity units by route and operation', [[{ expression: search(OURS.writeCapacity), id: 'w' }]]],
        ['Read capacity units by route and operation', [[{ expression: search(OURS.readCapacity), id: 'r' }]]],
      ),
      ...row(
        ['DynamoDB requests by route and operation', [[{ expression: search(OURS.dynamoRequests), id: 'q' }]]],
        [
          'SDK retries and condition failures',
          [
            [{ expression: search(OURS.dynamoRetries), id: 'retries' }],
            [{ expression: search(OURS.dynamoConditionFailures), id: 'conditions' }],
          ],
        ],
      ),
      ...row(
        [
          'Table: capacity consumed',
          [
            ['AWS/DynamoDB', 'ConsumedWriteCapacityUnits', ...table, { stat: 'Sum' }],
            ['AWS/DynamoDB', 'ConsumedReadCapacityUnits', ...table, { stat: 'Sum' }],
          ],
        ],
        [
          'Table: throttles and system errors',
          [
            ['AWS/DynamoDB', 'WriteThrottleEvents', ...table, { stat: 'Sum' }],
            ['AWS/DynamoDB', 'ReadThrottleEvents', ...table, { stat: 'Sum' }],
            ...DYNAMODB_OPERATIONS.map((operation) => [
              'AWS/DynamoDB',
              'SystemErrors',
              ...table,
              'Operation',
              operation,
              { stat: 'Sum' },
            ]),
          ],
        ],
      ),
      ...row(
        ['Lambda errors', lambda('Errors')],
        ['Lambda throttles', lambda('Throttles')],
        ['Lambda duration p99 (ms)', lambda('Duration', 'p99')],
      ),
    ],
  };
}
