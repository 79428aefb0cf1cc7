// Part 1: DynamoDB requests per operation, counted exactly by the proxy in front of the engine (test/support/
// dynamo-proxy.ts), for every content route, with an API key, a stored session (csess_) and a JWT; read-then-write
// cases, error paths and Idempotency-Key. Requests go over HTTP to a local API process whose DynamoDB endpoint is the
// proxy. Each request is also classified by the item it touched (P# project head and grants, C# content segment,
// S# session, K# key record, IDEM#).
import type { DynamoProxy } from '../test/support/dynamo-proxy';
import type { BenchProject } from './lib/fixtures';
import type { HttpClient } from './lib/http';

export type Cred = 'key' | 'session' | 'jwt';
export const CREDS: Cred[] = ['key', 'session', 'jwt'];

type Group = 'fast path' | 'read-then-write' | 'error path' | 'idempotency';

interface Case {
  id: string;
  label: string;
  group: Group;
  method: 'GET' | 'POST' | 'PATCH';
  route: string;
  body?: Record<string, unknown> | unknown[];
  query?: string;
  headers?: Record<string, string>;
  /** Content the project holds before the request (written first, not counted). */
  initial?: Record<string, unknown>;
  /** Paths read with the case's credential before counting (not counted): where they live is then known. */
  prime?: string[];
  expectStatus: number;
  /** Target on total DynamoDB requests; undefined = reported only. `idempotency` = the same op without the header + 3. */
  target?: { max: number } | { idempotencyOf: string };
  creds: Cred[];
  /** Overrides the credential for error paths. */
  token?: (t: Tokens) => string | undefined | Promise<string>;
  /** Project other than the bench project (path prefix). */
  content?: (p: BenchProject) => string;
}

export interface Tokens {
  key: string;
  session: string;
  jwt: string;
  readOnlyKey: string;
  viewerSession: string;
  otherProjectKey: string;
  strangerJwt: string;
  nonMemberJwt: string;
  /** A stored session this API process has not seen yet (its session cache misses). */
  freshSession: () => Promise<string>;
  freshJwt: () => Promise<string>;
}

const INITIAL = {
  data: { item: { name: 'lamp', count: 5 }, items: [1, 2, 3, 4], counter: 10, tags: {}, text: 'x'.repeat(200) },
};

const all = CREDS;
/** About 15 KB: twelve sections of four 300-byte strings, each section a segment of its own (storage step 3). */
const SEGMENTED = Object.fromEntries(
  Array.from({ length: 12 }, (_, s) => [
    `s${s}`,
    { n: s, ...Object.fromEntries(Array.from({ length: 4 }, (_, f) => [`f${f}`, 'x'.repeat(300)])) },
  ]),
);
const one = (max: number) => ({ max });

const CASES: Case[] = [
  // The issue's targets: 1 request.
  {
    id: 'set',
    label: 'set (existing parent)',
    group: 'fast path',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'desk' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'set-new-key',
    label: 'set (new key, existing parent)',
    group: 'fast path',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.color', value: 'red' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'push',
    label: 'push',
    group: 'fast path',
    method: 'POST',
    route: 'push',
    body: { path: 'data.items', value: { id: 5 } },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'push-missing',
    label: 'push (missing array)',
    group: 'fast path',
    method: 'POST',
    route: 'push',
    body: { path: 'data.fresh', value: 1 },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'decrement',
    label: 'decrement',
    group: 'fast path',
    method: 'POST',
    route: 'decrement',
    body: { path: 'data.counter', value: 2 },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'increment',
    label: 'increment',
    group: 'fast path',
    method: 'POST',
    route: 'increment',
    body: { path: 'data.counter' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'increment-missing',
    label: 'increment (missing counter)',
    group: 'fast path',
    method: 'POST',
    route: 'increment',
    body: { path: 'data.item.views' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'delete',
    label: 'delete (object key)',
    group: 'fast path',
    method: 'POST',
    route: 'delete',
    body: { path: 'data.item.name' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'delete-element',
    label: 'delete (array element)',
    group: 'fast path',
    method: 'POST',
    route: 'delete',
    body: { path: 'data.items.1' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'delete-missing',
    label: 'delete (missing path, 200)',
    group: 'fast path',
    method: 'POST',
    route: 'delete',
    body: { path: 'data.nothing' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'insert-0',
    label: 'insert at 0',
    group: 'fast path',
    method: 'POST',
    route: 'insert',
    body: { path: 'data.items', value: 0, index: 0 },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'insert-end',
    label: 'insert at the end (index = length)',
    group: 'fast path',
    method: 'POST',
    route: 'insert',
    body: { path: 'data.items', value: 5, index: 4 },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'get',
    label: 'get (whole content)',
    group: 'fast path',
    method: 'GET',
    route: '',
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'get-path',
    label: 'get ?path=data.item',
    group: 'fast path',
    method: 'GET',
    route: '',
    query: 'path=data.item',
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'get-index',
    label: 'get ?path=data.items.-1',
    group: 'fast path',
    method: 'GET',
    route: '',
    query: 'path=data.items.-1',
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'update',
    label: 'update',
    group: 'fast path',
    method: 'POST',
    route: 'update',
    body: { content: { data: { replaced: true } } },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  // At most 2: read, then a conditional write.
  {
    id: 'insert-middle',
    label: 'insert in the middle',
    group: 'read-then-write',
    method: 'POST',
    route: 'insert',
    body: { path: 'data.items', value: 2.5, index: 2 },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'set-missing-parents',
    label: 'set under missing parents',
    group: 'read-then-write',
    method: 'POST',
    route: 'set',
    body: { path: 'data.new.deep.key', value: 1 },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'insert-negative',
    label: 'insert at a negative index',
    group: 'read-then-write',
    method: 'POST',
    route: 'insert',
    body: { path: 'data.items', value: 3.5, index: -1 },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'set-negative',
    label: 'set at a negative index',
    group: 'read-then-write',
    method: 'POST',
    route: 'set',
    body: { path: 'data.items.-1', value: 9 },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  // The first request of a credential in a (warm) process: the stored session's lookup is cached per process.
  {
    id: 'first-session',
    label: 'set, first request of a stored session',
    group: 'fast path',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'desk' },
    expectStatus: 200,
    creds: ['session'],
    token: (t) => t.freshSession(),
  },
  {
    id: 'first-jwt',
    label: 'set, first request of a JWT',
    group: 'fast path',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'desk' },
    expectStatus: 200,
    creds: ['jwt'],
    token: (t) => t.freshJwt(),
  },
  // Error paths: reported, no target.
  {
    id: 'e401-none',
    label: '401 no Authorization',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 401,
    creds: ['key'],
    token: () => undefined,
  },
  {
    id: 'e401-key',
    label: '401 unknown API key',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 401,
    creds: ['key'],
    token: () => `capi_0123456789abcdef_${'A'.repeat(43)}`,
  },
  {
    id: 'e401-session',
    label: '401 unknown session',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 401,
    creds: ['session'],
    token: () => `csess_${'A'.repeat(43)}`,
  },
  {
    id: 'e401-jwt',
    label: '401 JWT signed by an unknown key',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 401,
    creds: ['jwt'],
    token: (t) => t.strangerJwt,
  },
  {
    id: 'e403-readonly',
    label: '403 read-only API key writes',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 403,
    creds: ['key'],
    token: (t) => t.readOnlyKey,
  },
  {
    id: 'e403-other-key',
    label: "403 another project's API key",
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 403,
    creds: ['key'],
    token: (t) => t.otherProjectKey,
  },
  {
    id: 'e403-viewer',
    label: '403 viewer session writes',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 403,
    creds: ['session'],
    token: (t) => t.viewerSession,
  },
  {
    id: 'e403-jwt',
    label: '403 JWT of a non-member',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 403,
    creds: ['jwt'],
    token: (t) => t.nonMemberJwt,
  },
  {
    id: 'e404-project',
    label: '404 project missing',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a', value: 1 },
    expectStatus: 404,
    creds: all,
    content: (p) => `/api/${p.username}/no-such-project/content`,
  },
  {
    id: 'e404-path',
    label: '404 get of a missing path',
    group: 'error path',
    method: 'GET',
    route: '',
    query: 'path=data.nothing',
    expectStatus: 404,
    creds: all,
  },
  {
    id: 'e400-path',
    label: '400 invalid path',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'a..b', value: 1 },
    expectStatus: 400,
    creds: all,
  },
  {
    id: 'e400-type',
    label: '400 push onto a number',
    group: 'error path',
    method: 'POST',
    route: 'push',
    body: { path: 'data.counter', value: 1 },
    expectStatus: 400,
    creds: all,
  },
  {
    id: 'e412',
    label: '412 stale If-Match',
    group: 'error path',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'x' },
    headers: { 'if-match': '"stale"' },
    expectStatus: 412,
    creds: all,
  },
  // If-Match: the version check joins the same condition expression, so it costs nothing extra.
  {
    id: 'ifmatch-set',
    label: 'set + If-Match (current ETag)',
    group: 'fast path',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'lamp' },
    headers: { 'if-match': 'current' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'ifmatch-push',
    label: 'push + If-Match (current ETag)',
    group: 'fast path',
    method: 'POST',
    route: 'push',
    body: { path: 'data.items', value: { id: 6 } },
    headers: { 'if-match': 'current' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  // Idempotency-Key: +3 (the access check's GetItem, the record's PutItem and its completion), only with the header.
  {
    id: 'idem-set',
    label: 'set + Idempotency-Key',
    group: 'idempotency',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'desk' },
    headers: { 'idempotency-key': '*' },
    expectStatus: 200,
    target: { idempotencyOf: 'set' },
    creds: all,
  },
  {
    id: 'idem-push',
    label: 'push + Idempotency-Key',
    group: 'idempotency',
    method: 'POST',
    route: 'push',
    body: { path: 'data.items', value: { id: 5 } },
    headers: { 'idempotency-key': '*' },
    expectStatus: 200,
    target: { idempotencyOf: 'push' },
    creds: all,
  },
  {
    id: 'idem-middle',
    label: 'insert in the middle + Idempotency-Key',
    group: 'idempotency',
    method: 'POST',
    route: 'insert',
    body: { path: 'data.items', value: 2.5, index: 2 },
    headers: { 'idempotency-key': '*' },
    expectStatus: 200,
    target: { idempotencyOf: 'insert-middle' },
    creds: all,
  },
  // content/batch (issue 15): one UpdateItem when every operation compiles without reading and no paths overlap;
  // otherwise read, plan every operation on a copy, and one UpdateItem of the result guarded by the version read.
  {
    id: 'batch-disjoint',
    label: 'batch: increment + push + set + delete on unrelated paths',
    group: 'fast path',
    method: 'POST',
    route: 'batch',
    body: {
      operations: [
        { op: 'increment', path: 'data.counter' },
        { op: 'push', path: 'data.items', value: 5 },
        { op: 'set', path: 'data.item.name', value: 'desk' },
        { op: 'delete', path: 'data.item.count' },
      ],
    },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'batch-100-counters',
    // Over DynamoDB's 4 KB per expression merged: read, plan, one write.
    label: 'batch: 100 increments of 100 keys under one object',
    group: 'fast path',
    method: 'POST',
    route: 'batch',
    initial: { data: { c: {} } },
    body: { operations: Array.from({ length: 100 }, (_, i) => ({ op: 'increment', path: `data.c.k${i}` })) },
    expectStatus: 200,
    creds: all,
  },
  {
    id: 'batch-overlapping',
    label: 'batch: set a parent, then increment under it (overlapping paths)',
    group: 'read-then-write',
    method: 'POST',
    route: 'batch',
    body: {
      operations: [
        { op: 'set', path: 'data.new', value: { n: 1 } },
        { op: 'increment', path: 'data.new.n' },
        { op: 'push', path: 'data.items', value: 5 },
      ],
    },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'batch-test',
    label: 'batch: test, then decrement (a test needs a read)',
    group: 'read-then-write',
    method: 'POST',
    route: 'batch',
    body: {
      operations: [
        { op: 'test', path: 'data.item.count', value: 5 },
        { op: 'decrement', path: 'data.item.count' },
      ],
    },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'batch-test-failed',
    label: 'batch: a test that fails (409 TEST_FAILED, nothing written)',
    group: 'error path',
    method: 'POST',
    route: 'batch',
    body: {
      operations: [
        { op: 'test', path: 'data.item.count', value: 6 },
        { op: 'decrement', path: 'data.item.count' },
      ],
    },
    expectStatus: 409,
    target: one(1),
    creds: all,
  },
  {
    id: 'batch-fast-falls-back',
    label: 'batch: one-request form fails its condition (missing parent), then read and plan',
    group: 'read-then-write',
    method: 'POST',
    route: 'batch',
    body: {
      operations: [
        { op: 'increment', path: 'data.counter' },
        { op: 'set', path: 'data.missing.key', value: 1 },
      ],
    },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  // A content over several segments (storage step 3): a batch within one segment is one UpdateItem; one across
  // segments reads the segments its paths run through and commits them in one TransactWriteItems.
  {
    id: 'segments-set',
    label: 'segments: set of a leaf in a child segment (its location known)',
    group: 'fast path',
    method: 'POST',
    route: 'set',
    initial: SEGMENTED,
    prime: ['s7.f0'],
    body: { path: 's7.f1', value: 'x' },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'segments-get',
    label: 'segments: GET of a leaf in a child segment (its location known)',
    group: 'fast path',
    method: 'GET',
    route: '',
    query: 'path=s7.f3',
    initial: SEGMENTED,
    prime: ['s7.f0'],
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'segments-batch-one',
    label: 'segments: batch of increment + set within one child segment',
    group: 'fast path',
    method: 'POST',
    route: 'batch',
    initial: SEGMENTED,
    prime: ['s7.f0'],
    body: {
      operations: [
        { op: 'increment', path: 's7.n' },
        { op: 'set', path: 's7.f2', value: 'y' },
      ],
    },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'segments-batch-across',
    label: 'segments: batch of two increments in two child segments',
    group: 'read-then-write',
    method: 'POST',
    route: 'batch',
    initial: SEGMENTED,
    prime: ['s7.f0', 's8.f0'],
    body: {
      operations: [
        { op: 'increment', path: 's7.n' },
        { op: 'increment', path: 's8.n' },
      ],
    },
    expectStatus: 200,
    target: one(4),
    creds: all,
  },
  {
    id: 'segments-patch-move',
    label: 'segments: JSON Patch moving a member from one child segment to another',
    group: 'read-then-write',
    method: 'PATCH',
    route: '',
    headers: { 'content-type': 'application/json-patch+json' },
    initial: SEGMENTED,
    prime: ['s7.f0', 's8.f0'],
    body: [{ op: 'move', from: '/s7/f3', path: '/s8/moved' }],
    expectStatus: 200,
    creds: all,
  },
  // PATCH content (issue 15): the same planner and store step as content/batch. add/replace/remove on plain member
  // paths and merge patches of plain keys are the one-request form; move, copy, test and array positions read first.
  {
    id: 'patch-members',
    label: 'JSON Patch: add + replace + remove of members (one request)',
    group: 'fast path',
    method: 'PATCH',
    route: '',
    headers: { 'content-type': 'application/json-patch+json' },
    initial: { data: { item: { name: 'lamp', count: 5 }, old: 1 } },
    body: [
      { op: 'add', path: '/data/item/color', value: 'red' },
      { op: 'replace', path: '/data/item/name', value: 'desk' },
      { op: 'remove', path: '/data/old' },
    ],
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'patch-move',
    label: 'JSON Patch: move a member (read, plan, one write)',
    group: 'read-then-write',
    method: 'PATCH',
    route: '',
    headers: { 'content-type': 'application/json-patch+json' },
    initial: { data: { draft: { title: 't' }, published: {} } },
    body: [{ op: 'move', from: '/data/draft', path: '/data/published/first' }],
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'patch-test-failed',
    label: 'JSON Patch: a test that fails (409 TEST_FAILED, nothing written)',
    group: 'error path',
    method: 'PATCH',
    route: '',
    headers: { 'content-type': 'application/json-patch+json' },
    initial: { data: { item: { count: 5 } } },
    body: [
      { op: 'test', path: '/data/item/count', value: 6 },
      { op: 'replace', path: '/data/item/count', value: 4 },
    ],
    expectStatus: 409,
    target: one(1),
    creds: all,
  },
  {
    id: 'patch-merge',
    label: 'merge patch: set and delete leaves of existing objects (one request)',
    group: 'fast path',
    method: 'PATCH',
    route: '',
    headers: { 'content-type': 'application/merge-patch+json' },
    initial: { data: { item: { name: 'lamp', draft: true }, tags: ['a'] } },
    body: { data: { item: { name: 'desk', draft: null }, tags: ['a', 'b'] } },
    expectStatus: 200,
    target: one(1),
    creds: all,
  },
  {
    id: 'patch-merge-new-parent',
    label: 'merge patch: an object under a missing member (fast form fails its condition, then read and plan)',
    group: 'read-then-write',
    method: 'PATCH',
    route: '',
    headers: { 'content-type': 'application/merge-patch+json' },
    initial: { data: {} },
    body: { data: { item: { name: 'desk' } } },
    expectStatus: 200,
    target: one(2),
    creds: all,
  },
  {
    id: 'idem-replay',
    label: 'set + Idempotency-Key, replayed',
    group: 'idempotency',
    method: 'POST',
    route: 'set',
    body: { path: 'data.item.name', value: 'desk' },
    headers: { 'idempotency-key': 'replay' },
    expectStatus: 200,
    creds: all,
  },
];

export interface CaseResult {
  id: string;
  label: string;
  group: Group;
  target: string;
  perCred: Partial<Record<Cred, CredResult>>;
  pass: boolean | null;
  /** Whether it would pass without the reads the engine's missing ALL_OLD causes (what DynamoDB would cost). */
  passWithOldItem: boolean | null;
}

export interface CredResult {
  /** Total DynamoDB requests of one run (the maximum over repeats). */
  total: number;
  /** Requests by operation, e.g. { UpdateItem: 1 }. */
  byOperation: Record<string, number>;
  /** Requests by operation and item kind, e.g. { 'GetItem S#': 1, 'UpdateItem P#': 1 }. */
  byItem: Record<string, number>;
  /** Requests that only resolve the credential (the stored session's GetItem). */
  credentialLookups: number;
  /**
   * GetItem of the project right after a failed conditional UpdateItem of it: the read the service makes only when
   * the engine does not return the old item with the failure (ReturnValuesOnConditionCheckFailure: ALL_OLD).
   */
  readsAfterFailedCondition: number;
  /** The requests in the order the proxy saw them. */
  sequence: string[];
  statuses: number[];
  /** Whether every repeat counted the same. */
  stable: boolean;
  pass: boolean | null;
}

/** `P#@u/p` -> `P#`: the kind of item a request touched, from its Key or Item. */
function itemKind(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8'));
    const first = parsed.TransactItems?.[0];
    const inner = first?.Update ?? first?.Put ?? first?.Delete ?? first?.ConditionCheck;
    const pk: unknown = parsed.Key?.pk?.S ?? parsed.Item?.pk?.S ?? inner?.Key?.pk?.S ?? inner?.Item?.pk?.S;
    if (typeof pk === 'string') return /^[A-Z]+#/.exec(pk)?.[0] ?? pk.slice(0, 8);
    return parsed.TableName ? 'table' : '?';
  } catch {
    return '?';
  }
}

export async function runRequests(ctx: {
  proxy: DynamoProxy;
  api: HttpClient;
  project: BenchProject;
  tokens: Tokens;
  repeats: number;
  log: (line: string) => void;
}): Promise<CaseResult[]> {
  const { proxy, api, project, tokens } = ctx;
  let seen: string[] = [];
  proxy.setFaults((request) => {
    seen.push(`${request.operation} ${itemKind(request.body)}`);
    return undefined;
  });
  const results: CaseResult[] = [];
  let idempotencySeq = 0;
  // Steady state: each credential has been seen once by the API process (its session cache and JWKS are warm).
  for (const token of [tokens.key, tokens.session, tokens.jwt, tokens.viewerSession]) {
    const warm = await api.call('GET', project.content, { token });
    if (warm.status !== 200) throw new Error(`warm-up failed: ${warm.status} ${JSON.stringify(warm.body)}`);
  }
  try {
    for (const c of CASES) {
      const perCred: CaseResult['perCred'] = {};
      for (const cred of c.creds) {
        const runs: Array<{ byItem: Record<string, number>; status: number; sequence: string[] }> = [];
        for (let r = 0; r < ctx.repeats; r++) {
          const setup = await api.call('POST', `${project.content}/update`, {
            token: tokens.key,
            body: { content: c.initial ?? INITIAL },
          });
          if (setup.status !== 200)
            throw new Error(`setup of ${c.id} failed: ${setup.status} ${JSON.stringify(setup.body)}`);
          const headers = { ...c.headers };
          if (headers['idempotency-key'] === '*')
            headers['idempotency-key'] = `bench-${process.pid}-${++idempotencySeq}`;
          if (headers['if-match'] === 'current') {
            // The ETag the setup left (read before counting starts).
            const current = await api.call('GET', project.content, { token: tokens.key });
            headers['if-match'] = String(current.headers.etag ?? '');
          }
          if (c.id === 'idem-replay') {
            // First use (not counted), then the replay is measured.
            headers['idempotency-key'] = `bench-replay-${process.pid}-${++idempotencySeq}`;
            const first = await api.call(c.method, `${project.content}/${c.route}`, {
              token: tokens[cred],
              body: c.body,
              headers,
            });
            if (first.status !== 200) throw new Error(`first use of ${c.id} failed: ${first.status}`);
          }
          const token = c.token ? await c.token(tokens) : tokens[cred];
          for (const path of c.prime ?? []) {
            await api.call('GET', `${project.content}?path=${encodeURIComponent(path)}`, { token });
          }
          const base = c.content ? c.content(project) : project.content;
          const path = `${base}${c.route ? `/${c.route}` : ''}${c.query ? `?${c.query}` : ''}`;
          proxy.reset();
          seen = [];
          const reply = await api.call(c.method, path, { token, body: c.body, headers });
          const byItem: Record<string, number> = {};
          for (const s of seen) byItem[s] = (byItem[s] ?? 0) + 1;
          runs.push({ byItem, status: reply.status, sequence: [...seen] });
          if (reply.status !== c.expectStatus) {
            ctx.log(
              `  ! ${c.id} (${cred}): expected ${c.expectStatus}, got ${reply.status} ${JSON.stringify(reply.body)}`,
            );
          }
        }
        const totals = runs.map((run) => Object.values(run.byItem).reduce((a, b) => a + b, 0));
        const worst = runs[totals.indexOf(Math.max(...totals))] as (typeof runs)[number];
        const byOperation: Record<string, number> = {};
        for (const [k, v] of Object.entries(worst.byItem)) {
          const op = k.split(' ')[0] as string;
          byOperation[op] = (byOperation[op] ?? 0) + v;
        }
        perCred[cred] = {
          total: Math.max(...totals),
          byOperation,
          byItem: worst.byItem,
          credentialLookups: worst.byItem['GetItem S#'] ?? 0,
          readsAfterFailedCondition: worst.sequence.filter(
            (s, i) => s === 'GetItem C#' && worst.sequence[i - 1] === 'UpdateItem C#',
          ).length,
          sequence: worst.sequence,
          statuses: runs.map((run) => run.status),
          stable: runs.every((run) => JSON.stringify(run.byItem) === JSON.stringify(runs[0]?.byItem)),
          pass: null,
        };
      }
      results.push({
        id: c.id,
        label: c.label,
        group: c.group,
        target: '',
        perCred,
        pass: null,
        passWithOldItem: null,
      });
    }
  } finally {
    proxy.setFaults(undefined);
  }
  // Targets, now that the header-less counts they refer to are known.
  for (const [i, c] of CASES.entries()) {
    const result = results[i] as CaseResult;
    if (!c.target) {
      result.target = 'reported';
      continue;
    }
    const limitFor = (cred: Cred): number | undefined => {
      if ('max' in c.target!) return c.target!.max;
      const base = results.find((r) => r.id === (c.target as { idempotencyOf: string }).idempotencyOf)?.perCred[cred]
        ?.total;
      return base === undefined ? undefined : base + 3;
    };
    result.target =
      'max' in c.target ? (c.target.max === 1 ? '1' : `≤ ${c.target.max}`) : `= ${c.target.idempotencyOf} + 3`;
    const meets = (total: number, limit: number) => ('max' in c.target! ? total <= limit : total === limit);
    let withOldItem = true;
    for (const cred of c.creds) {
      const r = result.perCred[cred] as CredResult;
      const limit = limitFor(cred);
      const statusOk = r.statuses.every((s) => s === c.expectStatus);
      r.pass = limit === undefined ? null : statusOk && meets(r.total, limit);
      const base =
        'idempotencyOf' in c.target
          ? results.find((x) => x.id === (c.target as { idempotencyOf: string }).idempotencyOf)?.perCred[cred]
          : undefined;
      const limitWithOldItem =
        'max' in c.target ? c.target.max : base ? base.total - base.readsAfterFailedCondition + 3 : undefined;
      if (
        limitWithOldItem === undefined ||
        !statusOk ||
        !meets(r.total - r.readsAfterFailedCondition, limitWithOldItem)
      )
        withOldItem = false;
    }
    result.pass = c.creds.every((cred) => result.perCred[cred]?.pass === true);
    result.passWithOldItem = withOldItem;
  }
  return results;
}
