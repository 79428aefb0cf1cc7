// osls plugin: bundles each function with esbuild (scripts/bundle.mjs), gives each its own least-privilege role
// from infra/iam.yml, and adds the stage's alarms and dashboard (infra/observability.mjs). All run inside
// `osls package` and `osls deploy`, so a deploy never ships a stale bundle.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { bundleFunctions } from '../scripts/bundle.mjs';
import { CONNECTION_ACTIONS, STREAM_ACTIONS } from './iam-actions.mjs';
import { observabilityResources } from './observability.mjs';

/** The table every function's DynamoDB actions are granted on (a resource in serverless.yml). */
const TABLE = 'ContentTable';
/** The queue SQS actions are granted on (the webhook sender's; a resource in serverless.yml). */
const QUEUE = 'WebhookQueue';
// `dynamodb:<Action>@<index>`: the action on that index of the table (its ARN, `<table ARN>/index/<index>`) only.
const ACTION = /^(dynamodb:[A-Z][A-Za-z]+(@[a-z][a-z0-9-]*)?|sqs:[A-Z][A-Za-z]+|execute-api:[A-Z][A-Za-z]+)$/;
/**
 * One function's policy statements beyond its log group: its table actions on the table (an index's on that index),
 * its queue actions on the webhook queue, its stream actions on the stream, its connection actions on the WebSocket
 * API's @connections of this stage.
 */
export function permissionStatements(actions, stage) {
  const table = actions.filter((a) => a.startsWith('dynamodb:') && !a.includes('@') && !STREAM_ACTIONS.includes(a));
  const queue = actions.filter((a) => a.startsWith('sqs:'));
  const stream = actions.filter((a) => STREAM_ACTIONS.includes(a));
  const connections = actions.filter((a) => CONNECTION_ACTIONS.includes(a));
  return [
    ...(table.length > 0 ? [{ Effect: 'Allow', Action: table, Resource: [{ 'Fn::GetAtt': [TABLE, 'Arn'] }] }] : []),
    ...(queue.length > 0 ? [{ Effect: 'Allow', Action: queue, Resource: [{ 'Fn::GetAtt': [QUEUE, 'Arn'] }] }] : []),
    ...indexStatements(actions),
    ...(stream.length > 0
      ? [{ Effect: 'Allow', Action: stream, Resource: [{ 'Fn::GetAtt': [TABLE, 'StreamArn'] }] }]
      : []),
    ...(connections.length > 0
      ? [
          {
            Effect: 'Allow',
            Action: connections,
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
                    `/${stage}/POST/@connections/*`,
                  ],
                ],
              },
            ],
          },
        ]
      : []),
  ];
}

/** { function: [actions] } from infra/iam.yml, checked against the functions serverless.yml declares. */
export function readPermissions(serviceDir, functionNames) {
  const permissions = parse(readFileSync(join(serviceDir, 'infra', 'iam.yml'), 'utf8')) ?? {};
  const problems = [];
  for (const name of functionNames) {
    const actions = permissions[name];
    if (!Array.isArray(actions) || actions.length === 0) problems.push(`${name}: no actions listed`);
    else
      for (const action of actions)
        if (!ACTION.test(action))
          problems.push(
            `${name}: "${action}" is not one dynamodb:<Action>[@<index>], sqs:<Action> or execute-api:<Action>`,
          );
  }
  for (const name of Object.keys(permissions))
    if (!functionNames.includes(name)) problems.push(`${name}: not a function in serverless.yml`);
  if (problems.length > 0) throw new Error(`infra/iam.yml:\n  ${problems.join('\n  ')}`);
  return permissions;
}

/** One statement per table index named in a function's `dynamodb:<Action>@<index>` entries: on that index only. */
export function indexStatements(actions) {
  const byIndex = new Map();
  for (const entry of actions.filter((a) => a.includes('@'))) {
    const [action, index] = entry.split('@');
    byIndex.set(index, [...(byIndex.get(index) ?? []), action]);
  }
  return [...byIndex].map(([index, Action]) => ({
    Effect: 'Allow',
    Action,
    Resource: [{ 'Fn::Join': ['', [{ 'Fn::GetAtt': [TABLE, 'Arn'] }, `/index/${index}`]] }],
  }));
}

export default class ContentApiPackaging {
  constructor(serverless, options, { log } = {}) {
    this.serverless = serverless;
    this.options = options ?? {};
    this.log = log;
    this.provider = serverless.getProvider('aws');
    this.hooks = {
      // Before osls decides whether to create its shared role: every function has its own.
      'before:package:setupProviderConfiguration': () => this.addFunctionRoles(),
      'before:package:createDeploymentArtifacts': () => this.bundleAll(),
      'before:deploy:function:packageFunction': () => this.bundleOne(this.options.function),
      // After osls compiled the functions, the HTTP API and the resources the alarms and dashboard point at.
      'before:package:finalize': () => this.addObservability(),
    };
  }

  get service() {
    return this.serverless.service;
  }

  bundleAll() {
    return this.bundle(this.service.getAllFunctions());
  }

  bundleOne(name) {
    return this.bundle([name]);
  }

  /** Bundles the functions and points each one's artifact at its zip, so osls zips nothing itself. */
  async bundle(names) {
    const started = Date.now();
    const functions = Object.fromEntries(names.map((name) => [name, this.service.getFunction(name).handler]));
    for (const { name, zip } of await bundleFunctions({ root: this.serverless.serviceDir, functions })) {
      const fn = this.service.getFunction(name);
      fn.package = { ...fn.package, artifact: zip };
    }
    this.log?.info?.(`esbuild: ${names.length} functions bundled in ${Date.now() - started} ms`);
  }

  /** One role per function: write to its own log group, and only its infra/iam.yml actions on the table's ARN. */
  addFunctionRoles() {
    const names = this.service.getAllFunctions();
    const permissions = readPermissions(this.serverless.serviceDir, names);
    if (!this.service.resources?.Resources?.[TABLE])
      throw new Error(`serverless.yml has no ${TABLE} resource to grant access to`);
    const { naming } = this.provider;
    const resources = this.service.provider.compiledCloudFormationTemplate.Resources;
    const tracing = Boolean(this.service.provider.tracing?.lambda);
    for (const name of names) {
      const fn = this.service.getFunction(name);
      const roleId = `${naming.getNormalizedFunctionName(name)}IamRoleLambdaExecution`;
      resources[roleId] = {
        Type: 'AWS::IAM::Role',
        Properties: {
          AssumeRolePolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] },
            ],
          },
          Policies: [
            {
              PolicyName: `${fn.name}`,
              PolicyDocument: {
                Version: '2012-10-17',
                Statement: [
                  // The log group osls creates for this function (its Arn attribute covers the group's streams).
                  {
                    Effect: 'Allow',
                    Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
                    Resource: [{ 'Fn::GetAtt': [naming.getLogGroupLogicalId(name), 'Arn'] }],
                  },
                  ...permissionStatements(permissions[name], this.provider.getStage()),
                  // Active tracing: the function sends its trace segments (these actions take no resource ARN).
                  ...(tracing
                    ? [
                        {
                          Effect: 'Allow',
                          Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
                          Resource: ['*'],
                        },
                      ]
                    : []),
                ],
              },
            },
          ],
        },
      };
      fn.role = roleId;
    }
  }

  /**
   * The alarm topic and alarms of this stage (where `custom.alarmsEnabled` is true), thresholds from serverless.yml
   * `custom.alarms`, and its dashboard.
   */
  addObservability() {
    const { naming } = this.provider;
    const template = this.service.provider.compiledCloudFormationTemplate;
    const custom = this.service.custom ?? {};
    const { Resources, Conditions } = observabilityResources({
      service: this.service.service,
      stage: this.provider.getStage(),
      functions: this.service.getAllFunctions().map((name) => ({
        name,
        logicalId: naming.getLambdaLogicalId(name),
        lambdaName: this.service.getFunction(name).name,
      })),
      alarms: custom.alarmsEnabled ?? false,
      thresholds: custom.alarms ?? {},
      alarmEmail: custom.alarmEmail ?? '',
      api: naming.getHttpApiLogicalId(),
      table: TABLE,
    });
    for (const id of Object.keys(Resources))
      if (template.Resources[id]) throw new Error(`infra/observability.mjs: ${id} is already in the template`);
    Object.assign(template.Resources, Resources);
    template.Conditions = { ...template.Conditions, ...Conditions };
  }
}
