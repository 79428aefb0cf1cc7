import {
  API_KEY_PREFIX,
  SESSION_PREFIX,
  hashSecret,
  newApiKey,
  newSessionToken,
  parseAuthorization,
  sameHash,
} from '../../lib/auth/credentials';
import { thrownBy } from './helpers';
import { statusOf } from '../../lib/config/error-codes';
import { errorReply } from '../../lib/http/edge';

const ID = '0123456789abcdef';
const SECRET = 'A'.repeat(21) + '-_' + 'z9'.repeat(10); // 43 base64url characters
const API_KEY = `capi_${ID}_${SECRET}`;
const SESSION = `csess_${SECRET}`;
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl';

describe('parseAuthorization', () => {
  it('reads an API key: its id and the hash of the whole key', () => {
    expect(parseAuthorization(`Bearer ${API_KEY}`)).toEqual({ kind: 'key', keyId: ID, keyHash: hashSecret(API_KEY) });
  });

  it('reads a session token as the hash of the token', () => {
    expect(parseAuthorization(`Bearer ${SESSION}`)).toEqual({ kind: 'session', tokenHash: hashSecret(SESSION) });
  });

  it.each([[JWT], ['a.b.c'], ['a.b.'], ['A-_9.b-_.c-_']])('reads %s as a JWT by its shape', (token) => {
    expect(parseAuthorization(`Bearer ${token}`)).toEqual({ kind: 'jwt', token });
  });

  it.each([
    ['a lower-case scheme', `bearer ${API_KEY}`],
    ['an upper-case scheme', `BEARER ${API_KEY}`],
    ['several spaces', `Bearer   ${API_KEY}`],
    ['trailing spaces', `Bearer ${API_KEY}  `],
  ])('accepts %s', (_, header) => {
    expect(parseAuthorization(header)).toEqual({ kind: 'key', keyId: ID, keyHash: hashSecret(API_KEY) });
  });

  it.each<[string, string | undefined]>([
    ['no header', undefined],
    ['an empty header', ''],
    ['the scheme alone', 'Bearer'],
    ['the scheme and a space', 'Bearer '],
    ['no scheme', API_KEY],
    ['another scheme', `Basic ${API_KEY}`],
    ['a token without a space', `Bearer${API_KEY}`],
    ['two tokens', `Bearer ${API_KEY} ${SESSION}`],
    ['a tab instead of a space', `Bearer\t${API_KEY}`],
    ['a leading space', ` Bearer ${API_KEY}`],
    ['an API key with upper-case hex', `Bearer capi_0123456789ABCDEF_${SECRET}`],
    ['an API key with a short id', `Bearer capi_0123456789abcde_${SECRET}`],
    ['an API key with a long id', `Bearer capi_0123456789abcdef0_${SECRET}`],
    ['an API key with a short secret', `Bearer capi_${ID}_${SECRET.slice(1)}`],
    ['an API key with a long secret', `Bearer capi_${ID}_${SECRET}A`],
    ['an API key with padding', `Bearer capi_${ID}_${SECRET.slice(1)}=`],
    ['an API key with a non-base64url character', `Bearer capi_${ID}_${SECRET.slice(1)}+`],
    ['an API key with another prefix', `Bearer cap_${ID}_${SECRET}`],
    ['a session with a short secret', `Bearer csess_${SECRET.slice(1)}`],
    ['a session with a long secret', `Bearer csess_${SECRET}x`],
    ['a session with a slash', `Bearer csess_${SECRET.slice(1)}/`],
    ['a random word', 'Bearer hunter2'],
    ['two JWT parts', 'Bearer a.b'],
    ['four JWT parts', 'Bearer a.b.c.d'],
    ['a JWT with an empty header', 'Bearer .b.c'],
    ['a JWT with an empty payload', 'Bearer a..c'],
    ['a JWT with padding', 'Bearer a=.b.c'],
  ])('refuses %s with the uniform 401', (_, header) => {
    const error = thrownBy(() => parseAuthorization(header));
    expect({
      statusCode: statusOf(error.code),
      code: error.code,
      headers: errorReply(error, undefined).headers,
    }).toEqual({
      statusCode: 401,
      code: 'UNAUTHORIZED',
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  });

  it('gives the same message for every refused credential', () => {
    const messages = new Set(
      [undefined, 'Basic x', 'Bearer nope', `Bearer csess_${SECRET}x`].map(
        (h) => thrownBy(() => parseAuthorization(h)).message,
      ),
    );
    expect(messages.size).toBe(1);
  });
});

describe('newApiKey', () => {
  it('makes capi_<16 hex>_<43 base64url> keys that parse back to their id and hash', () => {
    const { id, key, hash } = newApiKey();
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(key).toMatch(new RegExp(`^${API_KEY_PREFIX}${id}_[A-Za-z0-9_-]{43}$`));
    expect(hash).toBe(hashSecret(key));
    expect(parseAuthorization(`Bearer ${key}`)).toEqual({ kind: 'key', keyId: id, keyHash: hash });
  });

  it('never repeats a key or an id', () => {
    const keys = Array.from({ length: 50 }, () => newApiKey());
    expect(new Set(keys.map((k) => k.key)).size).toBe(50);
    expect(new Set(keys.map((k) => k.id)).size).toBe(50);
  });
});

describe('newSessionToken', () => {
  it('makes csess_<43 base64url> tokens that parse back to their hash', () => {
    const { token, hash } = newSessionToken();
    expect(token).toMatch(new RegExp(`^${SESSION_PREFIX}[A-Za-z0-9_-]{43}$`));
    expect(hash).toBe(hashSecret(token));
    expect(parseAuthorization(`Bearer ${token}`)).toEqual({ kind: 'session', tokenHash: hash });
  });

  it('never repeats a token', () => {
    expect(new Set(Array.from({ length: 50 }, () => newSessionToken().token)).size).toBe(50);
  });
});

describe('hashSecret', () => {
  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ])('is the SHA-256 hex of %j', (secret, hash) => {
    expect(hashSecret(secret)).toBe(hash);
  });
});

describe('sameHash', () => {
  const h = hashSecret('abc');
  it.each<[string, string, string, boolean]>([
    ['equal hashes', h, hashSecret('abc'), true],
    ['different hashes', h, hashSecret('abd'), false],
    ['different lengths', h, h.slice(1), false],
    ['an empty hash', h, '', false],
    ['two empty strings', '', '', true],
    ['a different case', h, h.toUpperCase(), false],
  ])('%s -> %p', (_, a, b, same) => {
    expect(sameHash(a, b)).toBe(same);
  });
});
