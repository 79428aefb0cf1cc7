// The change stream as the engine delivers it: the embedded engine's records (lib/local/stream.ts) must be the ones
// DynamoDB Local's real stream gives for the same writes. On the default run the test starts its own embedded
// engine in this process (the API's engine lives in another one); under `npm run test:dynamodb-local` it reads
// DynamoDB Local's stream.
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { createKeyedTable } from '../support/engine-table';
import { type ChangeRecord, listenDynamoDbLocal, listenEmbedded } from '../../lib/local/stream';

const onDynamoDbLocal = process.env.DYNAMODB_ENGINE === 'dynamodb-local';
const TableName = `stream-test-${Date.now()}`;
let client: DynamoDBClient;
let stop: () => void;
let closeEngine: (() => Promise<void>) | undefined;
const seen: ChangeRecord[] = [];

const key = (sk: string) => ({ pk: { S: 'p' }, sk: { S: sk } });
const item = (sk: string, n: number) => ({ ...key(sk), n: { N: String(n) } });

/** The records seen since the last call, once `count` have arrived, and after a pause in which no more came. */
async function take(count: number): Promise<ChangeRecord[]> {
  for (let waited = 0; seen.length < count && waited < 10_000; waited += 20)
    await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, onDynamoDbLocal ? 500 : 100));
  return seen.splice(0, seen.length);
}

const summary = (records: ChangeRecord[]) =>
  records.map((r) => [
    r.eventName,
    r.dynamodb?.Keys?.sk?.S,
    r.dynamodb?.OldImage?.n?.N ?? null,
    r.dynamodb?.NewImage?.n?.N ?? null,
  ]);

beforeAll(async () => {
  let endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (!onDynamoDbLocal) {
    const { startEngine } = await import('../../lib/local/engine');
    const engine = await startEngine({ port: 0 });
    endpoint = engine.endpoint;
    closeEngine = engine.close;
  }
  client = new DynamoDBClient({ endpoint, maxAttempts: 1 });
  await createKeyedTable(client, TableName, { stream: true });
  const listener = (records: ChangeRecord[]) => {
    seen.push(...records.filter((r) => r.eventSourceARN?.includes(`table/${TableName}/`)));
  };
  stop = onDynamoDbLocal
    ? await listenDynamoDbLocal(client, TableName, listener, {
        onError: (error) => {
          throw error;
        },
      })
    : listenEmbedded(listener);
});

afterAll(async () => {
  stop();
  await client.send(new DeleteTableCommand({ TableName }));
  client.destroy();
  await closeEngine?.();
});

describe('the engine change stream', () => {
  it('records every write in commit order with both images', async () => {
    await client.send(new PutItemCommand({ TableName, Item: item('a', 1) }));
    await client.send(new PutItemCommand({ TableName, Item: item('b', 2) }));
    await client.send(
      new UpdateItemCommand({
        TableName,
        Key: key('b'),
        UpdateExpression: 'ADD n :d',
        ExpressionAttributeValues: { ':d': { N: '1' } },
      }),
    );
    await client.send(
      new UpdateItemCommand({
        TableName,
        Key: key('a'),
        UpdateExpression: 'ADD n :d',
        ExpressionAttributeValues: { ':d': { N: '5' } },
      }),
    );
    await client.send(new DeleteItemCommand({ TableName, Key: key('a') }));
    const records = await take(5);
    expect(summary(records)).toEqual([
      ['INSERT', 'a', null, '1'],
      ['INSERT', 'b', null, '2'],
      ['MODIFY', 'b', '2', '3'],
      ['MODIFY', 'a', '1', '6'],
      ['REMOVE', 'a', '6', null],
    ]);
    const sequence = records.map((r) => BigInt(r.dynamodb?.SequenceNumber ?? '0'));
    expect(sequence).toEqual([...sequence].sort((x, y) => (x < y ? -1 : 1)));
    expect(new Set(sequence).size).toBe(5);
    expect(
      records.every((r) => r.dynamodb?.StreamViewType === 'NEW_AND_OLD_IMAGES' && r.eventSource === 'aws:dynamodb'),
    ).toBe(true);
    expect(records[0]?.dynamodb?.Keys).toEqual(key('a'));
  });

  it('records nothing for a write whose condition fails', async () => {
    await expect(
      client.send(
        new PutItemCommand({ TableName, Item: item('b', 9), ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    ).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect(await take(0)).toEqual([]);
  });

  it("records a transaction's writes when it commits, and nothing when it is cancelled or refused", async () => {
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName, Item: item('c', 1) } },
          {
            Update: {
              TableName,
              Key: key('b'),
              UpdateExpression: 'ADD n :d',
              ExpressionAttributeValues: { ':d': { N: '10' } },
            },
          },
        ],
      }),
    );
    expect(summary(await take(2))).toEqual([
      ['INSERT', 'c', null, '1'],
      ['MODIFY', 'b', '3', '13'],
    ]);
    await expect(
      client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName, Item: item('d', 1) } },
            {
              ConditionCheck: {
                TableName,
                Key: key('b'),
                ConditionExpression: 'n = :zero',
                ExpressionAttributeValues: { ':zero': { N: '0' } },
              },
            },
          ],
        }),
      ),
    ).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    await expect(
      client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName, Item: item('e', 1) } },
            {
              Update: {
                TableName,
                Key: key('b'),
                UpdateExpression: 'SET n.x = :v',
                ExpressionAttributeValues: { ':v': { N: '1' } },
              },
            },
          ],
        }),
      ),
    ).rejects.toBeInstanceOf(Error);
    expect(await take(0)).toEqual([]);
  });
});
