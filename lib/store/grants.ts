// Grants, listed and removed: the Query over a project's grant items (its keys and members) and the project's
// deletion, which removes them. Apart from lib/store/accounts.ts so that only the functions that list or delete
// bundle the Query (IAM per function follows the commands a bundle can send).
import { type AttributeValue, QueryCommand, type QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../config/env';
import { batchWriteAll } from '../dynamo/batch-write';
import { documents, dynamo } from '../dynamo/client';
import { fromAttribute } from '../dynamo/attributes';
import { A } from '../schema/attributes';
import {
  HEAD_SK,
  KEY_GRANT_PREFIX,
  type KeyEntry,
  MEMBER_GRANT_PREFIX,
  type ProjectRef,
  type StoredKey,
  itemKey,
  itemKeyAttributes,
  keyPk,
  projectName,
  projectPk,
  readKeyEntry,
} from '../schema/items';
import { AccountError } from './accounts';
import { deleteSegments } from '../storage';

const isConditionFailure = (error: unknown) =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/**
 * Every grant item of the project with this prefix (`K#`, `M#`, or '' for all), of any incarnation, paginated. Read
 * with the low-level client: a number no route writes (1e125) is read as the service reads numbers, not refused.
 */
async function queryGrants(project: ProjectRef, prefix: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page: QueryCommandOutput = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: prefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
        ExpressionAttributeValues: {
          ':pk': { S: projectPk(project) },
          ...(prefix ? { ':prefix': { S: prefix } } : {}),
        },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []).map((item) => fromAttribute({ M: item }) as unknown as Record<string, unknown>));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The project's API keys (this incarnation's grants), each as its stored entry. */
export async function listKeys(project: ProjectRef, inc: string): Promise<Array<{ id: string; entry: KeyEntry }>> {
  return (await queryGrants(project, KEY_GRANT_PREFIX))
    .filter((item) => item[A.incarnation] === inc)
    .map((item) => ({
      id: String(item.sk).slice(KEY_GRANT_PREFIX.length),
      entry: readKeyEntry(item as unknown as StoredKey),
    }));
}

/** The project's members (this incarnation's grants) with their roles. */
export async function listMembers(
  project: ProjectRef,
  inc: string,
): Promise<Array<{ username: string; role: string }>> {
  return (await queryGrants(project, MEMBER_GRANT_PREFIX))
    .filter((item) => item[A.incarnation] === inc)
    .map((item) => ({ username: String(item.sk).slice(MEMBER_GRANT_PREFIX.length), role: String(item[A.role]) }));
}

/**
 * Deletes the head (and the grant epoch with it), then every grant item of the project (Query + BatchWrite), the key
 * index records of its keys and the content's segments.
 */
export async function deleteProject(project: ProjectRef): Promise<void> {
  let inc: string | undefined;
  try {
    const { Attributes } = await documents.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: itemKey(projectPk(project)),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_OLD',
      }),
    );
    inc = Attributes?.[A.incarnation] as string | undefined;
  } catch (error) {
    if (isConditionFailure(error))
      throw new AccountError('NOT_FOUND', `project ${projectName(project)} does not exist`);
    throw error;
  }
  const grants = (await queryGrants(project, '')).filter((item) => item.sk !== HEAD_SK);
  const keys = grants.flatMap((item) => {
    const sk = String(item.sk);
    const grant = itemKeyAttributes(projectPk(project), sk);
    return sk.startsWith(KEY_GRANT_PREFIX)
      ? [grant, itemKeyAttributes(keyPk(sk.slice(KEY_GRANT_PREFIX.length)))]
      : [grant];
  });
  await batchWriteAll(keys.map((Key) => ({ DeleteRequest: { Key } })));
  // The content: a write with a grant remembered from before the delete then finds no segment, verifies its
  // credential again and gets the 404.
  if (inc !== undefined) await deleteSegments(inc);
}
