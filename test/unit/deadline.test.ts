// The request deadline: a plain variable where requests never overlap (a Lambda sandbox), per-request context
// where they do (the local server); either way every DynamoDB call inside a request sees that request's deadline.
type DeadlineModule = typeof import('../../lib/dynamo/deadline');

const load = async (): Promise<DeadlineModule> => {
  let loaded: DeadlineModule | undefined;
  await jest.isolateModulesAsync(async () => {
    loaded = await import('../../lib/dynamo/deadline');
  });
  return loaded as DeadlineModule;
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe.each<[string, (m: DeadlineModule) => void]>([
  ['one request at a time (a Lambda sandbox)', () => undefined],
  ['concurrent requests (the local server)', (m) => m.allowConcurrentRequests()],
])('deadlines, %s', (_, setUp) => {
  let m: DeadlineModule;
  beforeEach(async () => {
    m = await load();
    setUp(m);
  });

  it('is Infinity outside a request and the request deadline inside it, across awaits', async () => {
    expect(m.currentDeadline()).toBe(Number.POSITIVE_INFINITY);
    const seen = await m.withDeadline(1234, async () => {
      const first = m.currentDeadline();
      await tick();
      return [first, m.currentDeadline()];
    });
    expect(seen).toEqual([1234, 1234]);
    expect(m.currentDeadline()).toBe(Number.POSITIVE_INFINITY);
  });

  it('restores the outer deadline after a nested one, also when the inner request throws', async () => {
    await m.withDeadline(1, async () => {
      await expect(m.withDeadline(2, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      expect(m.currentDeadline()).toBe(1);
    });
    expect(m.currentDeadline()).toBe(Number.POSITIVE_INFINITY);
  });

  it('makes a DynamoDB call fail with TimeoutError once the deadline has passed, and lets it through before', async () => {
    const next = jest.fn(async () => 'answered');
    await expect(m.withDeadline(Date.now() - 1, () => m.honourDeadline(next)({}))).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(next).not.toHaveBeenCalled();
    await expect(m.withDeadline(Date.now() + 60_000, () => m.honourDeadline(next)({}))).resolves.toBe('answered');
    await expect(m.honourDeadline(next)({})).resolves.toBe('answered');
  });
});

it('keeps overlapping requests apart once concurrent requests are allowed', async () => {
  const m = await load();
  m.allowConcurrentRequests();
  const request = (deadline: number, wait: number) =>
    m.withDeadline(deadline, async () => {
      await new Promise((resolve) => setTimeout(resolve, wait));
      return m.currentDeadline();
    });
  await expect(Promise.all([request(10, 5), request(20, 1)])).resolves.toEqual([10, 20]);
});
