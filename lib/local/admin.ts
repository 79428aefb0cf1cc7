// Admin CLI: `npm run -s admin -- <command>` prints one JSON object; the operator's way to make users, keys, sessions,
// on the local engine of `npm start` or, with --stage, on a deployed stage's table (docs/deploy-bootstrap.md).
import { parseArgs } from 'node:util';
import {
  type AdminTarget,
  TargetError,
  explainStageFailure,
  readServerlessYml,
  resolveTarget,
  targetEnvironment,
} from './admin-target';
import { ROOT, applyLocalDefaults, local } from './env';
import { MAX_EXPIRES_IN_SECONDS } from '../config/limits';
import { formatPath, parsePath } from '../paths';

const USAGE = `usage: npm run -s admin -- <command>   (--help, -h: this text)
       npm run -s admin -- --stage STAGE [--region REGION] [--profile PROFILE] [--table TABLE] <command>
  user create @alice
  project create @alice/site
  session create @alice [--expires-in SECONDS]
  key create @alice/site --permissions content:read,content:write [--expires-in SECONDS] [--name NAME]
             [--paths builds,public.status]   (a scoped key: only at and below these dot paths)
  key revoke @alice/site <id>
  member add @alice/site @bob --role viewer|editor
  jwt @alice [--claims '{"role":"editor"}'] [--expires-in SECONDS]   (a token npm start's local provider signed)
  sweep   (once: what interrupted changes over 100 items left, markers older than SWEEP_AFTER_MS, default 5 min)
--expires-in: 1 to ${MAX_EXPIRES_IN_SECONDS} seconds (10 years); a session's default is 7 days, a key's never.
Without --stage: the local engine of npm start. With --stage: that deployed stage's table (content-api-STAGE, or
--table) in --region (default AWS_REGION, else us-east-1 as osls deploy), with the usual AWS credentials (AWS_PROFILE
or --profile, SSO, environment, role).`;

class UsageError extends Error {}
class HelpRequested extends Error {}

const OPTIONS = {
  'expires-in': { type: 'string' },
  permissions: { type: 'string' },
  paths: { type: 'string' },
  role: { type: 'string' },
  claims: { type: 'string' },
  name: { type: 'string' },
  stage: { type: 'string' },
  region: { type: 'string' },
  profile: { type: 'string' },
  table: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The command words and options; an unknown flag, or one without its value, is a usage error naming it. */
function parseCommand(argv: string[]) {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    if (values.help) throw new HelpRequested();
    return { values, positionals };
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const flag = /'(-[^' ]+)/.exec(message)?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option ${flag ?? message}`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const dash = /ambiguous/.test(message) ? ` (one starting with a dash: ${flag}=<value>)` : '';
      throw new UsageError(`${flag ?? 'an option'} needs a value${dash}`);
    }
    throw error;
  }
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  // The same bound as the API's expiresInSeconds: every expiry stays a date the key list can show.
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > MAX_EXPIRES_IN_SECONDS) {
    throw new UsageError(
      `--expires-in must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN_SECONDS} (10 years)`,
    );
  }
  return n;
}

/** Points the process at the target before any SDK client exists (lib/dynamo/client builds them on import). */
function useTarget(target: AdminTarget): void {
  // Dummy credentials only for the local engine: on a stage they would shadow a profile, SSO or role.
  if (target.kind === 'local') applyLocalDefaults();
  Object.assign(process.env, targetEnvironment(target, process.env, local.enginePort()));
}

let target: AdminTarget = { kind: 'local' };

/** --paths: comma-separated dot paths (a path with a comma cannot be named here; the API takes any). */
function scopedPaths(value: string): string[] {
  const list = value.split(',').filter(Boolean);
  if (list.length === 0 || list.length > 20) throw new UsageError('--paths takes 1 to 20 dot paths, comma-separated');
  try {
    return [...new Set(list.map((path) => formatPath(parsePath(path))))];
  } catch (error) {
    throw new UsageError(`--paths: ${(error as Error).message}`);
  }
}

async function run(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseCommand(argv);
  try {
    target = resolveTarget(values, process.env, () => readServerlessYml(ROOT));
  } catch (error) {
    throw error instanceof TargetError ? new UsageError(error.message) : error;
  }
  useTarget(target);
  const { USERNAME, SLUG, canonicalName, itemKey, userPk } = await import('../schema/items');
  const accounts = await import('../store/accounts');
  const { documents } = await import('../dynamo/client');
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');

  const expiresIn = seconds(values['expires-in']);
  const { permissions, role, name, paths } = values;
  const [noun, verb, ...rest] = positionals;
  if (target.kind === 'stage') {
    // One cheap read first: a wrong stage, region or credentials fails here, with its explanation, before any write.
    const { DescribeTableCommand } = await import('@aws-sdk/client-dynamodb');
    const { dynamo } = await import('../dynamo/client');
    await dynamo.send(new DescribeTableCommand({ TableName: target.tableName }));
  }

  const user = (value: string | undefined) => {
    if (!value || !USERNAME.test(value))
      throw new UsageError(`expected a username like @alice, got ${value ?? 'nothing'}`);
    return canonicalName(value);
  };
  const project = (value: string | undefined) => {
    const [username, slug, extra] = (value ?? '').split('/');
    if (!username || !USERNAME.test(username) || !slug || !SLUG.test(slug) || extra !== undefined) {
      throw new UsageError(`expected a project like @alice/site, got ${value ?? 'nothing'}`);
    }
    return { username: canonicalName(username), slug: canonicalName(slug) };
  };
  const requireUser = async (username: string) => {
    const { Item } = await documents.send(
      new GetCommand({ TableName: process.env.TABLE_NAME, Key: itemKey(userPk(username)) }),
    );
    if (!Item) throw new Error(`user ${username} does not exist`);
  };

  if (noun === 'jwt') {
    // Signed with the key npm start keeps in the data folder; no table needed.
    const username = user(verb);
    if (rest.length > 0) throw new UsageError(`jwt takes one username, got ${positionals.slice(1).join(' ')}`);
    let claims: Record<string, unknown> | undefined;
    if (values.claims !== undefined) {
      try {
        claims = JSON.parse(values.claims) as Record<string, unknown>;
      } catch {
        throw new UsageError('--claims must be a JSON object');
      }
      if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
        throw new UsageError('--claims must be a JSON object');
    }
    const { signLocalJwt } = await import('./identity');
    return { token: await signLocalJwt(username, { claims, expiresIn }) };
  }
  if (noun === 'sweep') {
    if (verb !== undefined) throw new UsageError(`sweep takes no arguments, got ${positionals.slice(1).join(' ')}`);
    // What the scheduled Lambda (functions/sweep.ts) runs, once; its answer is the one line printed.
    const { sweep, finishPendingStampings } = await import('../storage');
    const { sweepAfterMs } = await import('../config/env');
    return { ...(await sweep(sweepAfterMs())), ...(await finishPendingStampings(Number.POSITIVE_INFINITY)) };
  }
  switch (`${noun} ${verb}`) {
    case 'user create': {
      const username = user(rest[0]);
      await accounts.createUser(username);
      return { username };
    }
    case 'project create': {
      const ref = project(rest[0]);
      await requireUser(ref.username);
      await accounts.createProject(ref);
      return { username: ref.username, projectSlug: ref.slug };
    }
    case 'session create': {
      const username = user(rest[0]);
      await requireUser(username);
      const { token } = await accounts.createSession(username, expiresIn ?? 7 * 24 * 3600);
      return { token };
    }
    case 'key create': {
      const ref = project(rest[0]);
      const list = (permissions ?? '').split(',').filter(Boolean);
      if (list.length === 0 || list.some((p) => p !== 'content:read' && p !== 'content:write')) {
        throw new UsageError('--permissions takes content:read and/or content:write, comma-separated');
      }
      const created = await accounts.createApiKey(ref, {
        name: name ?? 'cli',
        permissions: [...new Set(list)] as Array<'content:read' | 'content:write'>,
        expiresInSeconds: expiresIn,
        paths: paths === undefined ? undefined : scopedPaths(paths),
      });
      return { id: created.id, key: created.key, ...(created.paths ? { paths: created.paths } : {}) };
    }
    case 'key revoke': {
      const ref = project(rest[0]);
      if (!rest[1]) throw new UsageError('key revoke needs the key id');
      await accounts.revokeApiKey(ref, rest[1]);
      return { revoked: true };
    }
    case 'member add': {
      const ref = project(rest[0]);
      const member = user(rest[1]);
      if (role !== 'viewer' && role !== 'editor') throw new UsageError('--role must be viewer or editor');
      await requireUser(member);
      await accounts.setMember(ref, member, role);
      return { member, role };
    }
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`);
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`);
      return;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    const message = error instanceof Error ? error.message : String(error);
    const explained =
      target.kind === 'stage'
        ? explainStageFailure(target, error as Error)
        : /ECONNREFUSED/.test(message)
          ? `no DynamoDB at ${process.env.AWS_ENDPOINT_URL_DYNAMODB} (is npm start running?)`
          : undefined;
    process.stderr.write(`error: ${explained ?? message}\n`);
    process.exit(1);
  },
);
