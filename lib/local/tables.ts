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
  const indexes = table.GlobalSecondaryIndexes as CreateTableCommand['input']['GlobalSecondaryIndexes'];
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A table kept in a data folder from before an index was added: the index is added to it.
    for (const index of indexes ?? []) {
      if (Table?.GlobalSecondaryIndexes?.some((i) => i.IndexName === index.IndexName)) continue;
      const update = (throughput?: { ReadCapacityUnits: number; WriteCapacityUnits: number }) =>
        client.send(
          new UpdateTableCommand({
            TableName: tableName,
            AttributeDefinitions: table.AttributeDefinitions as CreateTableCommand['input']['AttributeDefinitions'],
            GlobalSecondaryIndexUpdates: [{ Create: { ...index, ProvisionedThroughput: throughput } }],
          }),
        );
      // dynalite asks for a throughput even on an on-demand table (which DynamoDB refuses): given only to it.
      await update().catch((error: Error) =>
        /provisionedThroughput/i.test(error.message)
          ? update({ ReadCapacityUnits: 1, WriteCapacityUnits: 1 })
          : Promise.reject(error),
      );
      await untilActive(client, tableName);
      const { Table: updated } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      // dynalite accepts the update but never builds the index: a data folder from before it keeps working without.
      if (!updated?.GlobalSecondaryIndexes?.some((i) => i.IndexName === index.IndexName))
        console.warn(
          `the table ${tableName} predates its index ${index.IndexName} and this engine cannot add it: the sweeper ` +
            'will fail until the table is made afresh (a new DATA_DIR)',
        );
    }
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
      GlobalSecondaryIndexes: indexes,
      BillingMode: 'PAY_PER_REQUEST',
      // The realtime consumer's change stream (the embedded engine produces its records whatever this says).
      StreamSpecification: streamSpecification,
    }),
  );
  await untilActive(client, tableName);
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

/** Waits until the table and its indexes are active (dynalite takes a moment after a create or update). */
async function untilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (
      Table?.TableStatus === 'ACTIVE' &&
      (Table.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE')
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
