// Accounts: users, projects, sessions, API keys and members: the records the admin CLI and management routes write.
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { MAX_EXPIRES_IN_SECONDS, MAX_KEYS_PER_PROJECT, MAX_MEMBERS_PER_PROJECT } from '../config/limits';
import { randomBytes } from 'node:crypto';
import { tableName } from '../config/env';
import { documents, dynamo } from '../dynamo/client';
import { A, type Permission } from '../schema/attributes';
import { newApiKey, newSessionToken } from '../auth/credentials';
import { createRoot } from './segments';
import {
  type KeyRecord,
  type ProjectItem,
  type ProjectRef,
  type Role,
  epochSeconds,
  itemKey,
  itemKeyAttributes,
  keyPk,
  projectName,
  projectPk,
  sessionPk,
  readProjectItem,
  storedKey,
  userPk,
} from '../schema/items';

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

export async function createUser(username: string): Promise<void> {
  await putNew({ ...itemKey(userPk(username)), username, createdAt: new Date().toISOString() }, `user ${username}`);
}

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

/** The project item (access, keys, members), read consistently. */
export async function readProjectMeta(project: ProjectRef): Promise<(ProjectItem & { createdAt: string }) | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: itemKeyAttributes(projectPk(project)),
      ConsistentRead: true,
      ProjectionExpression: '#pk, #owner, #members, #keys, #createdAt',
      ExpressionAttributeNames: {
        '#pk': 'pk',
        '#owner': A.owner,
        '#members': A.members,
        '#keys': A.keys,
        '#createdAt': 'createdAt',
      },
    }),
  );
  return Item ? { ...readProjectItem(Item), createdAt: Item.createdAt?.S ?? '' } : undefined;
}

/** A new project: its item (the owner, a new incarnation) and an empty content; fails if the project exists. */
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
          [A.members]: { M: {} },
          [A.keys]: { M: {} },
          [A.incarnation]: { S: incarnation },
          createdAt: { S: createdAt },
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('EXISTS', `project ${projectName(project)} already exists`);
    throw error;
  }
  await createRoot(incarnation, 0);
  return { createdAt };
}

/** The expiry of a lifetime its caller validated (1 s to 10 years); anything else is a bug, not a record to store. */
function expiryAfter(seconds: number): number {
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_EXPIRES_IN_SECONDS) {
    throw new RangeError(`a lifetime must be 1 to ${MAX_EXPIRES_IN_SECONDS} seconds, got ${seconds}`);
  }
  return epochSeconds() + seconds;
}

export async function createSession(
  username: string,
  expiresInSeconds: number,
): Promise<{ token: string; expiresAt: number }> {
  const { token, hash } = newSessionToken();
  const expiresAt = expiryAfter(expiresInSeconds);
  await putNew({ ...itemKey(sessionPk(hash)), u: username, ttl: expiresAt }, 'session');
  return { token, expiresAt };
}

/**
 * Sets one entry of a map attribute of the project item (keys or members), only while the project exists and the
 * map is under its cap (replacing an existing entry is always allowed).
 */
async function putMapEntry(
  project: ProjectRef,
  map: string,
  entry: string,
  value: unknown,
  cap: number,
): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: itemKey(projectPk(project)),
        UpdateExpression: 'SET #map.#entry = :value',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_exists(#map.#entry) OR size(#map) < :cap)',
        ExpressionAttributeNames: { '#map': map, '#entry': entry },
        ExpressionAttributeValues: { ':value': value, ':cap': cap },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    if (!(await readProjectMeta(project)))
      throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
    throw new AccountError('LIMIT', `a project may have at most ${cap} ${map}`);
  }
}

export interface CreatedKey {
  id: string;
  key: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  expiresAt: number | null;
}

/**
 * Writes the key's own record first, then the project's entry (the one the fast path checks); DynamoDB Local's
 * embedded stand-in has no transactions, and this order never leaves a usable key without its record.
 */
export async function createApiKey(
  project: ProjectRef,
  options: { name: string; permissions: Permission[]; expiresInSeconds?: number },
): Promise<CreatedKey> {
  const { id, key, hash } = newApiKey();
  const createdAt = new Date().toISOString();
  const expiresAt = options.expiresInSeconds === undefined ? undefined : expiryAfter(options.expiresInSeconds);
  const entry = storedKey({ hash, permissions: options.permissions, expiresAt, name: options.name, createdAt });
  const record: KeyRecord = { ...itemKey(keyPk(id)), project: projectName(project), ...entry };
  await putNew({ ...record, ...(expiresAt === undefined ? {} : { ttl: expiresAt }) }, 'key');
  try {
    const writes = options.permissions.includes('content:write');
    await putMapEntry(project, A.keys, id, writes ? { ...entry, w: hash } : entry, MAX_KEYS_PER_PROJECT);
  } catch (error) {
    await documents.send(new DeleteCommand({ TableName: tableName(), Key: itemKey(keyPk(id)) }));
    throw error;
  }
  return { id, key, name: options.name, permissions: options.permissions, createdAt, expiresAt: expiresAt ?? null };
}

/** Removes one entry of a map attribute of the project item; NOT_FOUND when there is none. */
async function removeMapEntry(project: ProjectRef, map: string, entry: string, missing: string): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: itemKey(projectPk(project)),
        UpdateExpression: 'REMOVE #map.#entry',
        ConditionExpression: 'attribute_exists(#map.#entry)',
        ExpressionAttributeNames: { '#map': map, '#entry': entry },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('NOT_FOUND', missing);
    throw error;
  }
}

/** Removes the project's entry first (the key stops working at once), then its record. */
export async function revokeApiKey(project: ProjectRef, id: string): Promise<void> {
  await removeMapEntry(project, A.keys, id, `key ${id} does not exist in ${projectName(project)}`);
  await documents.send(new DeleteCommand({ TableName: tableName(), Key: itemKey(keyPk(id)) }));
}

export async function setMember(project: ProjectRef, member: string, role: Role): Promise<void> {
  await putMapEntry(project, A.members, member, role, MAX_MEMBERS_PER_PROJECT);
}

export async function removeMember(project: ProjectRef, member: string): Promise<void> {
  await removeMapEntry(project, A.members, member, `${member} is not a member of ${projectName(project)}`);
}

/**
 * Deletes the project item (content, members and the keys' entries go with it, so every key stops working at
 * once), then the keys' own records.
 */
export async function deleteProject(project: ProjectRef, keyIds: string[]): Promise<void> {
  try {
    await documents.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: itemKey(projectPk(project)),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  } catch (error) {
    if (isConditionFailure(error))
      throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
    throw error;
  }
  for (let i = 0; i < keyIds.length; i += 25) {
    let requests: BatchWriteCommandInput['RequestItems'] = {
      [tableName()]: keyIds.slice(i, i + 25).map((id) => ({ DeleteRequest: { Key: itemKey(keyPk(id)) } })),
    };
    for (let attempt = 0; requests && Object.keys(requests).length > 0 && attempt < 5; attempt++) {
      const result: BatchWriteCommandOutput = await documents.send(new BatchWriteCommand({ RequestItems: requests }));
      requests = result.UnprocessedItems;
    }
  }
}
