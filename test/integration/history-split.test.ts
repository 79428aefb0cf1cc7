// One commit's stream records split over two batches (issue 31): a stream need not keep a transaction's records
// together (DynamoDB Local splits them, so may AWS), and the consumer may lag behind later commits that rewrote the
// same segments. However its records are cut, the commit's history entry must end rewindable, with the exact values
// and old values. The decoding reads the table (segments not in the records), so it runs here on a real engine: the
// records are the ones Streams would carry (NEW_AND_OLD_IMAGES), built from the segments before and after the commit,
// and fed to the consumer of this process at revisions of their own.
import type { DynamoDBRecord } from 'aws-lambda';
import { stringify } from 'lossless-json';
import { fragmentBytes } from '../../lib/config/env';
import { historyEntry } from '../../lib/realtime/change-log';
import { consume } from '../../lib/realtime/consumer';
import { formatRevision } from '../../lib/realtime/revisions';
import { valueBelow } from '../../lib/storage/feed/changes';
import type { Segment } from '../../lib/storage/segment';
import { type Project, call, newProject, post } from '../support/api';
import { incarnationOf, segmentsOf } from '../support/segments';

/** A chunked array of the same layout whatever the fragment size (its chunks' records are what is cut). */
const list = Array.from({ length: 60 }, (_, i) => `${i}`.padEnd(Math.floor(fragmentBytes() / 30), 'x'));

/**
 * Commits that change several segments in place, each with a later commit that rewrites some of the same segments
 * before the consumer reads the first one's records (it lags behind): an insert's and a delete's chunks rewritten in
 * place, and a batch whose top segment (the root) has a partner (the array's segment, its newest elements).
 */
const commits: Record<string, { count: number; write: Write; later: Write }> = {
  'a delete in the middle of a chunked array': {
    count: 3,
    write: (p) => post(p, 'delete', { path: 'list.20' }),
    later: (p) => post(p, 'delete', { path: 'list.5' }),
  },
  'an insert in the middle of a chunked array': {
    count: 3,
    write: (p) => post(p, 'insert', { path: 'list', index: 10, value: 'in' }),
    later: (p) => post(p, 'insert', { path: 'list', index: 0, value: 'first' }),
  },
  'a batch: a set beside a push to a chunked array': {
    count: 2,
    write: (p) =>
      post(p, 'batch', {
        operations: [
          { op: 'set', path: 'n', value: 2 },
          { op: 'push', path: 'list', value: 'pushed' },
        ],
      }),
    later: (p) => post(p, 'push', { path: 'list', value: 'later' }),
  },
};
type Write = (p: Project) => Promise<{ status: number }>;

/** The stream records of one commit: each segment it inserted, modified or removed, the top segment's first. */
function recordsOf(before: Segment[], after: Segment[], top: string, sequence: bigint): DynamoDBRecord[] {
  const old = new Map(before.map((s) => [s.key, s.raw]));
  const now = new Map(after.map((s) => [s.key, s.raw]));
  const keys = [...new Set([...old.keys(), ...now.keys()])]
    .filter((k) => JSON.stringify(old.get(k)) !== JSON.stringify(now.get(k)))
    .sort((a, b) => (a === top ? -1 : b === top ? 1 : a < b ? -1 : 1));
  return keys.map((key, i) => {
    const [o, n] = [old.get(key), now.get(key)];
    const image = (o ?? n) as Record<string, unknown>;
    return {
      eventName: !o ? 'INSERT' : !n ? 'REMOVE' : 'MODIFY',
      dynamodb: {
        Keys: { pk: image.pk, sk: image.sk } as never,
        SequenceNumber: (sequence + BigInt(i)).toString(),
        ...(o ? { OldImage: o as never } : {}),
        ...(n ? { NewImage: n as never } : {}),
      },
    };
  });
}

/** A value as plain JSON (the log keeps numbers exact, as lossless JSON). */
const plain = (value: unknown) => (value === undefined ? undefined : JSON.parse(stringify(value) as string));

const content = async (p: Project) => (await call('GET', p.content, { token: p.key })).body.value;

/** Every way to cut `count` records in two non-empty batches, the top segment's record first or last. */
const cuts = (count: number) =>
  [false, true].flatMap((topLast) => Array.from({ length: count - 1 }, (_, i) => ({ topLast, at: i + 1 })));

describe('history: a commit whose records arrive in two batches', () => {
  const cases = Object.entries(commits).flatMap(([name, { count }]) =>
    cuts(count).map(({ topLast, at }) => [name, topLast ? 'last' : 'first', at] as const),
  );

  it.each(cases)(
    '%s, top segment %s, cut after %i records: logged whole once the rest comes',
    async (name, where, at) => {
      const commit = commits[name] as (typeof commits)[string];
      const p = await newProject();
      const setUp = [
        { op: 'set', path: 'list', value: list },
        { op: 'set', path: 'n', value: 1 },
      ];
      expect((await post(p, 'batch', { operations: setUp })).status).toBe(200);
      const inc = await incarnationOf(p);
      const [before, was] = [await segmentsOf(p), await content(p)];
      expect((await commit.write(p)).status).toBe(200);
      const [after, is] = [await segmentsOf(p), await content(p)];
      expect((await commit.later(p)).status).toBe(200);
      // The top segment: the highest of those the commit changed in place (its record names the others).
      const changed = before.filter((s) => after.find((a) => a.key === s.key)?.version !== s.version);
      const top = changed.map((s) => s.key).sort((x, y) => x.length - y.length)[0] as string;
      const records = recordsOf(before, after, top, BigInt(Date.now()) * 1000n + 10n ** 12n);
      expect(records.map((r) => r.eventName)).toEqual(Array(commit.count).fill('MODIFY'));
      const ordered = where === 'last' ? [...records.slice(1), records[0] as DynamoDBRecord] : records;
      const revision = formatRevision(BigInt(records[0]?.dynamodb?.SequenceNumber as string));
      await consume(ordered.slice(0, at));
      // With its top segment's record the commit is logged at once, as far as known (reads at a revision wait for it).
      if (where === 'first') expect(await historyEntry(inc, revision)).toBeDefined();
      await consume(ordered.slice(at));

      const entry = await historyEntry(inc, revision);
      expect(entry?.rewindable).toBe(true);
      expect(entry?.changes?.length).toBeGreaterThan(0);
      // Each change: the value the commit left there, and exactly the value it replaced.
      for (const change of entry?.changes ?? []) {
        const { path } = change;
        expect({ path, value: 'value' in change ? plain(change.value) : 'deleted' }).toEqual({
          path,
          value: valueBelow(is, path),
        });
        expect({ path, was: plain(change.was) }).toEqual({ path, was: valueBelow(was, path) });
      }
    },
  );
});
