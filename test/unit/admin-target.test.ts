// The admin CLI's choice of target: the local engine by default, a deployed stage with --stage, and what it sets in
// the environment for each (never dummy credentials or a local endpoint for a stage).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type StageTarget,
  TargetError,
  explainStageFailure,
  resolveTarget,
  stageTableName,
  targetEnvironment,
} from '../../lib/local/admin-target';

const serverlessYml = readFileSync(join(__dirname, '../../serverless.yml'), 'utf8');
const yml = () => serverlessYml;

describe('admin target', () => {
  it('is the local engine without --stage, whatever the AWS environment says', () => {
    expect(resolveTarget({}, { AWS_PROFILE: 'prod', AWS_REGION: 'eu-west-1' }, yml)).toEqual({ kind: 'local' });
  });

  it.each([
    [{ region: 'eu-west-1' }, /--region apply to a deployed stage: add --stage/],
    [{ table: 't' }, /--table apply to a deployed stage/],
    [{ profile: 'p', region: 'eu-west-1' }, /--region and --profile apply/],
  ])('refuses %j without --stage (it would be ignored)', (flags, message) => {
    expect(() => resolveTarget(flags, {}, yml)).toThrow(TargetError);
    expect(() => resolveTarget(flags, {}, yml)).toThrow(message);
  });

  it('a stage: the table serverless.yml gives it, the region from --region, AWS_REGION, AWS_DEFAULT_REGION, or us-east-1', () => {
    const prod = { kind: 'stage', stage: 'prod', tableName: 'content-api-prod', derived: true };
    expect(resolveTarget({ stage: 'prod' }, {}, yml)).toEqual({ ...prod, region: 'us-east-1' });
    expect(resolveTarget({ stage: 'prod' }, { AWS_DEFAULT_REGION: 'ap-south-1' }, yml)).toEqual({
      ...prod,
      region: 'ap-south-1',
    });
    expect(resolveTarget({ stage: 'prod' }, { AWS_REGION: 'eu-central-1', AWS_DEFAULT_REGION: 'x' }, yml)).toEqual({
      ...prod,
      region: 'eu-central-1',
    });
    expect(resolveTarget({ stage: 'prod', region: 'eu-west-1' }, { AWS_REGION: 'eu-central-1' }, yml)).toEqual({
      ...prod,
      region: 'eu-west-1',
    });
    expect(resolveTarget({ stage: 'dev', table: 'my-table', profile: 'ops' }, {}, yml)).toEqual({
      kind: 'stage',
      stage: 'dev',
      region: 'us-east-1',
      tableName: 'my-table',
      derived: false,
      profile: 'ops',
    });
  });

  it('derives the table from the service name in serverless.yml, the way its TableName does', () => {
    expect(serverlessYml).toMatch(/TableName: \$\{self:service\}-\$\{sls:stage\}/);
    expect(stageTableName('qa', 'service: other-api\nprovider: {}\n')).toBe('other-api-qa');
    expect(() => stageTableName('qa', 'provider: {}\n')).toThrow(/no service/);
  });

  it.each([
    [{ stage: 'prod/../x' }, /--stage takes letters, digits and hyphens/],
    [{ stage: '' }, /--stage takes/],
    [{ stage: 'prod', region: 'Europe' }, /--region takes an AWS region/],
    [{ stage: 'prod', table: 'a b' }, /--table takes a DynamoDB table name/],
    [{ stage: 'prod', profile: 'a b' }, /--profile takes a profile name/],
  ])('refuses %j', (flags, message) => {
    expect(() => resolveTarget(flags, {}, yml)).toThrow(message);
  });

  it('sets only the endpoint for the local engine (when none is set); for a stage, the region, table and profile', () => {
    expect(targetEnvironment({ kind: 'local' }, {}, 8000)).toEqual({
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
    });
    expect(targetEnvironment({ kind: 'local' }, { AWS_ENDPOINT_URL_DYNAMODB: 'http://h:1' }, 8000)).toEqual({});
    const stage = resolveTarget({ stage: 'prod', region: 'eu-west-1', profile: 'ops' }, {}, yml);
    const set = targetEnvironment(stage, {}, 8000);
    expect(set).toEqual({ AWS_REGION: 'eu-west-1', TABLE_NAME: 'content-api-prod', AWS_PROFILE: 'ops' });
    // Nothing that would shadow the credential chain or send the writes to a local engine.
    expect(Object.keys(set)).not.toEqual(expect.arrayContaining(['AWS_ACCESS_KEY_ID']));
    expect(set).not.toHaveProperty('AWS_ENDPOINT_URL_DYNAMODB');
  });

  it('explains the failures an operator meets on a stage', () => {
    const stage = resolveTarget({ stage: 'prod', region: 'eu-west-1' }, {}, yml) as StageTarget;
    expect(explainStageFailure(stage, { name: 'ResourceNotFoundException', message: 'x' })).toBe(
      'no table content-api-prod in eu-west-1: is stage prod deployed in eu-west-1? (--region, or --table for another name)',
    );
    expect(explainStageFailure({ ...stage, derived: false }, { name: 'ResourceNotFoundException' })).toBe(
      'no table content-api-prod in eu-west-1',
    );
    expect(
      explainStageFailure(stage, {
        name: 'CredentialsProviderError',
        message: 'Could not load credentials from any providers',
      }),
    ).toMatch(/^no AWS credentials: set AWS_PROFILE/);
    expect(
      explainStageFailure(stage, {
        name: 'CredentialsProviderError',
        message: 'The SSO session associated with this profile has expired or is otherwise invalid.',
      }),
    ).toMatch(/session has expired: run `aws sso login`/);
    expect(explainStageFailure(stage, { name: 'AccessDeniedException', message: 'not authorized' })).toMatch(
      /^AWS refused the request on table content-api-prod in eu-west-1: not authorized/,
    );
    expect(explainStageFailure(stage, { name: 'ValidationException', message: 'v' })).toBeUndefined();
  });
});
