// DynamoDB transactions as the engine answers them: the embedded engine (lib/local/transactions.ts) must give the
// answers DynamoDB Local gives, so the same assertions run on both (`npm test`, `npm run test:dynamodb-local`).
import {
  DeleteTableCommand,
  DynamoDBClient,
  GetItemCommand,
  IdempotentParameterMismatchException,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  TransactionCanceledException,
  type TransactWriteItem,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { createKeyedTable } from '../support/engine-table';
import { randomUUID } from 'node:crypto';

const client = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB, maxAttempts: 1 });
const TableName = `txn-test-${Date.now()}`;
let pk: string;

const key = (sk: string) => ({ pk: { S: pk }, sk: { S: sk } });
const put = (sk: string, n: number, condition?: string): TransactWriteItem => ({
  Put: {
    TableName,
    Item: { ...key(sk), n: { N: String(n) } },
    ...(condition ? { ConditionExpression: condition } : {}),
  },
});
const add = (
  sk: string,
  n: number,
  extra: Partial<NonNullable<TransactWriteItem['Update']>> = {},
): TransactWriteItem => ({
  Update: {
    TableName,
    Key: key(sk),
    UpdateExpression: 'ADD n :d',
    ExpressionAttributeValues: { ':d': { N: String(n) } },
    ...extra,
  },
});
const check = (sk: string, expression: string, values?: Record<string, { N: string }>): TransactWriteItem => ({
  ConditionCheck: {
    TableName,
    Key: key(sk),
    ConditionExpression: expression,
    ...(values ? { ExpressionAttributeValues: values } : {}),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});
const numberAt = async (sk: string): Promise<number | undefined> => {
  const { Item } = await client.send(new GetItemCommand({ TableName, Key: key(sk), ConsistentRead: true }));
  return Item?.n?.N === undefined ? undefined : Number(Item.n.N);
};
const cancellation = async (items: TransactWriteItem[]) => {
  try {
    await client.send(new TransactWriteItemsCommand({ TransactItems: items }));
  } catch (error) {
    if (error instanceof TransactionCanceledException) return error.CancellationReasons ?? [];
    throw error;
  }
  throw new Error('the transaction was not cancelled');
};

beforeAll(async () => {
  await createKeyedTable(client, TableName);
});
beforeEach(() => {
  pk = randomUUID();
});
afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName }));
  client.destroy();
});

describe('TransactWriteItems on the engine', () => {
  it('applies Put, Update, Delete and ConditionCheck together', async () => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: [put('a', 1), put('b', 2), put('gone', 3)] }));
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          add('a', 10),
          { Delete: { TableName, Key: key('gone') } },
          check('b', 'n = :two', { ':two': { N: '2' } }),
          put('c', 7, 'attribute_not_exists(pk)'),
        ],
      }),
    );
    expect([await numberAt('a'), await numberAt('b'), await numberAt('gone'), await numberAt('c')]).toEqual([
      11,
      2,
      undefined,
      7,
    ]);
  });

  it('changes nothing when one condition fails, and names every failing item with its old image', async () => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: [put('a', 1), put('b', 2)] }));
    const reasons = await cancellation([
      add('a', 5),
      check('b', 'n = :three', { ':three': { N: '3' } }),
      put('c', 1),
      add('d', 1, { ConditionExpression: 'attribute_exists(n)' }),
    ]);
    expect(reasons.map((r) => r.Code)).toEqual(['None', 'ConditionalCheckFailed', 'None', 'ConditionalCheckFailed']);
    expect(reasons[1]?.Item).toEqual({ ...key('b'), n: { N: '2' } });
    // No old image for an item that does not exist.
    expect(reasons[3]?.Item).toBeUndefined();
    expect([await numberAt('a'), await numberAt('b'), await numberAt('c'), await numberAt('d')]).toEqual([
      1,
      2,
      undefined,
      undefined,
    ]);
  });

  it('refuses two actions on one item', async () => {
    // DynamoDB: ValidationException. DynamoDB Local evaluates both actions and cancels; either way nothing applies.
    const refused = await client
      .send(new TransactWriteItemsCommand({ TransactItems: [add('a', 1), check('a', 'attribute_not_exists(n)')] }))
      .catch((e: Error) => e);
    expect(['ValidationException', 'TransactionCanceledException']).toContain((refused as Error).name);
    expect(await numberAt('a')).toBeUndefined();
  });

  it('refuses more than 100 actions', async () => {
    const items = Array.from({ length: 101 }, (_, i) => put(`i${i}`, i));
    await expect(client.send(new TransactWriteItemsCommand({ TransactItems: items }))).rejects.toMatchObject({
      name: 'ValidationException',
    });
    expect(await numberAt('i0')).toBeUndefined();
  });

  it('applies 100 actions', async () => {
    await client.send(
      new TransactWriteItemsCommand({ TransactItems: Array.from({ length: 100 }, (_, i) => put(`i${i}`, i)) }),
    );
    expect([await numberAt('i0'), await numberAt('i99')]).toEqual([0, 99]);
  });

  it('undoes everything when a later update is refused by the engine', async () => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: [put('a', 1), put('b', 2)] }));
    // `n` is a number, so `n.x` is not a valid document path for an update.
    let caught: unknown;
    try {
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            add('a', 5),
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
      );
    } catch (error) {
      caught = error;
    }
    // DynamoDB cancels with a ValidationError reason for the item; DynamoDB Local answers a ValidationException.
    expect(['TransactionCanceledException', 'ValidationException']).toContain((caught as Error).name);
    if (caught instanceof TransactionCanceledException)
      expect(caught.CancellationReasons?.map((r) => r.Code)).toEqual(['None', 'ValidationError']);
    expect([await numberAt('a'), await numberAt('b')]).toEqual([1, 2]);
  });

  it('applies a ClientRequestToken once, and refuses it with another request', async () => {
    const ClientRequestToken = randomUUID();
    await client.send(new TransactWriteItemsCommand({ ClientRequestToken, TransactItems: [add('a', 1), add('b', 1)] }));
    await client.send(new TransactWriteItemsCommand({ ClientRequestToken, TransactItems: [add('a', 1), add('b', 1)] }));
    expect([await numberAt('a'), await numberAt('b')]).toEqual([1, 1]);
    await expect(
      client.send(new TransactWriteItemsCommand({ ClientRequestToken, TransactItems: [add('a', 2), add('b', 1)] })),
    ).rejects.toBeInstanceOf(IdempotentParameterMismatchException);
    expect(await numberAt('a')).toBe(1);
  });

  it('never lets a reader see half of a transaction, and loses no concurrent transaction', async () => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: [put('a', 1000), put('b', 0)] }));
    let moved = 0;
    const movers = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 15; i++) {
        for (let attempt = 0; ; attempt++) {
          try {
            await client.send(new TransactWriteItemsCommand({ TransactItems: [add('a', -1), add('b', 1)] }));
            moved++;
            break;
          } catch (error) {
            // DynamoDB refuses a transaction that overlaps another on the same item; the caller retries.
            const conflict =
              error instanceof TransactionCanceledException &&
              error.CancellationReasons?.some((r) => r.Code === 'TransactionConflict');
            if (!conflict || attempt > 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
          }
        }
      }
    });
    const sums: number[] = [];
    const reader = (async () => {
      for (let i = 0; i < 30; i++) {
        try {
          const { Responses } = await client.send(
            new TransactGetItemsCommand({
              TransactItems: [{ Get: { TableName, Key: key('a') } }, { Get: { TableName, Key: key('b') } }],
            }),
          );
          sums.push(Number(Responses?.[0]?.Item?.n?.N) + Number(Responses?.[1]?.Item?.n?.N));
        } catch (error) {
          if (!(error instanceof TransactionCanceledException)) throw error;
        }
      }
    })();
    await Promise.all([...movers, reader]);
    expect(moved).toBe(60);
    expect(new Set(sums)).toEqual(new Set(sums.length > 0 ? [1000] : []));
    expect([await numberAt('a'), await numberAt('b')]).toEqual([940, 60]);
  });

  it('answers a plain conditional write beside transactions with its own result', async () => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: [put('a', 1)] }));
    await expect(
      client.send(
        new UpdateItemCommand({
          TableName,
          Key: key('a'),
          UpdateExpression: 'ADD n :d',
          ConditionExpression: 'n = :five',
          ExpressionAttributeValues: { ':d': { N: '1' }, ':five': { N: '5' } },
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(await numberAt('a')).toBe(1);
  });
});

describe('TransactGetItems on the engine', () => {
  it('reads several items at once, with an empty answer for a missing one', async () => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: [put('a', 1)] }));
    const { Responses } = await client.send(
      new TransactGetItemsCommand({
        TransactItems: [{ Get: { TableName, Key: key('a') } }, { Get: { TableName, Key: key('missing') } }],
      }),
    );
    expect(Responses?.[0]?.Item).toEqual({ ...key('a'), n: { N: '1' } });
    expect(Responses?.[1]?.Item).toBeUndefined();
  });
});
