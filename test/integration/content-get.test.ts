// GET content[?path=a.b]: {"value": <the JSON at the path, or the whole content>}; a missing path is a 404.
import { call, expectError, newProject, post, type Project } from '../support/api';

// ---- helpers (each integration file carries its own: only test files may be added) ----------------------------
const get = (p: Project, path?: string) =>
  call('GET', path === undefined ? p.content : `${p.content}?path=${encodeURIComponent(path)}`, { token: p.key });
// -----------------------------------------------------------------------------------------------------------------

const CONTENT = {
  a: { b: { c: 'deep' }, n: 0, f: false, nil: null, s: '', e: {}, l: [] },
  l: [10, { k: 'v', m: [1, 2] }, [30, 31], 'last'],
  o: { '0': 'zero', '-1': 'minus one', '01': 'oh one' },
  'x.y': 'dotted',
  'b\\s': 'backslash',
  constructor: 'own constructor',
  '42': 'root integer key',
  u: { é: '✓' },
};

describe('GET content', () => {
  let p: Project;
  beforeAll(async () => {
    p = await newProject();
    expect((await post(p, 'update', { content: CONTENT })).status).toBe(200);
  });

  it('returns the whole content as {"value": ...} with an ETag', async () => {
    const r = await get(p);
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value: CONTENT } });
    expect(r.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  });

  it('a new project reads {"value": {}}', async () => {
    const q = await newProject();
    const r = await get(q);
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value: {} } });
  });

  it('the ETag of a path read is the ETag of the whole content', async () => {
    const whole = await get(p);
    const part = await get(p, 'a.b');
    expect(part.headers.get('etag')).toBe(whole.headers.get('etag'));
  });

  it('reading does not change the ETag', async () => {
    const first = await get(p);
    await get(p, 'l.1');
    expect((await get(p)).headers.get('etag')).toBe(first.headers.get('etag'));
  });

  it.each<[string, unknown]>([
    ['a', CONTENT.a],
    ['a.b', { c: 'deep' }],
    ['a.b.c', 'deep'],
    ['a.n', 0],
    ['a.f', false],
    ['a.nil', null],
    ['a.s', ''],
    ['a.e', {}],
    ['a.l', []],
    ['l', CONTENT.l],
    ['l.0', 10],
    ['l.1', { k: 'v', m: [1, 2] }],
    ['l.1.k', 'v'],
    ['l.1.m.1', 2],
    ['l.1.m.-2', 1],
    ['l.2.0', 30],
    ['l.-1', 'last'],
    ['l.-4', 10],
    ['l.-2.-1', 31],
    ['o.0', 'zero'],
    ['o.-1', 'minus one'],
    ['o.01', 'oh one'],
    ['x\\.y', 'dotted'],
    ['b\\\\s', 'backslash'],
    ['constructor', 'own constructor'],
    ['42', 'root integer key'],
    ['u.é', '✓'],
  ])('?path=%s', async (path, value) => {
    const r = await get(p, path);
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value } });
  });

  it.each<[string]>([
    ['missing'],
    ['a.missing'],
    ['a.b.c.d'],
    ['a.n.x'],
    ['a.nil.x'],
    ['a.s.0'],
    ['a.l.0'],
    ['l.4'],
    ['l.100'],
    ['l.-5'],
    ['l.x'],
    ['l.01'],
    ['l.1.m.2'],
    ['l.3.0'],
    ['o.1'],
    ['x'],
    ['x.y'],
    ['toString'],
    ['hasOwnProperty'],
    ['a.constructor'],
    ['o.toString'],
  ])('?path=%s that does not exist is a 404 PATH_NOT_FOUND', async (path) => {
    expectError(await get(p, path), 404, 'PATH_NOT_FOUND');
  });

  it('an unrelated query parameter is ignored', async () => {
    const r = await call('GET', `${p.content}?other=1`, { token: p.key });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { value: CONTENT } });
  });
});
