// The CLI's pure parts: exit codes per status and the exact-decimal JSON round trip (the command itself is tested
// as a child process against the local server: client/test/integration/cli.test.ts).
import { apiErrorLine, exitCodeFor, main, parseJson, usageMessage } from '../../src/cli';
import { ContentApiError } from '../../src/errors';

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

describe('messages on stderr (issue 28: an unbalanced quote, --string for a batch, [HTTP 0])', () => {
  const env = { CONTENT_API_URL: 'http://127.0.0.1:9', CONTENT_API_KEY: 'capi_x', CONTENT_API_PROJECT: '@u/site' };
  /** Runs the CLI in-process, returning its exit code and what it wrote to stderr. */
  async function run(argv: string[], stdin = '') {
    let stderr = '';
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    });
    try {
      return { code: await main(argv, env, () => stdin, { version: '0.0.0-test' }), stderr };
    } finally {
      write.mockRestore();
    }
  }
  const balanced = (text: string) =>
    (text.match(/'/g) ?? []).length % 2 === 0 && (text.match(/"/g) ?? []).length % 2 === 0;

  it.each([['--verbose'], ['-x'], ['--no-such-option=1']])(
    'an unknown option %s: named once, quotes balanced',
    async (option) => {
      const { code, stderr } = await run(['get', option]);
      expect(code).toBe(1);
      const first = stderr.split('\n')[0] as string;
      expect(first).toMatch(/^content-api-client: unknown option '/);
      expect(balanced(first)).toBe(true);
    },
  );

  it('keeps any other message as it is', () => {
    expect(usageMessage(new Error("Option '--limit <value>' argument missing"))).toBe(
      "Option '--limit <value>' argument missing",
    );
  });

  it.each([
    [['batch'], 'stdin'],
    [['update'], 'stdin'],
  ])('a body that is not JSON (%j) says why, and never suggests --string', async (argv, what) => {
    const { code, stderr } = await run(argv, '{"operations": [nope');
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^content-api-client: ${what} is not valid JSON \\(.+\\)\\n`));
    expect(stderr).not.toContain('--string');
  });

  it('a value that is not JSON still suggests --string', async () => {
    const { stderr } = await run(['set', 'a', 'hello']);
    expect(stderr).toMatch(/^content-api-client: the value is not valid JSON \(use --string for a string\)/);
  });

  it('an answer shows its HTTP status; no answer (a network error) shows none', () => {
    const answered = new ContentApiError('no such path', { status: 404, code: 'PATH_NOT_FOUND' });
    expect(apiErrorLine(answered)).toBe('PATH_NOT_FOUND: no such path [HTTP 404]');
    const failed = new ContentApiError('test failed', { status: 409, code: 'TEST_FAILED', index: 2 });
    expect(apiErrorLine(failed)).toBe('TEST_FAILED (operation 2): test failed [HTTP 409]');
    const network = new ContentApiError('no answer from the API: connect ECONNREFUSED', {
      status: 0,
      code: 'NETWORK_ERROR',
    });
    expect(apiErrorLine(network)).toBe('NETWORK_ERROR: no answer from the API: connect ECONNREFUSED');
  });
});
