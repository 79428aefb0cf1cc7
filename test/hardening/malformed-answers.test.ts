// A DynamoDB answer no HTTP client may accept (Content-Length beside chunked Transfer-Encoding, as a broken engine or
// middlebox may send): the request it belongs to is a 503 JSON error, and the process keeps serving every request
// after it (issue 27, data integrity 4: one such answer once killed the whole local server).
import type { ProxyRequest } from '../support/dynamo-proxy';
import { type Stack, type StackProject, request, startStack } from '../support/hardening-stack';

let stack: Stack;
let p: StackProject;

beforeAll(async () => {
  stack = await startStack();
  p = await stack.newProject();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const isContent = (r: ProxyRequest) => r.body.toString('utf8').includes('"S":"C#');

describe('a malformed DynamoDB answer', () => {
  it.each([
    ['a read', () => request(`${p.content}?path=a`, { token: p.key })],
    ['a write', () => request(`${p.content}/set`, { method: 'POST', token: p.key, body: { path: 'a', value: 1 } })],
  ])('to %s: a 503 JSON error for that request, and the process keeps serving', async (_, send) => {
    stack.proxy.setFaults((r) => (isContent(r) ? { when: 'before', kind: 'malformed' } : undefined));
    let refused: Awaited<ReturnType<typeof send>>;
    try {
      refused = await send();
    } finally {
      stack.proxy.setFaults(undefined);
    }
    expect(stack.proxy.faults()['before:malformed']).toBeGreaterThan(0);
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 503,
      body: { message: expect.any(String), code: expect.any(String) },
    });
    // Give an uncaught error on the poisoned socket its turn to kill the process.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.exit()).toBeUndefined();
    const write = await request(`${p.content}/set`, { method: 'POST', token: p.key, body: { path: 'b', value: 2 } });
    expect(write.status).toBe(200);
    const read = await request(`${p.content}?path=b`, { token: p.key });
    expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: { value: 2 } });
    expect(stack.alive()).toBe(true);
  });
});

describe('malformed answers to every request for a while', () => {
  it('(the change stream polls too, on DynamoDB Local): each request a 503, the process keeps serving', async () => {
    const realtime = new WebSocket(`${stack.url.replace(/^http/, 'ws')}/realtime`);
    stack.proxy.setFaults(() => ({ when: 'before', kind: 'malformed' }));
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const r = await request(`${p.content}/set`, { method: 'POST', token: p.key, body: { path: 'c', value: i } });
        statuses.push(r.status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      stack.proxy.setFaults(undefined);
      realtime.close();
    }
    expect(statuses.every((s) => s === 503)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.exit()).toBeUndefined();
    const write = await request(`${p.content}/set`, { method: 'POST', token: p.key, body: { path: 'c', value: 9 } });
    expect(write.status).toBe(200);
  });
});
