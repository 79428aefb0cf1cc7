// `npm start` stopped (SIGTERM) while requests are in flight: every request is answered (a 200 that landed, or a 503)
// or refused at the door, and the process exits cleanly: no request meets a closed database (an uncaught
// `Database is not open` from LevelDB), and every 200 is in the content after a restart.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unique } from '../support/api';
import { type LocalApi, startLocalApi, stopProcess } from '../support/local-api';

async function startApi(dataDir: string, table: string, output: string[]): Promise<LocalApi> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    LOCAL_DYNAMODB_PORT: '0',
    DATA_DIR: dataDir,
    TABLE_NAME: table,
    // Small segments: most writes commit over several items (a transaction of several LevelDB operations).
    SEGMENT_FRAGMENT_BYTES: '256',
  };
  if (process.env.DYNAMODB_ENGINE !== 'dynamodb-local') delete env.AWS_ENDPOINT_URL_DYNAMODB;
  return startLocalApi({
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    onSpawn: (child) => {
      child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    },
  });
}

describe('npm start stopped with requests in flight', () => {
  it('answers each (200 landed, or 503) or refuses it, exits 0, and never meets a closed database', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'content-api-data-'));
    const table = `content-api-${unique('t')}`;
    const output: string[] = [];
    try {
      const api = await startApi(dataDir, table, output);
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as {
        username: string;
        projectSlug: string;
        key: string;
      };
      const base = `${api.url}/api/${demo.username}/${demo.projectSlug}/content`;
      const auth = { authorization: `Bearer ${demo.key}`, 'content-type': 'application/json' };
      const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
      let gone = false;
      void exited.then(() => (gone = true));
      const landed: string[] = [];
      const statuses: Record<string, number> = {};
      let next = 0;
      /** One writer: a value cut into segments beside the others, again and again until the process is gone. */
      const writer = async () => {
        while (!gone) {
          const name = `k${next++}`;
          const reply = await fetch(`${base}/set`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ path: `w.${name}`, value: { name, text: 'x'.repeat(300) } }),
          }).catch(() => undefined);
          const status = reply ? String(reply.status) : 'refused';
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (reply?.status === 200) landed.push(name);
          else if (reply) expect({ status: reply.status, body: await reply.json() }).toMatchObject({ status: 503 });
        }
      };
      const writers = Array.from({ length: 8 }, writer);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      api.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await Promise.all(writers);
      const text = output.join('');
      expect(text).not.toMatch(/Database is not open|uncaught exception|unhandled rejection/i);
      expect(landed.length).toBeGreaterThan(0);

      const second = await startApi(dataDir, table, output);
      try {
        const read = await fetch(`${second.url}/api/${demo.username}/${demo.projectSlug}/content?path=w`, {
          headers: auth,
        });
        expect(read.status).toBe(200);
        const { value } = (await read.json()) as { value: Record<string, { name: string }> };
        for (const name of landed) expect(value[name]).toEqual({ name, text: 'x'.repeat(300) });
      } finally {
        await stopProcess(second.child);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
