// Where the admin CLI writes: the local engine of `npm start` (the default), or a deployed stage's table through the
// normal AWS credential chain (environment, AWS_PROFILE, SSO, instance roles). A pure decision; admin.ts applies it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The flags that choose the target, as parsed from the command line. */
export interface TargetFlags {
  stage?: string;
  region?: string;
  table?: string;
  profile?: string;
}

/** The local engine: dummy credentials (it ignores them), its endpoint and the local table. */
export interface LocalTarget {
  kind: 'local';
}

/** A deployed stage: its region and table; credentials are left to the SDK's default chain. */
export interface StageTarget {
  kind: 'stage';
  stage: string;
  region: string;
  tableName: string;
  /** Set when the table name was derived from the naming convention (checked against the account before use). */
  derived: boolean;
  profile?: string;
}

export type AdminTarget = LocalTarget | StageTarget;

/** A flag combination or value the CLI refuses (a usage error, exit 2). */
export class TargetError extends Error {}

// serverless.yml's rules: a stage is letters, digits and hyphens (it names the stack and the table).
const STAGE = /^[A-Za-z0-9-]{1,64}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const TABLE = /^[A-Za-z0-9_.-]{3,255}$/;
const PROFILE = /^[\w.@+-]{1,128}$/;
// What `osls deploy` uses without --region (serverless.yml, provider.region).
const DEPLOY_DEFAULT_REGION = 'us-east-1';

/**
 * The table serverless.yml gives a stage: `TableName: ${self:service}-${sls:stage}`, the service read from the file
 * so a renamed service is followed.
 */
export function stageTableName(stage: string, serverlessYml: string): string {
  const service = /^service:\s*([\w-]+)\s*$/m.exec(serverlessYml)?.[1];
  if (!service) throw new Error('serverless.yml names no service');
  return `${service}-${stage}`;
}

/** Reads serverless.yml from the repository root (npm runs scripts there). */
export function readServerlessYml(root: string): string {
  return readFileSync(join(root, 'serverless.yml'), 'utf8');
}

/**
 * Decides the target from the flags and the environment. Without --stage: local, and --region/--table/--profile are
 * refused (they would be silently ignored). With --stage: the region from --region, else AWS_REGION or
 * AWS_DEFAULT_REGION, else the deploy's default; the table from --table, else the stage's conventional name.
 */
export function resolveTarget(
  flags: TargetFlags,
  env: Record<string, string | undefined>,
  serverlessYml: () => string,
): AdminTarget {
  if (flags.stage === undefined) {
    const stray = (['region', 'table', 'profile'] as const).filter((flag) => flags[flag] !== undefined);
    if (stray.length > 0) {
      throw new TargetError(
        `${stray.map((f) => `--${f}`).join(' and ')} apply to a deployed stage: add --stage <stage> (without it, ` +
          'the admin CLI writes to the local engine of npm start)',
      );
    }
    return { kind: 'local' };
  }
  if (!STAGE.test(flags.stage)) throw new TargetError(`--stage takes letters, digits and hyphens, got ${flags.stage}`);
  const region = flags.region ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? DEPLOY_DEFAULT_REGION;
  if (!REGION.test(region)) throw new TargetError(`--region takes an AWS region like eu-west-1, got ${region}`);
  if (flags.table !== undefined && !TABLE.test(flags.table))
    throw new TargetError(`--table takes a DynamoDB table name, got ${flags.table}`);
  if (flags.profile !== undefined && !PROFILE.test(flags.profile))
    throw new TargetError(`--profile takes a profile name from your AWS config, got ${flags.profile}`);
  return {
    kind: 'stage',
    stage: flags.stage,
    region,
    tableName: flags.table ?? stageTableName(flags.stage, serverlessYml()),
    derived: flags.table === undefined,
    ...(flags.profile === undefined ? {} : { profile: flags.profile }),
  };
}

/**
 * The environment variables to set for the target, before any SDK client is built. For a stage, nothing that
 * would shadow the credential chain: no dummy keys, no local endpoint.
 */
export function targetEnvironment(
  target: AdminTarget,
  env: Record<string, string | undefined>,
  localEnginePort: number,
): Record<string, string> {
  if (target.kind === 'local') {
    return {
      ...(env.AWS_ENDPOINT_URL_DYNAMODB ? {} : { AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${localEnginePort}` }),
    };
  }
  return {
    AWS_REGION: target.region,
    TABLE_NAME: target.tableName,
    ...(target.profile === undefined ? {} : { AWS_PROFILE: target.profile }),
  };
}

/** What a failed request to a stage means to the operator, or undefined when the SDK's own message says it. */
export function explainStageFailure(
  target: StageTarget,
  error: { name?: string; message?: string },
): string | undefined {
  const name = error.name ?? '';
  const where = `table ${target.tableName} in ${target.region}`;
  if (name === 'ResourceNotFoundException') {
    const hint = target.derived
      ? `: is stage ${target.stage} deployed in ${target.region}? (--region, or --table for another name)`
      : '';
    return `no ${where}${hint}`;
  }
  if (/TokenRefreshRequired|ExpiredToken|SSO.*(expired|invalid)/i.test(`${name} ${error.message ?? ''}`))
    return `the AWS session has expired: run \`aws sso login\` (or refresh the credentials) and try again`;
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(error.message ?? ''))
    return 'no AWS credentials: set AWS_PROFILE (or --profile), run `aws sso login`, or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY';
  if (name === 'AccessDeniedException' || name === 'UnrecognizedClientException')
    return `AWS refused the request on ${where}: ${error.message} (the permissions it needs: docs/deploy-bootstrap.md)`;
  return undefined;
}

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
