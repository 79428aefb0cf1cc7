// Since when a credential has read a project without a break, as the stream consumer saw it (issue 27, abuse 3):
// a replay with `since` holds only changes made while the credential could read them, else a fresh snapshot.
//
// Recorded in stream order, not by the clock: the consumer, starting a subscription it has just verified, notes the
// revision the credential reads from (the snapshot's, or its record's older one); every revocation (a removed
// member or key, a demotion: the stamped grant epoch) forgets every credential's record, since the consumer cannot
// tell whose access the revocation broke by the time it sees it. A credential granted, or granted again, after that
// gets a snapshot first. Wall-clock times would not do: a stream record's time is rounded to the second (to the
// minute on DynamoDB Local), and a grant's time cannot be ordered against a commit's any closer.
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Principal, callerId } from '../auth/access';
import { tableName } from '../config/env';
import { batchWriteAll } from '../dynamo/batch-write';
import { dynamo } from '../dynamo/client';
import { LOG_TTL_SECONDS } from './change-log';

const accessPk = (inc: string) => `RA#${inc}`;
/**
 * One credential: an API key by its id, a user (session or JWT) by name, every anonymous caller as one (what the rules
 * grant them; a rules change advances the grant epoch, which forgets every record as a revocation does).
 */
const principalSk = callerId;
const itemKey = (inc: string, principal: Principal) => ({
  pk: { S: accessPk(inc) },
  sk: { S: principalSk(principal) },
});

/** The revision from which the credential has read the project without a break, if the consumer knows one. */
export async function readsFrom(inc: string, principal: Principal): Promise<string | undefined> {
  const { Item } = await dynamo.send(
    new GetItemCommand({ TableName: tableName(), Key: itemKey(inc, principal), ConsistentRead: true }),
  );
  return Item?.from?.S;
}

/**
 * Notes that the credential reads from `revision` on (verified now, in stream order): kept when an older one is
 * already noted (its access has not been broken since, or the record would be gone); the record lives as long as
 * the change log's entries.
 */
export async function noteReads(inc: string, principal: Principal, revision: string): Promise<void> {
  const ttl = { N: String(Math.floor(Date.now() / 1000) + LOG_TTL_SECONDS) };
  try {
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName(),
        Key: itemKey(inc, principal),
        UpdateExpression: 'SET #from = :from, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#from) OR #from > :from',
        ExpressionAttributeNames: { '#from': 'from', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':from': { S: revision }, ':ttl': ttl },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    await dynamo
      .send(
        new UpdateItemCommand({
          TableName: tableName(),
          Key: itemKey(inc, principal),
          UpdateExpression: 'SET #ttl = :ttl',
          ConditionExpression: 'attribute_exists(#from)',
          ExpressionAttributeNames: { '#ttl': 'ttl', '#from': 'from' },
          ExpressionAttributeValues: { ':ttl': ttl },
        }),
      )
      .catch((again: unknown) => {
        // Forgotten meanwhile by a revocation: nothing to keep alive.
        if (!(again instanceof ConditionalCheckFailedException)) throw again;
      });
  }
}

/** A revocation reached the consumer: no credential's earlier access counts for a replay any more. */
export async function forgetReads(inc: string): Promise<void> {
  const keys: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: accessPk(inc) } },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    keys.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  if (keys.length > 0) await batchWriteAll(keys.map((Key) => ({ DeleteRequest: { Key } })));
}
