// Local table creation from infra/table.json (the same definition serverless.yml deploys).
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import table from '../../infra/table.json';

/** Creates the table if it is missing and waits until it is active. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
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
