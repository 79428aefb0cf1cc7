// A change's grant-epoch stamping on a project of many segments (docs/design/rules.md, "A change on a large
// project"): a rules change or a revocation answers when every segment carries the new epoch, or, out of time, says
// what is left; the sweeper finishes it; from then on no request with a grant verified before the change succeeds.
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { handler as sweepHandler } from '../../functions/sweep';
import { answerAfterStamping } from '../../lib/http/management-handlers';
import { withDeadline } from '../../lib/dynamo/deadline';
import { dynamo } from '../../lib/dynamo/client';
import { A } from '../../lib/schema/attributes';
import { itemKeyAttributes, projectPk } from '../../lib/schema/items';
import { MARKER } from '../../lib/storage/io/markers';
import { STAMPING_PARTITION } from '../../lib/storage/stamping';
import { putRules, readRules } from '../../lib/store/rules';
import { type Project, call, newProject, post, signJwt, unique } from '../support/api';
import { incarnationOf, segmentsOf } from '../support/segments';

const PARTS = 8;
/** Strings are never cut, so each of these is at least a segment of its own, whatever SEGMENT_FRAGMENT_BYTES. */
const part = (i: number) =>
  Object.fromEntries(Array.from({ length: 20 }, (_, j) => [`s${j}`, `${i}.${j}`.padEnd(1000, 'x')]));

const OPEN = [{ match: '**', read: 'auth != null', write: 'auth != null && auth.sub == "w"' }];
const CLOSED = [{ match: '**', read: 'auth != null' }];

async function bigProject(): Promise<Project> {
  const p = await newProject();
  for (let i = 0; i < PARTS; i++) expect((await post(p, 'set', { path: `part${i}`, value: part(i) })).status).toBe(200);
  const opened = await call('PUT', `/api/${p.username}/${p.slug}/rules`, { token: p.owner, body: { rules: OPEN } });
  expect({ status: opened.status, body: opened.body }).toEqual({ status: 200, body: { version: 1, warnings: [] } });
  return p;
}

const head = async (p: Project) =>
  (
    await dynamo.send(
      new GetItemCommand({
        TableName: process.env.TABLE_NAME,
        Key: itemKeyAttributes(projectPk({ username: p.username, slug: p.slug })),
        ConsistentRead: true,
      }),
    )
  ).Item;

/** Segments at an older grant epoch than the head's. */
async function behind(p: Project): Promise<number> {
  const epoch = Number((await head(p))?.[A.grantEpoch]?.N);
  return (await segmentsOf(p)).filter((segment) => segment.epoch < epoch).length;
}

/** A write by `token` in every part (each in segments of its own): the statuses. */
const writeEverywhere = async (p: Project, token: string) =>
  Promise.all(
    Array.from({ length: PARTS }, async (_, i) => {
      const reply = await call('POST', `${p.content}/set`, { token, body: { path: `part${i}.s${i}`, value: 'w' } });
      return reply.status;
    }),
  );

describe('stamping a change into every segment', () => {
  it('a rules change answered 200 leaves no segment behind: a warm grant from before it is refused everywhere', async () => {
    const p = await bigProject();
    expect((await segmentsOf(p)).length).toBeGreaterThan(PARTS * 20);
    const writer = await signJwt({ sub: 'w' });
    // Warm in the API's process: its grant, with the open rules, is remembered.
    expect(await writeEverywhere(p, writer)).toEqual(Array(PARTS).fill(200));
    const changed = await call('PUT', `/api/${p.username}/${p.slug}/rules`, {
      token: p.owner,
      body: { rules: CLOSED },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.stamping).toBeUndefined();
    expect(await behind(p)).toBe(0);
    expect((await head(p))?.[MARKER.sweepPk]).toBeUndefined();
    expect(await writeEverywhere(p, writer)).toEqual(Array(PARTS).fill(403));
    expect((await call('GET', `${p.content}?path=part3.s3`, { token: writer })).body.value).toBe('w');
  });

  it('a change out of time says what is left, binds every new verification, and the sweeper finishes it', async () => {
    const p = await bigProject();
    const writer = await signJwt({ sub: 'w' });
    expect(await writeEverywhere(p, writer)).toEqual(Array(PARTS).fill(200));
    const ref = { username: p.username, slug: p.slug };
    const inc = await incarnationOf(ref);
    const { version } = await readRules(ref, inc);
    // The change's own request, with 1.52 s left: 20 ms of stamping before its 1.5 s margin.
    const started = Date.now();
    const changed = await withDeadline(Date.now() + 1520, () => putRules(ref, inc, { rules: CLOSED }, version, 0));
    expect(changed.version).toBe(version + 1);
    expect(changed.stamping.pending).toBe(true);
    // Exact when its listing finished; null when not even that did.
    const left = await behind(p);
    expect(left).toBeGreaterThan(0);
    if (changed.stamping.segmentsLeft !== null) expect(changed.stamping.segmentsLeft).toBe(left);
    const by = Date.parse(changed.stamping.effectiveBy as string);
    expect(by).toBeGreaterThan(started + 55_000);
    expect(by).toBeLessThan(Date.now() + 61_000);
    // Recorded on the head, in the sweeper's index.
    expect((await head(p))?.[MARKER.sweepPk]?.S).toBe(STAMPING_PARTITION);
    // The route's answer for it: 202 with what is left.
    expect(answerAfterStamping({ version: changed.version }, changed.stamping)).toMatchObject({
      statusCode: 202,
      body: { version: changed.version, stamping: { pending: true } },
    });
    // A caller verified now is judged by the new rules at once, whatever segment it writes.
    const fresh = await signJwt({ sub: 'w', nonce: unique('n') });
    expect(await writeEverywhere(p, fresh)).toEqual(Array(PARTS).fill(403));
    const swept = await sweepHandler();
    expect(swept.stampings).toBeGreaterThanOrEqual(1);
    expect(await behind(p)).toBe(0);
    expect((await head(p))?.[MARKER.sweepPk]).toBeUndefined();
    expect(await writeEverywhere(p, writer)).toEqual(Array(PARTS).fill(403));
    expect((await call('GET', `${p.content}?path=part1.s1`, { token: p.key })).body.value).toBe('w');
  });

  it('a key revocation out of time is finished the same way; the key is refused on every segment after', async () => {
    const p = await bigProject();
    expect(await writeEverywhere(p, p.key)).toEqual(Array(PARTS).fill(200));
    const accounts = await import('../../lib/store/accounts');
    const ref = { username: p.username, slug: p.slug };
    const revoked = await withDeadline(Date.now() + 1520, () => accounts.revokeApiKey(ref, p.keyId));
    expect(revoked.pending).toBe(true);
    expect(await behind(p)).toBeGreaterThan(0);
    // Meanwhile the key, warm in the API's process, still passes a segment not yet stamped (for at most 60 s: the
    // documented window of a 202); the sweeper closes it.
    await sweepHandler();
    expect(await behind(p)).toBe(0);
    expect(await writeEverywhere(p, p.key)).toEqual(Array(PARTS).fill(401));
  });
});
