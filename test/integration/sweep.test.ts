// The sweeper (docs/design/storage.md §7.4): a change over 100 items interrupted between its requests leaves its
// pending-commit marker, and the sweep removes exactly what the change left (children never committed, orphans not
// yet deleted), while the content reads as before the change (interrupted before the commit) or after it (after).
// The change is `commitRewrite` called here, on a project served by the integration server, with faults injected
// into this process's DynamoDB client; run at SEGMENT_FRAGMENT_BYTES=256 (npm run test:segments) it is cheap.
import { newCommitToken, newSegmentId } from '../../lib/storage/ids';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  GetItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { fragmentBytes } from '../../lib/config/env';
import { ROOT_KEY, contentPk } from '../../lib/storage/layout/keys';
import { cut } from '../../lib/storage/layout/cut';
import { stubsUnderOf } from '../../lib/storage/layout/stubs';
import { type Json, storedSize } from '../../lib/content/json';
import { dynamo } from '../../lib/dynamo/client';
import { type UpdateRequest, compileWrite } from '../../lib/expressions';
import { A } from '../../lib/schema/attributes';
import { itemKeyAttributes, projectPk } from '../../lib/schema/items';
import { type Committed, type Rewrite, commitRewrite } from '../../lib/storage/io/commit';
import { MARKER, MARKER_PREFIX } from '../../lib/storage/io/markers';
import { getSegment, querySubtree } from '../../lib/storage/io/read';
import { handler as sweepHandler } from '../../functions/sweep';
import { type Project, call, project, state } from '../support/api';
import { segmentsOf, strays } from '../support/segments';

const text = (n: number, c: string) => c.repeat(n);
const SIZE = Math.max(40, Math.floor(fragmentBytes() / 3));

/** Contents that span well over 100 segments, in each shape a value takes in storage. */
const SHAPES: Record<string, (n: number, tag: string) => Record<string, Json>> = {
  // Object members moved out to segments of their own (under a bucketed root when there are many).
  sections: (n, tag) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i}`, { n: i, t: text(SIZE, tag) }])),
  // A long array: chunks under a chunk stub.
  'chunked array': (n, tag) => ({ log: Array.from({ length: n }, (_, i) => `${tag}${i}${text(SIZE, tag)}`) }),
  // Nested objects several levels deep, with an odd member name.
  nested: (n, tag) => ({
    'a b.c': Object.fromEntries(
      Array.from({ length: Math.ceil(n / 2) }, (_, i) => [
        `k${i}`,
        { deep: { v: text(SIZE, tag) }, w: { v: `${tag}${i}${text(SIZE / 2, tag)}` } },
      ]),
    ),
  }),
};
/** Enough elements that the content spans more segments than one transaction holds, at any SEGMENT_FRAGMENT_BYTES. */
const COUNT = Math.ceil((140 * fragmentBytes()) / (SIZE + 20));

async function incOf(p: Project): Promise<string> {
  const { Item } = await dynamo.send(
    new GetItemCommand({
      TableName: process.env.TABLE_NAME,
      Key: itemKeyAttributes(projectPk({ username: p.username, slug: p.slug })),
      ConsistentRead: true,
    }),
  );
  return Item?.[A.incarnation]?.S as string;
}

/** The change `update` makes: the root rewritten to `content` cut afresh, every segment below it dropped. */
async function replaceAll(p: Project, content: Json, version?: number): Promise<Rewrite> {
  const inc = await incOf(p);
  const root = await getSegment(inc, ROOT_KEY);
  if (!root) throw new Error('no root segment');
  const [top, ...children] = cut(ROOT_KEY, content, { limit: fragmentBytes(), newId: newSegmentId });
  const tx = newCommitToken();
  const update = compileWrite(
    { action: { kind: 'set', steps: [], value: top?.fragment as Json }, guards: [] },
    {
      access: { ge: root.epoch, inc },
      budget: fragmentBytes(),
      requestToken: randomBytes(16).toString('base64url'),
      slot: 0,
      expectedVersion: version ?? root.version,
      size: { exact: storedSize(top?.fragment as Json) },
      stubsUnder: stubsUnderOf(top?.fragment as Json),
      commit: { token: tx },
    },
  ) as UpdateRequest;
  const below = [...(await querySubtree(inc, ROOT_KEY, { keysOnly: true })).values()].filter((s) => s.key !== ROOT_KEY);
  return {
    inc,
    epoch: root.epoch,
    tx,
    parent: { key: ROOT_KEY, update },
    children,
    orphans: below.map((s) => ({ key: s.key, version: s.version })),
  };
}

async function markersOf(p: Project): Promise<Record<string, AttributeValue>[]> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: process.env.TABLE_NAME,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :m)',
      ExpressionAttributeValues: { ':pk': { S: contentPk(await incOf(p)) }, ':m': { S: MARKER_PREFIX } },
      ConsistentRead: true,
    }),
  );
  return Items ?? [];
}

type Send = (command: unknown) => Promise<unknown>;
/** Runs `fn` with `intercept` in front of this process's DynamoDB client (it calls `pass` to send). */
async function withFaults<T>(
  intercept: (command: unknown, pass: () => Promise<unknown>) => Promise<unknown>,
  fn: () => Promise<T>,
): Promise<T> {
  const original = dynamo.send.bind(dynamo) as Send;
  const spy = jest
    .spyOn(dynamo, 'send')
    .mockImplementation(((command: unknown) => intercept(command, () => original(command))) as never);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}
const died = () => Object.assign(new Error('the Lambda was stopped (injected)'), { name: 'TimeoutError' });
const isTransaction = (c: unknown) => c instanceof TransactWriteItemsCommand;
const isBatchDelete = (c: unknown) =>
  c instanceof BatchWriteItemCommand &&
  Object.values(c.input.RequestItems ?? {}).some((requests) => requests.some((r) => r.DeleteRequest));

/** One run of the scheduled handler with markers settled after `afterMs`. */
async function sweepOnce(afterMs: number) {
  const before = process.env.SWEEP_AFTER_MS;
  process.env.SWEEP_AFTER_MS = String(afterMs);
  try {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return await sweepHandler();
  } finally {
    if (before === undefined) delete process.env.SWEEP_AFTER_MS;
    else process.env.SWEEP_AFTER_MS = before;
  }
}

/**
 * A sweep that settles this project's marker and none younger (other suites' changes may be in flight on the same
 * engine): the threshold is just under the marker's age.
 */
async function sweepMine(p: Project) {
  const [marker] = await markersOf(p);
  const at = Number(marker?.[MARKER.at]?.N);
  await new Promise((resolve) => setTimeout(resolve, 5));
  return sweepOnce(Math.max(0, Date.now() - at - 2));
}

const clean = { orphans: [], dangling: [] };

describe.each(Object.keys(SHAPES))('a change over 100 items on %s content', (shape) => {
  const make = SHAPES[shape] as (n: number, tag: string) => Record<string, Json>;
  const before = make(COUNT, 'a');
  const after = make(COUNT, 'b');

  it('is over 100 items, and an uninterrupted one leaves nothing: no stray segment, no marker', async () => {
    const p = await project(before);
    expect((await segmentsOf(p)).length).toBeGreaterThan(100);
    const rewrite = await replaceAll(p, after);
    expect(rewrite.children.length + rewrite.orphans.length).toBeGreaterThan(100);
    expect(await commitRewrite(rewrite)).toEqual({ ok: true });
    expect((await state(p)).value).toEqual(after);
    expect(await strays(p)).toEqual(clean);
    expect(await markersOf(p)).toEqual([]);
  });

  it('interrupted after its children were written, before the commit: the sweep removes them, content as before', async () => {
    const p = await project(before);
    const rewrite = await replaceAll(p, after);
    await expect(
      withFaults(
        (c, pass) => (isTransaction(c) ? Promise.reject(died()) : pass()),
        () => commitRewrite(rewrite),
      ),
    ).rejects.toThrow('injected');
    // Left behind: the children (unreachable, never read) and the pending marker.
    const left = await strays(p);
    expect(left.dangling).toEqual([]);
    expect(left.orphans.length).toBeGreaterThanOrEqual(rewrite.children.length);
    expect((await markersOf(p)).map((m) => m[MARKER.kind]?.S)).toEqual(['pending']);
    expect((await state(p)).value).toEqual(before);

    // Younger than the threshold: a commit may still be in flight, nothing is touched.
    await sweepOnce(60_000);
    expect((await strays(p)).orphans).toEqual(left.orphans);
    expect((await markersOf(p)).map((m) => m[MARKER.kind]?.S)).toEqual(['pending']);

    const swept = await sweepMine(p);
    expect(swept.markers).toBeGreaterThanOrEqual(1);
    expect(swept.abandoned).toBeGreaterThanOrEqual(1);
    expect(swept.deleted).toBeGreaterThanOrEqual(left.orphans.length);
    expect(await strays(p)).toEqual(clean);
    expect(await markersOf(p)).toEqual([]);
    expect((await state(p)).value).toEqual(before);
    // The content still takes writes that span many segments.
    expect(await commitRewrite(await replaceAll(p, after))).toEqual({ ok: true });
    expect((await state(p)).value).toEqual(after);
    expect(await strays(p)).toEqual(clean);
  });

  it('interrupted after the commit, before the trailing deletes: the sweep deletes the orphans, content as after', async () => {
    const p = await project(before);
    const rewrite = await replaceAll(p, after);
    await expect(
      withFaults(
        (c, pass) => (isBatchDelete(c) ? Promise.reject(died()) : pass()),
        () => commitRewrite(rewrite),
      ),
    ).rejects.toThrow('injected');
    const left = await strays(p);
    expect(left.dangling).toEqual([]);
    expect(left.orphans.length).toBeGreaterThan(0);
    expect((await markersOf(p)).map((m) => m[MARKER.kind]?.S)).toEqual(['deletes']);
    expect((await state(p)).value).toEqual(after);

    await sweepOnce(60_000);
    expect((await strays(p)).orphans).toEqual(left.orphans);
    expect((await markersOf(p)).map((m) => m[MARKER.kind]?.S)).toEqual(['deletes']);

    const swept = await sweepMine(p);
    expect(swept.markers).toBeGreaterThanOrEqual(1);
    expect(swept.deleted).toBeGreaterThanOrEqual(left.orphans.length);
    expect(await strays(p)).toEqual(clean);
    expect(await markersOf(p)).toEqual([]);
    expect((await state(p)).value).toEqual(after);
  });

  it('a sweep while the commit is in flight (marker younger than the threshold) deletes nothing; the commit lands', async () => {
    const p = await project(before);
    const rewrite = await replaceAll(p, after);
    const seen: string[] = [];
    const committed = await withFaults(
      async (c, pass) => {
        if (isTransaction(c)) {
          await sweepOnce(60_000);
          // The sweep left the marker pending and the children in place.
          seen.push(...(await markersOf(p)).map((m) => m[MARKER.kind]?.S as string));
          seen.push(`${(await strays(p)).orphans.length >= rewrite.children.length}`);
        }
        return pass();
      },
      () => commitRewrite(rewrite),
    );
    expect(seen).toEqual(['pending', 'true']);
    expect(committed).toEqual({ ok: true });
    expect((await state(p)).value).toEqual(after);
    expect(await strays(p)).toEqual(clean);
    expect(await markersOf(p)).toEqual([]);
  });

  it('a commit that arrives after the sweep claimed its marker is refused: its children never become visible', async () => {
    const p = await project(before);
    const rewrite = await replaceAll(p, after);
    const committed: Committed = await withFaults(
      async (c, pass) => {
        // The request stalled past the threshold: the sweep settles its marker first.
        if (isTransaction(c)) expect((await sweepMine(p)).abandoned).toBeGreaterThanOrEqual(1);
        return pass();
      },
      () => commitRewrite(rewrite),
    );
    expect(committed).toMatchObject({ ok: false });
    expect((await state(p)).value).toEqual(before);
    expect(await strays(p)).toEqual(clean);
    expect(await markersOf(p)).toEqual([]);
  });

  it('a commit refused by its condition deletes its children and marker at once', async () => {
    const p = await project(before);
    const root = await getSegment(await incOf(p), ROOT_KEY);
    const rewrite = await replaceAll(p, after, (root?.version ?? 0) + 7);
    expect(await commitRewrite(rewrite)).toMatchObject({ ok: false });
    expect((await state(p)).value).toEqual(before);
    expect(await strays(p)).toEqual(clean);
    expect(await markersOf(p)).toEqual([]);
  });
});

describe('a change interrupted before its commit, its new segments larger than a response', () => {
  // Each a segment of its own (a string is never cut), whatever SEGMENT_FRAGMENT_BYTES: 4.7 MiB in 16 segments.
  const huge = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`s${i}`, text(300 * 1024, String(i % 10))]));

  it('reads of the whole content and of its parts never count what no stub names: the same value and ETag', async () => {
    const B = fragmentBytes();
    const before = { a: { t: text(Math.ceil(B * 0.6), 'a') }, b: { t: text(Math.ceil(B * 0.6), 'b') }, n: 1 };
    const p = await project(before);
    const read = async (path?: string) => {
      const r = await call('GET', `${p.content}${path ? `?path=${path}` : ''}`, { token: p.key });
      return { status: r.status, value: r.body.value, etag: r.headers.get('etag') };
    };
    const whole = await read();
    const part = await read('a');
    expect(whole.status).toBe(200);
    const rewrite = await replaceAll(p, huge);
    await expect(
      withFaults(
        (c, pass) => (isTransaction(c) ? Promise.reject(died()) : pass()),
        () => commitRewrite(rewrite),
      ),
    ).rejects.toThrow('injected');
    // Left behind, under the root's key prefix: 4.7 MiB no stub names, until the sweeper runs.
    expect((await strays(p)).orphans.length).toBeGreaterThanOrEqual(16);
    expect(await read()).toEqual(whole);
    expect(await read('a')).toEqual(part);
    // A batch and a patch through the content plan on what stubs name too (and land).
    const batch = await call('POST', `${p.content}/batch`, {
      token: p.key,
      body: {
        operations: [
          { op: 'test', path: 'a', value: before.a },
          { op: 'increment', path: 'n' },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect((await read()).value).toEqual({ ...before, n: 2 });
    await sweepMine(p);
    expect(await strays(p)).toEqual(clean);
    expect((await read()).value).toEqual({ ...before, n: 2 });
  });
});
