// Realtime's bounds (issue 27, abuse 8): a subscription's snapshot reads no further than a message can carry (a
// larger value is sent as `changed`), and the local server does not buffer without bound for a reader that stopped
// reading: past its bound it closes the connection, whose subscriptions then end.
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import WebSocket from 'ws';
import { dynamo } from '../../lib/dynamo/client';
import { querySubscriptions } from '../../lib/realtime/records';
import { readSnapshot } from '../../lib/storage/snapshot';
import { type Project, newProject, post } from '../support/api';
import { Client, realtimeUrl } from '../support/realtime';
import { incarnationOf, segmentsOf } from '../support/segments';

const name = (p: Project) => `${p.username}/${p.slug}`;

/** About `kib` KiB of content under `key`: an object of 2 KiB members (cut into many segments). */
const bulk = (kib: number) =>
  Object.fromEntries(Array.from({ length: Math.ceil(kib / 2) }, (_, i) => [`m${i}`, 'v'.repeat(2000)]));

describe('realtime limits', () => {
  it('a snapshot of a value over the message limit stops reading there and is sent as changed', async () => {
    const p = await newProject();
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) {
      expect((await post(p, 'set', { path: key, value: bulk(400) })).status).toBe(200);
    }
    const segments = (await segmentsOf(p)).length;
    const inc = await incarnationOf(p);
    // What the snapshot's Queries return (as JSON text), counted where the SDK answers.
    let bytesRead = 0;
    const send = dynamo.send.bind(dynamo);
    const spy = jest.spyOn(dynamo, 'send').mockImplementation(async (command: any, ...rest: any[]) => {
      const output: any = await (send as any)(command, ...rest);
      if (command instanceof QueryCommand) bytesRead += JSON.stringify(output.Items ?? []).length;
      return output;
    });
    try {
      const snapshot = await readSnapshot(inc, [], 256 * 1024);
      expect(snapshot.tooLarge).toBe(true);
      expect(snapshot.value).toBeUndefined();
    } finally {
      spy.mockRestore();
    }
    // 2.4 MB of content in hundreds of segments; read: the 256 KiB budget and at most one page's slack.
    expect(segments).toBeGreaterThan(600);
    expect(bytesRead).toBeLessThan(700 * 1024);
    const c = await Client.open();
    try {
      c.send({ action: 'subscribe', project: name(p), token: p.key });
      expect(await c.next()).toMatchObject({ type: 'subscribed' });
      expect(await c.next()).toEqual({ type: 'changed', id: expect.any(String), revision: expect.any(String) });
    } finally {
      c.close();
    }
  }, 120_000);

  it('a client that stops reading is disconnected past the bound, its subscription ends; writes go on', async () => {
    const p = await newProject();
    const inc = await incarnationOf(p);
    const ws = new WebSocket(realtimeUrl());
    const frames: string[] = [];
    let closed = false;
    ws.on('message', (data) => frames.push(String(data)));
    ws.on('close', () => {
      closed = true;
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      ws.send(JSON.stringify({ action: 'subscribe', project: name(p), token: p.key }));
      for (let i = 0; i < 100 && frames.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
      expect(frames.map((f) => JSON.parse(f).type)).toEqual(['subscribed', 'snapshot']);
      // Stops reading: the kernel's buffers fill, then the server's.
      ws.pause();
      let writes = 0;
      for (; writes < 400 && (await querySubscriptions(inc)).length > 0; writes++) {
        const value = `${writes}`.padEnd(100_000, 'x');
        expect((await post(p, 'set', { path: 'big', value })).status).toBe(200);
      }
      // Dropped once far fewer than 400 frames of 100 KB (40 MB) were waiting; its record is gone with it.
      expect(writes).toBeLessThan(400);
      expect(await querySubscriptions(inc)).toEqual([]);
      ws.resume();
      for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 50));
      expect(closed).toBe(true);
    } finally {
      ws.terminate();
    }
  }, 180_000);
});
