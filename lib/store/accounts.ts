// Accounts: users, projects, sessions, API keys and members: the records the admin CLI and management routes write.
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { tableName } from '../config/env';
import { documents, dynamo } from '../dynamo/client';
import { toAttribute } from '../dynamo/attributes';
import { A, TOKEN_SLOTS, type Permission } from '../expressions';
import { newApiKey, newSessionToken } from '../auth/credentials';
import {
  type KeyEntry,
  type KeyRecord,
  type ProjectRef,
  type Role,
  epochSeconds,
  keyPk,
  projectName,
  projectPk,
  sessionPk,
  userPk,
} from './items';

export class AccountError extends Error {
  constructor(
    readonly code: 'EXISTS' | 'NOT_FOUND' | 'LIMIT',
    message: string,
  ) {
    super(message);
  }
}

const isConditionFailure = (error: unknown) => error instanceof Error && error.name === 'ConditionalCheckFailedException';

async function putNew(item: Record<string, unknown>, what: string): Promise<void> {
  try {
    await documents.send(new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('EXISTS', `${what} already exists`);
    throw error;
  }
}

export async function createUser(username: string): Promise<void> {
  await putNew({ pk: userPk(username), username, createdAt: new Date().toISOString() }, `user ${username}`);
}

/** A new project: empty content, version 1, the owner; fails if the owner is unknown or the project exists. */
export async function createProject(project: ProjectRef): Promise<{ createdAt: string }> {
  const createdAt = new Date().toISOString();
  try {
    await dynamo.send(
      new PutItemCommand({
        TableName: tableName(),
        Item: {
          pk: { S: projectPk(project) },
          [A.content]: { M: {} },
          [A.version]: { N: '1' },
          [A.etag]: { S: randomBytes(16).toString('base64url') },
          [A.bytes]: { N: '3' },
          [A.owner]: { S: project.username },
          [A.members]: { M: {} },
          [A.keys]: { M: {} },
          createdAt: { S: createdAt },
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('EXISTS', `project ${projectName(project)} already exists`);
    throw error;
  }
  return { createdAt };
}

export async function createSession(username: string, expiresInSeconds: number): Promise<{ token: string; expiresAt: number }> {
  const { token, hash } = newSessionToken();
  const expiresAt = epochSeconds() + expiresInSeconds;
  await putNew({ pk: sessionPk(hash), u: username, ttl: expiresAt }, 'session');
  return { token, expiresAt };
}

/** Adds to a map attribute of the project item, only while the project exists and the map is under its cap. */
async function updateProject(project: ProjectRef, update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>) {
  try {
    await documents.send(new UpdateCommand({ TableName: tableName(), Key: { pk: projectPk(project) }, ...update }));
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
    throw error;
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
  const expiresAt = options.expiresInSeconds === undefined ? undefined : epochSeconds() + options.expiresInSeconds;
  const entry: KeyEntry = { h: hash, p: options.permissions, e: expiresAt, n: options.name, c: createdAt };
  const record: KeyRecord = { pk: keyPk(id), project: projectName(project), ...entry };
  await putNew({ ...record, ...(expiresAt === undefined ? {} : { ttl: expiresAt }) }, 'key');
  try {
    await updateProject(project, {
      UpdateExpression: 'SET #keys.#id = :entry',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#keys': A.keys, '#id': id },
      ExpressionAttributeValues: { ':entry': entry },
    });
  } catch (error) {
    await documents.send(new DeleteCommand({ TableName: tableName(), Key: { pk: keyPk(id) } }));
    throw error;
  }
  return { id, key, name: options.name, permissions: options.permissions, createdAt, expiresAt: expiresAt ?? null };
}

/** Removes the project's entry first (the key stops working at once), then its record. */
export async function revokeApiKey(project: ProjectRef, id: string): Promise<void> {
  try {
    await documents.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { pk: projectPk(project) },
        UpdateExpression: 'REMOVE #keys.#id',
        ConditionExpression: 'attribute_exists(#keys.#id)',
        ExpressionAttributeNames: { '#keys': A.keys, '#id': id },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new AccountError('NOT_FOUND', `key ${id} does not exist in ${projectName(project)}`);
    throw error;
  }
  await documents.send(new DeleteCommand({ TableName: tableName(), Key: { pk: keyPk(id) } }));
}

export async function setMember(project: ProjectRef, member: string, role: Role): Promise<void> {
  await updateProject(project, {
    UpdateExpression: 'SET #members.#m = :role',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#members': A.members, '#m': member },
    ExpressionAttributeValues: { ':role': role },
  });
}

export { toAttribute, TOKEN_SLOTS };
