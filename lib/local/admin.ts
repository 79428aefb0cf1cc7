// Admin CLI: `npm run -s admin -- <command>` prints one JSON object; the operator's way to make users, keys, sessions.
import { applyLocalDefaults, local } from './env';

const USAGE = `usage: npm run -s admin -- <command>
  user create @alice
  project create @alice/site
  session create @alice [--expires-in SECONDS]
  key create @alice/site --permissions content:read,content:write [--expires-in SECONDS] [--name NAME]
  key revoke @alice/site <id>
  member add @alice/site @bob --role viewer|editor`;

class UsageError extends Error {}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
  args.splice(i, 2);
  return value;
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError('--expires-in must be a positive whole number of seconds');
  return n;
}

async function run(argv: string[]): Promise<unknown> {
  applyLocalDefaults();
  process.env.AWS_ENDPOINT_URL_DYNAMODB ??= `http://127.0.0.1:${local.enginePort()}`;
  const { USERNAME, SLUG } = await import('../schema/items');
  const accounts = await import('../store/accounts');
  const { documents } = await import('../dynamo/client');
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');

  const args = [...argv];
  const expiresIn = seconds(option(args, '--expires-in'));
  const permissions = option(args, '--permissions');
  const role = option(args, '--role');
  const name = option(args, '--name');
  const [noun, verb, ...rest] = args;

  const user = (value: string | undefined) => {
    if (!value || !USERNAME.test(value)) throw new UsageError(`expected a username like @alice, got ${value ?? 'nothing'}`);
    return value;
  };
  const project = (value: string | undefined) => {
    const [username, slug, extra] = (value ?? '').split('/');
    if (!username || !USERNAME.test(username) || !slug || !SLUG.test(slug) || extra !== undefined) {
      throw new UsageError(`expected a project like @alice/site, got ${value ?? 'nothing'}`);
    }
    return { username, slug };
  };
  const requireUser = async (username: string) => {
    const { Item } = await documents.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key: { pk: `U#${username}` } }));
    if (!Item) throw new Error(`user ${username} does not exist`);
  };

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
      });
      return { id: created.id, key: created.key };
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
      throw new UsageError(`unknown command: ${args.join(' ') || '(none)'}`);
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${/ECONNREFUSED/.test(message) ? `no DynamoDB at ${process.env.AWS_ENDPOINT_URL_DYNAMODB} (is npm start running?)` : message}\n`);
    process.exit(1);
  },
);
