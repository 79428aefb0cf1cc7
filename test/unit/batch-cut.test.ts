// Where a full stream batch may end inside a commit (lib/storage/feed/batch-cut.ts): the trailing records of one
// multi-item commit are left for the next batch, which then starts with all of them.
import type { DynamoDBRecord } from 'aws-lambda';
import { openCommitStart } from '../../lib/storage/feed/batch-cut';

type Kind = 'one' | 'removed' | 'other-item' | 'other-project' | `tx:${string}` | `new:${string}`;

/** A record of project p's content: a one-item write, a removal, a commit's MODIFY (tx) or INSERT (new). */
function record(kind: Kind, i: number): DynamoDBRecord {
  const pk = kind === 'other-project' ? 'C#q' : 'C#p';
  const sk = kind === 'other-item' ? `K#${i}` : `/s${i}/`;
  const [what, tx] = kind.split(':') as [string, string | undefined];
  const image = (t?: string) => ({ pk: { S: pk }, sk: { S: sk }, ...(t ? { tx: { S: t } } : {}) });
  const eventName = what === 'removed' ? 'REMOVE' : what === 'new' ? 'INSERT' : 'MODIFY';
  return {
    eventName,
    dynamodb: {
      Keys: { pk: { S: pk }, sk: { S: sk } },
      SequenceNumber: String(i),
      SizeBytes: 100,
      ...(eventName === 'INSERT' ? {} : { OldImage: image('older') }),
      ...(eventName === 'REMOVE' ? {} : { NewImage: image(what === 'tx' || what === 'new' ? tx : undefined) }),
    },
  } as DynamoDBRecord;
}

const batch = (...kinds: Kind[]) => kinds.map(record);

describe('openCommitStart', () => {
  test.each<[string, Kind[], number | undefined]>([
    ['a full batch ending in a commit: from its first record', ['one', 'one', 'tx:a', 'new:a'], 2],
    ['its removals and new segments are part of it', ['one', 'tx:b', 'tx:a', 'removed', 'new:a', 'removed'], 2],
    ['a commit then its removals: from the commit', ['one', 'tx:a', 'removed', 'removed'], 1],
    ['trailing removals alone may open a commit', ['one', 'one', 'removed', 'removed'], 2],
    ['a one-item write at the end: nothing to leave', ['tx:a', 'new:a', 'one', 'one'], undefined],
    ['another project’s record at the end: that one alone', ['one', 'one', 'tx:a', 'other-project'], undefined],
    ['an item that is no segment ends the run', ['one', 'tx:a', 'other-item', 'one'], undefined],
    [
      'a commit over the whole batch is not left (it would never move on)',
      ['tx:a', 'new:a', 'removed', 'tx:a'],
      undefined,
    ],
  ])('%s', (_, kinds, expected) => {
    expect(openCommitStart(batch(...kinds), { batchSize: kinds.length })).toBe(expected);
  });

  test('a batch short of its size had every record there was: nothing left', () => {
    expect(openCommitStart(batch('one', 'tx:a', 'new:a'), { batchSize: 100 })).toBeUndefined();
  });

  test('a batch short of its count but past 4 MiB of records may have been cut by size', () => {
    const records = batch('one', 'tx:a', 'new:a').map((r, i) =>
      i === 0 ? { ...r, dynamodb: { ...r.dynamodb, SizeBytes: 5 * 1024 * 1024 } } : r,
    );
    expect(openCommitStart(records, { batchSize: 100 })).toBe(1);
  });
});
