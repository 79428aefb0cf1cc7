// A stream record read after a later commit removed its segment (the consumer lags behind the writers, as it does
// behind three API processes): a fold or re-cut carried the record's value into new segments, so that commit's diff
// finds it unchanged and never reports it. The record's change must not be lost: it is logged (and sent) as
// `changed`, clients read the value. A record that changed no content (a revocation's stamp) says nothing. A commit
// that rewrote segments in place has their images in its own records: its value and the value it replaced come from
// them, though the segments are gone by the time the consumer reads.
import type { DynamoDBRecord } from 'aws-lambda';
import { stringify } from 'lossless-json';
import { ROOT_KEY } from '../../lib/storage/layout/keys';
import { fragmentBytes } from '../../lib/config/env';
import { consume } from '../../lib/realtime/consumer';
import { changesSince, historyPage, lastRevision } from '../../lib/realtime/change-log';
import type { Segment } from '../../lib/storage/segment';
import { formatRevision } from '../../lib/realtime/revisions';
import { A } from '../../lib/schema/attributes';
import type { Json } from '../../lib/content/json';
import { type RewindEntry, rewind } from '../../lib/history/rewind';
import { toWire } from '../../lib/storage';
import { content, newProject, post } from '../support/api';
import { applyChanges } from '../support/realtime';
import { incarnationOf, segmentsOf } from '../support/segments';

/**
 * Waits until the server's own consumer has logged `count` of the project's commits: it then knows the project's last
 * revision, and gives its later commits their own stream numbers, below the ones this test makes up.
 */
async function serverLogged(inc: string, count: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await historyPage(inc, { newestFirst: false })).entries.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the server never logged ${count} commits`);
}

/** A stream record of a segment, as DynamoDB Streams hands it over (NEW_AND_OLD_IMAGES). */
function recordOf(
  sequence: bigint,
  old: Pick<Segment, 'raw'> | undefined,
  now: Pick<Segment, 'raw'> | undefined,
): DynamoDBRecord {
  const raw = (now ?? old)?.raw as Record<string, unknown>;
  return {
    eventName: !old ? 'INSERT' : !now ? 'REMOVE' : 'MODIFY',
    dynamodb: {
      Keys: { pk: raw.pk, sk: raw.sk } as never,
      SequenceNumber: sequence.toString(),
      ...(old ? { OldImage: old.raw as never } : {}),
      ...(now ? { NewImage: now.raw as never } : {}),
    },
  };
}

/** The records one commit's writes left: each segment it wrote, added or removed, from the segments around it. */
function commitRecords(before: Segment[], after: Segment[], sequence: bigint): DynamoDBRecord[] {
  const old = new Map(before.map((s) => [s.key, s]));
  const now = new Map(after.map((s) => [s.key, s]));
  const keys = [...new Set([...old.keys(), ...now.keys()])].filter(
    (k) => JSON.stringify(old.get(k)?.raw) !== JSON.stringify(now.get(k)?.raw),
  );
  return keys.map((k, i) => recordOf(sequence + BigInt(i), old.get(k), now.get(k)));
}

describe('realtime: a record whose segment a later commit removed', () => {
  it('is logged as changed when it changed content, and says nothing when it changed none', async () => {
    const p = await newProject();
    const inc = await incarnationOf(p);
    const blob = 'x'.repeat(Math.ceil(fragmentBytes() * 0.4));
    // sub a segment of its own (its values too large to stay in the root).
    expect((await post(p, 'set', { path: 'sub', value: { a: blob, b: blob, c: blob } })).status).toBe(200);
    const segment = (await segmentsOf(p)).find((s) => s.key !== ROOT_KEY);
    expect(segment).toBeDefined();
    const old = segment?.raw as Record<string, unknown>;
    await serverLogged(inc, 1);
    const since = await lastRevision(inc);
    // The segment removed by a later commit (sub small again: folded into the root).
    expect((await post(p, 'set', { path: 'sub', value: 1 })).status).toBe(200);
    expect((await segmentsOf(p)).map((s) => s.key)).toEqual([ROOT_KEY]);

    const sequence = BigInt(since) + 1_000_000n;
    const record = (n: bigint, raw: Record<string, unknown>) =>
      recordOf(n, { raw: old as Segment['raw'] }, { raw: raw as Segment['raw'] });
    // A write to it that the consumer reads only now: its content changed.
    const written = { ...old, [A.content]: { M: { a: { S: 'y' } } }, [A.version]: { N: '99' } };
    // A stamp: the same content, another grant epoch.
    const stamped = { ...old, [A.grantEpoch]: { N: '99' } };
    await consume([record(sequence, written), record(sequence + 1n, stamped)]);

    const logged = await changesSince(inc, since);
    expect(logged?.filter((e) => BigInt(e.revision) > BigInt(since) + 999_999n)).toEqual([
      { revision: formatRevision(sequence), changes: undefined },
    ]);
  });

  // Each case: where the insert is (at the default segment size, 0: every chunk rewritten; 60: the first chunks kept
  // as they were; 110: the array's own tail), whether a write to element 5 comes between, and whether the removal's
  // records come in the same stream batch. A chunk the insert kept, gone before the consumer reads it, is known from
  // its REMOVE image only when that comes in the batch with no record of it between; else the entry cannot be
  // rewound (a read before it answers 409), and never holds another commit's value.
  it.each([
    { index: 0, between: false, sameBatch: true },
    { index: 0, between: false, sameBatch: false },
    { index: 60, between: false, sameBatch: true },
    { index: 60, between: false, sameBatch: false },
    { index: 60, between: true, sameBatch: true },
    { index: 110, between: false, sameBatch: true },
    { index: 110, between: false, sameBatch: false },
  ])(
    'an insert at $index that rewrote a chunked array in place, read after the array was removed (a write between: $between, removal in the same batch: $sameBatch)',
    async ({ index, between, sameBatch }) => {
      const p = await newProject();
      const inc = await incarnationOf(p);
      const entry = (i: number) => ({ i, note: 'n'.repeat(Math.ceil(fragmentBytes() / 40)) });
      for (let i = 0; i < 119; i++) expect((await post(p, 'push', { path: 'log', value: entry(i) })).status).toBe(200);
      // This consumer learns where the array's segments are from a record it reads while they are there, as the
      // stream function has from the records before.
      const start = await segmentsOf(p);
      expect((await post(p, 'push', { path: 'log', value: entry(119) })).status).toBe(200);
      const before = await segmentsOf(p);
      expect(before.length).toBeGreaterThan(2);
      await serverLogged(inc, 120);
      const sequence = BigInt(Date.now() + 60_000) * 1000n;
      await consume(commitRecords(start, before, sequence));
      const old = (await content(p, 'log')) as unknown[];
      // An insert rewrites the chunks from its index on in place (their elements move up).
      expect((await post(p, 'insert', { path: 'log', value: 'first', index })).status).toBe(200);
      const after = await segmentsOf(p);
      if (between) expect((await post(p, 'set', { path: 'log.5.note', value: 'later' })).status).toBe(200);
      const written = await segmentsOf(p);
      // A later commit removes the array and its chunks before the consumer reads the insert's records.
      expect((await post(p, 'set', { path: 'log', value: 1 })).status).toBe(200);
      const gone = await segmentsOf(p);
      const insert = commitRecords(before, after, sequence + 1000n);
      const write = commitRecords(after, written, sequence + 2000n);
      const removal = commitRecords(written, gone, sequence + 3000n).filter((r) => r.eventName === 'REMOVE');
      await consume(sameBatch ? [...insert, ...write, ...removal] : insert);

      // Whether every segment the insert kept is known as it was: its REMOVE in the batch, nothing written between.
      const image = (segments: Segment[], key: string) => JSON.stringify(segments.find((s) => s.key === key)?.raw);
      const keptKeys = before.map((s) => s.key).filter((k) => k !== ROOT_KEY && image(before, k) === image(after, k));
      const kept = keptKeys.every((k) => sameBatch && image(after, k) === image(written, k));

      // From the insert's first record on: a server consumer that no longer remembers the project's last revision
      // would log its real writes right after the revisions this test made up.
      const { entries } = await historyPage(inc, { after: formatRevision(sequence + 999n), newestFirst: false });
      // (Its chunks' records, stamped, are logged as commits that changed nothing.)
      const [logged] = entries.filter((e) => e.changes?.length !== 0);
      // Known, the entry is whole. Not known, it is whole only where the change did not need those chunks (an insert
      // in the array's own tail), else "read it" and not rewindable.
      if (kept) expect(logged?.rewindable).toBe(true);
      if (!logged?.rewindable) {
        expect(logged).toMatchObject({ rewindable: false, changes: undefined });
        return;
      }
      // Its values and the values it replaced: an entry that takes the array from the old value to the new (what
      // subscribers replay) and back (what the history rewinds).
      const plain = (value: unknown) => JSON.parse(stringify(value) as string);
      const changes = plain((logged?.changes ?? []).map(toWire));
      const inserted = old.toSpliced(index, 0, 'first');
      expect(applyChanges({ log: structuredClone(old) }, changes)).toEqual({ log: inserted });
      expect(plain(rewind(inserted as Json, ['log'], [logged as RewindEntry]))).toEqual(old);
    },
  );
});
