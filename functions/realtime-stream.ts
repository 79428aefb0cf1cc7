// The table's DynamoDB stream: every committed change to its subscribers (and the change log, and the hooks).
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { consume } from '../lib/realtime/consumer';

export const handler = async (event: DynamoDBStreamEvent): Promise<void> => {
  await consume(event.Records);
};
