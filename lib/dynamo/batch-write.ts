// BatchWriteItem for any number of puts and deletes: pages of 25, what DynamoDB leaves unprocessed sent again.
import { BatchWriteItemCommand, type BatchWriteItemCommandOutput, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { tableName } from '../config/env';
import { dynamo } from './client';

/** DynamoDB's most requests per BatchWriteItem. */
const PAGE = 25;

/** Writes every entry to the table, retrying unprocessed ones with a capped exponential backoff until none is left. */
export async function batchWriteAll(entries: readonly WriteRequest[]): Promise<void> {
  for (let i = 0; i < entries.length; i += PAGE) {
    let pending: WriteRequest[] | undefined = entries.slice(i, i + PAGE);
    for (let attempt = 0; pending && pending.length > 0; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** attempt)));
      const result: BatchWriteItemCommandOutput = await dynamo.send(
        new BatchWriteItemCommand({ RequestItems: { [tableName()]: pending } }),
      );
      pending = result.UnprocessedItems?.[tableName()];
    }
  }
}
