// Local table creation from infra/table.json (the same definition serverless.yml deploys).
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import table from '../../infra/table.json';

const streamSpecification = {
  StreamEnabled: true,
  StreamViewType: table.StreamSpecification.StreamViewType as 'NEW_AND_OLD_IMAGES',
};

/** Creates the table if it is missing (a table made before it had a stream gets one) and waits until it is active. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (!Table?.StreamSpecification?.StreamEnabled) {
      // dynalite may refuse it; its stream is the engine's own (lib/local/stream.ts) anyway.
      await client
        .send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: streamSpecification }))
        .catch(() => undefined);
    }
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: table.AttributeDefinitions as CreateTableCommand['input']['AttributeDefinitions'],
      KeySchema: table.KeySchema as CreateTableCommand['input']['KeySchema'],
      BillingMode: 'PAY_PER_REQUEST',
      // The realtime consumer's change stream (the embedded engine produces its records whatever this says).
      StreamSpecification: streamSpecification,
    }),
  );
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: table.TimeToLiveAttribute, Enabled: true },
      }),
    );
  } catch {
    // dynalite has no TTL; expiry is also checked on every read, so nothing depends on it.
  }
}
