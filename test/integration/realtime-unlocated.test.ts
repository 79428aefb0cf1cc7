// A stream record read after a later commit removed its segment (the consumer lags behind the writers, as it does
// behind three API processes): a fold or re-cut carried the record's value into new segments, so that commit's diff
// finds it unchanged and never reports it. The record's change must not be lost: it is logged (and sent) as
// `changed`, clients read the value. A record that changed no content (a revocation's stamp) says nothing.
import type { DynamoDBRecord } from 'aws-lambda';
import { ROOT_KEY } from '../../lib/storage/layout/keys';
import { fragmentBytes } from '../../lib/config/env';
import { consume } from '../../lib/realtime/consumer';
import { changesSince, lastRevision } from '../../lib/realtime/change-log';
import { formatRevision } from '../../lib/realtime/revisions';
import { A } from '../../lib/schema/attributes';
import { newProject, post } from '../support/api';
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
});
