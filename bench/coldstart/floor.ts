// Cold-start floor: the least a function can do. It creates the DynamoDB document client and sends one UpdateItem;
// bundled by scripts/bundle.mjs with exactly the options of the real functions.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';

const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
const documents = DynamoDBDocumentClient.from(new DynamoDBClient(endpoint ? { endpoint } : {}));

export const handler = async (event: { pk: string }) => {
  await documents.send(
    new UpdateCommand({
      TableName: process.env.TABLE_NAME,
      Key: { pk: event.pk, sk: '#' },
      UpdateExpression: 'SET #c.#n = :v',
      ExpressionAttributeNames: { '#c': 'content', '#n': 'floor' },
      ExpressionAttributeValues: { ':v': Date.now() },
    }),
  );
  return { statusCode: 200, body: '{"message":"ok"}' };
};
