// A commit planned on a stale view can name one segment twice (a segment both rewritten and deleted, a new child put
// where one is updated): DynamoDB refuses such a transaction as a ValidationException, which reached clients as a
// 500 (issue 27, multi-process suite). The commit builder refuses it as not applied, so the writer reads afresh.
import { newCommitToken, newSegmentId } from '../../lib/storage/ids';
import { randomBytes } from 'node:crypto';
import { fragmentBytes } from '../../lib/config/env';
import { ROOT_KEY } from '../../lib/storage/layout/keys';
import { cut } from '../../lib/storage/layout/cut';
import { stubsUnderOf } from '../../lib/storage/layout/stubs';
import { type Json, storedSize } from '../../lib/content/json';
import { type UpdateRequest, compileWrite } from '../../lib/expressions';
import { type Rewrite, commitRewrite, namesAnItemTwice } from '../../lib/storage/io/commit';
import { getSegment, querySubtree } from '../../lib/storage/io/read';
import { project, state } from '../support/api';
import { incarnationOf } from '../support/segments';

const blob = (c: string) => c.repeat(Math.ceil(fragmentBytes() * 0.4));

describe('a commit that names one segment twice', () => {
  it('is refused as not applied (no 500), and the content stays as it was', async () => {
    const before = { a: { x: blob('x'), y: blob('y'), z: blob('z') } };
    const p = await project(before);
    const inc = await incarnationOf(p);
    const root = await getSegment(inc, ROOT_KEY);
    const below = [...(await querySubtree(inc, ROOT_KEY, { keysOnly: true })).values()].filter(
      (s) => s.key !== ROOT_KEY,
    );
    expect(root && below.length > 0).toBe(true);
    const [top, ...children] = cut(ROOT_KEY, { a: 1 }, { limit: fragmentBytes(), newId: newSegmentId });
    const tx = newCommitToken();
    const update = compileWrite(
      { action: { kind: 'set', steps: [], value: top?.fragment as Json }, guards: [] },
      {
        access: { ge: root?.epoch as number, inc },
        budget: fragmentBytes(),
        requestToken: randomBytes(16).toString('base64url'),
        slot: 0,
        expectedVersion: root?.version as number,
        size: { exact: storedSize(top?.fragment as Json) },
        stubsUnder: stubsUnderOf(top?.fragment as Json),
        commit: { token: tx },
      },
    ) as UpdateRequest;
    const orphans = below.map((s) => ({ key: s.key, version: s.version }));
    const stale = below[0] as { key: string; version: number };
    const base: Rewrite = {
      inc,
      epoch: root?.epoch as number,
      tx,
      parent: { key: ROOT_KEY, update },
      children,
      orphans,
    };
    // Rewritten in place and deleted; deleted twice; the parent deleted too.
    const twice: Rewrite[] = [
      { ...base, rewritten: [{ key: stale.key, update }] },
      { ...base, orphans: [...orphans, { key: stale.key, version: stale.version }] },
      { ...base, orphans: [...orphans, { key: ROOT_KEY }] },
    ];
    for (const rewrite of twice) {
      expect(await commitRewrite(rewrite)).toEqual({ ok: false });
      expect((await state(p)).value).toEqual(before);
    }
    // The same commit without the duplicate lands.
    expect(await commitRewrite(base)).toEqual({ ok: true });
    expect((await state(p)).value).toEqual({ a: 1 });
  });

  it('namesAnItemTwice: by key, whatever else differs', () => {
    expect(namesAnItemTwice([{ key: '/' }, { key: '/a/' }])).toBe(false);
    expect(namesAnItemTwice([{ key: '/' }, { key: '/a/' }, { key: '/a/' }])).toBe(true);
    expect(namesAnItemTwice([])).toBe(false);
  });
});
