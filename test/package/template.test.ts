// The deployable package: runs `npm run package` once (no AWS credentials, no deploy) and checks what it wrote to
// .serverless/: routes, functions, per-function IAM, the table, the HTTP API, and every function's zip and bundle.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import table from '../../infra/table.json';
import { loadRoutes, readServerlessConfig } from '../../lib/local/server';
import { type Metafile, bundledInputs, dynamodbActionsOf } from './dynamodb-actions';
import { listZip } from './zip';

const ROOT = process.cwd();
const OUT = join(ROOT, '.serverless');
/** Measured at 138-156 KB per function (17 functions; the bundled AWS SDK is ~3/4 of the code); ~25 % headroom. */
const ZIP_BUDGET_BYTES = 200 * 1024;
const CORS_ORIGINS = ['https://app.example.com', 'https://admin.example.com'];

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string | string[]; DeletionPolicy?: string; UpdateReplacePolicy?: string };
let resources: Record<string, Resource>;
let metafile: Metafile;
const config = readServerlessConfig() as ReturnType<typeof readServerlessConfig> & {
  provider: { memorySize: number };
  params: { default: Record<string, number> };
};
const functionNames = Object.keys(config.functions);
const permissions = parse(readFileSync(join(ROOT, 'infra', 'iam.yml'), 'utf8')) as Record<string, string[]>;

/** `set` -> `Set`, `projectCreate` -> `ProjectCreate`: osls's logical id prefix for a function. */
const logical = (name: string) => {
  const normalized = name.replace(/-/g, 'Dash').replace(/_/g, 'Underscore');
  return normalized.charAt(0).toUpperCase() + normalized.slice(1);
};
const moduleOf = (name: string) => (config.functions[name] as { handler: string }).handler.replace(/\.[^.]+$/, '');
const entryPointOf = (name: string) => {
  const source = ['.ts', '.mts', '.js', '.mjs'].map((ext) => `${moduleOf(name)}${ext}`).find((file) => existsSync(join(ROOT, file)));
  if (!source) throw new Error(`no source for ${name}`);
  return source;
};
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const getAtt = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });

beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  // No credentials anywhere: no AWS_* variables, no profile files.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  Object.assign(env, {
    AWS_CONFIG_FILE: join(OUT, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(OUT, 'no-credentials'),
    CORS_ORIGINS: CORS_ORIGINS.join(', '),
  });
  const started = Date.now();
  execFileSync('npm', ['run', '-s', 'package'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  console.info(`npm run package: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  resources = JSON.parse(readFileSync(join(OUT, 'cloudformation-template-update-stack.json'), 'utf8')).Resources;
  metafile = JSON.parse(readFileSync(join(OUT, 'build', 'meta.json'), 'utf8')) as Metafile;
}, 180_000);

describe('routes', () => {
  it('serves every route of the local server as an HTTP API route to the same function, and no other', () => {
    const deployed = ofType('AWS::ApiGatewayV2::Route').map(([, route]) => {
      const integrationId = route.Properties.Target['Fn::Join'][1][1].Ref as string;
      const integration = resources[integrationId] as Resource;
      return { key: route.Properties.RouteKey, fn: integration.Properties.IntegrationUri['Fn::GetAtt'][0], payload: integration.Properties.PayloadFormatVersion };
    });
    const local = loadRoutes().map((r) => ({ key: `${r.method} ${r.path}`, fn: `${logical(r.functionName)}LambdaFunction`, payload: '2.0' }));
    expect(local.length).toBeGreaterThan(0);
    const byKey = (a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key);
    expect(deployed.sort(byKey)).toEqual(local.sort(byKey));
  });
});

describe('functions', () => {
  it.each(functionNames)('%s: nodejs22.x on arm64, its handler, sized as configured, the table name from the table', (name) => {
    const fn = resources[`${logical(name)}LambdaFunction`] as Resource;
    expect(fn.Properties).toMatchObject({
      Handler: (config.functions[name] as { handler: string }).handler,
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: config.provider.memorySize,
      Timeout: config.provider.timeout,
      Environment: { Variables: { TABLE_NAME: { Ref: 'ContentTable' }, NODE_OPTIONS: '--enable-source-maps' } },
      Role: getAtt(`${logical(name)}IamRoleLambdaExecution`),
    });
  });

  it.each(functionNames)('%s: its log group keeps logs for the configured days', (name) => {
    expect(resources[`${logical(name)}LogGroup`]?.Properties.RetentionInDays).toBe(config.params.default.logRetentionInDays);
  });
});

describe('IAM', () => {
  it('has one role per function and no shared role', () => {
    expect(ofType('AWS::IAM::Role').map(([id]) => id).sort()).toEqual(functionNames.map((n) => `${logical(n)}IamRoleLambdaExecution`).sort());
    expect(ofType('AWS::IAM::Policy')).toEqual([]);
    expect(ofType('AWS::IAM::ManagedPolicy')).toEqual([]);
  });

  it.each(functionNames)('%s: only its infra/iam.yml DynamoDB actions, only on the table, plus its own log group', (name) => {
    const role = resources[`${logical(name)}IamRoleLambdaExecution`] as Resource;
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Principal: { Service: ['lambda.amazonaws.com'] }, Action: ['sts:AssumeRole'] },
    ]);
    const statements = role.Properties.Policies.flatMap((p: { PolicyDocument: { Statement: unknown[] } }) => p.PolicyDocument.Statement);
    expect(statements).toEqual([
      { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: [getAtt(`${logical(name)}LogGroup`)] },
      { Effect: 'Allow', Action: permissions[name], Resource: [getAtt('ContentTable')] },
    ]);
    for (const action of statements.flatMap((s: { Action: string[] }) => s.Action)) expect(action).not.toContain('*');
  });

  // The independent check: what the bundled code can send, read from the bundle, not from infra/iam.yml.
  it.each(functionNames)('%s: the actions are exactly the DynamoDB commands its bundle can send', (name) => {
    const needed = dynamodbActionsOf(metafile, entryPointOf(name), ROOT);
    expect(needed.length).toBeGreaterThan(0);
    expect([...(permissions[name] ?? [])].sort()).toEqual(needed);
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
    });
    expect(table.TimeToLiveAttribute).toBe('ttl');
  });
});

describe('HTTP API', () => {
  it('allows the CORS_ORIGINS given at packaging time, with the headers and methods the API uses', () => {
    const [[, api]] = ofType('AWS::ApiGatewayV2::Api') as [[string, Resource]];
    expect(api.Properties.CorsConfiguration).toEqual({
      AllowOrigins: CORS_ORIGINS,
      AllowHeaders: ['Authorization', 'Content-Type', 'If-Match', 'Idempotency-Key'],
      AllowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      ExposeHeaders: ['ETag'],
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
});

describe('bundles', () => {
  it.each(functionNames)(`%s: a zip under ${ZIP_BUDGET_BYTES / 1024} KB holding only its bundle and source map`, (name) => {
    const zip = join(OUT, `${name}.zip`);
    const entries = listZip(zip);
    expect(entries.map((e) => e.name).sort()).toEqual([`${moduleOf(name)}.mjs`, `${moduleOf(name)}.mjs.map`]);
    expect(readFileSync(zip).length).toBeLessThanOrEqual(ZIP_BUDGET_BYTES);
  });

  it.each(functionNames)('%s: only what the function imports; nothing from lib/local or from other handlers', (name) => {
    const inputs = bundledInputs(metafile, entryPointOf(name));
    expect(inputs).toContain(entryPointOf(name));
    expect(inputs.filter((file) => file.startsWith('lib/local/'))).toEqual([]);
    expect(inputs.filter((file) => file.startsWith('functions/') && file !== entryPointOf(name))).toEqual([]);
    expect(inputs.filter((file) => /node_modules\/(dynalite|yaml|esbuild|osls|tsx|swagger-ui-dist)\//.test(file))).toEqual([]);
  });

  it.each(functionNames)('%s: its source map covers our code only, and maps the handler back to its .ts file', (name) => {
    const bundle = join(OUT, 'build', `${moduleOf(name)}.mjs`);
    const map = JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[] };
    expect(map.sources.filter((source) => source.includes('node_modules'))).toEqual([]);
    // `export{x as handler}`: where x is defined must map to the function's own source.
    const code = readFileSync(bundle, 'utf8');
    const local = /export\{(?:[\w$]+ as [\w$]+,)*([\w$]+) as handler[,}]/.exec(code)?.[1] as string;
    const at = new RegExp(`[;,\\s{}](?:var |let |const )?${local.replace(/\$/g, '\\$')}=(?!=)`).exec(code);
    expect(at).not.toBeNull();
    const offset = (at?.index ?? 0) + 1;
    const lines = code.slice(0, offset).split('\n');
    const entry = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8'))).findEntry(lines.length - 1, (lines.at(-1) as string).length);
    // Sources are relative to the bundle's folder in the zip, as the .ts files sit relative to the .mjs one.
    const source = 'originalSource' in entry ? resolve(ROOT, dirname(moduleOf(name)), entry.originalSource) : undefined;
    expect(source).toBe(join(ROOT, entryPointOf(name)));
  });

  it('every bundle loads in a fresh Node process and answers a request without credentials', () => {
    // Catches what only shows at run time in Lambda: a CommonJS require the ESM bundle cannot serve, a failing import.
    const script = `
      const results = {};
      for (const [name, file] of Object.entries(JSON.parse(process.argv[1]))) {
        const { handler } = await import(file);
        const event = { version: '2.0', rawPath: '/', headers: {}, isBase64Encoded: false,
          requestContext: { http: { method: 'GET', path: '/' }, requestId: 'package-test' },
          pathParameters: { username: '@someone', projectSlug: 'site', id: 'x', member: '@other' } };
        results[name] = (await handler(event, { awsRequestId: 'package-test', getRemainingTimeInMillis: () => 10000 })).statusCode;
      }
      console.log(JSON.stringify(results));`;
    const bundles = Object.fromEntries(functionNames.map((name) => [name, join(OUT, 'build', `${moduleOf(name)}.mjs`)]));
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(bundles)], {
      cwd: OUT,
      env: { PATH: process.env.PATH, TABLE_NAME: 'package-test', AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      encoding: 'utf8',
    });
    const statuses = JSON.parse(output.trim().split('\n').pop() as string) as Record<string, number>;
    expect(Object.keys(statuses).sort()).toEqual([...functionNames].sort());
    // 401 for every route today; anything under 500 shows the bundle ran its middy chain to a deliberate answer.
    for (const status of Object.values(statuses)) expect(status).toBeLessThan(500);
  });
});
