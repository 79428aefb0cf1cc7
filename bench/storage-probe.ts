// Storage probe: measured facts about the DynamoDB engines we run, for the multi-item storage layout (a project's
// JSON spread over many items of one pk). It creates its own temporary tables (pk S HASH, sk S RANGE,
// PAY_PER_REQUEST), deletes them at the end, and prints a Markdown report on stdout (progress on stderr) of:
// 1. ConsumedCapacity of UpdateItem (SET, list_append), GetItem (with and without projection), Query, BatchGetItem
//    by item size; 2. TransactWriteItems capacity, per action and in total (is a ConditionCheck billed?);
// 3. conflicts under 32 concurrent clients (plain updates, transactions on one item, transactions meeting only in
//    a shared ConditionCheck, a control without it; plain writes against in-flight transactions), with exact final
//    counters; 4. ClientRequestToken idempotency; 5. DynamoDB Streams order and record shape for items of one pk.
// Item sizes are computed with the AWS sizing rules; the "AWS rule" columns are what those rules bill, not measured.
// Run: `npx tsx bench/storage-probe.ts` (embedded dynalite, in memory) or
// `node scripts/dynamodb-local.mjs -- npx tsx bench/storage-probe.ts` (DynamoDB Local; any AWS_ENDPOINT_URL_DYNAMODB
// is used as is). PROBE_CLIENTS and PROBE_SECONDS change the conflict runs (default 32 clients, 5 s each).
import {
  type AttributeValue,
  BatchGetItemCommand,
  type ConsumedCapacity,
  DeleteItemCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type ReturnConsumedCapacity,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createRequire } from 'node:module';
import os from 'node:os';
import { startEngine, type Engine } from '../lib/local/engine';
import { createKeyedTable } from '../test/support/engine-table';
import { itemSize, valueSize } from './lib/item-size';

type Item = Record<string, AttributeValue>;

const CLIENTS = Number(process.env.PROBE_CLIENTS) || 32;
const SECONDS = Number(process.env.PROBE_SECONDS) || 5;
const RETRY = { attempts: 50, baseMs: 2, capMs: 50 };

const log = (message: string) => process.stderr.write(`[storage-probe] ${message}\n`);
const out: string[] = [];
const print = (line = '') => out.push(line);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const json = (value: unknown) => JSON.stringify(value, (_k, v) => (v instanceof Date ? v.toISOString() : v));
const cell = (value: unknown) => String(value ?? '').replace(/\|/g, '\\|');
const row = (...cells: unknown[]) => print(`| ${cells.map(cell).join(' | ')} |`);
const header = (...cells: string[]) => {
  row(...cells);
  row(...cells.map(() => '---'));
};

// ---------------------------------------------------------------------------------------------------------------
// item sizes (AWS rules: names + values in UTF-8; numbers 1 byte per 2 significant digits + 1; list/map 3 bytes
// + 1 per element)

/**
 * An item {pk, sk, n: 10, l: [], d: 'xxx…'} of exactly `bytes` by the AWS rules. n starts at 10 so that `ADD n :1`
 * keeps the size (two digits) for the capacity measurements; counters pass n: 0.
 */
function sizedItem(pk: string, sk: string, bytes: number, extra: Item = {}): Item {
  const item: Item = { pk: { S: pk }, sk: { S: sk }, n: { N: '10' }, l: { L: [] }, ...extra, d: { S: '' } };
  const pad = bytes - itemSize(item);
  if (pad < 0) throw new Error(`${bytes} bytes is too small for ${json(item)}`);
  item.d = { S: 'x'.repeat(pad) };
  return item;
}

/** A map value of exactly `bytes` (the list_append payload). */
function sizedMap(bytes: number): AttributeValue {
  const map: AttributeValue = { M: { t: { S: '' } } };
  map.M!.t = { S: 'y'.repeat(bytes - valueSize(map)) };
  return map;
}

const wcu = (bytes: number) => Math.ceil(bytes / 1024);
const rcu = (bytes: number) => Math.ceil(bytes / 4096);
const kb = (bytes: number) => `${bytes} B`;
const units = (c: ConsumedCapacity | ConsumedCapacity[] | undefined) => {
  const list = c === undefined ? [] : Array.isArray(c) ? c : [c];
  if (list.length === 0) return '(none)';
  return list
    .map((x) => {
      const parts = [`${x.CapacityUnits ?? '-'}`];
      if (x.ReadCapacityUnits !== undefined) parts.push(`R ${x.ReadCapacityUnits}`);
      if (x.WriteCapacityUnits !== undefined) parts.push(`W ${x.WriteCapacityUnits}`);
      return parts.join(' / ');
    })
    .join(' + ');
};

interface Failure {
  name: string;
  message: string;
  status?: number;
  reasons?: string[];
}
function failure(err: unknown): Failure {
  const e = err as {
    name?: string;
    message?: string;
    CancellationReasons?: { Code?: string }[];
    $metadata?: { httpStatusCode?: number };
  };
  return {
    name: e.name ?? 'Error',
    message: e.message ?? String(err),
    status: e.$metadata?.httpStatusCode,
    reasons: e.CancellationReasons?.map((r) => r.Code ?? '?'),
  };
}
async function attempt<T>(fn: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: Failure }> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    return { ok: false, error: failure(err) };
  }
}
const describe = (f: Failure) =>
  `${f.name}: ${f.message}${f.status ? ` (HTTP ${f.status})` : ''}${f.reasons ? ` (reasons: ${f.reasons.join(', ')})` : ''}`;

// ---------------------------------------------------------------------------------------------------------------
// engine, clients, tables

let engine: Engine | undefined;
let endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
let engineName: string;
if (endpoint) {
  engineName =
    process.env.DYNAMODB_ENGINE === 'dynamodb-local'
      ? 'DynamoDB Local 1.25.1 (scripts/dynamodb-local.mjs)'
      : `endpoint ${endpoint}`;
} else {
  engine = await startEngine({ port: 0 });
  endpoint = engine.endpoint;
  const version = (createRequire(import.meta.url)('dynalite/package.json') as { version: string }).version;
  engineName = `dynalite ${version} (embedded, lib/local/engine.ts, in memory)`;
}
const clientConfig = {
  endpoint,
  region: process.env.AWS_REGION || 'us-east-1',
  credentials: {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID || 'local',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || 'local',
  },
  // every retry is ours, so that attempts are counted
  maxAttempts: 1,
  requestHandler: new NodeHttpHandler({ httpAgent: { keepAlive: true, maxSockets: CLIENTS * 2 } }),
};
const ddb = new DynamoDBClient(clientConfig);
const streams = new DynamoDBStreamsClient(clientConfig);

const runId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
const TABLE = `storage-probe-${runId}`;
const STREAM_TABLE = `storage-probe-stream-${runId}`;
const created: string[] = [];

async function createTable(name: string, stream: boolean) {
  await createKeyedTable(ddb, name, { stream });
  created.push(name);
  for (let i = 0; i < 100; i++) {
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return Table;
    await sleep(100);
  }
  throw new Error(`table ${name} did not become ACTIVE`);
}

const put = (item: Item, table = TABLE) => ddb.send(new PutItemCommand({ TableName: table, Item: item }));
const key = (pk: string, sk: string): Item => ({ pk: { S: pk }, sk: { S: sk } });
async function readN(pk: string, sk: string): Promise<number> {
  const { Item } = await ddb.send(new GetItemCommand({ TableName: TABLE, Key: key(pk, sk), ConsistentRead: true }));
  return Number(Item?.n?.N ?? NaN);
}

// ---------------------------------------------------------------------------------------------------------------
// 1. single-item capacity

const SIZES = [500, 1000, 3000, 4000, 8000, 64000];
const ZERO: Item = { n: { N: '0' } };
const PAYLOAD = sizedMap(200);
const TX_SIZES = [200, 1000, 1100, 2000, 4000, 4200, 8000, 64000];

async function part1() {
  print('## 1. Consumed capacity of single-item operations');
  print();
  print(
    `Items {pk, sk, n: 10, l: [], d: padding} of the sizes below (AWS sizing rules). Before each UpdateItem the item is put ` +
      `back to its size. SET: \`SET n = :v\` (same size after). list_append: \`SET l = list_append(l, :m)\` with a ` +
      `${valueSize(PAYLOAD)}-byte map (the item grows by ${valueSize(PAYLOAD) + 1} B). GetItem is ConsistentRead, the ` +
      `projection is \`n\`. ReturnConsumedCapacity TOTAL. "AWS rule": writes ceil(max(before, after) / 1 KB), strong ` +
      `reads ceil(size / 4 KB) of the whole item.`,
  );
  print();
  header(
    'item',
    'UpdateItem SET',
    'AWS rule',
    'UpdateItem list_append',
    'AWS rule',
    'GetItem',
    'GetItem + projection',
    'AWS rule',
  );
  for (const size of SIZES) {
    const sk = `size#${size}`;
    const item = sizedItem('p1', sk, size);
    await put(item);
    const set = await ddb.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: key('p1', sk),
        UpdateExpression: 'SET n = :v',
        ExpressionAttributeValues: { ':v': { N: '11' } },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    await put(item);
    const grown = itemSize({ ...item, l: { L: [PAYLOAD] } });
    const append = await ddb.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: key('p1', sk),
        UpdateExpression: 'SET l = list_append(l, :m)',
        ExpressionAttributeValues: { ':m': { L: [PAYLOAD] } },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    await put(item);
    const get = await ddb.send(
      new GetItemCommand({
        TableName: TABLE,
        Key: key('p1', sk),
        ConsistentRead: true,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    const projected = await ddb.send(
      new GetItemCommand({
        TableName: TABLE,
        Key: key('p1', sk),
        ConsistentRead: true,
        ProjectionExpression: 'n',
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    if (get.Item === undefined || itemSize(get.Item) !== size)
      throw new Error(`item ${sk} read back as ${get.Item ? itemSize(get.Item) : 'nothing'}`);
    row(
      kb(size),
      units(set.ConsumedCapacity),
      wcu(size),
      `${units(append.ConsumedCapacity)} (${size} → ${grown} B)`,
      wcu(grown),
      units(get.ConsumedCapacity),
      units(projected.ConsumedCapacity),
      rcu(size),
    );
  }
  print();

  const QUERY_SIZE = 4000;
  for (let i = 0; i < 10; i++) await put(sizedItem('q', `q#${String(i).padStart(2, '0')}`, QUERY_SIZE));
  const query = async (consistent: boolean) => {
    const res = await ddb.send(
      new QueryCommand({
        TableName: TABLE,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'q' } },
        ConsistentRead: consistent,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    if (res.Count !== 10) throw new Error(`query returned ${res.Count} items`);
    return units(res.ConsumedCapacity);
  };
  await put(sizedItem('b', 'b#1000', 1000));
  await put(sizedItem('b', 'b#4000', 4000));
  const batch = await ddb.send(
    new BatchGetItemCommand({
      RequestItems: { [TABLE]: { Keys: [key('b', 'b#1000'), key('b', 'b#4000')], ConsistentRead: true } },
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );
  const got = batch.Responses?.[TABLE]?.length ?? 0;
  header('read', 'consumed', 'AWS rule');
  row(`Query 10 × ${QUERY_SIZE} B, ConsistentRead`, await query(true), rcu(10 * QUERY_SIZE));
  row(`Query 10 × ${QUERY_SIZE} B, eventually consistent`, await query(false), rcu(10 * QUERY_SIZE) / 2);
  row(
    `BatchGetItem 1000 B + 4000 B, ConsistentRead (${got} items returned)`,
    units(batch.ConsumedCapacity),
    rcu(1000) + rcu(4000),
  );
  print();
}

// ---------------------------------------------------------------------------------------------------------------
// 2. transaction capacity

const conditionCheck = (pk: string, sk: string): TransactWriteItem => ({
  ConditionCheck: { TableName: TABLE, Key: key(pk, sk), ConditionExpression: 'attribute_exists(pk)' },
});
const addOne = (pk: string, sk: string): TransactWriteItem => ({
  Update: {
    TableName: TABLE,
    Key: key(pk, sk),
    UpdateExpression: 'ADD n :one',
    ExpressionAttributeValues: { ':one': { N: '1' } },
  },
});

async function part2(): Promise<boolean> {
  print('## 2. TransactWriteItems: consumed capacity');
  print();
  for (const size of TX_SIZES) {
    await put(sizedItem('t', `cc#${size}`, size));
    await put(sizedItem('t', `u#${size}`, size));
  }
  await put(sizedItem('t', 'u1000a', 1000));
  await put(sizedItem('t', 'u1000b', 1000));
  await put(sizedItem('t', 'u2000b', 2000));
  await put(sizedItem('t', 'cc8000b', 8000));
  const cases: [string, TransactWriteItem[]][] = [
    ['ConditionCheck 200 B + Update 1000 B', [conditionCheck('t', 'cc#200'), addOne('t', 'u1000a')]],
    ['Update 1000 B + Update 1000 B', [addOne('t', 'u1000a'), addOne('t', 'u1000b')]],
    ['ConditionCheck 8000 B + Update 1000 B', [conditionCheck('t', 'cc#8000'), addOne('t', 'u1000a')]],
    ['Update 2000 B + Update 2000 B', [addOne('t', 'u#2000'), addOne('t', 'u2000b')]],
    ['ConditionCheck 8000 B + Update 8000 B', [conditionCheck('t', 'cc#8000'), addOne('t', 'u#8000')]],
    ['ConditionCheck 8000 B + ConditionCheck 8000 B', [conditionCheck('t', 'cc#8000'), conditionCheck('t', 'cc8000b')]],
    ['ConditionCheck 4200 B + ConditionCheck 8000 B', [conditionCheck('t', 'cc#4200'), conditionCheck('t', 'cc#8000')]],
    ['alone: ConditionCheck 200 B', [conditionCheck('t', 'cc#200')]],
    ['alone: ConditionCheck 8000 B', [conditionCheck('t', 'cc#8000')]],
    ['alone: Update 1000 B', [addOne('t', 'u1000a')]],
  ];
  print(
    'Update is `ADD n :1` (size unchanged), ConditionCheck is `attribute_exists(pk)` (true). The API reports capacity ' +
      'per table (and per index with INDEXES), not per action: the one-action transactions give the per-action cost. ' +
      'Column values: CapacityUnits / ReadCapacityUnits / WriteCapacityUnits as returned.',
  );
  print();
  header('transaction', 'TOTAL', 'INDEXES', 'each action alone (TOTAL)', 'sum of the actions alone', 'TOTAL = sum');
  let supported = true;
  let raw = '';
  const capacity = (c: ConsumedCapacity[] | undefined) => (c ?? []).reduce((sum, x) => sum + (x.CapacityUnits ?? 0), 0);
  for (const [label, items] of cases) {
    const results: string[] = [];
    let measured: number | undefined;
    for (const mode of ['TOTAL', 'INDEXES'] as ReturnConsumedCapacity[]) {
      const res = await attempt(() =>
        ddb.send(new TransactWriteItemsCommand({ TransactItems: items, ReturnConsumedCapacity: mode })),
      );
      if (res.ok) {
        results.push(units(res.value.ConsumedCapacity));
        if (mode === 'TOTAL') measured = capacity(res.value.ConsumedCapacity);
        if (mode === 'INDEXES' && !raw) raw = json(res.value.ConsumedCapacity);
      } else {
        results.push(`error ${describe(res.error)}`);
        supported = false;
      }
    }
    if (items.length > 1 && measured !== undefined) {
      const alone: number[] = [];
      for (const item of items) {
        const res = await ddb.send(
          new TransactWriteItemsCommand({ TransactItems: [item], ReturnConsumedCapacity: 'TOTAL' }),
        );
        alone.push(capacity(res.ConsumedCapacity));
      }
      const sum = alone.reduce((a, b) => a + b, 0);
      row(label, ...results, alone.join(' + '), sum, measured === sum ? 'yes' : '**no**');
    } else {
      row(label, ...results, '', '', '');
    }
  }
  print();
  if (raw) {
    print(`ConsumedCapacity as returned with INDEXES (first row): \`${raw}\``);
    print();
  }
  print(`TransactWriteItems supported by this engine: **${supported ? 'yes' : 'no'}**`);
  print();
  if (!supported) return false;

  print(
    'By size (ReturnConsumedCapacity TOTAL; each cell one transaction; "+ U 1000" adds an Update of another 1000 B item):',
  );
  print();
  header(
    'item size',
    'ConditionCheck alone',
    'Update alone',
    'ConditionCheck + U 1000',
    'Update + U 1000',
    'UpdateItem (no transaction)',
  );
  const total = async (items: TransactWriteItem[]) => {
    const res = await attempt(() =>
      ddb.send(new TransactWriteItemsCommand({ TransactItems: items, ReturnConsumedCapacity: 'TOTAL' })),
    );
    return res.ok ? units(res.value.ConsumedCapacity) : describe(res.error);
  };
  for (const size of TX_SIZES) {
    const plain = await ddb.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: key('t', `u#${size}`),
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    row(
      kb(size),
      await total([conditionCheck('t', `cc#${size}`)]),
      await total([addOne('t', `u#${size}`)]),
      await total([conditionCheck('t', `cc#${size}`), addOne('t', 'u1000b')]),
      await total([addOne('t', `u#${size}`), addOne('t', 'u1000b')]),
      units(plain.ConsumedCapacity),
    );
  }
  print();
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// 3. conflicts

interface Stats {
  successes: number;
  attempts: number;
  gaveUp: number;
  unknown: number;
  cancelled: Map<string, number>;
  errors: Map<string, number>;
  samples: Map<string, string>;
}
const newStats = (): Stats => ({
  successes: 0,
  attempts: 0,
  gaveUp: 0,
  unknown: 0,
  cancelled: new Map(),
  errors: new Map(),
  samples: new Map(),
});
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
const RETRYABLE = new Set([
  'TransactionCanceledException',
  'TransactionConflictException',
  'TransactionInProgressException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
]);

/** Runs `op` until it succeeds (retrying refused attempts with full-jitter backoff); false when it gave up. */
async function withRetries(stats: Stats, op: () => Promise<unknown>): Promise<boolean> {
  for (let i = 0; i < RETRY.attempts; i++) {
    stats.attempts++;
    try {
      await op();
      stats.successes++;
      return true;
    } catch (err) {
      const f = failure(err);
      if (f.reasons) bump(stats.cancelled, f.reasons.join(', '));
      else bump(stats.errors, f.name);
      if (!stats.samples.has(f.name)) stats.samples.set(f.name, f.message);
      if (!RETRYABLE.has(f.name)) {
        // the write may or may not have been applied: it keeps the final check from being exact
        stats.unknown++;
        return false;
      }
      await sleep(Math.random() * Math.min(RETRY.capMs, RETRY.baseMs * 2 ** i));
    }
  }
  stats.gaveUp++;
  return false;
}

interface Scenario {
  id: string;
  label: string;
  /** The operation client c runs; the counter keys it increments. */
  op: (c: number) => () => Promise<unknown>;
  /** Where each client's successes land (one counter for all, or one per client). */
  counter: (c: number) => [string, string];
  transactional: boolean;
  /** Default CLIENTS. */
  clients?: number;
}

async function runScenario(s: Scenario, perClient: Stats[]): Promise<number> {
  const deadline = Date.now() + SECONDS * 1000;
  const started = Date.now();
  await Promise.all(
    perClient.map(async (stats, c) => {
      const op = s.op(c);
      while (Date.now() < deadline) await withRetries(stats, op);
    }),
  );
  return (Date.now() - started) / 1000;
}

function merge(list: Stats[]): Stats {
  const total = newStats();
  for (const s of list) {
    total.successes += s.successes;
    total.attempts += s.attempts;
    total.gaveUp += s.gaveUp;
    total.unknown += s.unknown;
    for (const [k, v] of s.cancelled) total.cancelled.set(k, (total.cancelled.get(k) ?? 0) + v);
    for (const [k, v] of s.errors) total.errors.set(k, (total.errors.get(k) ?? 0) + v);
    for (const [k, v] of s.samples) if (!total.samples.has(k)) total.samples.set(k, v);
  }
  return total;
}
const mapText = (m: Map<string, number>) =>
  m.size === 0
    ? '0'
    : [...m]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ');

async function part3(transactions: boolean) {
  print(`## 3. Conflicts: ${CLIENTS} concurrent clients, ${SECONDS} s per scenario`);
  print();
  print(
    `One DynamoDBClient (SDK retries off, keep-alive, ${CLIENTS * 2} sockets), ${CLIENTS} async loops in one Node ` +
      `process. A refused attempt (TransactionCanceledException, TransactionConflictException, throttling) is retried ` +
      `after a full-jitter backoff of random(0, min(${RETRY.capMs}, ${RETRY.baseMs}·2^i)) ms, at most ${RETRY.attempts} ` +
      `attempts per operation. Cancellations are counted by their reason codes in action order. "exact" compares the ` +
      `final counter(s) with the successes. Machine: ${os.cpus().length} CPUs shared with other work, load average ` +
      `${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at the start of this part, so ops/s are indicative only.`,
  );
  print();
  const PK = 'c';
  const tx = (items: TransactWriteItem[]) => () => ddb.send(new TransactWriteItemsCommand({ TransactItems: items }));
  const plainAdd = () => () =>
    ddb.send(
      new UpdateItemCommand({
        TableName: TABLE,
        Key: key(PK, 'counter'),
        UpdateExpression: 'ADD n :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
      }),
    );
  const scenarios: Scenario[] = [
    {
      id: 'a0',
      label: 'baseline: UpdateItem ADD n :1 on one item, 1 client',
      transactional: false,
      clients: 1,
      counter: () => [PK, 'counter'],
      op: plainAdd,
    },
    {
      id: 'a',
      label: 'UpdateItem ADD n :1 on one item',
      transactional: false,
      counter: () => [PK, 'counter'],
      op: plainAdd,
    },
    {
      id: 'b',
      label: 'Transact [Update counter ADD n :1, ConditionCheck grant]',
      transactional: true,
      counter: () => [PK, 'counter'],
      op: () => tx([addOne(PK, 'counter'), conditionCheck(PK, 'grant')]),
    },
    {
      id: 'c',
      label: 'Transact [Update own item ADD n :1, ConditionCheck grant]',
      transactional: true,
      counter: (c) => [PK, `own#${String(c).padStart(2, '0')}`],
      op: (c) => tx([addOne(PK, `own#${String(c).padStart(2, '0')}`), conditionCheck(PK, 'grant')]),
    },
    {
      id: 'd',
      label: 'Transact [Update own item ADD n :1] (control, no ConditionCheck)',
      transactional: true,
      counter: (c) => [PK, `own#${String(c).padStart(2, '0')}`],
      op: (c) => tx([addOne(PK, `own#${String(c).padStart(2, '0')}`)]),
    },
  ];
  header(
    'scenario',
    'successes',
    'ops/s',
    'attempts / success',
    'cancellations by reasons',
    'other errors',
    'gave up',
    'final vs successes',
  );
  const samples = new Map<string, string>();
  for (const s of scenarios) {
    if (s.transactional && !transactions) {
      row(`(${s.id}) ${s.label}`, 'skipped: no TransactWriteItems', '', '', '', '', '', '');
      continue;
    }
    log(`part 3 (${s.id}) ${s.label}`);
    await put(sizedItem(PK, 'grant', 100, ZERO));
    const clients = s.clients ?? CLIENTS;
    const keys = new Set<string>();
    for (let c = 0; c < clients; c++) keys.add(s.counter(c).join('\u0000'));
    for (const k of keys) {
      const [pk, sk] = k.split('\u0000') as [string, string];
      await put(sizedItem(pk, sk, 200, ZERO));
    }
    const perClient = Array.from({ length: clients }, newStats);
    const seconds = await runScenario(s, perClient);
    const total = merge(perClient);
    let final = 0;
    let perKeyExact = true;
    for (const k of keys) {
      const [pk, sk] = k.split('\u0000') as [string, string];
      const n = await readN(pk, sk);
      final += n;
      if (keys.size === clients && clients > 1) {
        const c = [...keys].indexOf(k);
        if (n !== perClient[c]!.successes) perKeyExact = false;
      }
    }
    const exact = final === total.successes && perKeyExact;
    for (const [k, v] of total.samples) if (!samples.has(k)) samples.set(k, v);
    row(
      `(${s.id}) ${s.label}`,
      total.successes,
      (total.successes / seconds).toFixed(0),
      (total.attempts / Math.max(1, total.successes)).toFixed(2),
      mapText(total.cancelled),
      mapText(total.errors),
      total.gaveUp,
      `${final} vs ${total.successes}${keys.size > 1 ? ` (per item ${perKeyExact ? 'exact' : 'NOT exact'})` : ''}: ${exact ? 'exact' : total.unknown ? `${total.unknown} unknown outcomes` : 'NOT EXACT'}`,
    );
  }
  print();

  if (transactions) {
    // (e) plain UpdateItem against in-flight transactions on the same item: half the clients each
    log('part 3 (e) plain UpdateItem vs in-flight transactions');
    await put(sizedItem(PK, 'grant', 100, ZERO));
    await put(sizedItem(PK, 'counter', 200, ZERO));
    const half = Math.max(1, Math.floor(CLIENTS / 2));
    const txStats = Array.from({ length: half }, newStats);
    const plainStats = Array.from({ length: CLIENTS - half }, newStats);
    const deadline = Date.now() + SECONDS * 1000;
    const started = Date.now();
    const plain = () =>
      ddb.send(
        new UpdateItemCommand({
          TableName: TABLE,
          Key: key(PK, 'counter'),
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': { N: '1' } },
        }),
      );
    const transact = tx([addOne(PK, 'counter'), conditionCheck(PK, 'grant')]);
    await Promise.all([
      ...txStats.map(async (stats) => {
        while (Date.now() < deadline) await withRetries(stats, transact);
      }),
      ...plainStats.map(async (stats) => {
        while (Date.now() < deadline) await withRetries(stats, plain);
      }),
    ]);
    const seconds = (Date.now() - started) / 1000;
    const t = merge(txStats);
    const p = merge(plainStats);
    const final = await readN(PK, 'counter');
    print(
      `### (e) Plain UpdateItem on an item in in-flight transactions (${half} + ${CLIENTS - half} clients, ${SECONDS} s)`,
    );
    print();
    header(
      'clients',
      'successes',
      'ops/s',
      'attempts / success',
      'cancellations by reasons',
      'errors by name',
      'gave up',
    );
    row(
      `${half} × Transact [Update counter, ConditionCheck grant]`,
      t.successes,
      (t.successes / seconds).toFixed(0),
      (t.attempts / Math.max(1, t.successes)).toFixed(2),
      mapText(t.cancelled),
      mapText(t.errors),
      t.gaveUp,
    );
    row(
      `${CLIENTS - half} × UpdateItem ADD n :1 on counter`,
      p.successes,
      (p.successes / seconds).toFixed(0),
      (p.attempts / Math.max(1, p.successes)).toFixed(2),
      mapText(p.cancelled),
      mapText(p.errors),
      p.gaveUp,
    );
    print();
    const unknown = t.unknown + p.unknown;
    print(
      `Final counter ${final} vs ${t.successes} + ${p.successes} = ${t.successes + p.successes} successes: ` +
        `**${final === t.successes + p.successes ? 'exact' : unknown ? `${unknown} unknown outcomes` : 'NOT EXACT'}**. ` +
        `Plain UpdateItem refused while a transaction held the item: **${p.errors.size === 0 ? 'never' : mapText(p.errors)}**.`,
    );
    print();
    for (const [k, v] of [...t.samples, ...p.samples]) if (!samples.has(k)) samples.set(k, v);
  }
  if (samples.size) {
    print('Error messages (first of each name):');
    print();
    for (const [k, v] of samples) print(`- \`${k}\`: ${v}`);
    print();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// 4. idempotency

async function part4() {
  print('## 4. TransactWriteItems ClientRequestToken idempotency');
  print();
  await put(sizedItem('i', 'idem', 200, ZERO));
  const token = `storage-probe-${runId}-1`;
  const request = (amount: number, clientToken: string) => () =>
    ddb.send(
      new TransactWriteItemsCommand({
        ClientRequestToken: clientToken,
        ReturnConsumedCapacity: 'TOTAL',
        TransactItems: [
          {
            Update: {
              TableName: TABLE,
              Key: key('i', 'idem'),
              UpdateExpression: 'ADD n :a',
              ExpressionAttributeValues: { ':a': { N: String(amount) } },
            },
          },
        ],
      }),
    );
  const steps: [string, () => Promise<{ ConsumedCapacity?: ConsumedCapacity[] }>, string][] = [
    ['1. token T, ADD n 1', request(1, token), '1'],
    ['2. token T, same request again', request(1, token), '1 (idempotent) or 2 (applied twice)'],
    ['3. token T, different request (ADD n 5)', request(5, token), 'IdempotentParameterMismatchException, n unchanged'],
    ['4. new token T2, ADD n 1', request(1, `${token}-b`), 'n + 1'],
  ];
  header('step', 'answer', 'consumed', 'n afterwards', 'AWS documented');
  for (const [label, fn, expected] of steps) {
    const res = await attempt(fn);
    const n = await readN('i', 'idem');
    row(label, res.ok ? 'OK' : describe(res.error), res.ok ? units(res.value.ConsumedCapacity) : '', n, expected);
  }
  print();
}

// ---------------------------------------------------------------------------------------------------------------
// 5. streams

/** GetRecords sent by hand, to see ApproximateCreationDateTime as the engine writes it (the SDK makes it a Date). */
async function rawGetRecords(iterator: string): Promise<unknown> {
  const res = await fetch(endpoint!, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': 'DynamoDBStreams_20120810.GetRecords',
      Authorization:
        'AWS4-HMAC-SHA256 Credential=local/20000101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify({ ShardIterator: iterator }),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function part5() {
  print('## 5. DynamoDB Streams (NEW_AND_OLD_IMAGES)');
  print();
  const table = await attempt(() => createTable(STREAM_TABLE, true));
  if (!table.ok) {
    print(`CreateTable with StreamSpecification: ${describe(table.error)}`);
    print();
    return;
  }
  const arn = table.value.LatestStreamArn;
  print(
    `CreateTable with StreamSpecification: OK; DescribeTable shows StreamSpecification ` +
      `${json(table.value.StreamSpecification) ?? '(absent)'}, LatestStreamArn ${arn ? `\`${arn}\`` : '(absent)'}`,
  );
  print();
  if (!arn) {
    const list = await attempt(() => streams.send(new ListStreamsCommand({ TableName: STREAM_TABLE })));
    print(
      `No stream to read. ListStreams (DynamoDB Streams API) answers: ${list.ok ? `\`${json(list.value.Streams)}\`` : `\`${describe(list.error)}\``}`,
    );
    print();
    return;
  }

  // interleaved writes to three items of one pk, each awaited, so this is the commit order
  const writes: [string, () => Promise<unknown>][] = [];
  const putS = (sk: string, v: number) => () =>
    put({ pk: { S: 'st' }, sk: { S: sk }, v: { N: String(v) } }, STREAM_TABLE);
  const updS = (sk: string) => () =>
    ddb.send(
      new UpdateItemCommand({
        TableName: STREAM_TABLE,
        Key: key('st', sk),
        UpdateExpression: 'ADD v :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
      }),
    );
  for (const sk of ['A', 'B', 'C']) writes.push([`INSERT ${sk}`, putS(sk, 0)]);
  for (const sk of ['B', 'A', 'C', 'A', 'C', 'B']) writes.push([`MODIFY ${sk}`, updS(sk)]);
  writes.push(['REMOVE A', () => ddb.send(new DeleteItemCommand({ TableName: STREAM_TABLE, Key: key('st', 'A') }))]);
  const writeTimes: string[] = [];
  for (const [, write] of writes) {
    await write();
    writeTimes.push(new Date().toISOString());
  }
  const expected = writes.map(([label]) => label);

  const described = await attempt(() => streams.send(new DescribeStreamCommand({ StreamArn: arn })));
  if (!described.ok) {
    print(`DescribeStream: ${describe(described.error)}`);
    print();
    return;
  }
  const shards = described.value.StreamDescription?.Shards ?? [];
  print(
    `DescribeStream: StreamStatus ${described.value.StreamDescription?.StreamStatus}, ${shards.length} shard(s): ${shards.map((s) => `\`${s.ShardId}\``).join(', ')}`,
  );
  print();
  type Rec = {
    shard: string;
    seq: string;
    event: string;
    sk: string;
    keys: unknown;
    time: Date | undefined;
    record: unknown;
  };
  const records: Rec[] = [];
  let firstIterator: string | undefined;
  for (let round = 0; round < 20 && records.length < writes.length; round++) {
    records.length = 0;
    for (const shard of shards) {
      const it = await streams.send(
        new GetShardIteratorCommand({ StreamArn: arn, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      let iterator = it.ShardIterator;
      firstIterator ??= iterator;
      for (let page = 0; iterator && page < 50; page++) {
        const res = await streams.send(new GetRecordsCommand({ ShardIterator: iterator }));
        for (const r of res.Records ?? []) {
          records.push({
            shard: shard.ShardId!,
            seq: r.dynamodb?.SequenceNumber ?? '',
            event: r.eventName ?? '',
            sk: r.dynamodb?.Keys?.sk?.S ?? '?',
            keys: r.dynamodb?.Keys,
            time: r.dynamodb?.ApproximateCreationDateTime,
            record: r,
          });
        }
        if (!res.Records?.length) break;
        iterator = res.NextShardIterator;
      }
    }
    if (records.length < writes.length) await sleep(250);
  }
  const inOneShard = new Set(records.map((r) => r.shard)).size === 1;
  const bySeq = [...records].sort((a, b) =>
    BigInt(a.seq) < BigInt(b.seq) ? -1 : BigInt(a.seq) > BigInt(b.seq) ? 1 : 0,
  );
  const got = bySeq.map((r) => `${r.event} ${r.sk}`);
  const inOrder = got.length === expected.length && got.every((g, i) => g === expected[i]);
  const readOrder = records.map((r) => `${r.event} ${r.sk}`);
  print(`Writes in commit order (pk \`st\`): ${expected.join(', ')}.`);
  print();
  header('#', 'shard', 'SequenceNumber', 'eventName', 'Keys', 'ApproximateCreationDateTime (SDK)');
  records.forEach((r, i) => row(i + 1, r.shard, r.seq, r.event, json(r.keys), r.time?.toISOString() ?? '(none)'));
  print();
  print(`- ${records.length} records for ${writes.length} writes; all in one shard: **${inOneShard ? 'yes' : 'no'}**`);
  print(
    `- order of SequenceNumber equals commit order across the three items: **${inOrder ? 'yes' : 'no'}**; read order equals commit order: **${readOrder.join(', ') === expected.join(', ') ? 'yes' : 'no'}**`,
  );
  const seqs = records.map((r) => r.seq);
  print(
    `- SequenceNumber: decimal strings of ${[...new Set(seqs.map((s) => s.length))].join('/')} digits, strictly increasing in read order: ${seqs.every((s, i) => i === 0 || BigInt(s) > BigInt(seqs[i - 1]!)) ? 'yes' : 'no'}`,
  );
  if (firstIterator) {
    const raw = (await rawGetRecords(firstIterator)) as {
      status: number;
      body?: { Records?: { dynamodb?: { ApproximateCreationDateTime?: unknown } }[] };
    };
    const times = raw.body?.Records?.map((r) => r.dynamodb?.ApproximateCreationDateTime) ?? [];
    const numbers = times.filter((t): t is number => typeof t === 'number');
    const precision =
      numbers.length === 0
        ? 'no numeric values'
        : numbers.some((t) => !Number.isInteger(t))
          ? 'fractional seconds'
          : numbers.every((t) => t % 60 === 0)
            ? 'whole seconds, all multiples of 60 (minute precision)'
            : 'whole seconds';
    print(
      `- ApproximateCreationDateTime on the wire (raw GetRecords, HTTP ${raw.status}): ${times.map((t) => json(t)).join(', ') || '(none)'}: ${precision}; first write at ${writeTimes[0]}, last at ${writeTimes[writeTimes.length - 1]}`,
    );
  }
  print();
  const sample = records.find((r) => r.event === 'MODIFY');
  if (sample) {
    print('One MODIFY record as the SDK returns it:');
    print();
    print('```json');
    print(JSON.stringify(sample.record, (_k, v) => (v instanceof Date ? v.toISOString() : v), 2));
    print('```');
    print();
  }
}

// ---------------------------------------------------------------------------------------------------------------

try {
  print(`# Storage probe: ${engineName}`);
  print();
  print(
    `Run ${new Date().toISOString()}, Node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}. Script: bench/storage-probe.ts.`,
  );
  print();
  await createTable(TABLE, false);
  log('part 1');
  await part1();
  log('part 2');
  const transactions = await part2();
  if (!transactions) {
    const res = await attempt(() =>
      ddb.send(new TransactWriteItemsCommand({ TransactItems: [addOne('t', 'u1000a')] })),
    );
    print(
      `A one-action TransactWriteItems without ReturnConsumedCapacity answers: ${res.ok ? 'OK' : `\`${describe(res.error)}\``}`,
    );
    print();
  }
  await part3(transactions);
  if (transactions) {
    log('part 4');
    await part4();
  } else {
    print('## 4. TransactWriteItems ClientRequestToken idempotency');
    print();
    print('Skipped: no TransactWriteItems on this engine.');
    print();
  }
  log('part 5');
  await part5();
} finally {
  for (const name of created) await attempt(() => ddb.send(new DeleteTableCommand({ TableName: name })));
  ddb.destroy();
  streams.destroy();
  await engine?.close();
}
process.stdout.write(`${out.join('\n')}\n`);
