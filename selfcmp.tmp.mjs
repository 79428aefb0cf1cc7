import { DynamoDBClient, CreateTableCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
const c = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
const T = 'selfcmp' + Date.now();
await c.send(new CreateTableCommand({ TableName: T, KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }));
await new Promise((r) => setTimeout(r, 500));
const item = { pk: { S: 'a' }, c: { M: { s: { S: 'x' }, n: { N: '1' }, b: { BOOL: false }, z: { NULL: true }, l: { L: [{ N: '1' }] }, m: { M: { k: { S: 'v' } } }, e: { M: {} }, el: { L: [] }, es: { S: '' } } } };
await c.send(new PutItemCommand({ TableName: T, Item: item }));
for (const k of ['s', 'n', 'b', 'z', 'l', 'm', 'e', 'el', 'es', 'missing']) {
  for (const [label, cond] of [['=', '#a.#k = #a2.#k2'], ['>=', '#a.#k >= #a2.#k2']]) {
    try {
      await c.send(new UpdateItemCommand({ TableName: T, Key: { pk: { S: 'a' } }, UpdateExpression: 'SET #t = :t', ConditionExpression: cond, ExpressionAttributeNames: { '#a': 'c', '#k': k, '#a2': 'c', '#k2': k, '#t': 't' }, ExpressionAttributeValues: { ':t': { S: 'x' } } }));
      console.log(k, label, 'holds');
    } catch (e) { console.log(k, label, e.name, e.message.slice(0, 120)); }
  }
}
