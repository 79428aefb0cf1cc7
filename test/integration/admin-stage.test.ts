// The admin CLI against a "deployed stage" with no AWS here: --stage with the test engine as the endpoint
// (AWS_ENDPOINT_URL_DYNAMODB, which the SDK honours like any AWS setting). Asserts that a stage uses the credential
// chain as found (no dummy keys injected), checks the table before writing, and explains what goes wrong.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unique } from '../support/api';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

// No AWS settings from the machine: no profile files, no instance metadata (it would wait for a timeout).
const empty = mkdtempSync(join(tmpdir(), 'admin-stage-'));
const isolated = {
  PATH: process.env.PATH,
  HOME: empty,
  AWS_CONFIG_FILE: join(empty, 'config'),
  AWS_SHARED_CREDENTIALS_FILE: join(empty, 'credentials'),
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  AWS_ENDPOINT_URL_DYNAMODB: process.env.AWS_ENDPOINT_URL_DYNAMODB,
};
// Letters and digits only: DynamoDB Local refuses other access key ids.
const credentials = { AWS_ACCESS_KEY_ID: 'StageOperator1', AWS_SECRET_ACCESS_KEY: 'StageSecret1' };

function admin(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'lib/local/admin.ts', ...args],
      { env, encoding: 'utf8', timeout: 20_000 },
      (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe('admin CLI on a deployed stage (--stage)', () => {
  const table = process.env.TABLE_NAME as string;

  it('creates the first user, project and key with the credentials of the environment, and the key works', async () => {
    const alice = `@${unique('first')}`;
    const stage = ['--stage', 'prod', '--region', 'eu-west-1', '--table', table];
    const env = { ...isolated, ...credentials };
    const runs = [
      await admin([...stage, 'user', 'create', alice], env),
      await admin([...stage, 'project', 'create', `${alice}/site`], env),
      await admin([...stage, 'key', 'create', `${alice}/site`, '--permissions', 'content:read,content:write'], env),
    ];
    expect(runs.map((r) => [r.status, r.stderr])).toEqual([
      [0, ''],
      [0, ''],
      [0, ''],
    ]);
    const { key } = JSON.parse(runs[2]!.stdout) as { key: string };
    const set = await fetch(`${process.env.TEST_API_URL}/api/${alice}/site/content/set`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ path: 'hello', value: 'prod' }),
    });
    expect(set.status).toBe(200);
  });

  it('without credentials anywhere, says so (no dummy keys are made up for a stage), exit 1, nothing written', async () => {
    const run = await admin(['--stage', 'prod', '--table', table, 'user', 'create', `@${unique('nocred')}`], isolated);
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr: expect.stringMatching(/^error: no AWS credentials: set AWS_PROFILE \(or --profile\)/),
    });
  });

  it('names the table it looked for when the stage has none (the conventional name, in the region)', async () => {
    const run = await admin(['--stage', 'nowhere', '--region', 'eu-west-1', 'user', 'create', '@x'], {
      ...isolated,
      ...credentials,
    });
    expect(run).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'error: no table content-api-nowhere in eu-west-1: is stage nowhere deployed in eu-west-1? ' +
        '(--region, or --table for another name)\n',
    });
  });

  it('a stage flag without --stage is a usage error before anything is contacted (exit 2)', async () => {
    const run = await admin(['--region', 'eu-west-1', 'user', 'create', '@x'], { ...isolated, ...credentials });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^--region apply to a deployed stage: add --stage <stage>/);
  });
});
