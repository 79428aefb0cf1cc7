// The local server's readable line per request (lib/local/request-line.ts).
import { readableRequestLines, requestLine } from '../../lib/local/request-line';

describe('requestLine', () => {
  const dynamo = { requests: 3, retries: 0, readUnits: 2, writeUnits: 1.5 };
  it.each([
    [{ method: 'GET', target: '/nope', status: 404, ms: 0.4 }, 'GET /nope 404 0 ms'],
    [
      { method: 'POST', target: '/api/@demo/site/content/set', status: 200, ms: 12.6, dynamo },
      'POST /api/@demo/site/content/set 200 13 ms · DynamoDB 3 requests, 2 RCU, 1.5 WCU',
    ],
    [
      { method: 'GET', target: '/c?path=a', status: 503, ms: 9, dynamo: { ...dynamo, requests: 1, retries: 2 } },
      'GET /c?path=a 503 9 ms · DynamoDB 1 request (2 retried), 2 RCU, 1.5 WCU',
    ],
  ])('%j -> %s', (options, line) => {
    expect(requestLine(options)).toBe(line);
  });

  it('cuts a long path so one request stays one line', () => {
    const line = requestLine({ method: 'GET', target: `/c?path=${'p'.repeat(5000)}`, status: 400, ms: 1 });
    expect(line.length).toBeLessThan(130);
    expect(line).toMatch(/^GET \/c\?path=p+… 400 1 ms$/);
  });

  it.each([
    [undefined, true],
    ['json', false],
    ['JSON', false],
    ['text', true],
  ])('LOG_FORMAT=%s: readable lines %s', (format, readable) => {
    const saved = process.env.LOG_FORMAT;
    if (format === undefined) delete process.env.LOG_FORMAT;
    else process.env.LOG_FORMAT = format;
    try {
      expect(readableRequestLines()).toBe(readable);
    } finally {
      if (saved === undefined) delete process.env.LOG_FORMAT;
      else process.env.LOG_FORMAT = saved;
    }
  });
});
