// Metrics in the local logs: the local API (as `npm start` runs it) writes the same CloudWatch EMF lines a Lambda
// writes, one JSON line per request and one per DynamoDB operation it used; this reads them from its stdout.
import type { ChildProcess } from 'node:child_process';
import { DIMENSION, METRIC } from '../../lib/http/metrics';
import { startLocalApi, stopProcess } from '../support/local-api';

interface Emf {
  _aws: {
    Timestamp: number;
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  [key: string]: unknown;
}

describe('EMF metric lines in the local JSON logs', () => {
  let child: ChildProcess;
  let url: string;
  const output: string[] = [];

  beforeAll(async () => {
    const api = await startLocalApi({
      env: {
        ...process.env,
        PORT: '0',
        LOCAL_DYNAMODB_PORT: '0',
        DATA_DIR: ':memory:',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        LOG_FORMAT: 'json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      onSpawn: (spawned) => {
        let partial = '';
        spawned.stdout?.setEncoding('utf8');
        spawned.stdout?.on('data', (chunk: string) => {
          const parts = (partial + chunk).split('\n');
          partial = parts.pop() ?? '';
          output.push(...parts);
        });
        spawned.stderr?.resume();
      },
    });
    child = api.child;
    url = api.url;
  }, 90_000);
  afterAll(() => stopProcess(child));

  const emfSince = (from: number): Emf[] =>
    output
      .slice(from)
      .filter((line) => line.startsWith('{') && line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Emf);

  async function waitFor(from: number, count: number): Promise<Emf[]> {
    const deadline = Date.now() + 5000;
    while (emfSince(from).length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return emfSince(from);
  }

  it('a request, a 4xx, a DynamoDB write and an idempotent replay: names, dimensions, values and capacity', async () => {
    const banner = Date.now() + 5000;
    while (!/API key capi_/.test(output.join('\n')) && Date.now() < banner) await new Promise((r) => setTimeout(r, 20));
    const key = output.join('\n').match(/API key (capi_\S+)/)?.[1] as string;
    expect(key).toBeDefined();
    const content = `${url}/api/@demo/site/content`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const path = `m${Date.now()}`;
    const send = (body: unknown, extra: Record<string, string> = {}) =>
      fetch(`${content}/set`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });

    const from = output.length;
    expect((await send({ path, value: 1 })).status).toBe(200);
    expect((await send({ path: '', value: 1 })).status).toBe(400);
    expect((await send({ path, value: 2 }, { 'idempotency-key': `k-${path}` })).status).toBe(200);
    expect((await send({ path, value: 2 }, { 'idempotency-key': `k-${path}` })).status).toBe(200);
    expect((await fetch(`${content}?path=${path}`, { headers })).status).toBe(200);
    const lines = await waitFor(from, 5);

    const names = new Set<string>(Object.values(METRIC));
    for (const line of lines) {
      const [directive] = line._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe('content-api-local');
      for (const metric of directive?.Metrics ?? []) expect(names).toContain(metric.Name);
      // Low cardinality: only the documented dimensions, never a project, user or request id.
      for (const set of directive?.Dimensions ?? [])
        for (const dimension of set) expect(Object.values(DIMENSION)).toContain(dimension);
      expect(line.service).toBe('content-api');
      expect(line.function_request_id).toEqual(expect.any(String));
    }
    const requests = lines.filter((l) => METRIC.requests in l);
    expect(requests.map((l) => [l.FunctionName, l[METRIC.errors4xx], l[METRIC.errors5xx]])).toEqual([
      ['set', 0, 0],
      ['set', 1, 0],
      ['set', 0, 0],
      ['set', 0, 0],
      ['get', 0, 0],
    ]);
    expect(requests[0]?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'FunctionName'], ['service']]);
    for (const line of requests) expect(line[METRIC.latency]).toEqual(expect.any(Number));
    // The replay (fourth request) is counted, the first run of the key is not.
    expect(requests.map((l) => l[METRIC.idempotentReplays] ?? 0)).toEqual([0, 0, 0, 1, 0]);

    const dynamo = lines.filter((l) => METRIC.dynamoRequests in l);
    const updates = dynamo.filter((l) => l.Operation === 'UpdateItem' && l.FunctionName === 'set');
    expect(updates.length).toBeGreaterThanOrEqual(2);
    // The engine reports what each write consumed (ReturnConsumedCapacity: TOTAL on every request).
    expect(updates[0]).toMatchObject({ [METRIC.dynamoRequests]: 1, [METRIC.readCapacity]: 0 });
    expect(updates[0]?.[METRIC.writeCapacity]).toBeGreaterThanOrEqual(1);
    expect(updates[0]?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'FunctionName', 'Operation']]);
    const reads = dynamo.filter((l) => l.Operation === 'GetItem' && l.FunctionName === 'get');
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ [METRIC.dynamoRequests]: 1, [METRIC.writeCapacity]: 0 });
    expect(reads[0]?.[METRIC.readCapacity]).toBeGreaterThan(0);
    // The 400 was decided before any DynamoDB call of its own after the credential check: no write for it.
    const writes = dynamo.filter((l) => l.FunctionName === 'set' && l.Operation === 'UpdateItem');
    expect(writes.reduce((n, l) => n + Number(l[METRIC.dynamoRequests]), 0)).toBeGreaterThanOrEqual(2);
  });
});
