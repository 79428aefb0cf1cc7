// The table's change stream, locally: the records DynamoDB Streams would deliver (NEW_AND_OLD_IMAGES, in commit
// order), from the embedded engine's own writes, or read from DynamoDB Local's real stream. Both hand the same
// record shape (the one a Lambda's DynamoDB stream event carries) to the same listener.
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import db from 'dynalite/db';

export type ChangeRecord = DynamoDBRecord;
export type ChangeListener = (records: ChangeRecord[]) => void;

type Attributes = Record<string, unknown>;
interface Table {
  TableName: string;
  KeySchema: Array<{ AttributeName: string }>;
}

const listeners = new Set<ChangeListener>();
/**
 * The last sequence number handed out. Revisions are sequence numbers and must only grow, across restarts of the
 * process on its data folder too (clients drop a revision not above the last they saw): each is the greater of the
 * last plus one and the clock in microseconds, so a restart starts above every number the last run gave, short of
 * a run averaging over a million records a second or a clock set back past the last run.
 */
let sequence = 0n;
/** While a transaction applies its writes, their records wait here: they appear when it commits, never if it is undone. */
let held: ChangeRecord[] | undefined;

function recordOf(
  table: Table,
  existing: Attributes | null | undefined,
  item: Attributes | null | undefined,
): ChangeRecord {
  const image = (item ?? existing) as Attributes;
  const keys: Attributes = {};
  for (const { AttributeName } of table.KeySchema) keys[AttributeName] = image[AttributeName];
  const now = BigInt(Date.now()) * 1000n;
  sequence = sequence + 1n > now ? sequence + 1n : now;
  return {
    eventID: `${Date.now().toString(16)}-${sequence}`,
    eventName: !existing ? 'INSERT' : !item ? 'REMOVE' : 'MODIFY',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: process.env.AWS_REGION ?? 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: keys as never,
      ...(item ? { NewImage: item as never } : {}),
      ...(existing ? { OldImage: existing as never } : {}),
      SequenceNumber: sequence.toString().padStart(21, '0'),
      SizeBytes: db.itemSize(image),
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: `arn:aws:dynamodb:local:000000000000:table/${table.TableName}/stream/embedded`,
  };
}

function publish(records: ChangeRecord[]): void {
  if (records.length === 0) return;
  for (const listener of listeners) listener(records);
}

/** Called by the engine for every item it is about to store or delete (dynalite's updateIndexes step). */
export function recordWrite(
  table: Table,
  existing: Attributes | null | undefined,
  item: Attributes | null | undefined,
): void {
  if (listeners.size === 0 || (!existing && !item)) return;
  const record = recordOf(table, existing, item);
  if (held) held.push(record);
  else publish([record]);
}

/** A transaction's writes: records are held until `commit`, dropped by `discard`. */
export function holdRecords(): { commit(): void; discard(): void } {
  held = [];
  return {
    commit() {
      const records = held ?? [];
      held = undefined;
      publish(records);
    },
    discard() {
      held = undefined;
    },
  };
}

/** Listens to the embedded engine's stream; returns the function that stops listening. */
export function listenEmbedded(listener: ChangeListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Converts a record as the Streams API returns it to the Lambda event's shape (dates as epoch seconds). */
function asEventRecord(record: StreamRecord, arn: string): ChangeRecord {
  const change = record.dynamodb ?? {};
  const created = change.ApproximateCreationDateTime;
  return {
    ...(record as unknown as ChangeRecord),
    eventSourceARN: arn,
    dynamodb: {
      ...(change as NonNullable<ChangeRecord['dynamodb']>),
      ApproximateCreationDateTime:
        created instanceof Date ? Math.floor(created.getTime() / 1000) : (created as number | undefined),
    },
  };
}

/**
 * Reads DynamoDB Local's stream of `table` from its latest position, shard by shard, and hands each batch of
 * records to the listener; returns the function that stops reading.
 */
export async function listenDynamoDbLocal(
  client: DynamoDBClient,
  tableName: string,
  listener: ChangeListener,
  options: { pollMs?: number; onError: (error: unknown) => void },
): Promise<() => void> {
  const { pollMs = 50, onError } = options;
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const arn = Table?.LatestStreamArn;
  if (!arn) throw new Error(`table ${tableName} has no stream`);
  const config = await client.config.endpoint?.();
  const streams = new DynamoDBStreamsClient({
    region: await client.config.region(),
    credentials: client.config.credentials,
    ...(config
      ? { endpoint: `${config.protocol}//${config.hostname}${config.port ? `:${config.port}` : ''}${config.path}` }
      : {}),
  });
  let stopped = false;
  const iterators = new Map<string, string | undefined>();
  /** The last record read per shard: where to resume when DynamoDB Local refuses an iterator. */
  const last = new Map<string, string>();
  const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: arn }));
  for (const shard of StreamDescription?.Shards ?? []) {
    if (shard.SequenceNumberRange?.EndingSequenceNumber) continue;
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard.ShardId, ShardIteratorType: 'LATEST' }),
    );
    iterators.set(shard.ShardId as string, ShardIterator);
  }
  /** One GetRecords for one shard: whether it handed over records. */
  const poll = async (shard: string, iterator: string): Promise<boolean> => {
    let page: GetRecordsCommandOutput;
    try {
      page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
    } catch (error) {
      // Under load DynamoDB Local sometimes calls a LATEST iterator trimmed or expired: resume after the last
      // record read, or (nothing read yet) from the shard's start, which may hand over records from before.
      const name = (error as Error).name;
      if (name !== 'TrimmedDataAccessException' && name !== 'ExpiredIteratorException') throw error;
      const after = last.get(shard);
      const { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: arn,
          ShardId: shard,
          ...(after
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
      iterators.set(shard, ShardIterator);
      return false;
    }
    const { NextShardIterator, Records } = page;
    iterators.set(shard, NextShardIterator);
    const newest = Records?.at(-1)?.dynamodb?.SequenceNumber;
    if (newest) last.set(shard, newest);
    if (!Records || Records.length === 0) return false;
    listener(Records.map((record) => asEventRecord(record, arn)));
    return true;
  };
  void (async () => {
    while (!stopped) {
      let any = false;
      for (const [shard, iterator] of iterators) {
        if (!iterator) continue;
        try {
          any = (await poll(shard, iterator)) || any;
        } catch (error) {
          // A failed poll (the engine down, a malformed answer) keeps its iterator and is tried again after a
          // pause: thrown out of this loop it would be an unhandled rejection, which ends the whole process.
          onError(error);
        }
      }
      if (!any) await sleep(pollMs);
    }
    streams.destroy();
  })();
  return () => {
    stopped = true;
  };
}
