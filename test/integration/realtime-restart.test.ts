// Revisions only grow across restarts of `npm start` on its data folder (issue 28): a client that resumes with
// `since` after them and a new subscriber see every change once, in order.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalApi, startLocalApi, stopProcess } from '../support/local-api';
import { Client } from '../support/realtime';
import { unique } from '../support/api';

async function startApi(dataDir: string, table: string): Promise<LocalApi> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    LOCAL_DYNAMODB_PORT: '0',
    DATA_DIR: dataDir,
    TABLE_NAME: table,
  };
  // On the embedded engine, its own data folder (and its own stream); on DynamoDB Local, the same flow.
  if (process.env.DYNAMODB_ENGINE !== 'dynamodb-local') delete env.AWS_ENDPOINT_URL_DYNAMODB;
  delete env.REALTIME_ENDPOINT;
  return startLocalApi({ env });
}

describe('realtime across a restart of the local server', () => {
  it('revisions keep growing: a resuming client and a new subscriber see every change once, in order', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'content-api-data-'));
    const table = `content-api-${unique('t')}`;
    const clients: Client[] = [];
    let api: LocalApi | undefined;
    try {
      api = await startApi(dataDir, table);
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
      const project = `${demo.username}/${demo.projectSlug}`;
      const set = async (path: string, value: unknown) => {
        const reply = await fetch(`${api?.url}/api/${project}/content/set`, {
          method: 'POST',
          headers: { authorization: `Bearer ${demo.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ path, value }),
        });
        expect(reply.status).toBe(200);
      };
      const connect = async () => {
        const c = await Client.open(`${(api as LocalApi).url.replace(/^http/, 'ws')}/realtime`);
        clients.push(c);
        return c;
      };
      const first = await connect();
      const { snapshot } = await first.subscribe({ project, token: demo.key });
      await set('a', 1);
      const before = await first.next();
      expect(before).toMatchObject({ type: 'change', changes: [{ path: 'a', value: 1 }] });
      expect(BigInt(before.revision) > BigInt(snapshot.revision)).toBe(true);
      first.close();

      for (let restart = 0; restart < 2; restart++) {
        await stopProcess(api.child);
        api = await startApi(dataDir, table);
      }
      await set('b', 2);
      // Resuming from the last revision seen before the restarts: the change since, once.
      const resumed = await connect();
      resumed.send({ action: 'subscribe', project, token: demo.key, since: before.revision });
      expect(await resumed.next()).toMatchObject({ type: 'subscribed' });
      const replayed = await resumed.next();
      expect(replayed).toMatchObject({ type: 'change', changes: [{ path: 'b', value: 2 }] });
      expect(BigInt(replayed.revision) > BigInt(before.revision)).toBe(true);
      // A new subscriber's snapshot is at the newest revision; the next change is above it, for both.
      const fresh = await connect();
      const latest = await fresh.subscribe({ project, token: demo.key });
      expect(latest.snapshot.value).toEqual({ a: 1, b: 2 });
      expect(latest.snapshot.revision).toBe(replayed.revision);
      await set('c', 3);
      for (const c of [resumed, fresh]) {
        const live = await c.next();
        expect(live).toMatchObject({ type: 'change', changes: [{ path: 'c', value: 3 }] });
        expect(BigInt(live.revision) > BigInt(replayed.revision)).toBe(true);
        await c.quiet(200);
      }
    } finally {
      for (const c of clients) c.close();
      if (api) await stopProcess(api.child);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
