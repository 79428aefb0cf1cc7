// The bench's capacity counting (test/support/dynamo-proxy.ts): the request rewrite and the summing of what the
// engine reports, as pure functions on bodies.
import { consumedUnits, withConsumedCapacity } from '../support/dynamo-proxy';

const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const parsed = (buffer: Buffer) => JSON.parse(buffer.toString('utf8'));

describe('withConsumedCapacity', () => {
  it.each(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchGetItem', 'TransactWriteItems'])(
    'adds ReturnConsumedCapacity TOTAL to %s and keeps every other field',
    (operation) => {
      const request = { TableName: 't', Key: { pk: { S: 'P#a/b' } }, ConditionExpression: '#v = :v' };
      expect(parsed(withConsumedCapacity(operation, body(request)))).toEqual({
        ...request,
        ReturnConsumedCapacity: 'TOTAL',
      });
    },
  );

  it('leaves operations that take no ReturnConsumedCapacity unchanged', () => {
    const request = body({ TableName: 't' });
    for (const operation of ['DescribeTable', 'CreateTable', 'ListTables', 'unknown'])
      expect(withConsumedCapacity(operation, request)).toBe(request);
  });

  it("keeps the caller's own ReturnConsumedCapacity", () => {
    const request = body({ TableName: 't', ReturnConsumedCapacity: 'INDEXES' });
    expect(withConsumedCapacity('GetItem', request)).toBe(request);
  });

  it('leaves a body that is not a JSON object unchanged', () => {
    for (const text of ['', 'not json', '[1,2]', 'null', '"s"']) {
      const request = Buffer.from(text);
      expect(withConsumedCapacity('UpdateItem', request)).toBe(request);
    }
  });
});

describe('consumedUnits', () => {
  it('counts CapacityUnits as write units for writes and read units for reads', () => {
    const answer = body({ ConsumedCapacity: { TableName: 't', CapacityUnits: 257 } });
    expect(consumedUnits('UpdateItem', answer)).toEqual({ readUnits: 0, writeUnits: 257 });
    expect(consumedUnits('PutItem', answer)).toEqual({ readUnits: 0, writeUnits: 257 });
    expect(consumedUnits('GetItem', answer)).toEqual({ readUnits: 257, writeUnits: 0 });
    expect(consumedUnits('Query', answer)).toEqual({ readUnits: 257, writeUnits: 0 });
  });

  it('takes ReadCapacityUnits and WriteCapacityUnits when the engine splits them', () => {
    const answer = body({
      ConsumedCapacity: { TableName: 't', CapacityUnits: 6, ReadCapacityUnits: 2, WriteCapacityUnits: 4 },
    });
    expect(consumedUnits('TransactWriteItems', answer)).toEqual({ readUnits: 2, writeUnits: 4 });
  });

  it('sums a list of per-table entries (batches, transactions) and half units of eventually consistent reads', () => {
    const answer = JSON.stringify({
      Responses: {},
      ConsumedCapacity: [
        { TableName: 'a', CapacityUnits: 1.5 },
        { TableName: 'b', CapacityUnits: 2 },
      ],
    });
    expect(consumedUnits('BatchGetItem', answer)).toEqual({ readUnits: 3.5, writeUnits: 0 });
    expect(consumedUnits('BatchWriteItem', answer)).toEqual({ readUnits: 0, writeUnits: 3.5 });
  });

  it('reports nothing for an answer without ConsumedCapacity or one that is not JSON', () => {
    expect(consumedUnits('UpdateItem', body({ Attributes: {} }))).toBeUndefined();
    expect(
      consumedUnits('UpdateItem', body({ __type: 'x#ConditionalCheckFailedException', message: 'no' })),
    ).toBeUndefined();
    expect(consumedUnits('GetItem', 'not json')).toBeUndefined();
    expect(consumedUnits('GetItem', 'null')).toBeUndefined();
  });
});
