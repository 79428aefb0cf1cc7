// The request envelope of every mutation: JSON parsing, the body shape, unknown fields, the Content-Type (415),
// and the 400 rows of the spec's error table (section 7).
import { baseUrl, call, expectError, MESSAGES, post, type Project, project, type Reply, state } from '../support/api';

// ---- helpers ---------------------------------------------------------------------------------------------------
type Op = 'set' | 'insert' | 'push' | 'decrement' | 'increment' | 'delete' | 'update';
const MESSAGE: Record<Op, string> = MESSAGES;
const OPS = Object.keys(MESSAGE) as Op[];

/** A valid body for each route (on the content INITIAL below). */
const VALID: Record<Op, Record<string, unknown>> = {
  set: { path: 'a', value: 1 },
  insert: { path: 'l', value: 1, index: 0 },
  push: { path: 'l', value: 1 },
  decrement: { path: 'n' },
  increment: { path: 'n' },
  delete: { path: 'a' },
  update: { content: { replaced: true } },
};
const INITIAL = { a: { b: 1 }, l: [1], n: 5, s: 'text', o: {} };

const raw = (p: Project, op: string, text: string, contentType = 'application/json') =>
  call('POST', `${p.content}/${op}`, { token: p.key, rawBody: text, headers: { 'content-type': contentType } });

/** POST with a body and no Content-Type header at all (fetch adds text/plain to string bodies, not to bytes). */
async function postWithoutContentType(p: Project, op: string, text: string): Promise<Reply> {
  const res = await fetch(`${baseUrl()}${p.content}/${op}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.key}` },
    body: new TextEncoder().encode(text),
  });
  const body = await res.text();
  return { status: res.status, body: body === '' ? undefined : JSON.parse(body), headers: res.headers, text: body };
}

async function unchangedAfter(p: Project, send: () => Promise<Reply>, status: number, code: string): Promise<void> {
  const before = await state(p);
  expectError(await send(), status, code);
  expect(await state(p)).toEqual(before);
}
// -----------------------------------------------------------------------------------------------------------------

let p: Project;
beforeAll(async () => {
  p = await project(INITIAL);
});

describe('INVALID_JSON: a body that is not JSON is a 400 on every route', () => {
  const texts: Array<[string, string]> = [
    ['an empty body', ''],
    ['only whitespace', '   '],
    ['an unterminated object', '{"path":"a"'],
    ['a trailing comma', '{"path":"a","value":1,}'],
    ['single quotes', "{'path':'a','value':1}"],
    ['unquoted keys', '{path:"a",value:1}'],
    ['trailing garbage', '{"path":"a","value":1} x'],
    ['two objects', '{"path":"a"}{"value":1}'],
    ['NaN', '{"path":"a","value":NaN}'],
    ['a comment', '{"path":"a","value":1 /* c */}'],
  ];
  it.each(OPS.flatMap((op) => texts.map(([name, text]) => [op, name, text] as const)))(
    '%s: %s',
    async (op, _name, text) => {
      await unchangedAfter(p, () => raw(p, op, text), 400, 'INVALID_JSON');
    },
  );
});

describe('INVALID_BODY: JSON that is not an object is a 400 on every route', () => {
  const texts = ['[]', '[{"path":"a","value":1}]', '"a"', '1', 'null', 'true', 'false'];
  it.each(OPS.flatMap((op) => texts.map((text) => [op, text] as const)))('%s: %s', async (op, text) => {
    await unchangedAfter(p, () => raw(p, op, text), 400, 'INVALID_BODY');
  });
});

describe('UNKNOWN_FIELD: a field the route does not take is a 400', () => {
  const extra: Array<[Op, Record<string, unknown>]> = [
    ['set', { ...VALID.set, extra: 1 }],
    ['set', { ...VALID.set, content: {} }],
    ['set', { ...VALID.set, Path: 'a' }],
    ['insert', { ...VALID.insert, position: 0 }],
    ['push', { ...VALID.push, index: 0 }],
    ['decrement', { ...VALID.decrement, amount: 1 }],
    ['increment', { ...VALID.increment, by: 1 }],
    ['delete', { ...VALID.delete, value: 1 }],
    ['update', { ...VALID.update, path: 'a' }],
    ['update', { ...VALID.update, value: 1 }],
  ];
  it.each(extra)('%s %j', async (op, body) => {
    await unchangedAfter(p, () => post(p, op, body), 400, 'UNKNOWN_FIELD');
  });

  it.each(OPS)('%s: a field with a null value is still an unknown field', async (op) => {
    await unchangedAfter(p, () => post(p, op, { ...VALID[op], nothing: null }), 400, 'UNKNOWN_FIELD');
  });
});

describe('Content-Type', () => {
  it.each(OPS)('%s: a body without a Content-Type is read as JSON', async (op) => {
    const q = await project(INITIAL);
    const r = await postWithoutContentType(q, op, JSON.stringify(VALID[op]));
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE[op] } });
    expect((await state(q)).value).not.toEqual(INITIAL);
  });

  it('a body without a Content-Type that is not JSON is a 400 INVALID_JSON', async () => {
    await unchangedAfter(p, () => postWithoutContentType(p, 'set', 'path=a&value=1'), 400, 'INVALID_JSON');
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON',
    'application/json; charset="utf-8"',
  ])('Content-Type %s is accepted', async (type) => {
    const q = await project();
    const r = await raw(q, 'set', '{"path":"a","value":1}', type);
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: MESSAGE.set } });
    expect((await state(q)).value).toEqual({ a: 1 });
  });

  const unsupported = [
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/xml',
    'text/html',
    'application/octet-stream',
  ];
  it.each(unsupported)('Content-Type %s is a 415 UNSUPPORTED_MEDIA_TYPE even with a valid JSON body', async (type) => {
    await unchangedAfter(p, () => raw(p, 'set', '{"path":"a","value":1}', type), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it.each(OPS)('%s: text/plain is a 415 UNSUPPORTED_MEDIA_TYPE', async (op) => {
    await unchangedAfter(p, () => raw(p, op, JSON.stringify(VALID[op]), 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('415 comes before request validation', async () => {
    await unchangedAfter(p, () => raw(p, 'set', 'not json', 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('GET takes no body: its Content-Type does not matter', async () => {
    const r = await call('GET', p.content, { token: p.key, headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(200);
  });
});

describe('spec section 7: the 400 rows', () => {
  // Row: "path missing or not a string" for set, insert, push, decrement (and every other route with a path).
  const badPaths: Array<[string, unknown]> = [
    ['missing', undefined],
    ['a number', 7],
    ['null', null],
    ['a boolean', false],
    ['an array', ['a']],
    ['an object', { a: 1 }],
  ];
  const pathOps: Op[] = ['set', 'insert', 'push', 'decrement', 'increment', 'delete'];
  it.each(pathOps.flatMap((op) => badPaths.map(([name, path]) => [op, name, path] as const)))(
    '%s: path %s is a 400 INVALID_PATH',
    async (op, _name, path) => {
      const body: Record<string, unknown> = { ...VALID[op], path };
      if (path === undefined) delete body.path;
      await unchangedAfter(p, () => post(p, op, body), 400, 'INVALID_PATH');
    },
  );

  // Row: "index missing or not a number" for insert.
  it.each<[string, unknown]>([
    ['missing', undefined],
    ['a string', '0'],
    ['null', null],
    ['a boolean', true],
    ['an array', [0]],
    ['an object', {}],
  ])('insert: index %s is a 400 INVALID_INDEX', async (_name, index) => {
    const body: Record<string, unknown> = { path: 'l', value: 1, index };
    if (index === undefined) delete body.index;
    await unchangedAfter(p, () => post(p, 'insert', body), 400, 'INVALID_INDEX');
  });

  // Row: "target at path is not an array" for insert and push.
  it.each(
    (['insert', 'push'] as const).flatMap((op) => ['a', 'n', 's', 'o', 'a.b'].map((path) => [op, path] as const)),
  )('%s: target %s is not an array: 400 NOT_AN_ARRAY', async (op, path) => {
    await unchangedAfter(p, () => post(p, op, { ...VALID[op], path }), 400, 'NOT_AN_ARRAY');
  });

  // Row: "target value at path is not a number" for decrement (and increment).
  it.each(
    (['decrement', 'increment'] as const).flatMap((op) => ['a', 'l', 's', 'o'].map((path) => [op, path] as const)),
  )('%s: target %s is not a number: 400 NOT_A_NUMBER', async (op, path) => {
    await unchangedAfter(p, () => post(p, op, { path }), 400, 'NOT_A_NUMBER');
  });

  it('after all the rejections above, the content is still the initial one', async () => {
    expect((await state(p)).value).toEqual(INITIAL);
  });
});
