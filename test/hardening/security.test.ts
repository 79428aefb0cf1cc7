// Security: the API runs as its own process with its stdout/stderr captured (its structured JSON logs), at DEBUG level
// and with Powertools' event logging on, the most it can ever log. Requests use API keys, session tokens and JWTs,
// valid and not, and provoke 500s and 503s through the fault proxy. Then:
//   - no credential, its SHA-256 hash or the hash of its Authorization header appears in any log line;
//   - every log line is JSON and carries the request id (function_request_id);
//   - unknown, expired, revoked and malformed credentials all get the very same 401 (body and headers), in similar time;
//   - secrets are compared in constant time;
//   - no response carries a stack trace, a file path, an AWS error name, the table name or "dynamodb";
//   - responses carry the security headers;
//   - a body over 512 KiB is a 413 before it is parsed and before anything is read from the database.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_AUDIENCE, TEST_ISSUER, startJwks } from '../support/jwks';
import { type Answer, type Stack, type StackProject, request, startStack } from '../support/hardening-stack';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const SECURITY_HEADERS: Record<string, RegExp> = {
  'content-type': /^application\/json; charset=utf-8$/,
  'cache-control': /no-store/,
  'x-content-type-options': /^nosniff$/,
  'x-frame-options': /^DENY$/,
  'content-security-policy': /default-src 'none'/,
  'referrer-policy': /^no-referrer$/,
  'strict-transport-security': /max-age=\d+/,
};

describe('security', () => {
  let stack: Stack;
  let p: StackProject;
  let jwks: Awaited<ReturnType<typeof startJwks>>;
  let jwtUser: string;
  /** Every credential any request used, valid or not: none may show up in the logs. */
  const credentials = new Set<string>();
  /** Every response a handler produced, for the leak and header checks. */
  const answers: Array<{ what: string; answer: Answer }> = [];

  async function sign(claims: Record<string, unknown>, key: 'rs256' | 'es256' | 'stranger' = 'rs256'): Promise<string> {
    const { SignJWT, importJWK } = await import('jose');
    const jwk = jwks.keys[key] as Record<string, unknown> & { alg: string; kid: string };
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: TEST_ISSUER,
      aud: TEST_AUDIENCE,
      iat: now,
      exp: now + 600,
      preferred_username: jwtUser.slice(1),
      ...claims,
    })
      .setProtectedHeader({ alg: jwk.alg, kid: jwk.kid })
      .sign(await importJWK(jwk, jwk.alg));
  }

  async function send(what: string, url: string, options: Parameters<typeof request>[1] = {}): Promise<Answer> {
    if (options.token !== undefined) credentials.add(options.token);
    const answer = await request(url, options);
    answers.push({ what, answer });
    return answer;
  }

  /** Log lines written since the API became ready (the `npm start` banner before it is the local demo's). */
  const logLines = () => [...stack.stdout.slice(stack.bannerLines), ...stack.stderr].filter((l) => l.trim() !== '');

  beforeAll(async () => {
    jwks = await startJwks();
    stack = await startStack({
      env: {
        POWERTOOLS_LOG_LEVEL: 'DEBUG',
        POWERTOOLS_LOGGER_LOG_EVENT: 'true',
        AUTH_JWKS_URL: jwks.url,
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
    });
    p = await stack.newProject();
    credentials.add(p.key).add(p.owner);
    jwtUser = `@${`j${Date.now().toString(36)}`}`;
    await stack.accounts.createUser(jwtUser);
    await stack.accounts.setMember({ username: p.username, slug: p.slug }, jwtUser, 'editor');
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    jwks?.server.closeAllConnections();
    jwks?.server.close();
  });

  describe('uniform 401s', () => {
    it('unknown, expired, revoked and malformed credentials get the same 401 body and headers, in similar time', async () => {
      const expiredKey = await stack.newKey(p, ['content:read', 'content:write'], 1);
      const revokedKey = await stack.newKey(p, ['content:read', 'content:write']);
      await stack.accounts.revokeApiKey({ username: p.username, slug: p.slug }, revokedKey.id);
      const expiredSession = await stack.newUser(p, 'editor', 1);
      await sleep(2100);
      const unknownKey = `capi_${'0123456789abcdef'}_${'A'.repeat(43)}`;
      const kinds: Array<[string, string | undefined, Record<string, string>?]> = [
        ['unknown API key', unknownKey],
        ['expired API key', expiredKey.key],
        ['revoked API key', revokedKey.key],
        ['API key with a wrong secret', `${p.key.slice(0, 22)}${p.key.slice(22).split('').reverse().join('')}`],
        ['unknown session', `csess_${'B'.repeat(43)}`],
        ['expired session', expiredSession.token],
        ['JWT signed by an unknown key', await sign({}, 'stranger')],
        ['expired JWT', await sign({ exp: Math.floor(Date.now() / 1000) - 3600 })],
        ['JWT for another audience', await sign({ aud: 'someone-else' })],
        [
          'JWT with alg none',
          `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(`{"preferred_username":"${jwtUser.slice(1)}"}`).toString('base64url')}.`,
        ],
        ['malformed token', 'not-a-credential'],
        ['no Authorization header', undefined],
        ['Basic scheme', undefined, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
      ];
      const bodies = new Set<string>();
      const headerSets = new Set<string>();
      const timings: Record<string, number[]> = {};
      for (let round = 0; round < 7; round++) {
        // A new order every round, so no kind of credential always follows the same one.
        const order = [...kinds].sort(() => Math.random() - 0.5);
        for (const [what, token, headers] of order) {
          for (const [method, url, body] of [
            ['GET', p.content, undefined],
            ['POST', `${p.content}/set`, { path: 'a', value: 1 }],
          ] as const) {
            const a = await send(`401 ${what}`, url, { method, token, headers, body });
            expect({ what, method, status: a.status }).toEqual({ what, method, status: 401 });
            bodies.add(a.text);
            headerSets.add(
              JSON.stringify({ auth: a.headers.get('www-authenticate'), type: a.headers.get('content-type') }),
            );
            if (round > 0) (timings[`${what}`] ??= []).push(a.ms);
          }
        }
      }
      expect([...bodies]).toEqual(['{"message":"A valid session token or API key is required","code":"UNAUTHORIZED"}']);
      expect([...headerSets]).toEqual([JSON.stringify({ auth: 'Bearer', type: 'application/json; charset=utf-8' })]);
      // Same work for every well-formed credential the service cannot use: medians within a few ms of each other.
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
      const medians = Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(median(v) * 10) / 10]));
      console.log(`401 median latency (ms) per kind of unusable credential: ${JSON.stringify(medians)}`);
      const wellFormedKeys = [
        'unknown API key',
        'expired API key',
        'revoked API key',
        'API key with a wrong secret',
      ].map((k) => medians[k] as number);
      expect(Math.max(...wellFormedKeys) - Math.min(...wellFormedKeys)).toBeLessThan(
        Math.max(15, 0.5 * Math.min(...wellFormedKeys)),
      );
    });

    it('secrets are compared in constant time (timingSafeEqual, never === on hashes or secrets)', async () => {
      const { sameHash, hashSecret } = await import('../../lib/auth/credentials');
      const source = readFileSync('lib/auth/credentials.ts', 'utf8');
      expect(source).toMatch(/timingSafeEqual/);
      // No plain comparison of a hash, secret or token anywhere in lib/ (DynamoDB compares hashes in conditions).
      const offenders: string[] = [];
      const walk = (dir: string) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name);
          if (entry.isDirectory()) walk(path);
          else if (path.endsWith('.ts') && !path.endsWith('.generated.ts')) {
            readFileSync(path, 'utf8')
              .split('\n')
              .forEach((line, i) => {
                if (
                  /\b\w*(hash|Hash|secret|Secret)\w*(\.\w+)*\s*[!=]==?\s*(?!undefined|null)|[!=]==?\s*\w*(hash|Hash|secret|Secret)\w*\b/.test(
                    line,
                  ) &&
                  !/typeof|\.length/.test(line)
                ) {
                  offenders.push(`${path}:${i + 1}: ${line.trim()}`);
                }
              });
          }
        }
      };
      walk('lib');
      expect(offenders).toEqual([]);
      // And the comparison takes as long whether the first or the last character differs.
      const a = hashSecret('capi_x');
      const first = `${a[0] === '0' ? '1' : '0'}${a.slice(1)}`;
      const last = `${a.slice(0, -1)}${a.endsWith('0') ? '1' : '0'}`;
      const time = (b: string) => {
        const t = process.hrtime.bigint();
        for (let i = 0; i < 20_000; i++) sameHash(a, b);
        return Number(process.hrtime.bigint() - t);
      };
      const samples = { first: [] as number[], last: [] as number[] };
      for (let round = 0; round < 15; round++) {
        // Alternating which goes first, so a slower stretch of the machine does not always fall on the same one.
        if (round % 2 === 0) {
          samples.first.push(time(first));
          samples.last.push(time(last));
        } else {
          samples.last.push(time(last));
          samples.first.push(time(first));
        }
      }
      // The fastest round of each: noise (other processes, a collection) only ever adds time.
      const fastest = (xs: number[]) => Math.min(...xs);
      const ratio = fastest(samples.first) / fastest(samples.last);
      console.log(
        `sameHash: first char differs ${fastest(samples.first)} ns, last char differs ${fastest(samples.last)} ns per 20k (ratio ${ratio.toFixed(2)})`,
      );
      expect(ratio).toBeGreaterThan(0.6);
      expect(ratio).toBeLessThan(1 / 0.6);
    });
  });

  describe('responses', () => {
    it('a body over 512 KiB is a 413 before it is parsed and before the database is asked anything', async () => {
      const cases: Array<[string, string, string | undefined]> = [
        ['600 KiB of invalid JSON', 'x'.repeat(600 * 1024), 'application/json'],
        ['600 KiB of unclosed nesting', '['.repeat(600 * 1024), 'application/json'],
        ['600 KiB of valid JSON', JSON.stringify({ path: 'a', value: 'x'.repeat(600 * 1024) }), 'application/json'],
        ['600 KiB without a content type', '{'.repeat(600 * 1024), undefined],
        ['600 KiB of text/plain', 'x'.repeat(600 * 1024), 'text/plain'],
      ];
      for (const token of [p.key, p.owner, `capi_${'f'.repeat(16)}_${'C'.repeat(43)}`]) {
        for (const [what, body, type] of cases) {
          stack.proxy.reset();
          const started = performance.now();
          const a = await send(`413 ${what}`, `${p.content}/set`, {
            token,
            rawBody: body,
            headers: type ? { 'content-type': type } : {},
          });
          expect({ what, status: a.status, body: a.body }).toEqual({
            what,
            status: 413,
            body: { message: expect.any(String), code: 'PAYLOAD_TOO_LARGE' },
          });
          // Only a session lookup may precede it (the credential is resolved first); never a content read or write.
          const counts = stack.proxy.counts();
          expect({ what, token: token.slice(0, 6), requests: counts }).toEqual({
            what,
            token: token.slice(0, 6),
            requests: token.startsWith('csess_') && counts.GetItem ? { GetItem: 1 } : {},
          });
          expect(performance.now() - started).toBeLessThan(2000);
        }
      }
      expect((await request(p.content, { token: p.key })).body.value).toEqual({});
    });

    it('no response carries a stack trace, a file path, an AWS error name, the table name or "dynamodb"; security headers everywhere', async () => {
      // Ordinary traffic, 4xx of every kind, and 500s and 503s provoked through the fault proxy.
      const jwt = await sign({});
      credentials.add(jwt);
      await send('set', `${p.content}/set`, { token: p.key, body: { path: 'a', value: 1 } });
      await send('push with an Idempotency-Key', `${p.content}/push`, {
        token: p.key,
        body: { path: 'l', value: 1 },
        headers: { 'idempotency-key': 'sec-1' },
      });
      await send('push with a session', `${p.content}/push`, { token: p.owner, body: { path: 'l', value: 2 } });
      await send('push with a JWT', `${p.content}/push`, { token: jwt, body: { path: 'l', value: 3 } });
      await send('GET with a JWT', p.content, { token: jwt });
      await send('404 path', `${p.content}?path=nothing.here`, { token: p.key });
      await send('400 through a scalar', `${p.content}/set`, { token: p.key, body: { path: 'a.b', value: 1 } });
      await send('400 bad escape', `${p.content}/set`, { token: p.key, body: { path: 'a\\q', value: 1 } });
      await send('400 invalid JSON', `${p.content}/set`, {
        token: p.key,
        rawBody: '{"path":',
        headers: { 'content-type': 'application/json' },
      });
      await send('400 number overflow', `${p.content}/increment`, {
        token: p.key,
        body: { path: 'a', value: 9.99e125 },
      });
      await send('413 content too large', `${p.content}/set`, {
        token: p.key,
        body: { path: 'big', value: 'x'.repeat(360 * 1024) },
      });
      await send('415', `${p.content}/set`, {
        token: p.key,
        rawBody: 'a=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      await send('412', `${p.content}/set`, {
        token: p.key,
        body: { path: 'a', value: 1 },
        headers: { 'if-match': '"nope"' },
      });
      await send('422 idempotency key reused', `${p.content}/push`, {
        token: p.key,
        body: { path: 'l', value: 9 },
        headers: { 'idempotency-key': 'sec-1' },
      });
      await send('403 read-only key', `${p.content}/set`, {
        token: (await stack.newKey(p, ['content:read'])).key,
        body: { path: 'a', value: 1 },
      });
      await send('403 key of another project', p.content, { token: (await stack.newProject()).key });
      await send('404 project', `${stack.url}/api/${p.username}/nope/content`, { token: p.owner });
      await send('keys list', `${stack.url}/api/${p.username}/${p.slug}/keys`, { token: p.owner });
      const created = await send('key create', `${stack.url}/api/${p.username}/${p.slug}/keys`, {
        token: p.owner,
        body: { name: 'sec', permissions: ['content:read'] },
      });
      expect(created.status).toBe(201);
      credentials.add(created.body.key);
      for (const [kind, fault] of [
        ['500', { when: 'before', kind: 'internal' }],
        ['503', { when: 'before', kind: 'throttle' }],
        ['500 after', { when: 'after', kind: 'internal' }],
        ['reset', { when: 'before', kind: 'reset' }],
      ] as const) {
        stack.proxy.setFaults(() => fault);
        await send(`${kind} set`, `${p.content}/set`, { token: p.key, body: { path: 'a', value: 2 } });
        await send(`${kind} GET`, p.content, { token: p.key });
        await send(`${kind} middle insert`, `${p.content}/insert`, {
          token: p.key,
          body: { path: 'l', value: 0, index: 1 },
        });
        await send(`${kind} invalid body`, `${p.content}/set`, { token: p.key, body: { path: 'a' } });
        await send(`${kind} Idempotency-Key`, `${p.content}/push`, {
          token: p.key,
          body: { path: 'l', value: 4 },
          headers: { 'idempotency-key': `sec-${kind}` },
        });
        await send(`${kind} keys list`, `${stack.url}/api/${p.username}/${p.slug}/keys`, { token: p.owner });
        await send(`${kind} unknown key`, p.content, { token: `capi_${'e'.repeat(16)}_${'D'.repeat(43)}` });
        stack.proxy.setFaults(undefined);
      }
      const statuses = new Set(answers.map((a) => a.answer.status));
      // DynamoDB's own 500s reach the client as retryable 503s; whatever the 5xx, its body must not leak internals.
      expect([...statuses].some((s) => s >= 500)).toBe(true);

      const leaks: string[] = [];
      const forbidden = [
        /stack/i,
        /\bat \S+ \(/,
        /node_modules/,
        /\/work\//,
        /\.ts\b/,
        /\.js:\d+/,
        /ValidationException|ConditionalCheckFailed|ThrottlingException|InternalServerError|ResourceNotFound|Exception\b/,
        /dynamo/i,
        new RegExp(stack.table),
        /\bP#|\bIDEM#|\bK#|\bS#/,
        /\brq\d+\b/,
        /"h":/,
      ];
      for (const { what, answer } of answers) {
        for (const pattern of forbidden)
          if (pattern.test(answer.text))
            leaks.push(`${what}: ${answer.status} matches ${pattern}: ${answer.text.slice(0, 300)}`);
        for (const secret of credentials) {
          if (what !== 'key create' && answer.text.includes(secret))
            leaks.push(`${what}: ${answer.status} echoes a credential`);
          if (answer.text.includes(sha256(secret))) leaks.push(`${what}: ${answer.status} carries a credential's hash`);
        }
        for (const [name, pattern] of Object.entries(SECURITY_HEADERS)) {
          const value = answer.headers.get(name);
          if (value === null || !pattern.test(value)) leaks.push(`${what}: ${answer.status} header ${name}: ${value}`);
        }
        if (
          answer.status >= 400 &&
          (typeof answer.body?.message !== 'string' || typeof answer.body?.code !== 'string')
        ) {
          leaks.push(`${what}: ${answer.status} is not {message, code}: ${answer.text.slice(0, 200)}`);
        }
      }
      expect(leaks).toEqual([]);
    });
  });

  describe('logs', () => {
    it('no credential, its hash or its Authorization header hash is ever logged; every line is JSON with a request id', async () => {
      // Credentials also travel where a careless log would pick them up: bodies, query strings, other headers.
      await send('credential in a body', `${p.content}/set`, {
        token: p.key,
        body: { path: 'notes', value: `my key is ${p.key}` },
      });
      await send('credential in a query', `${p.content}?path=${encodeURIComponent(p.owner)}`, { token: p.key });
      await send('credential in another header', p.content, {
        token: p.key,
        headers: { 'x-api-key': p.key, 'x-session': p.owner },
      });
      await send('lower-case bearer', p.content, { headers: { authorization: `bearer ${p.key}` } });
      await sleep(500);
      const lines = logLines();
      expect(lines.length).toBeGreaterThan(answers.length);
      const problems: string[] = [];
      const hashes = new Map<string, string>();
      for (const c of credentials) {
        hashes.set(sha256(c), `sha256 of ${c.slice(0, 8)}...`);
        hashes.set(sha256(`Bearer ${c}`), `sha256 of "Bearer ${c.slice(0, 8)}..."`);
        const secretPart = c.startsWith('capi_')
          ? c.slice(22)
          : c.startsWith('csess_')
            ? c.slice(6)
            : (c.split('.')[2] ?? c);
        if (secretPart.length >= 20) hashes.set(secretPart, `secret part of ${c.slice(0, 8)}...`);
      }
      for (const line of lines) {
        let entry: Record<string, unknown> | undefined;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          problems.push(`not JSON: ${line.slice(0, 300)}`);
        }
        if (entry && typeof entry.function_request_id !== 'string')
          problems.push(`no function_request_id: ${line.slice(0, 300)}`);
        for (const c of credentials)
          if (line.includes(c)) problems.push(`credential ${c.slice(0, 10)}... logged: ${line.slice(0, 300)}`);
        for (const [h, what] of hashes) if (line.includes(h)) problems.push(`${what} logged: ${line.slice(0, 300)}`);
      }
      console.log(
        `logs: ${lines.length} lines checked for ${credentials.size} credentials (${hashes.size} hashes and secret parts); ${problems.length} problems`,
      );
      expect(problems).toEqual([]);
    });

    it('log lines stay JSON (with a request id) when a DynamoDB call runs past the SDK request timeout', async () => {
      const before = logLines().length;
      stack.proxy.setFaults((r) =>
        r.operation === 'UpdateItem' ? { when: 'before', kind: 'delay', ms: 3300 } : undefined,
      );
      const a = await send('slow write', `${p.content}/set`, { token: p.key, body: { path: 'slow', value: 1 } });
      stack.proxy.setFaults(undefined);
      await sleep(500);
      expect(a.status).toBeLessThan(600);
      const bad = logLines()
        .slice(before)
        .filter((line) => {
          try {
            return typeof (JSON.parse(line) as Record<string, unknown>).function_request_id !== 'string';
          } catch {
            return true;
          }
        });
      expect(bad).toEqual([]);
    });
  });
});
