// A batch that changes members of a wide bucketed object and an element of a chunked array that cannot be planned
// on its newest elements: the array is planned whole, the object still on the members it names. Planning both whole
// carried more segments than one commit holds: a 413 CHANGE_TOO_LARGE for a small change (multi-process suite,
// seed 11).
import { fragmentBytes } from '../../lib/config/env';
import { post, project, state } from '../support/api';
import { strays } from '../support/segments';

describe('batch: an old element of a chunked array beside members of a wide object', () => {
  it.each([0, 1, -60])('delete log.%s beside sets in the wide object: 200, as planned', async (index) => {
    const size = Math.max(40, Math.floor(fragmentBytes() / 3));
    const count = Math.ceil((140 * fragmentBytes()) / (size + 20));
    const wide = Object.fromEntries(Array.from({ length: count }, (_, i) => [`m${i}`, { n: i, t: 'x'.repeat(size) }]));
    const log = Array.from({ length: 60 }, (_, i) => ({ i, t: 'y'.repeat(Math.floor(size / 2)) }));
    const p = await project({ c: { n: 0 }, log });
    expect((await post(p, 'set', { path: 'c.wide', value: wide })).status).toBe(200);
    // The newest element larger than a segment: cut into one of its own, its stub among the newest elements.
    const big = 'a'.repeat(Math.ceil(fragmentBytes() * 2.5));
    expect((await post(p, 'set', { path: 'log.-1.t', value: big })).status).toBe(200);
    log[log.length - 1] = { i: log.length - 1, t: big };
    const before = (await state(p)).value;
    const reply = await post(p, 'batch', {
      operations: [
        { op: 'set', path: 'c.wide.m5', value: 134 },
        { op: 'set', path: 'c.wide.new3', value: [] },
        { op: 'increment', path: 'c.n' },
        { op: 'delete', path: `log.${index}` },
      ],
    });
    expect({ status: reply.status, body: reply.body }).toMatchObject({ status: 200 });
    const at = index < 0 ? log.length + index : index;
    expect((await state(p)).value).toEqual({
      c: { n: 1, wide: { ...before.c.wide, m5: 134, new3: [] } },
      log: log.filter((_, i) => i !== at),
    });
    expect(await strays(p)).toEqual({ orphans: [], dangling: [] });
  });
});
