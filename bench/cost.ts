// Part 6: cost per operation by content size. The local API (lib/local/start.ts, as `npm start` runs it) talks to
// the engine through the DynamoDB proxy with `consumedCapacity` on: the proxy adds `ReturnConsumedCapacity: TOTAL`
// to every request it forwards and sums the read and write units the engine reports, so the service is unchanged
// and nothing is estimated. The project is grown with realistic records (a ~200-byte build record per `set`, every
// fourth one also pushed onto the log array) towards 256 KiB, 4 MiB and 32 MiB of content (DynamoDB-counted bytes);
// at each size it reaches, every operation runs a few times with an API key and the median requests, WCU and RCU are
// kept. Sizes the layout cannot hold are reported with the status the API answered and how far the growth got.
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { fragmentBytes } from '../lib/config/env';
import { assemble, fragmentsOf } from '../lib/storage/layout/stubs';
import { storedSize } from '../lib/content/json';
import { A, TOKEN_SLOTS } from '../lib/schema/attributes';
import { itemKeyAttributes, projectPk } from '../lib/schema/items';
import type { CapacityTotals, DynamoProxy } from '../test/support/dynamo-proxy';
import { itemSize } from './lib/item-size';
import type { BenchProject } from './lib/fixtures';
import type { HttpClient } from './lib/http';
import { median } from './lib/stats';

/** One partition's throughput (DynamoDB's per-partition limits). */
export const PARTITION = { wcuPerSecond: 1000, rcuPerSecond: 3000 };

export const SIZES = [
  { label: '0', bytes: 0 },
  { label: '256 KiB', bytes: 256 * 1024 },
  { label: '4 MiB', bytes: 4 * 1024 * 1024 },
  { label: '32 MiB', bytes: 32 * 1024 * 1024 },
];

export interface OpSample {
  status: number;
  requests: number;
  readUnits: number;
  writeUnits: number;
  /** DynamoDB requests by operation, e.g. { UpdateItem: 1 }. */
  byOperation: Record<string, number>;
  /** Answers without ConsumedCapacity (would make the units an undercount). */
  unreported: number;
}

export interface OpRow {
  id: string;
  label: string;
  statuses: number[];
  requests: number;
  wcu: number;
  rcu: number;
  sequence: string;
  unreported: number;
  samples: OpSample[];
}

export interface SizeResult {
  label: string;
  targetBytes: number;
  held: boolean;
  /** DynamoDB-counted bytes of the content when measured (or where the growth stopped). */
  contentBytes: number;
  /** DynamoDB-counted bytes of the largest segment (the item a write to it bills), after the operations. */
  itemBytes?: number;
  /** How many segments the content is stored in. */
  segments?: number;
  rows: OpRow[];
  /** Why the size is out of reach: the API's answer to the write that would have passed the limit. */
  stoppedBy?: { status: number; code?: string; message?: string };
}

export interface GrowthResult {
  targetBytes: number;
  reachedBytes: number;
  seconds: number;
  writes: number;
  requests: number;
  writeUnits: number;
  readUnits: number;
  /** Seconds (of growth alone) at which each size was reached. */
  milestones: Array<{ label: string; seconds: number; writes: number }>;
  stoppedBy?: { status: number; code?: string; message?: string };
}

/** A small write's cost with the project's one key, and again after it gained 99 more keys and 200 members. */
export interface GrantsResult {
  keys: number;
  members: number;
  rows: Array<{ label: string; keys: number; members: number; wcu: number; rcu: number; requests: number }>;
}

export interface CostReport {
  engine: string;
  repeats: number;
  recordBytes: number;
  sizes: SizeResult[];
  growth: GrowthResult;
  grants?: GrantsResult;
}

/** Keys and members the grants row adds (the caps: MAX_KEYS_PER_PROJECT, MAX_MEMBERS_PER_PROJECT). */
const GRANT_KEYS = 100;
const GRANT_MEMBERS = 200;

/** A build record of exactly `RECORD_BYTES` as DynamoDB counts them (an object of short fields and a message). */
const RECORD_BYTES = 200;
/** How far before the end of the log the near-end insert goes: its chunks from there on are rewritten in place. */
const NEAR_END = 100;
function record(n: number): Record<string, unknown> {
  const base = {
    id: `b${String(n).padStart(7, '0')}`,
    commit: (n * 2654435761).toString(16).padStart(40, '0').slice(-40),
    branch: 'main',
    status: n % 7 === 0 ? 'failed' : 'passed',
    durationMs: 1000 + (n % 9000),
    message: '',
  };
  base.message = 'm'.repeat(Math.max(0, RECORD_BYTES - storedSize(base as never)));
  return base;
}

export interface CostOptions {
  proxy: DynamoProxy;
  api: HttpClient;
  project: BenchProject;
  engine: string;
  tableName: string;
  repeats: number;
  log: (line: string) => void;
}

const summarise = (capacity: Record<string, CapacityTotals>, counts: Record<string, number>) => {
  let readUnits = 0;
  let writeUnits = 0;
  let unreported = 0;
  for (const totals of Object.values(capacity)) {
    readUnits += totals.readUnits;
    writeUnits += totals.writeUnits;
    unreported += totals.unreported;
  }
  const requests = Object.values(counts).reduce((a, b) => a + b, 0);
  return { readUnits, writeUnits, unreported, requests };
};

export async function runCost(options: CostOptions): Promise<CostReport> {
  const { proxy, api, project, repeats, log } = options;
  const token = project.key;
  const { dynamo } = await import('../lib/dynamo/client');
  const post = (route: string, body: Record<string, unknown>) =>
    api.call('POST', `${project.content}/${route}`, { token, body });
  const must = async (what: string, reply: Promise<{ status: number; body: unknown }>) => {
    const r = await reply;
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  const { querySubtree } = await import('../lib/storage/io/read');
  /** The content's segments, read straight from the table. */
  const segmentsNow = async () => {
    const { Item } = await dynamo.send(
      new GetItemCommand({
        TableName: options.tableName,
        Key: itemKeyAttributes(projectPk(project)),
        ConsistentRead: true,
      }),
    );
    const inc = Item?.[A.incarnation]?.S;
    return inc ? [...(await querySubtree(inc, '/')).values()] : [];
  };
  /** The content's segments: how many, and the largest one's DynamoDB-counted size. */
  const layout = async () => {
    const all = await segmentsNow();
    return { segments: all.length, largest: all.reduce((max, seg) => Math.max(max, itemSize(seg.raw)), 0) };
  };
  /** The content's size as DynamoDB counts bytes, assembled from its segments (a GET stops at 4 MiB). */
  const contentBytes = async () => {
    const all = await segmentsNow();
    const root = all.find((seg) => seg.key === '/');
    return root ? storedSize(assemble(root.fragment, fragmentsOf(all))) : 0;
  };

  await must('reset content', post('update', { content: { counter: 0, log: [], meta: { leaf: 'x' }, builds: {} } }));
  let logLength = 0;
  /**
   * Where this repetition's inserts before the log's end landed, in order (the middle one may not: past about 90
   * chunks after it, 413 CHANGE_TOO_LARGE). Each is after the ones before it, so deleting them in reverse restores.
   */
  let inserted: number[] = [];
  let built = 0;
  let estimate = await contentBytes();

  const ops: Array<{ id: string; label: string; run: (rep: number) => Promise<{ status: number }> }> = [
    { id: 'set', label: 'set of a leaf', run: (rep) => post('set', { path: 'meta.leaf', value: `v${rep}` }) },
    { id: 'increment', label: 'increment', run: () => post('increment', { path: 'counter' }) },
    { id: 'decrement', label: 'decrement', run: () => post('decrement', { path: 'counter' }) },
    {
      id: 'push',
      label: `push of a ${RECORD_BYTES}-byte record`,
      run: async (rep) => {
        const r = await post('push', { path: 'log', value: record(1e6 + rep) });
        if (r.status === 200) logLength += 1;
        return r;
      },
    },
    { id: 'delete', label: 'delete of a leaf', run: () => post('delete', { path: 'meta.leaf' }) },
    {
      id: 'set-newest',
      label: 'set in the newest record of `log`, by index',
      run: (rep) => post('set', { path: `log.${logLength - 1}.status`, value: `s${rep}` }),
    },
    {
      id: 'set-old',
      label: 'set in an old record of `log` (in its chunks), by index',
      run: (rep) => post('set', { path: `log.${Math.floor(logLength / 3)}.status`, value: `s${rep}` }),
    },
    {
      id: 'insert-end',
      label: 'insert at the end',
      run: async (rep) => {
        const r = await post('insert', { path: 'log', value: record(2e6 + rep), index: logLength });
        if (r.status === 200) logLength += 1;
        return r;
      },
    },
    {
      id: 'insert-middle',
      label: 'insert in the middle',
      run: async (rep) => {
        const index = Math.floor(logLength / 2);
        const r = await post('insert', { path: 'log', value: record(3e6 + rep), index });
        if (r.status === 200) {
          logLength += 1;
          inserted.push(index);
        }
        return r;
      },
    },
    {
      id: 'insert-near-end',
      label: `insert ${NEAR_END} records before the end`,
      run: async (rep) => {
        const index = Math.max(0, logLength - NEAR_END);
        const r = await post('insert', { path: 'log', value: record(5e6 + rep), index });
        if (r.status === 200) {
          logLength += 1;
          inserted.push(index);
        }
        return r;
      },
    },
    {
      id: 'batch-push',
      label: 'batch: push onto the log + increment (another segment)',
      run: async (rep) => {
        const operations = [
          { op: 'push', path: 'log', value: record(4e6 + rep) },
          { op: 'increment', path: 'counter' },
        ];
        const r = await post('batch', { operations });
        if (r.status === 200) logLength += 1;
        return r;
      },
    },
    {
      id: 'batch-member',
      label: 'batch: set a member of builds + increment (another segment)',
      run: (rep) =>
        post('batch', {
          operations: [
            { op: 'set', path: `builds.batched${rep}`, value: record(6e6 + rep) },
            { op: 'increment', path: 'counter' },
          ],
        }),
    },
    {
      id: 'delete-fold',
      label: 'delete that leaves a section small: folded back into its parent',
      run: async () => {
        // Uncounted: a string of a fifth of a budget in the root, then a section of three strings of about 0.31
        // budget each, which takes the root past its budget: the section is cut to a segment of its own. Two of its
        // strings deleted, it stays over a quarter of the budget; the counted delete of the third leaves it small.
        const part = 'f'.repeat(Math.floor(fragmentBytes() * 0.31));
        await must('fold setup', post('set', { path: 'foldpad', value: 'p'.repeat(Math.floor(fragmentBytes() / 5)) }));
        await must('fold setup', post('set', { path: 'fold', value: { a: part, b: part, c: part, n: 1 } }));
        await must('fold setup', post('delete', { path: 'fold.a' }));
        await must('fold setup', post('delete', { path: 'fold.b' }));
        proxy.reset();
        return post('delete', { path: 'fold.c' });
      },
    },
    {
      id: 'get-leaf',
      label: 'GET of a leaf',
      run: () => api.call('GET', `${project.content}?path=counter`, { token }),
    },
    { id: 'get-all', label: 'GET of the whole content', run: () => api.call('GET', project.content, { token }) },
  ];

  const measure = async (): Promise<OpRow[]> => {
    const rows: OpRow[] = [];
    const samples = new Map<string, OpSample[]>(ops.map((op) => [op.id, []]));
    // Uncounted: fill all 32 request-token slots, as in any project in use, so every repetition bills the same item.
    for (let i = 0; i < TOKEN_SLOTS; i++) await must('warm-up', post('set', { path: 'meta.warm', value: i }));
    for (let rep = 0; rep < repeats; rep++) {
      const before = logLength;
      inserted = [];
      for (const op of ops) {
        proxy.reset();
        const reply = await op.run(rep);
        const counts = proxy.counts();
        const s = summarise(proxy.capacity(), counts);
        samples.get(op.id)?.push({ status: reply.status, byOperation: counts, ...s });
      }
      // Uncounted: take the records the repetition added off the log again (the ones inserted before the end, last
      // first, then the ones pushed and inserted at the end), so that every repetition runs at the same size.
      for (const index of [...inserted].reverse()) await must('restore', post('delete', { path: `log.${index}` }));
      await must('restore', post('delete', { path: `builds.batched${rep}` }));
      await must('restore', post('delete', { path: 'fold' }));
      await must('restore', post('delete', { path: 'foldpad' }));
      for (let index = logLength - inserted.length - 1; index >= before; index--) {
        await must('restore', post('delete', { path: `log.${index}` }));
      }
      const log = await must('log length', api.call('GET', `${project.content}?path=log&shallow=true`, { token }));
      logLength = (log.body as { value: { length: number } }).value.length;
      if (logLength !== before) throw new Error(`log length ${logLength} after the restore, expected ${before}`);
    }
    for (const op of ops) {
      const list = samples.get(op.id) ?? [];
      const last = list[list.length - 1];
      rows.push({
        id: op.id,
        label: op.label,
        statuses: [...new Set(list.map((s) => s.status))],
        requests: median(list.map((s) => s.requests)),
        wcu: median(list.map((s) => s.writeUnits)),
        rcu: median(list.map((s) => s.readUnits)),
        sequence: last
          ? Object.entries(last.byOperation)
              .map(([name, n]) => (n > 1 ? `${n}× ${name}` : name))
              .join(' + ')
          : '',
        unreported: list.reduce((a, s) => a + s.unreported, 0),
        samples: list,
      });
    }
    return rows;
  };

  const growth: GrowthResult = {
    targetBytes: SIZES[SIZES.length - 1]?.bytes ?? 0,
    reachedBytes: 0,
    seconds: 0,
    writes: 0,
    requests: 0,
    writeUnits: 0,
    readUnits: 0,
    milestones: [],
  };
  /** Grows the content to at least `target` bytes; answers the refusal if the API stops it first. */
  const grow = async (target: number) => {
    while (estimate < target) {
      proxy.reset();
      const t0 = performance.now();
      const n = built;
      const value = record(n);
      let reply = await post('set', { path: `builds.${value.id as string}`, value });
      growth.writes += 1;
      let added = 1 + Buffer.byteLength(value.id as string) + storedSize(value as never);
      if (reply.status === 200 && n % 4 === 3) {
        const pushed = { ...value, id: `l${n}` };
        reply = await post('push', { path: 'log', value: pushed });
        growth.writes += 1;
        if (reply.status === 200) {
          logLength += 1;
          added += 1 + storedSize(pushed as never);
        }
      }
      growth.seconds += (performance.now() - t0) / 1000;
      const s = summarise(proxy.capacity(), proxy.counts());
      growth.requests += s.requests;
      growth.writeUnits += s.writeUnits;
      growth.readUnits += s.readUnits;
      if (reply.status !== 200) {
        const body = reply.body as { code?: string; message?: string } | undefined;
        return { status: reply.status, code: body?.code, message: body?.message };
      }
      built += 1;
      estimate += added;
      if (built % 200 === 0) log(`  grown to ~${(estimate / 1024).toFixed(0)} KiB in ${growth.seconds.toFixed(1)} s`);
    }
    return undefined;
  };

  // A small write (set of a leaf, warm key) with 1 key and no members, then with 100 keys and 200 members: keys
  // and members live in grant items of their own, so the write's item (and its bill) does not grow with them.
  const accounts = await import('../lib/store/accounts');
  const { listKeys, listMembers } = await import('../lib/store/grants');
  const ref = { username: project.username, slug: project.slug };
  const inc = (await accounts.readProjectMeta(ref))?.inc ?? '';
  const counts = async () => ({
    keys: (await listKeys(ref, inc)).length,
    members: (await listMembers(ref, inc)).length,
  });
  const smallWrite = async (label: string, keys: number, members: number) => {
    const list: OpSample[] = [];
    for (let i = 0; i < TOKEN_SLOTS; i++) await must('warm-up', post('set', { path: 'meta.warm', value: i }));
    for (let rep = 0; rep < repeats; rep++) {
      proxy.reset();
      const reply = await post('set', { path: 'meta.leaf', value: `g${rep}` });
      const counts = proxy.counts();
      list.push({ status: reply.status, byOperation: counts, ...summarise(proxy.capacity(), counts) });
    }
    return {
      label,
      keys,
      members,
      wcu: median(list.map((x) => x.writeUnits)),
      rcu: median(list.map((x) => x.readUnits)),
      requests: median(list.map((x) => x.requests)),
    };
  };
  const grants: GrantsResult = { keys: GRANT_KEYS, members: GRANT_MEMBERS, rows: [] };
  const before = await counts();
  grants.rows.push(
    await smallWrite(`${before.keys} keys, ${before.members} members (the fixtures')`, before.keys, before.members),
  );
  const added: string[] = [];
  for (let i = before.keys; i < GRANT_KEYS; i++) {
    added.push((await accounts.createApiKey(ref, { name: `grant-${i}`, permissions: ['content:read'] })).id);
  }
  const members = Array.from({ length: GRANT_MEMBERS - before.members }, (_, i) => `@bench-member-${i}`);
  for (const member of members) await accounts.setMember(ref, member, 'viewer');
  const full = await counts();
  grants.rows.push(await smallWrite(`${full.keys} keys, ${full.members} members`, full.keys, full.members));
  for (const row of grants.rows) log(`  small write with ${row.label}: ${row.wcu} WCU, ${row.requests} request(s)`);
  // Taken away again (each advances the grant epoch; the bench key re-verifies once).
  for (const id of added) await accounts.revokeApiKey(ref, id);
  for (const member of members) await accounts.removeMember(ref, member);

  const sizes: SizeResult[] = [];
  let stoppedBy: SizeResult['stoppedBy'];
  for (const size of SIZES) {
    if (!stoppedBy) {
      stoppedBy = await grow(size.bytes);
      if (!stoppedBy && size.bytes > 0)
        growth.milestones.push({ label: size.label, seconds: growth.seconds, writes: growth.writes });
    }
    const bytes = await contentBytes();
    estimate = bytes;
    growth.reachedBytes = bytes;
    if (stoppedBy) {
      sizes.push({
        label: size.label,
        targetBytes: size.bytes,
        held: false,
        contentBytes: bytes,
        ...(await layout().then((l) => ({ itemBytes: l.largest, segments: l.segments }))),
        rows: [],
        stoppedBy,
      });
      log(
        `  ${size.label}: cannot hold (${stoppedBy.status} ${stoppedBy.code ?? ''} at ${(bytes / 1024).toFixed(1)} KiB)`,
      );
      continue;
    }
    const rows = await measure();
    // Every write records its request token in one of 32 slots, so a project in use carries all of them (about 1 KB
    // more than a fresh one); the bill is on that item.
    const { largest: item, segments } = await layout();
    sizes.push({
      label: size.label,
      targetBytes: size.bytes,
      held: true,
      contentBytes: bytes,
      itemBytes: item,
      segments,
      rows,
    });
    const set = rows.find((r) => r.id === 'set');
    log(
      `  ${size.label}: content ${(bytes / 1024).toFixed(1)} KiB in ${segments} segments (largest ${(item / 1024).toFixed(1)} KiB); set ${set?.wcu} WCU → ${writesPerSecond(set?.wcu ?? 0)} writes/s`,
    );
    // The measured operations grew the content a little; the next growth starts from the measured size.
    estimate = await contentBytes();
  }
  growth.stoppedBy = stoppedBy;
  return { engine: options.engine, repeats, recordBytes: RECORD_BYTES, sizes, growth, grants };
}

const kib = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`);
const units = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

const rate = (perSecond: number, units: number) => {
  if (units <= 0) return '∞';
  const r = perSecond / units;
  return r < 10 ? r.toFixed(1) : String(Math.floor(r));
};
/** writes/s one project (one partition) takes at a given WCU per small write: 1000 ÷ WCU. */
export const writesPerSecond = (wcu: number) => rate(PARTITION.wcuPerSecond, wcu);
/** reads/s of one partition at a given RCU per read: 3000 ÷ RCU. */
export const readsPerSecond = (rcu: number) => rate(PARTITION.rcuPerSecond, rcu);

/** The cost table and growth line as Markdown (used by latest.md and the per-engine results file). */
export function costMarkdown(c: CostReport, heading = '##'): string[] {
  const out: string[] = [];
  out.push(`${heading} 6. Cost per operation by content size, content in segments (storage steps 3 and 4)`, '');
  out.push(
    `Engine: ${c.engine}. The local API (\`lib/local/start.ts\`) talks to the engine through \`test/support/dynamo-proxy.ts\` with \`consumedCapacity\` on: the proxy adds \`ReturnConsumedCapacity: TOTAL\` to every request it forwards and sums the units the engine reports (RCU for reads, WCU for writes), so nothing is estimated. ` +
      `The content is \`{counter, log: [...], meta: {leaf}, builds: {...}}\`, grown with ${c.recordBytes}-byte build records (one \`set builds.<id>\` each, every fourth also pushed onto \`log\`); sizes are DynamoDB-counted bytes of the content; in brackets the number of segments it is stored in and the largest one (with its version, grant epoch and the 32 request-token slots every write fills in turn, filled by 32 uncounted writes before the measurement as in any project in use). Each repetition's added log records are deleted again (uncounted), so every repetition runs at the same size. A write bills ⌈larger of the segment before and after ÷ 1 KB⌉ WCU (a transaction 2 WCU per KB of every item in it), a strongly consistent read ⌈segment ÷ 4 KB⌉ RCU. The log array is chunked (a push appends to its newest chunk's segment; an insert before its newest elements reads the array's segment and the chunks from the last down to its index in one \`Query\`, once the Lambda has met the array, and rewrites those chunks in place: the cost of the tail after it, 413 \`CHANGE_TOO_LARGE\` past about 90 chunks of tail) and the builds object bucketed (a set lands in its member's bucket), storage step 4. The folding delete empties a section of the root that is a segment of its own: the root is read and the section folded back into it (one 2-item transaction). ` +
      `Each operation ran ${c.repeats}× per size with an API key; cells are medians. Writes/s per project = 1,000 WCU/s (one partition) ÷ WCU of one small write (the set of a leaf); reads/s = 3,000 RCU/s ÷ RCU of a leaf GET.`,
    '',
  );
  const held = c.sizes.filter((s) => s.held);
  const ids = held[0]?.rows.map((r) => ({ id: r.id, label: r.label })) ?? [];
  out.push(`| Operation | ${c.sizes.map((s) => `${s.label}: requests · WCU · RCU`).join(' | ')} |`);
  out.push(`|---|${c.sizes.map(() => '---').join('|')}|`);
  out.push(
    `| content (item) | ${c.sizes
      .map((s) =>
        s.held
          ? `${kib(s.contentBytes)} (${s.segments ?? '?'} segments, largest ${kib(s.itemBytes ?? 0)})`
          : `**cannot hold**: ${s.stoppedBy?.status} ${s.stoppedBy?.code ?? ''} at ${kib(s.contentBytes)}`,
      )
      .join(' | ')} |`,
  );
  for (const { id, label } of ids) {
    const cells = c.sizes.map((s) => {
      if (!s.held) return '—';
      const r = s.rows.find((x) => x.id === id);
      if (!r) return '';
      const statuses = r.statuses.join('/');
      return `${units(r.requests)} · ${units(r.wcu)} · ${units(r.rcu)}${statuses === '200' ? '' : ` (${statuses})`}${r.unreported ? ` (${r.unreported} answers without capacity)` : ''}`;
    });
    out.push(`| ${label} | ${cells.join(' | ')} |`);
  }
  out.push(
    `| **writes/s per project** = 1000 ÷ WCU of a set | ${c.sizes
      .map((s) => {
        const set = s.rows.find((r) => r.id === 'set');
        return s.held && set ? `**${writesPerSecond(set.wcu)}** (1000 ÷ ${units(set.wcu)})` : '—';
      })
      .join(' | ')} |`,
  );
  out.push(
    `| **leaf reads/s per project** = 3000 ÷ RCU of a leaf GET | ${c.sizes
      .map((s) => {
        const get = s.rows.find((r) => r.id === 'get-leaf');
        return s.held && get ? `**${readsPerSecond(get.rcu)}** (3000 ÷ ${units(get.rcu)})` : '—';
      })
      .join(' | ')} |`,
  );
  out.push('');
  const sequences = ids.map(({ id, label }) => {
    const bySize = held.map((s) => ({ size: s.label, seq: s.rows.find((r) => r.id === id)?.sequence ?? '' }));
    const same = bySize.every((b) => b.seq === bySize[0]?.seq);
    return `${label}: ${same ? (bySize[0]?.seq ?? '') : bySize.map((b) => `${b.size} ${b.seq}`).join(', ')}`;
  });
  out.push(`DynamoDB requests per operation: ${sequences.join(' · ')}.`, '');
  const unreported = held.flatMap((s) => s.rows.filter((r) => r.unreported > 0).map((r) => `${r.label} at ${s.label}`));
  if (unreported.length > 0)
    out.push(
      `**Not in the units:** ${[...new Set(unreported)].join(', ')}: one answer per repetition came back without \`ConsumedCapacity\`: the first \`UpdateItem\`, refused by its condition (\`ConditionalCheckFailedException\`, which returns the item for the planned write but reports no capacity). DynamoDB bills a refused conditional write by the size of the existing item (at least 1 WCU), so on DynamoDB such an operation costs about twice the WCU shown.`,
      '',
    );
  if (c.grants) {
    out.push(
      `**A small write by the number of keys and members** (set of a leaf with a warm API key, empty content, medians of ${c.repeats}): keys and members are grant items beside the project's head, and a write checks only the head's grant epoch, so its bill does not grow with them.`,
      '',
      '| Keys, members | requests | WCU | RCU |',
      '|---|---|---|---|',
      ...c.grants.rows.map((r) => `| ${r.label} | ${units(r.requests)} | ${units(r.wcu)} | ${units(r.rcu)} |`),
      '',
    );
  }
  const g = c.growth;
  out.push(
    `**Time to grow a project to ${g.targetBytes / 1024 / 1024} MiB** (${c.recordBytes}-byte records, one write each, every fourth record also pushed onto the log; one client, sequential): ` +
      (g.stoppedBy
        ? `stopped at ${kib(g.reachedBytes)} after ${g.writes} writes (the last one refused) in ${g.seconds.toFixed(1)} s: the API answered ${g.stoppedBy.status} ${g.stoppedBy.code ?? ''} (${g.stoppedBy.message ?? ''}). `
        : `reached in ${g.seconds.toFixed(1)} s, ${g.writes} writes. `) +
      `Milestones: ${g.milestones.map((m) => `${m.label} after ${m.writes} writes, ${m.seconds.toFixed(1)} s`).join('; ')}. ` +
      `The growth cost ${g.requests} DynamoDB requests, ${units(g.writeUnits)} WCU and ${units(g.readUnits)} RCU in total (each write bills the segment it changes: the record's bucket, the log's newest segment).`,
    '',
  );
  return out;
}
