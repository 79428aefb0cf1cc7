// BatchGetItem of a few items, strongly consistent: what DynamoDB leaves unprocessed asked for again.
import { type AttributeValue, BatchGetItemCommand, type BatchGetItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { dynamo } from './client';

/**
 * The items of `keys` that exist (at most 100 keys), read consistently; `names` projects them (placeholder → name).
 * Unprocessed keys are asked for again after a short jittered backoff, six times at most.
 */
export async function batchGetConsistent(
  keys: Record<string, AttributeValue>[],
  names?: Record<string, string>,
): Promise<Record<string, AttributeValue>[]> {
  const items: Record<string, AttributeValue>[] = [];
  let pending: Record<string, AttributeValue>[] | undefined = keys;
  for (let attempt = 0; pending && pending.length > 0; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** attempt));
    if (attempt >= 6) throw new Error('BatchGetItem left keys unprocessed six times');
    const { Responses, UnprocessedKeys }: BatchGetItemCommandOutput = await dynamo.send(
      new BatchGetItemCommand({
        RequestItems: {
          [tableName()]: {
            Keys: pending,
            ConsistentRead: true,
            ...(names ? { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names } : {}),
          },
        },
      }),
    );
    items.push(...(Responses?.[tableName()] ?? []));
    pending = UnprocessedKeys?.[tableName()]?.Keys;
  }
  return items;
}
