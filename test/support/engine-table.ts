// A throw-away table with the key design the storage note plans (pk + sk), for tests that talk to the engine itself.
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

export async function createKeyedTable(
  client: DynamoDBClient,
  TableName: string,
  options: { stream?: boolean } = {},
): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName,
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      ...(options.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } } : {}),
    }),
  );
}
