// Accounts: users, projects, sessions, API keys and members: the records the admin CLI and management routes write.
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_EXPIRES_IN_SECONDS, MAX_KEYS_PER_PROJECT, MAX_MEMBERS_PER_PROJECT } from '../config/limits';
import { randomBytes } from 'node:crypto';
import { tableName } from '../config/env';
import { documents, dynamo } from '../dynamo/client';
import { A, type Permission } from '../schema/attributes';
import { newApiKey, newSessionToken } from '../auth/credentials';
import { NOTHING_TO_STAMP, type Stamping, createRoot, stampContent, stampingRecord } from '../storage';
import { readEpoch, readHeadAndGrant } from '../auth/access';
import { type ProjectRole, roleAllows, roleOf } from '../policy';
import {
  type KeyRecord,
  type ProjectRef,
  type Role,
  epochSeconds,
  incarnationOf,
  itemKey,
  itemKeyAttributes,
  keyGrantSk,
  keyPk,
  memberGrantSk,
  projectName,
  projectPk,
  RECORD_ID,
  sessionPk,
  storedKey,
  USERNAME,
  userPk,
} from '../schema/items';

/** An account record refused (`code`): it already exists, it is not there, or a cap is reached. */
export class AccountError extends Error {
  constructor(
    readonly code: 'EXISTS' | 'NOT_FOUND' | 'LIMIT',
    message: string,
  ) {
    super(message);
  }
}

const isConditionFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

async function putNew(item: Record<string, unknown>, what: string): Promise<void> {
  try {
    await documents.send(
      new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('EXISTS', `${what} already exists`);
    throw error;
  }
}

/** Creates a user's record; EXISTS when there is one. */
export async function createUser(username: string): Promise<void> {
  await putNew({ ...itemKey(userPk(username)), username, createdAt: new Date().toISOString() }, `user ${username}`);
}

/** Whether a user has a record, read consistently. */
export async function userExists(username: string): Promise<boolean> {
  const { Item } = await documents.send(
    new GetCommand({ TableName: tableName(), Key: itemKey(userPk(username)), ConsistentRead: true }),
  );
  return Item !== undefined;
}

/** Users who arrive with an identity provider's token get their record the first time they create a project. */
export async function ensureUser(username: string): Promise<void> {
  try {
    await createUser(username);
  } catch (error) {
    if (!(error instanceof AccountError && error.code === 'EXISTS')) throw error;
  }
}

/** A project's head without its content, and the caller's standing in it. */
export interface ProjectMeta {
  owner?: string;
  createdAt: string;
  inc: string;
  /** The caller's role, when `username` was given: owner, a member's role, or undefined. */
  role?: ProjectRole;
}

/** The project's head and (for `username`) the member grant, with one strongly consistent BatchGetItem. */
export async function readProjectMeta(project: ProjectRef, username?: string): Promise<ProjectMeta | undefined> {
  const { head, grant } = await readHeadAndGrant(project, { kind: 'user', username: username ?? '' });
  if (!head) return undefined;
  const owner = head[A.owner]?.S;
  const role = grant?.[A.role]?.S;
  return {
    owner,
    createdAt: head[A.createdAt]?.S ?? '',
    inc: incarnationOf(head),
    role: username === undefined ? undefined : roleOf({ owner, members: role ? { [username]: role } : {} }, username),
  };
}

/** A new project: empty content, version 1, the owner, grant epoch 0; fails if the project exists. */
export async function createProject(project: ProjectRef): Promise<{ createdAt: string }> {
  const createdAt = new Date().toISOString();
  const incarnation = randomBytes(16).toString('base64url');
  try {
    await dynamo.send(
      new PutItemCommand({
        TableName: tableName(),
        Item: {
          ...itemKeyAttributes(projectPk(project)),
          [A.owner]: { S: project.username },
          [A.grantEpoch]: { N: '0' },
          [A.keyCount]: { N: '0' },
          [A.memberCount]: { N: '0' },
          [A.incarnation]: { S: incarnation },
          [A.createdAt]: { S: createdAt },
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('EXISTS', `project ${projectName(project)} already exists`);
    throw error;
  }
  await createRoot(incarnation, 0, projectName(project));
  return { createdAt };
}

/** The expiry of a lifetime its caller validated (1 s to 10 years); anything else is a bug, not a record to store. */
function expiryAfter(seconds: number): number {
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRES_IN_SECONDS) {
    throw new RangeError(`a lifetime must be 1 to ${MAX_EXPIRES_IN_SECONDS} seconds, got ${seconds}`);
  }
  return epochSeconds() + seconds;
}

/** A new session for a user, lasting `expiresInSeconds`: its token (only its hash is stored) and its expiry. */
export async function createSession(
  username: string,
  expiresInSeconds: number,
): Promise<{ token: string; expiresAt: number }> {
  const { token, hash } = newSessionToken();
  const expiresAt = expiryAfter(expiresInSeconds);
  await putNew({ ...itemKey(sessionPk(hash)), u: username, ttl: expiresAt }, 'session');
  return { token, expiresAt };
}

/** The project's incarnation, read consistently; NOT_FOUND when the project does not exist. */
async function incarnationNow(project: ProjectRef): Promise<string> {
  const head = await readEpoch(project);
  if (!head) throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
  return incarnationOf(head);
}

/** Which items of a transaction DynamoDB refused on their condition (empty for any other failure). */
export function refusedItems(error: unknown): number[] {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return [];
  const reasons = (error as { CancellationReasons?: Array<{ Code?: string }> }).CancellationReasons ?? [];
  return reasons.flatMap((reason, i) => (reason.Code === 'ConditionalCheckFailed' ? [i] : []));
}

/** A transaction's delete of a project's record (a grant, a webhook) that is still of this incarnation. */
export const incarnationDelete = (project: ProjectRef, sk: string, inc: string) => ({
  Delete: {
    TableName: tableName(),
    Key: itemKey(projectPk(project), sk),
    ConditionExpression: '#inc = :inc',
    ExpressionAttributeNames: { '#inc': A.incarnation },
    ExpressionAttributeValues: { ':inc': inc },
  },
});

/** The head's update in a grant's transaction: the project is still this incarnation, and what else is asked. */
export const headUpdate = (
  project: ProjectRef,
  inc: string,
  update: string,
  condition = '',
  values: Record<string, unknown> = {},
) => ({
  Update: {
    TableName: tableName(),
    Key: itemKey(projectPk(project)),
    UpdateExpression: update,
    ConditionExpression: `#inc = :inc${condition}`,
    ExpressionAttributeNames: {
      '#inc': A.incarnation,
      ...Object.fromEntries(
        [A.grantEpoch, A.keyCount, A.memberCount, A.webhookCount]
          .filter((name) => update.includes(`#${name}`) || condition.includes(`#${name}`))
          .map((name) => [`#${name}`, name]),
      ),
    },
    ExpressionAttributeValues: { ':inc': inc, ...values },
  },
});

export interface CreatedKey {
  id: string;
  key: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  expiresAt: number | null;
  /** A scoped key's paths (dot paths), absent for a key of the whole content. */
  paths?: string[];
}

/**
 * One transaction: the key index record, the key grant, and the head's key count under its cap (while the project
 * is the incarnation read). Granting changes no epoch.
 */
export async function createApiKey(
  project: ProjectRef,
  options: { name: string; permissions: Permission[]; expiresInSeconds?: number; paths?: string[] },
): Promise<CreatedKey> {
  const { id, key, hash } = newApiKey();
  const createdAt = new Date().toISOString();
  const expiresAt = options.expiresInSeconds === undefined ? undefined : expiryAfter(options.expiresInSeconds);
  const entry = storedKey({
    hash,
    permissions: options.permissions,
    expiresAt,
    name: options.name,
    createdAt,
    paths: options.paths,
  });
  const inc = await incarnationNow(project);
  const record: KeyRecord = { ...itemKey(keyPk(id)), project: projectName(project), inc, ...entry };
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...record, ...(expiresAt === undefined ? {} : { ttl: expiresAt }) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: { ...itemKey(projectPk(project), keyGrantSk(id)), ...entry, inc },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          headUpdate(project, inc, 'SET #nk = #nk + :one', ' AND #nk < :cap', {
            ':one': 1,
            ':cap': MAX_KEYS_PER_PROJECT,
          }),
        ],
      }),
    );
  } catch (error) {
    const refused = refusedItems(error);
    if (refused.includes(2)) {
      await incarnationNow(project);
      throw new AccountError('LIMIT', `a project may have at most ${MAX_KEYS_PER_PROJECT} keys`);
    }
    if (refused.length > 0) throw new AccountError('EXISTS', 'key already exists');
    throw error;
  }
  const paths = options.paths === undefined ? {} : { paths: options.paths };
  return {
    id,
    key,
    name: options.name,
    permissions: options.permissions,
    createdAt,
    expiresAt: expiresAt ?? null,
    ...paths,
  };
}

/**
 * The head update of a change that takes access away: its own `set` clauses (if any), the grant epoch advanced and
 * the segments' stamping recorded as pending (lib/storage/stamping.ts), all in the change's transaction.
 */
function epochAdvance(project: ProjectRef, inc: string, set?: string) {
  const record = stampingRecord();
  const update = headUpdate(project, inc, `SET ${set ? `${set}, ` : ''}${record.set} ADD #ge :one`, '', {
    ':one': 1,
    ...record.values,
  });
  Object.assign(update.Update.ExpressionAttributeNames, record.names);
  return update;
}

/**
 * One transaction: the grant and the key index record go, the key count goes down and the grant epoch advances,
 * so the key fails its very next request in any warm Lambda. NOT_FOUND when the project holds no such key.
 */
export async function revokeApiKey(project: ProjectRef, id: string): Promise<Stamping> {
  if (!RECORD_ID.test(id)) throw new AccountError('NOT_FOUND', `no key of this form exists in ${projectName(project)}`);
  const inc = await incarnationNow(project);
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          incarnationDelete(project, keyGrantSk(id), inc),
          { Delete: { TableName: tableName(), Key: itemKey(keyPk(id)) } },
          epochAdvance(project, inc, '#nk = #nk - :one'),
        ],
      }),
    );
  } catch (error) {
    if (refusedItems(error).length > 0) {
      throw new AccountError('NOT_FOUND', `key ${id} does not exist in ${projectName(project)}`);
    }
    throw error;
  }
  return stampContent(project);
}

const memberGrant = (project: ProjectRef, member: string) => itemKey(projectPk(project), memberGrantSk(member));

/**
 * Adds a member (the grant and the member count under its cap, one transaction) or changes their role: a promotion
 * is one conditional put, a demotion also advances the grant epoch in the same transaction. Each is conditioned on
 * the grant read, and retried when a concurrent change got there first.
 */
export async function setMember(project: ProjectRef, member: string, role: Role): Promise<Stamping> {
  for (let attempt = 1; ; attempt++) {
    const meta = await readProjectMeta(project, member);
    if (!meta) throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
    const old = meta.role === 'owner' ? undefined : meta.role;
    if (old === role) return NOTHING_TO_STAMP;
    const grant = { ...memberGrant(project, member), [A.role]: role, inc: meta.inc };
    const same = old
      ? {
          ConditionExpression: '#r = :old AND #inc = :inc',
          ExpressionAttributeValues: { ':old': old, ':inc': meta.inc },
        }
      : // A grant left by a deleted incarnation of the project is overwritten.
        {
          ConditionExpression: 'attribute_not_exists(pk) OR #inc <> :inc',
          ExpressionAttributeValues: { ':inc': meta.inc },
        };
    const names: Record<string, string> = old ? { '#r': A.role, '#inc': A.incarnation } : { '#inc': A.incarnation };
    const put = { TableName: tableName(), Item: grant, ...same, ExpressionAttributeNames: names };
    const lowered =
      old !== undefined && (['read', 'write'] as const).some((n) => roleAllows(old, n) && !roleAllows(role, n));
    try {
      if (old && !lowered) {
        await documents.send(new PutCommand(put));
      } else {
        const head = old
          ? epochAdvance(project, meta.inc)
          : headUpdate(project, meta.inc, 'SET #nm = #nm + :one', ' AND #nm < :cap', {
              ':one': 1,
              ':cap': MAX_MEMBERS_PER_PROJECT,
            });
        await documents.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, head] }));
        if (lowered) return stampContent(project);
      }
      return NOTHING_TO_STAMP;
    } catch (error) {
      const refused = isConditionFailure(error) ? [0] : refusedItems(error);
      if (refused.includes(1)) {
        if (!(await readProjectMeta(project)))
          throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
        throw new AccountError('LIMIT', `a project may have at most ${MAX_MEMBERS_PER_PROJECT} members`);
      }
      if (refused.length === 0 || attempt >= 5) throw error;
    }
  }
}

/** One transaction: the member grant goes, the member count goes down and the grant epoch advances. */
export async function removeMember(project: ProjectRef, member: string): Promise<Stamping> {
  const missing = `${member} is not a member of ${projectName(project)}`;
  if (!USERNAME.test(member)) throw new AccountError('NOT_FOUND', missing);
  const inc = await incarnationNow(project).catch((error: unknown) => {
    throw error instanceof AccountError ? new AccountError('NOT_FOUND', missing) : error;
  });
  try {
    await documents.send(
      new TransactWriteCommand({
        TransactItems: [
          incarnationDelete(project, memberGrantSk(member), inc),
          epochAdvance(project, inc, '#nm = #nm - :one'),
        ],
      }),
    );
  } catch (error) {
    if (refusedItems(error).length > 0) throw new AccountError('NOT_FOUND', missing);
    throw error;
  }
  return stampContent(project);
}
