// Rules, pure: the pattern matcher, the document's validation and warnings, the public-write guard, the decision
// (which rule, allowed, why) and the schemas a write must satisfy. No engine; the CEL library is not re-tested.
import { statusOf } from '../../lib/config/error-codes';
import { Refusal } from '../../lib/config/errors';
import { parsePath } from '../../lib/paths';
import { type RuleAuth, decideByRules, schemaViolation, validationAnchor } from '../../lib/rules/decision';
import { MAX_RULES, MAX_SCHEMAS, type RuleSet, compileRules as compile } from '../../lib/rules/document';
import { type Engines, loadEngines } from '../../lib/rules/load';
import { coveringMatch, parsePattern } from '../../lib/rules/patterns';

let engines: Engines;
beforeAll(async () => {
  engines = await loadEngines();
});
const compileRules = (document: unknown) => compile(engines, document);

const path = (p: string) => (p === '' ? [] : parsePath(p));

describe('patterns', () => {
  it.each([
    ['public.**', 'public', {}],
    ['public.**', 'public.a.b', {}],
    ['public.**', 'publicity', undefined],
    ['public.**', '', undefined],
    ['**', '', {}],
    ['**', 'a.b.c', {}],
    ['users.{uid}.**', 'users.u1', { uid: 'u1' }],
    ['users.{uid}.**', 'users.u1.notes.3', { uid: 'u1' }],
    ['users.{uid}.**', 'users', undefined],
    ['posts.{id}', 'posts.7', { id: '7' }],
    ['posts.{id}', 'posts.7.title', undefined],
    ['posts.{id}', 'posts', undefined],
    ['a\\.b.{x}', 'a\\.b.c', { x: 'c' }],
    ['a\\.b.{x}', 'a.b.c', undefined],
    ['{a}.{b}', 'x.y', { a: 'x', b: 'y' }],
  ])('%s covers %j: %j', (pattern, p, captures) => {
    const match = coveringMatch(parsePattern(pattern), path(p));
    expect(match === undefined ? undefined : { ...match }).toEqual(captures);
  });

  it.each([
    ['a.**.b', /\*\* may only be the last/],
    ['a.{auth}', /reserved/],
    ['a.{true}', /reserved/],
    ['a.{x}.{x}', /captured twice/],
    ['a.x{y}', /not a capture/],
    ['a.{1x}', /not a capture/],
    ['a.__proto__', /__proto__/],
    ['__proto__.**', /__proto__/],
    ['a..b', /empty segments/],
    ['', /must not be empty/],
  ])('refuses %j', (pattern, message) => {
    expect(() => parsePattern(pattern)).toThrow(message);
  });
});

/** The INVALID_RULES message compileRules throws for a document, or 'ok'. */
function refusal(document: unknown): string {
  try {
    compileRules(document);
    return 'ok';
  } catch (error) {
    expect(error).toBeInstanceOf(Refusal);
    expect(statusOf((error as Refusal).code)).toBe(400);
    expect((error as Refusal).code).toBe('INVALID_RULES');
    return (error as Refusal).message;
  }
}

describe('the rules document', () => {
  const deep = (n: number): unknown =>
    n === 0 ? { type: 'string' } : { type: 'object', properties: { a: deep(n - 1) } };
  it.each<[string, unknown, RegExp]>([
    ['not an object', [], /must be an object/],
    ['rules not an array', { rules: {} }, /"rules" must be an array/],
    ['unknown document field', { rules: [], extra: 1 }, /unknown field 'extra'/],
    ['a rule not an object', { rules: [{ match: 'a' }, 3] }, /rules\[1\] must be an object/],
    [
      'a rule with an unknown field',
      { rules: [{ match: 'a', raed: 'true' }] },
      /rules\[0\] has an unknown field 'raed'/,
    ],
    ['no match', { rules: [{ read: 'true' }] }, /rules\[0\]: match must be a string/],
    [
      'a __proto__ pattern',
      { rules: [{ match: 'a' }, { match: 'x.__proto__.**', read: 'true' }] },
      /rules\[1\]: .*__proto__/,
    ],
    ['invalid CEL', { rules: [{ match: 'a', read: '1 +' }] }, /rules\[0\]: invalid CEL/],
    ['an undeclared name', { rules: [{ match: 'a.{id}', read: 'uid == "x"' }] }, /undeclared reference to 'uid'/],
    ['a condition that is not a string', { rules: [{ match: 'a', read: true }] }, /must be a string \(CEL\)/],
    ['a huge condition', { rules: [{ match: 'a', read: `true${' && true'.repeat(200)}` }] }, /at most 1000 characters/],
    ['deep brackets', { rules: [{ match: 'a', read: `${'('.repeat(40)}true${')'.repeat(40)}` }] }, /nest brackets/],
    ['nested comprehensions', { rules: [{ match: 'a', read: '[1].all(x, [2].exists(y, y > x))' }] }, /inside another/],
    ['validate on **', { rules: [{ match: 'a.**', validate: { type: 'object' } }] }, /without \*\*/],
    ['an invalid schema', { rules: [{ match: 'a', validate: { type: 'nope' } }] }, /rules\[0\]: invalid schema/],
    ['an unknown keyword', { rules: [{ match: 'a', validate: { typo: 1 } }] }, /invalid schema/],
    ['a regex in a schema', { rules: [{ match: 'a', validate: { type: 'string', pattern: '(a+)+$' } }] }, /'pattern'/],
    ['a remote $ref', { rules: [{ match: 'a', validate: { $ref: 'https://x/y.json' } }] }, /\$ref must point inside/],
    ['a deep schema', { rules: [{ match: 'a', validate: deep(40) }] }, /nests deeper/],
    [
      'too many rules',
      { rules: Array.from({ length: 10_000 }, () => ({ match: 'a', read: 'true' })) },
      new RegExp(`at most ${MAX_RULES} rules`),
    ],
    [
      'too many schemas',
      { rules: Array.from({ length: MAX_SCHEMAS + 1 }, (_, i) => ({ match: `a${i}`, validate: { type: 'object' } })) },
      new RegExp(`at most ${MAX_SCHEMAS} rules with validate`),
    ],
    [
      'public write on the root',
      { rules: [{ match: '**', write: 'true' }] },
      /rules\[0\] lets anyone write everywhere/,
    ],
    [
      'public write under captures',
      { rules: [{ match: '{x}.**', write: 'auth == null || true' }] },
      /allowPublicWrite/,
    ],
  ])('refuses %s with INVALID_RULES', (_, document, message) => {
    expect(refusal(document)).toMatch(message);
  });

  it.each<[string, unknown]>([
    ['an empty document', { rules: [] }],
    ['public write when said so', { rules: [{ match: '**', write: 'true' }], allowPublicWrite: true }],
    ['signed-in write on the root', { rules: [{ match: '**', write: 'auth != null' }] }],
    ['public write on a literal subtree', { rules: [{ match: 'guestbook.**', write: 'true' }] }],
    ['a local $ref', { rules: [{ match: 'a', validate: { $defs: { s: { type: 'string' } }, $ref: '#/$defs/s' } }] }],
  ])('accepts %s', (_, document) => {
    expect(refusal(document)).toBe('ok');
  });

  it('refuses 10,000 rules before compiling any of them, quickly', () => {
    const started = performance.now();
    refusal({ rules: Array.from({ length: 10_000 }, () => ({ match: 'a', read: 'auth != null' })) });
    expect(performance.now() - started).toBeLessThan(500);
  });

  it.each<[string, unknown[], string[]]>([
    [
      'a deeper grant under an open **',
      [
        { match: 'public.**', read: 'true' },
        { match: 'public.a', read: 'auth != null' },
      ],
      ['rules[1].read'],
    ],
    [
      'a capture above a literal',
      [
        { match: 'users.{u}.**', read: 'true' },
        { match: 'users.x.y', read: 'false' },
      ],
      ['rules[1].read'],
    ],
    [
      'a conditional grant above: no warning',
      [
        { match: 'a.**', read: 'auth != null' },
        { match: 'a.b', read: 'true' },
      ],
      [],
    ],
    [
      'other operations: no warning',
      [
        { match: 'a.**', read: 'true' },
        { match: 'a.b', write: 'auth != null' },
      ],
      [],
    ],
    [
      'a sibling: no warning',
      [
        { match: 'a.**', read: 'true' },
        { match: 'b.c', read: 'auth != null' },
      ],
      [],
    ],
    [
      'the same open rule twice: the later one',
      [
        { match: 'a.**', read: 'true' },
        { match: 'a.**', read: 'true' },
      ],
      ['rules[1].read'],
    ],
  ])('warns about %s', (_, rules, expected) => {
    const { warnings } = compileRules({ rules });
    expect(warnings.map((w) => w.split(' ')[0])).toEqual(expected);
  });
});

const alice: RuleAuth = { kind: 'user', username: null, sub: 'alice', claims: { role: 'editor' } };
const bob: RuleAuth = { kind: 'user', username: '@bob', sub: 'bob', claims: {} };
const notesDocument = {
  rules: [
    { match: 'public.**', read: 'true' },
    { match: 'users.{uid}.**', read: 'auth != null && auth.sub == uid', write: 'auth != null && auth.sub == uid' },
    { match: 'drafts.**', read: 'auth != null && auth.claims.role == "editor"' },
    { match: 'inbox.{id}', write: 'auth != null && newData.from == auth.sub' },
    {
      match: 'users.{uid}.profile',
      validate: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
    },
    { match: 'stamps.{id}', validate: { type: 'number' } },
  ],
};
let notesApp: RuleSet;
beforeAll(() => {
  notesApp = compileRules(notesDocument);
});

describe('the decision', () => {
  it.each<[string, 'read' | 'write', string, RuleAuth | null, boolean, number | null, RegExp]>([
    ['anonymous public read', 'read', 'public.home', null, true, 0, /rules\[0\] \(public\.\*\*\) grants read/],
    ['anonymous public root', 'read', 'public', null, true, 0, /grants read/],
    ['anonymous read above the grant: not filtered', 'read', '', null, false, null, /no rule grants read at the root/],
    ['anonymous public write', 'write', 'public.home', null, false, null, /no rule grants write at 'public\.home'/],
    ['alice her subtree', 'write', 'users.alice.notes.1', alice, true, 1, /grants write/],
    ['bob denied alice', 'read', 'users.alice.notes', bob, false, null, /no condition for read .* is true/],
    [
      'anonymous denied alice',
      'read',
      'users.alice',
      null,
      false,
      null,
      /no condition for read at 'users\.alice' is true/,
    ],
    ['read of users: above every grant', 'read', 'users', alice, false, null, /no rule grants read at 'users'/],
    ['a claim', 'read', 'drafts.x', alice, true, 2, /grants read/],
    ['a missing claim: the error is a refusal, named', 'read', 'drafts.x', bob, false, null, /is true \(rules\[2\]: /],
  ])('%s', (_, operation, p, auth, allowed, rule, reason) => {
    const verdict = decideByRules(notesApp, { operation, path: path(p), auth, now: Date.now() });
    expect(verdict).toEqual({ allowed, rule, reason: expect.stringMatching(reason) });
  });

  it.each([
    [{ from: 'alice', text: 'hi' }, true],
    [{ from: 'bob', text: 'hi' }, false],
    ['not an object', false],
  ])('newData %j decides a write', (newData, allowed) => {
    const verdict = decideByRules(notesApp, {
      operation: 'write',
      path: path('inbox.1'),
      auth: alice,
      now: 0,
      newData,
    });
    expect(verdict.allowed).toBe(allowed);
  });

  it('sees now as a timestamp', () => {
    const timed = compileRules({ rules: [{ match: 'a', read: 'now < timestamp("2030-01-01T00:00:00Z")' }] });
    const at = (iso: string) =>
      decideByRules(timed, { operation: 'read', path: ['a'], auth: null, now: Date.parse(iso) });
    expect([at('2029-12-31T00:00:00Z').allowed, at('2030-06-01T00:00:00Z').allowed]).toEqual([true, false]);
  });
});

describe('validate: the schemas a write must satisfy', () => {
  it.each<[string, string | undefined]>([
    ['users.alice.profile', 'users.alice.profile'],
    ['users.alice.profile.name', 'users.alice.profile'],
    ['users.alice', 'users.alice'],
    ['users', 'users'],
    ['', ''],
    ['users.alice.notes', undefined],
    ['public.x', undefined],
    ['stamps.3', 'stamps.3'],
  ])('a write at %j computes the value at %j', (p, anchor) => {
    const found = validationAnchor(notesApp, path(p));
    expect(found === undefined ? undefined : found.join('.')).toEqual(anchor);
  });

  it.each<[string, string, unknown, RegExp | undefined]>([
    ['users.alice.profile', 'users.alice.profile', { name: 'Alice' }, undefined],
    [
      'users.alice.profile',
      'users.alice.profile',
      { nick: 'A' },
      /rules\[4\] .* at 'users\.alice\.profile': #\/required/,
    ],
    ['users.alice.profile.name', 'users.alice.profile', { name: 3 }, /#\/properties\/name\/type/],
    ['users', 'users', { alice: { profile: {} }, bob: {} }, /at 'users\.alice\.profile'/],
    ['users', 'users', { alice: { notes: [] } }, undefined],
    ['users.alice.profile', 'users.alice.profile', undefined, undefined],
    ['', '', { stamps: { a: 1, b: 'x' } }, /rules\[5\] .* at 'stamps\.b'/],
  ])('a write at %j leaving %j there: %j', (p, anchor, after, failure) => {
    const violation = schemaViolation(notesApp, path(p), path(anchor), after);
    if (failure === undefined) expect(violation).toBeUndefined();
    else expect(violation).toMatch(failure);
  });
});
