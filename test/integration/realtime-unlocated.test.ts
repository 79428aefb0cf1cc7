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
import { content, newProject, post } from '../support/api';
import { incarnationOf, segmentsOf } from '../support/segments';

/** Waits until the server's own consumer has logged a change (so `since` is a logged revision). */
async function loggedRevision(inc: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const last = await lastRevision(inc);
    if (BigInt(last) > 0n) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('no change logged');
}

/** A stream record of a segment, as DynamoDB Streams hands it over (NEW_AND_OLD_IMAGES). */
function recordOf(sequence: bigint, old: Segment | undefined, now: Segment | undefined): DynamoDBRecord {
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
    const since = await loggedRevision(inc);
    // The segment removed by a later commit (sub small again: folded into the root).
    expect((await post(p, 'set', { path: 'sub', value: 1 })).status).toBe(200);
    expect((await segmentsOf(p)).map((s) => s.key)).toEqual([ROOT_KEY]);

    const sequence = BigInt(since) + 1_000_000n;
    const record = (n: bigint, newImage: Record<string, unknown>): DynamoDBRecord => ({
      eventName: 'MODIFY',
      dynamodb: {
        Keys: { pk: old.pk, sk: old.sk } as never,
        SequenceNumber: n.toString(),
        OldImage: old as never,
        NewImage: newImage as never,
      },
    });
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

  it.each([
    ['in the same batch', true],
    ['in a later batch', false],
  ])(
    'an insert that rewrote a chunked array in place, read after the array was removed (removal %s)',
    async (_, removalWith) => {
      const p = await newProject();
      const inc = await incarnationOf(p);
      const entry = (i: number) => ({ i, note: 'n'.repeat(Math.ceil(fragmentBytes() / 40)) });
      for (let i = 0; i < 59; i++) expect((await post(p, 'push', { path: 'log', value: entry(i) })).status).toBe(200);
      // This consumer learns where the array's segments are from a record it reads while they are there, as the
      // stream function has from the records before.
      const start = await segmentsOf(p);
      expect((await post(p, 'push', { path: 'log', value: entry(59) })).status).toBe(200);
      const before = await segmentsOf(p);
      expect(before.length).toBeGreaterThan(2);
      const sequence = BigInt(Date.now() + 60_000) * 1000n;
      await consume(commitRecords(start, before, sequence));
      const old = (await content(p, 'log')) as unknown[];
      // An insert at the front rewrites every chunk in place (elements keep no index).
      expect((await post(p, 'insert', { path: 'log', value: 'first', index: 0 })).status).toBe(200);
      const after = await segmentsOf(p);
      // A later commit removes the array and its chunks before the consumer reads the insert's records.
      expect((await post(p, 'set', { path: 'log', value: 1 })).status).toBe(200);
      const gone = await segmentsOf(p);
      const insert = commitRecords(before, after, sequence + 1000n);
      const removal = commitRecords(after, gone, sequence + 2000n).filter((r) => r.eventName === 'REMOVE');
      await consume(removalWith ? [...insert, ...removal] : insert);

      // Its value and the value it replaced, whole, from its own records: logged for replay and for the history.
      const { entries } = await historyPage(inc, { after: formatRevision(sequence), newestFirst: false });
      // (Its chunks' records, stamped, are logged as commits that changed nothing.)
      const logged = entries
        .filter((e) => e.changes?.length !== 0)
        .map((e) => ({ rewindable: e.rewindable, changes: e.changes }));
      expect(JSON.parse(stringify(logged) as string)).toEqual([
        { rewindable: true, changes: [{ path: ['log'], value: ['first', ...old], was: old }] },
      ]);
    },
  );
});
