// Webhooks, pure parts: the destination classifier (SSRF), the URL's form, the changes a path receives, the
// Standard Webhooks signature (checked against the independent `standardwebhooks` package) and the backoff.
import { Webhook } from 'standardwebhooks';
import { changesFor } from '../../lib/webhooks/changes';
import { parseWebhookUrl, refusedAddress, resolveDestination } from '../../lib/webhooks/destination';
import { backoffSeconds, retryWindowSeconds } from '../../lib/webhooks/sender';
import { signPayload, signedHeaders } from '../../lib/webhooks/signature';

describe('refusedAddress', () => {
  it.each([
    // IPv4: private, loopback, link-local (instance metadata), CGNAT, unspecified, multicast, broadcast, reserved
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['169.254.0.1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    // IPv6: loopback, unspecified, link-local, unique-local, multicast
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['ff05::2', 'multicast'],
    // IPv4-mapped IPv6, judged as the IPv4 inside (dotted and hex forms)
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:192.168.1.1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    // Forms that wrap an IPv4 another way (6to4, NAT64, Teredo: named by the IPv4's range) or are not global at all
    ['2002:a9fe:a9fe::1', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'],
    ['2001::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['not-an-address', 'not an IP address'],
    ['', 'not an IP address'],
  ])('refuses %s (%s)', (address, why) => {
    expect(refusedAddress(address, { allowLoopback: false })).toBe(why);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(refusedAddress(address, { allowLoopback: false })).toBeUndefined();
    expect(refusedAddress(address, { allowLoopback: true })).toBeUndefined();
  });

  it.each(['127.0.0.1', '::1', '::ffff:127.0.0.1'])('allows loopback %s only when local runs allow it', (address) => {
    expect(refusedAddress(address, { allowLoopback: false })).toBe('loopback');
    expect(refusedAddress(address, { allowLoopback: true })).toBeUndefined();
  });

  it.each(['10.0.0.1', '169.254.169.254', '::ffff:169.254.169.254', 'fd00::1', '0.0.0.0'])(
    'refuses %s even when loopback is allowed',
    (address) => {
      expect(refusedAddress(address, { allowLoopback: true })).toBeDefined();
    },
  );
});

describe('IPv6 forms that carry an IPv4 address (issue 27: `https://[::127.0.0.1]/` was accepted)', () => {
  const hex = (ipv4: string, invert = false) => {
    const b = ipv4.split('.').map((x) => Number(x) ^ (invert ? 0xff : 0));
    return `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  };
  /** Every way an IPv6 literal carries an IPv4 one, and what the carrier is called when the IPv4 is public. */
  const FORMS: Array<[form: string, carry: (ipv4: string) => string, publicName: string | undefined]> = [
    ['IPv4-compatible ::/96, dotted', (v4) => `::${v4}`, 'ipv4Compatible'],
    ['IPv4-compatible ::/96, hex', (v4) => `::${hex(v4)}`, 'ipv4Compatible'],
    ['IPv4-compatible ::/96, expanded', (v4) => `0:0:0:0:0:0:${hex(v4)}`, 'ipv4Compatible'],
    ['IPv4-mapped ::ffff:0:0/96, dotted', (v4) => `::ffff:${v4}`, undefined],
    ['IPv4-mapped ::ffff:0:0/96, hex', (v4) => `0::ffff:${hex(v4)}`, undefined],
    ['NAT64 64:ff9b::/96, dotted', (v4) => `64:ff9b::${v4}`, 'nat64'],
    ['NAT64 64:ff9b::/96, hex', (v4) => `64:ff9b::${hex(v4)}`, 'nat64'],
    ['NAT64 local-use 64:ff9b:1::/48', (v4) => `64:ff9b:1::${v4}`, 'nat64'],
    ['6to4 2002::/16', (v4) => `2002:${hex(v4)}::1`, '6to4'],
    ['Teredo 2001::/32', (v4) => `2001:0:4136:e378:8000:63bf:${hex(v4, true)}`, 'teredo'],
  ];
  const PRIVATE: Array<[ipv4: string, range: string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['169.254.169.254', 'linkLocal'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ];
  // Where the local-use NAT64 prefix puts the IPv4 depends on the network: the whole /48 is refused as `nat64`.
  const cases = FORMS.flatMap(([form, carry]) =>
    PRIVATE.map(([ipv4, range]) => [form, ipv4, carry(ipv4), form.includes('local-use') ? 'nat64' : range] as const),
  );
  const flag = process.env.WEBHOOKS_ALLOW_LOOPBACK;
  afterEach(() => {
    if (flag === undefined) delete process.env.WEBHOOKS_ALLOW_LOOPBACK;
    else process.env.WEBHOOKS_ALLOW_LOOPBACK = flag;
  });

  it.each(cases)(
    '%s carrying %s (%s): refused as %s, at registration and delivery',
    async (form, _, address, range) => {
      const mappedLoopback = form.startsWith('IPv4-mapped') && range === 'loopback';
      expect(refusedAddress(address, { allowLoopback: false })).toBe(range);
      // Loopback only where it is loopback (`::ffff:127.0.0.1`), never through a carrier that reaches elsewhere.
      expect(refusedAddress(address, { allowLoopback: true })).toBe(mappedLoopback ? undefined : range);
      // Registration: the URL as a client writes it (the URL parser rewrites the dotted forms to hex).
      delete process.env.WEBHOOKS_ALLOW_LOOPBACK;
      await expect(resolveDestination(parseWebhookUrl(`https://[${address}]/hook`))).rejects.toMatchObject({
        code: 'FORBIDDEN_DESTINATION',
      });
    },
  );

  it.each(FORMS.filter(([, , name]) => name !== undefined))(
    '%s carrying a public IPv4 is refused too: it reaches a host through a relay or gateway',
    (_, carry, name) => {
      expect(refusedAddress(carry('8.8.8.8'), { allowLoopback: false })).toBe(name);
      expect(refusedAddress(carry('8.8.8.8'), { allowLoopback: true })).toBe(name);
    },
  );

  it('leaves ::, ::1 and public IPv6 to the ranges they are', () => {
    expect(refusedAddress('::', { allowLoopback: true })).toBe('unspecified');
    expect(refusedAddress('::1', { allowLoopback: false })).toBe('loopback');
    expect(refusedAddress('::0.0.0.1', { allowLoopback: true })).toBeUndefined();
    expect(refusedAddress('2606:4700:4700::1111', { allowLoopback: false })).toBeUndefined();
    expect(refusedAddress('::ffff:8.8.8.8', { allowLoopback: false })).toBeUndefined();
  });
});

describe('webhook URLs', () => {
  const flag = process.env.WEBHOOKS_ALLOW_LOOPBACK;
  afterEach(() => {
    if (flag === undefined) delete process.env.WEBHOOKS_ALLOW_LOOPBACK;
    else process.env.WEBHOOKS_ALLOW_LOOPBACK = flag;
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://[::1]/hook',
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::ffff:169.254.169.254]/',
    'https://0xa9fea9fe/',
    'https://2852039166/',
    'https://[fd00::1]/',
  ])('refuses %s when the local flag is off (AWS)', async (url) => {
    delete process.env.WEBHOOKS_ALLOW_LOOPBACK;
    await expect((async () => resolveDestination(parseWebhookUrl(url)))()).rejects.toMatchObject({
      code: expect.stringMatching(/^(INVALID_WEBHOOK_URL|FORBIDDEN_DESTINATION)$/),
    });
  });

  it('allows http to loopback only when the local flag is on, and https to a public address always', async () => {
    process.env.WEBHOOKS_ALLOW_LOOPBACK = 'true';
    await expect(resolveDestination(parseWebhookUrl('http://127.0.0.1:8080/hook'))).resolves.toEqual([
      { address: '127.0.0.1', family: 4 },
    ]);
    await expect(resolveDestination(parseWebhookUrl('http://93.184.215.14/hook'))).rejects.toMatchObject({
      code: 'INVALID_WEBHOOK_URL',
    });
    delete process.env.WEBHOOKS_ALLOW_LOOPBACK;
    expect(() => parseWebhookUrl('http://127.0.0.1:8080/hook')).toThrow(
      expect.objectContaining({ code: 'INVALID_WEBHOOK_URL' }),
    );
    await expect(resolveDestination(parseWebhookUrl('https://93.184.215.14/hook'))).resolves.toHaveLength(1);
  });
});

describe('changesFor', () => {
  const changes = [
    { path: 'data.items.3', value: { id: 3 } },
    { path: 'data', value: { items: [{ id: 0 }, { id: 1 }], title: 'x' } },
    { path: 'other', value: 1 },
    { path: 'data.items', deleted: true as const },
    { path: '', value: { data: { items: [7] } } },
    { path: 'files.readme\\.md', value: 'hi' },
    { path: 'dataset', value: 2 },
  ];

  it.each([
    [null, changes],
    [
      'data.items',
      [
        { path: 'data.items.3', value: { id: 3 } },
        { path: 'data.items', value: [{ id: 0 }, { id: 1 }] },
        { path: 'data.items', deleted: true },
        { path: 'data.items', value: [7] },
      ],
    ],
    [
      'data.items.1',
      [
        { path: 'data.items.1', value: { id: 1 } },
        { path: 'data.items.1', deleted: true },
        { path: 'data.items.1', deleted: true },
      ],
    ],
    [
      'data.title.en',
      [
        { path: 'data.title.en', deleted: true },
        { path: 'data.title.en', deleted: true },
      ],
    ],
    [
      'other',
      [
        { path: 'other', value: 1 },
        { path: 'other', deleted: true },
      ],
    ],
    [
      'files.readme\\.md',
      [
        { path: 'files.readme\\.md', deleted: true },
        { path: 'files.readme\\.md', value: 'hi' },
      ],
    ],
    ['toString', [{ path: 'toString', deleted: true }]],
  ])('a webhook on %s receives the changes at, under or above it, trimmed to it', (path, expected) => {
    expect(changesFor(path, changes)).toEqual(expected);
  });
});

describe('Standard Webhooks signatures', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

  it('matches the spec example and the standardwebhooks package', () => {
    // The example of standardwebhooks.com's reference implementations.
    const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
    const timestamp = 1614265330;
    const body = '{"test": 2432232314}';
    expect(signPayload(secret, id, timestamp, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    const headers = signedHeaders(secret, id, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ test: 2432232314 });
    expect(() => new Webhook(secret).verify(body.replace('2', '3'), headers)).toThrow();
  });
});

describe('backoff', () => {
  afterEach(() => {
    delete process.env.WEBHOOK_BACKOFF_SCALE;
  });

  it.each([
    [1, 15, 30],
    [2, 30, 60],
    [3, 60, 120],
    [7, 960, 1920],
    [8, 1800, 3600],
    [30, 1800, 3600],
  ])('after attempt %i waits %i to %i s (equal jitter, capped at 1 h)', (attempt, low, high) => {
    expect(backoffSeconds(attempt, () => 0)).toBe(low);
    expect(backoffSeconds(attempt, () => 0.999999)).toBeCloseTo(high, 2);
  });

  it('retries for 24 h, which the schedule fills with about 30 attempts', () => {
    expect(retryWindowSeconds()).toBe(86_400);
    let elapsed = 0;
    let attempts = 1;
    while (elapsed < retryWindowSeconds()) elapsed += backoffSeconds(attempts++, () => 1);
    expect(attempts).toBeLessThan(60);
    process.env.WEBHOOK_BACKOFF_SCALE = '0.001';
    expect(backoffSeconds(1, () => 0)).toBeCloseTo(0.015);
  });
});
