// The CLI's pure parts: exit codes per status and the exact-decimal JSON round trip (the command itself is tested
// as a child process against the local server: client/test/integration/cli.test.ts).
import { exitCodeFor, parseJson } from '../../src/cli';

describe('exit codes', () => {
  it.each([
    [400, 1],
    [413, 1],
    [415, 1],
    [404, 2],
    [401, 3],
    [403, 3],
    [409, 4],
    [412, 4],
    [422, 4],
    [500, 5],
    [502, 5],
    [503, 5],
    [0, 5],
  ])('HTTP %i exits %i', (status, code) => {
    expect(exitCodeFor(status)).toBe(code);
  });
});

describe('JSON values', () => {
  it.each(['12345678901234567890', '0.30000000000000001', '1e-130', '-0.5', '[1.10,{"a":1E+2}]', '"x"', 'null'])(
    'keeps the digits of %s when written back',
    (text) => {
      // JSON.stringify writes raw numbers as they came; the only change is whitespace.
      const back = JSON.stringify(parseJson(text));
      expect(back).toBe(text);
    },
  );

  it('keeps a number that a double prints as written a plain number (an error index, a count)', () => {
    expect(parseJson('{"index":0,"n":-12.5,"big":1e400}')).toEqual({
      index: 0,
      n: -12.5,
      big: expect.objectContaining({ rawJSON: '1e400' }),
    });
  });

  it('refuses what is not JSON', () => {
    expect(() => parseJson('hello')).toThrow(SyntaxError);
  });
});
