// The rules document's item (`P#<p>` / `R`): read, and replaced with the head's rules version and grant epoch in one
// transaction, so every warm Lambda's remembered grant fails its next proof and learns the new rules
// (docs/design/rules.md, "Storage").
import { GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { dynamo } from '../dynamo/client';
import { A } from '../schema/attributes';
import { type ProjectRef, RULES_SK, itemKeyAttributes, projectName, projectPk } from '../schema/items';
import { type StoredRules, readRulesItem } from '../rules/stored';
import { refusedItems } from './accounts';
import { type Stamping, stampContent, stampingRecord } from '../storage';

/** The head's rules version was not the one expected (or the project is no longer this incarnation). */
export class RulesChanged extends Error {}

/** The project's rules, read consistently (this incarnation's). */
export async function readRules(project: ProjectRef, inc: string): Promise<StoredRules> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: tableName(),
      Key: itemKeyAttributes(projectPk(project), RULES_SK),
      ConsistentRead: true,
    }),
  );
  return readRulesItem(Item as Parameters<typeof readRulesItem>[0], inc);
}

/**
 * Replaces the document when the head's rules version is `expected` (RulesChanged when not, or when the project
 * is gone): one TransactWriteItems of the rules item and the head (rv + 1, ge + 1, the stamping recorded). The
 * segments then take the new epoch until the request's deadline draws near, as after a revocation. Returns the new
 * version and where the stamping stands.
 */
export async function putRules(
  project: ProjectRef,
  inc: string,
  document: StoredRules['document'],
  expected: number,
  schemas: number,
): Promise<{ version: number; stamping: Stamping }> {
  const version = expected + 1;
  const record = stampingRecord();
  try {
    await dynamo.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...itemKeyAttributes(projectPk(project), RULES_SK),
                [A.rulesDocument]: { S: JSON.stringify(document) },
                [A.rulesVersion]: { N: String(version) },
                [A.incarnation]: { S: inc },
              },
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: itemKeyAttributes(projectPk(project)),
              UpdateExpression: `SET #rv = :rv, #rs = :rs, ${record.set} ADD #ge :one`,
              ConditionExpression:
                expected === 0
                  ? '#inc = :inc AND (attribute_not_exists(#rv) OR #rv = :zero)'
                  : '#inc = :inc AND #rv = :expected',
              ExpressionAttributeNames: {
                '#rv': A.rulesVersion,
                '#rs': A.rulesSchemas,
                '#ge': A.grantEpoch,
                '#inc': A.incarnation,
                ...record.names,
              },
              ExpressionAttributeValues: {
                ':rv': { N: String(version) },
                ':rs': { N: String(schemas) },
                ':one': { N: '1' },
                ':inc': { S: inc },
                ':stampingPartition': { S: record.values[':stampingPartition'] },
                ':stampingAt': { N: String(record.values[':stampingAt']) },
                ...(expected === 0 ? { ':zero': { N: '0' } } : { ':expected': { N: String(expected) } }),
              },
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (refusedItems(error).includes(1)) {
      throw new RulesChanged(`the rules of ${projectName(project)} changed since version ${expected}`);
    }
    throw error;
  }
  return { version, stamping: await stampContent(project) };
}
