// What realtime leaves in the table: a connection closed right after subscribing leaves no subscription record
// (issue 27, abuse 5), whatever the order in which its subscribe and its $disconnect run.
import WebSocket from 'ws';
import { querySubscriptions } from '../../lib/realtime/records';
import { type Project, newProject } from '../support/api';
import { realtimeUrl } from '../support/realtime';
import { incarnationOf } from '../support/segments';

const name = (p: Project) => `${p.username}/${p.slug}`;

/** Connects, sends a subscribe, closes `delayMs` later (before or after its answer, whichever comes). */
async function subscribeAndClose(p: Project, delayMs: number): Promise<void> {
  const ws = new WebSocket(realtimeUrl());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ action: 'subscribe', project: name(p), token: p.key }));
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const closed = new Promise((resolve) => ws.once('close', resolve));
  ws.close();
  await closed;
}

/** Waits until `count` stays the same for a second (the server's handlers and the consumer have settled). */
async function settled(count: () => Promise<number>): Promise<number> {
  let last = await count();
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await count();
    if (now === last && now === 0) return now;
    if (now === last && i > 5) return now;
    last = now;
  }
  return last;
}

describe('realtime records', () => {
  it('120 connect-subscribe-close cycles within 0-7 ms leave no subscription record', async () => {
    const p = await newProject();
    const inc = await incarnationOf(p);
    for (let round = 0; round < 12; round++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => subscribeAndClose(p, (round + i) % 8)));
    }
    expect(await settled(async () => (await querySubscriptions(inc)).length)).toBe(0);
  }, 120_000);
});
