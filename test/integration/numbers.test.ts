import { type Project, baseUrl, call, content, newProject, post, project } from '../support/api';

describe('arithmetic at the edge of DynamoDB numbers (same answer on every engine)', () => {
  it('rejects an increment past the largest storable magnitude and keeps the value', async () => {
    const project = await newProject();
    await post(project, 'set', { path: 'n', value: 9.5e125 });
    const reply = await post(project, 'increment', { path: 'n', value: 9e125 });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('NUMBER_OUT_OF_RANGE');
    expect(await content(project, 'n')).toBe(9.5e125);
  });

  it('rejects a decrement past the smallest storable negative number', async () => {
    const project = await newProject();
    await post(project, 'set', { path: 'n', value: -9.5e125 });
    const reply = await post(project, 'decrement', { path: 'n', value: 9e125 });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('NUMBER_OUT_OF_RANGE');
    expect(await content(project, 'n')).toBe(-9.5e125);
  });

  it('still adds exactly near the edge when the result fits', async () => {
    const project = await newProject();
    await post(project, 'set', { path: 'n', value: 9.2e125 });
    const reply = await post(project, 'decrement', { path: 'n', value: 1e125 });
    expect(reply.status).toBe(200);
    expect(await content(project, 'n')).toBe(8.2e125);
  });

  it('adds decimals exactly (DynamoDB decimal arithmetic, not binary floating point)', async () => {
    const project = await newProject();
    await post(project, 'increment', { path: 'n', value: 0.1 });
    await post(project, 'increment', { path: 'n', value: 0.2 });
    expect(await content(project, 'n')).toBe(0.3);
  });
});

/** The stored value at `path` exactly as the API wrote it: the JSON text after `{"value":`. */
async function storedText(project: Project, path: string): Promise<string> {
  const reply = await call('GET', `${project.content}?path=${encodeURIComponent(path)}`, { token: project.key });
  expect(reply.status).toBe(200);
  expect(reply.text.startsWith('{"value":') && reply.text.endsWith('}')).toBe(true);
  return reply.text.slice('{"value":'.length, -1);
}

const raw = (project: Project, op: string, text: string) =>
  call('POST', `${project.content}/${op}`, {
    token: project.key,
    rawBody: text,
    headers: { 'content-type': 'application/json' },
  });

const digits38 = '12345678901234567890123456789012345678';

describe('numbers are exact: DynamoDB decimals of up to 38 significant digits, never rounded to a double', () => {
  // [the literal sent, what GET writes]: the same decimal value, in the form JavaScript prints numbers.
  const exact: Array<[string, string]> = [
    ['12345678901234567890', '12345678901234567890'],
    ['-12345678901234567890', '-12345678901234567890'],
    ['9007199254740993', '9007199254740993'],
    [digits38, `1.${digits38.slice(1)}e+37`],
    [`0.${digits38}`, `0.${digits38}`],
    [`${digits38}e88`, `1.${digits38.slice(1)}e+125`],
    [`9.${'9'.repeat(37)}e125`, `9.${'9'.repeat(37)}e+125`],
    [`-1.${'0'.repeat(36)}1e-93`, `-1.${'0'.repeat(36)}1e-93`],
    ['1e-130', '1e-130'],
    [`1.${'1'.repeat(37)}e-130`, `1.${'1'.repeat(37)}e-130`],
    ['0.30000000000000001', '0.30000000000000001'],
    ['100000000000000000000000000000', '1e+29'],
    ['1.50', '1.5'],
    ['1E+2', '100'],
    ['-0', '0'],
    [`1${'0'.repeat(50)}e-50`, '1'],
  ];

  it.each(exact)('set %s: GET writes %s', async (literal, written) => {
    const p = await project({ keep: 1 });
    expect((await raw(p, 'set', `{"path":"n","value":${literal}}`)).status).toBe(200);
    expect(await storedText(p, 'n')).toBe(written);
  });

  it.each(exact)('push, insert and update keep %s exactly, nested at any depth', async (literal, written) => {
    const p = await project({ keep: 1 });
    expect((await raw(p, 'push', `{"path":"l","value":{"a":[${literal}]}}`)).status).toBe(200);
    expect((await raw(p, 'insert', `{"path":"l","value":${literal},"index":0}`)).status).toBe(200);
    expect(await storedText(p, 'l')).toBe(`[${written},{"a":[${written}]}]`);
    expect((await raw(p, 'update', `{"content":{"x":{"y":[1,${literal}]}}}`)).status).toBe(200);
    const whole = await call('GET', p.content, { token: p.key });
    expect(whole.text).toBe(`{"value":{"x":{"y":[1,${written}]}}}`);
  });

  it.each<[string, string]>([
    ['the reported 42-digit integer', '123456789012345678901234567890123456789012'],
    ['39 significant digits', `${digits38}9`],
    ['39 significant digits in a decimal', `0.${digits38}9`],
    ['39 digits with trailing zeros after them', `1${'0'.repeat(37)}1${'0'.repeat(10)}`],
  ])('%s is a 400 NUMBER_TOO_PRECISE anywhere in a value, and nothing changes', async (_name, literal) => {
    const p = await project({ keep: 1 });
    for (const [op, text] of [
      ['set', `{"path":"n","value":${literal}}`],
      ['push', `{"path":"l","value":{"a":[1,${literal}]}}`],
      ['insert', `{"path":"l","value":[${literal}],"index":0}`],
      ['update', `{"content":{"n":${literal}}}`],
    ] as const) {
      const reply = await raw(p, op, text);
      expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 400, code: 'NUMBER_TOO_PRECISE' });
    }
    expect((await call('GET', p.content, { token: p.key })).text).toBe('{"value":{"keep":1}}');
  });

  it.each<[string]>([
    ['1e-400'],
    ['-1e-131'],
    [`9.${'9'.repeat(37)}e-131`],
    ['1e126'],
    [`9.${'9'.repeat(38)}e125`],
    ['1e400'],
    ['-1e99999'],
  ])(
    '%s is a 400 NUMBER_OUT_OF_RANGE (never flushed to 0 or rounded into range), and nothing changes',
    async (literal) => {
      const p = await project({ keep: 1 });
      const reply = await raw(p, 'set', `{"path":"n","value":${literal}}`);
      // 9.99..9e125 with 39 nines is below 1e126 but has 39 digits: either refusal is right, never a stored 1e126.
      expect(reply.status).toBe(400);
      expect(['NUMBER_OUT_OF_RANGE', 'NUMBER_TOO_PRECISE']).toContain(reply.body.code);
      if (literal !== `9.${'9'.repeat(38)}e125`) expect(reply.body.code).toBe('NUMBER_OUT_OF_RANGE');
      expect((await call('GET', p.content, { token: p.key })).text).toBe('{"value":{"keep":1}}');
    },
  );

  it('increments and decrements by exact amounts of up to 38 digits (decimal arithmetic)', async () => {
    const p = await project({ keep: 1 });
    expect((await raw(p, 'increment', '{"path":"id","value":12345678901234567890}')).status).toBe(200);
    expect(await storedText(p, 'id')).toBe('12345678901234567890');
    expect((await raw(p, 'increment', '{"path":"id","value":10000000000000000001}')).status).toBe(200);
    expect(await storedText(p, 'id')).toBe('22345678901234567891');
    expect((await raw(p, 'decrement', `{"path":"id","value":0.${'0'.repeat(16)}1}`)).status).toBe(200);
    expect(await storedText(p, 'id')).toBe(`22345678901234567890.${'9'.repeat(16)}9`);
    expect((await raw(p, 'decrement', `{"path":"id","value":22345678901234567890.${'9'.repeat(16)}9}`)).status).toBe(
      200,
    );
    expect(await storedText(p, 'id')).toBe('0');
    // Under a negative index (read, then a guarded write): the same exact sums.
    expect((await raw(p, 'update', `{"content":{"l":[${digits38}]}}`)).status).toBe(200);
    expect((await raw(p, 'decrement', '{"path":"l.-1","value":12345678901234567890123456789012345677}')).status).toBe(
      200,
    );
    expect(await storedText(p, 'l')).toBe('[1]');
  });

  it.each(['increment', 'decrement'])(
    '%s: a result of more than 38 digits is a 400 NUMBER_TOO_PRECISE, the value unchanged',
    async (op) => {
      const p = await project({ keep: 1 });
      expect((await raw(p, 'set', `{"path":"n","value":${digits38}}`)).status).toBe(200);
      const reply = await raw(p, op, '{"path":"n","value":0.5}');
      expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 400, code: 'NUMBER_TOO_PRECISE' });
      expect(await storedText(p, 'n')).toBe(`1.${digits38.slice(1)}e+37`);
    },
  );

  it.each<[string]>([[`${digits38}9`], ['1e126'], ['1e-131'], ['1e400']])(
    'an amount of %s is a 400 INVALID_AMOUNT',
    async (literal) => {
      const p = await project({ n: 1 });
      const reply = await raw(p, 'increment', `{"path":"n","value":${literal}}`);
      expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 400, code: 'INVALID_AMOUNT' });
    },
  );

  it('an index no double holds is a 400 INVALID_INDEX', async () => {
    const p = await project({ l: [] });
    const reply = await raw(p, 'insert', '{"path":"l","value":1,"index":12345678901234567890}');
    expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 400, code: 'INVALID_INDEX' });
  });
});

describe('request bodies are UTF-8 and their strings well-formed', () => {
  const bytes = (...parts: Array<string | number[]>) =>
    Buffer.concat(parts.map((x) => (typeof x === 'string' ? Buffer.from(x) : Buffer.from(x))));
  // Not UTF-8: a truncated sequence, an overlong encoding, a lone continuation byte, a surrogate encoded in
  // UTF-8, a code point past U+10FFFF, bytes never used (C0, F5-FF), the reported C3 28.
  const invalid: Array<[string, number[]]> = [
    ['C3 28 (a lead byte before ASCII)', [0xc3, 0x28]],
    ['truncated 3-byte sequence', [0xe2, 0x82]],
    ['truncated 4-byte sequence', [0xf0, 0x9f, 0x98]],
    ['overlong "/" (C0 AF)', [0xc0, 0xaf]],
    ['overlong 3-byte NUL', [0xe0, 0x80, 0x80]],
    ['lone continuation byte', [0x80]],
    ['UTF-8 encoded surrogate U+D800', [0xed, 0xa0, 0x80]],
    ['UTF-8 encoded surrogate pair halves', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
    ['past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['FF', [0xff]],
    ['latin-1 é', [0xe9]],
  ];

  it.each(invalid)('%s in a key or a string is a 400 INVALID_JSON, and nothing changes', async (_name, seq) => {
    const p = await project({ keep: 1 });
    for (const [op, body] of [
      ['set', bytes('{"path":"n","value":{"', seq, '":1}}')],
      ['set', bytes('{"path":"n","value":"x', seq, 'y"}')],
      ['set', bytes('{"path":"a', seq, '","value":1}')],
      ['update', bytes('{"content":{"k":["', seq, '"]}}')],
      ['push', bytes('{"path":"l","value":"', seq, '"}')],
    ] as const) {
      for (const headers of [{ 'content-type': 'application/json' }, {}]) {
        const res = await fetch(`${baseUrl()}${p.content}/${op}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.key}`, ...headers },
          body: body,
        });
        expect({ status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({
          status: 400,
          code: 'INVALID_JSON',
        });
      }
    }
    expect((await call('GET', p.content, { token: p.key })).text).toBe('{"value":{"keep":1}}');
  });

  it.each<[string, string]>([
    ['a lone high surrogate in a value', '{"path":"n","value":"\\ud800"}'],
    ['a lone low surrogate in a value', '{"path":"n","value":"a\\udfffb"}'],
    ['a reversed pair', '{"path":"n","value":"\\ude00\\ud83d"}'],
    ['a lone surrogate in a key', '{"path":"n","value":{"k\\uD800":1}}'],
    ['a lone surrogate deep in update', '{"content":{"a":[{"b":["\\udbff"]}]}}'],
    ['a lone surrogate in the path', '{"path":"n.\\ud800","value":1}'],
    ['a lone surrogate as a key of the body', '{"path":"n","value":1,"\\ud800":1}'],
    ['a lone surrogate next to an exact number', '{"path":"n","value":["\\ud800",12345678901234567890]}'],
  ])('%s is a 400 INVALID_JSON, and nothing changes', async (_name, text) => {
    const p = await project({ keep: 1 });
    const op = text.startsWith('{"content"') ? 'update' : 'set';
    const reply = await raw(p, op, text);
    expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 400, code: 'INVALID_JSON' });
    expect((await call('GET', p.content, { token: p.key })).text).toBe('{"value":{"keep":1}}');
  });

  it('escaped surrogate pairs and non-ASCII UTF-8 are stored as sent', async () => {
    const p = await project();
    expect((await raw(p, 'set', '{"path":"n","value":{"\\ud83d\\ude00":"é中😀\\uD83D\\uDE00"}}')).status).toBe(200);
    expect((await call('GET', `${p.content}?path=n`, { token: p.key })).body.value).toEqual({ '😀': 'é中😀😀' });
  });
});
