// What a rules change and a key revocation cost on a large project (run alone: `npm run -s bench:rules-change`).
// The project is grown to BENCH_RULES_CHANGE_MIB (default 32) MiB of one-kilobyte strings, 300 to an object, through
// the local API (lib/local/start.ts, as `npm start` runs it, with its 10 s request deadline), which talks to the
// embedded engine (bench/engine.ts, its own process) through the DynamoDB proxy with `consumedCapacity` on, so the
// requests and write units are the engine's own. Then `PUT .../rules` and a key revocation are timed end to end:
// status, seconds, DynamoDB requests by operation, WCU, and the segments still at an older grant epoch after each;
// then what the sweeper's part (finishPendingStampings, run here in the bench's process) costs to finish the rest.
import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { baseEnv } from './lib/config';
import { type Child, startApiServer, startEngineProcess } from './lib/procs';

const MIB = Number(process.env.BENCH_RULES_CHANGE_MIB ?? 32);
const STRING_BYTES = 1000;
const STRINGS_PER_OBJECT = 300;

const log = (line: string) => process.stdout.write(`${line}\n`);
const children: Child[] = [];
const cleanups: Array<() => unknown> = [];

async function main(): Promise<void> {
  const engine = await startEngineProcess();
  children.push(engine);
  const { startDynamoProxy } = await import('../test/support/dynamo-proxy');
  const proxy = await startDynamoProxy(engine.endpoint, { consumedCapacity: true });
  cleanups.push(() => proxy.close());
  // This process's own requests (fixtures, the census, the sweeper's part) go through the proxy too.
  Object.assign(process.env, baseEnv({ AWS_ENDPOINT_URL_DYNAMODB: proxy.url }), { PATH: process.env.PATH });
  const accounts = await import('../lib/store/accounts');
  const { finishPendingStampings } = await import('../lib/storage');
  const { dynamo } = await import('../lib/dynamo/client');
  const { A } = await import('../lib/schema/attributes');
  const { itemKeyAttributes, projectPk } = await import('../lib/schema/items');
  const server = await startApiServer(proxy.url, {});
  children.push(server);

  const owner = '@rules-bench';
  await accounts.ensureUser(owner);
  const project = { username: owner, slug: `big${Date.now().toString(36)}` };
  await accounts.createProject(project);
  const token = (await accounts.createSession(owner, 3600)).token;
  const base = `${server.url}/api/${owner}/${project.slug}`;
  const send = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };

  const objects = Math.ceil((MIB * 1024 * 1024) / (STRING_BYTES * STRINGS_PER_OBJECT));
  log(
    `growing ${owner}/${project.slug} to ${MIB} MiB: ${objects} objects of ${STRINGS_PER_OBJECT} × ${STRING_BYTES} B`,
  );
  const grown = performance.now();
  for (let i = 0; i < objects; i++) {
    const value = Object.fromEntries(
      Array.from({ length: STRINGS_PER_OBJECT }, (_, j) => [`s${j}`, `${i}.${j}.`.padEnd(STRING_BYTES, 'x')]),
    );
    const reply = await send('POST', '/content/set', { path: `part${i}`, value });
    if (reply.status !== 200) throw new Error(`growth stopped at object ${i}: ${reply.status} ${reply.text}`);
  }
  log(`grown in ${((performance.now() - grown) / 1000).toFixed(1)} s`);

  const head = async () =>
    (
      await dynamo.send(
        new GetItemCommand({
          TableName: process.env.TABLE_NAME,
          Key: itemKeyAttributes(projectPk(project)),
          ConsistentRead: true,
        }),
      )
    ).Item;
  const inc = (await head())?.[A.incarnation]?.S as string;
  /** Segments of the content, and how many are at an older grant epoch than the head's. */
  const census = async () => {
    const epoch = Number((await head())?.[A.grantEpoch]?.N ?? 0);
    let segments = 0;
    let behind = 0;
    let start: Record<string, any> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: process.env.TABLE_NAME,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: `C#${inc}` } },
          ProjectionExpression: '#ge',
          ExpressionAttributeNames: { '#ge': A.grantEpoch },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        if (item[A.grantEpoch] === undefined) continue; // markers
        segments++;
        if (Number(item[A.grantEpoch]?.N) < epoch) behind++;
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return { segments, behind, epoch };
  };
  const before = await census();
  log(`segments: ${before.segments}`);

  /** The DynamoDB requests by operation and the WCU since the proxy's last reset. */
  const usage = () => {
    const capacity = proxy.capacity();
    return {
      requests: Object.fromEntries(Object.entries(capacity).map(([op, c]) => [op, c.requests])),
      wcu: Object.values(capacity).reduce((sum, c) => sum + c.writeUnits, 0),
    };
  };
  const measure = async (label: string, run: () => Promise<{ status: number; text: string }>) => {
    proxy.reset();
    const t0 = performance.now();
    const reply = await run();
    const seconds = (performance.now() - t0) / 1000;
    const { requests, wcu } = usage();
    const after = await census();
    log(
      `${label}: ${reply.status} in ${seconds.toFixed(2)} s; requests ${JSON.stringify(requests)}; ${wcu.toFixed(0)} WCU; ` +
        `${after.behind} of ${after.segments} segments behind epoch ${after.epoch}; ${reply.text.slice(0, 240)}`,
    );
    // What is left is finished by the sweeper's part before the next measurement: its cost is the change's too.
    proxy.reset();
    const t1 = performance.now();
    const finished = await finishPendingStampings(Number.POSITIVE_INFINITY);
    const rest = usage();
    const left = await census();
    log(
      `  finished by the sweeper's part in ${((performance.now() - t1) / 1000).toFixed(2)} s (${finished.stampings} pending): ` +
        `requests ${JSON.stringify(rest.requests)}; ${rest.wcu.toFixed(0)} WCU; ${left.behind} segments behind after`,
    );
  };
  const rules = { rules: [{ match: 'part0.**', read: 'true' }] };
  await measure('rules change (PUT .../rules)', () => send('PUT', '/rules', rules));
  await measure('rules change again', () => send('PUT', '/rules', rules));
  const key = await accounts.createApiKey(project, { name: 'bench', permissions: ['content:read'] });
  await measure('key revocation (DELETE .../keys/:id)', () => send('DELETE', `/keys/${key.id}`));
}

try {
  await main();
} catch (error) {
  process.exitCode = 1;
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
} finally {
  for (const cleanup of cleanups) await cleanup();
  for (const child of children.reverse()) await child.stop();
}
