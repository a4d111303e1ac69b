import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  checkWebhookUrl,
  createDeliverer,
  createEnvelope,
  generateSigningSecret,
  isPublicAddress,
  isSigningSecret,
  RETRY_SCHEDULE,
  retryDelay,
  retrySpanMs,
  signWebhook,
} from '../../src/lib/webhooks/index.ts';

describe('webhook retry schedule', () => {
  it('is the documented table and keeps retrying for more than 24 hours', () => {
    assert.deepEqual(
      RETRY_SCHEDULE.map((r) => r.delayMs),
      [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    );
    assert.equal(retrySpanMs(), 99_305_000); // 27 h 35 min 5 s
    assert.ok(retrySpanMs() >= 24 * 3_600_000);
    assert.equal(retryDelay(1), 5_000, 'after the first failure');
    assert.equal(retryDelay(7), 36_000_000, 'before the eighth and last attempt');
    assert.equal(retryDelay(8), null, 'after eight failures the message is failed');
  });
});

describe('webhook signing (Standard Webhooks)', () => {
  it("matches the specification's test vector", () => {
    const headers = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      new Date(1614265330_000),
      '{"test": 2432232314}',
    );
    assert.deepEqual(headers, {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('generates whsec_ secrets that sign what Webhook.verify accepts, and nothing else', () => {
    const secret = generateSigningSecret();
    assert.ok(isSigningSecret(secret));
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(generateSigningSecret(), secret);
    const body = JSON.stringify(
      createEnvelope('domain.verified', new Date(), { hostname: 'shop.example.test' }),
    );
    const headers = signWebhook(secret, 'msg_1', new Date(), body);
    assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body));
    assert.throws(() => new Webhook(generateSigningSecret()).verify(body, { ...headers }), /signature/);
    assert.throws(() => new Webhook(secret).verify(`${body} `, { ...headers }), /signature/);
  });

  it('builds the envelope: type, timestamp, data', () => {
    assert.deepEqual(createEnvelope('certificate.issued', new Date('2026-01-02T03:04:05Z'), { a: 1 }), {
      type: 'certificate.issued',
      timestamp: '2026-01-02T03:04:05.000Z',
      data: { a: 1 },
    });
    assert.throws(() => createEnvelope('Verified', new Date(), {}), /dotted event type/);
  });
});

describe('webhook URL policy', () => {
  const closed = { allowPrivate: false };
  const open = { allowPrivate: true };
  const rows: [string, typeof closed, string | null][] = [
    ['https://hooks.example.com/kennel', closed, null],
    ['https://93.184.216.34/x', closed, null],
    ['http://hooks.example.com/x', closed, 'must use https://'],
    ['http://127.0.0.1:9000/x', closed, 'loopback or private'],
    ['https://10.1.2.3/x', closed, 'loopback or private'],
    ['https://[fd00::1]/x', closed, 'loopback or private'],
    ['https://169.254.169.254/latest', closed, 'loopback or private'],
    ['https://localhost/x', closed, 'loopback or private'],
    // IPv4 in IPv6 clothing, and the WHATWG spellings of 127.0.0.1: all refused as the address they reach.
    ['https://[::127.0.0.1]/x', closed, 'loopback or private'],
    ['https://[::ffff:7f00:1]/x', closed, 'loopback or private'],
    ['https://[::ffff:169.254.169.254]/x', closed, 'loopback or private'],
    ['https://[64:ff9b::7f00:1]/x', closed, 'loopback or private'],
    ['https://[64:ff9b::a9fe:a9fe]/x', closed, 'loopback or private'],
    ['https://[64:ff9b:1::808:808]/x', closed, 'loopback or private'],
    ['https://[2002:a00:1::1]/x', closed, 'loopback or private'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', closed, 'loopback or private'],
    ['https://[::]/x', closed, 'loopback or private'],
    ['https://2130706433/x', closed, 'loopback or private'],
    ['https://0177.0.0.1/x', closed, 'loopback or private'],
    ['https://0/x', closed, 'loopback or private'],
    ['https://240.0.0.1/x', closed, 'loopback or private'],
    ['https://[64:ff9b::808:808]/x', closed, null],
    ['https://[::ffff:8.8.8.8]/x', closed, null],
    ['http://127.0.0.1:9000/x', open, null],
    ['http://localhost:9000/x', open, null],
    ['http://[::1]:9000/x', open, null],
    ['http://10.1.2.3/x', open, 'must use https://'],
    ['https://10.1.2.3/x', open, null],
    ['ftp://hooks.example.com/', open, 'must use https://'],
    ['hooks.example.com/x', open, 'not an absolute URL'],
    ['https://user:pw@hooks.example.com/', open, 'user name or password'],
    ['https://hooks.example.com/#x', open, 'fragment'],
    [`https://hooks.example.com/${'a'.repeat(2000)}`, open, 'longer than 2000'],
  ];
  for (const [url, policy, problem] of rows) {
    it(`${url.slice(0, 60)} (${policy.allowPrivate ? 'private allowed' : 'public only'}) → ${problem ?? 'ok'}`, () => {
      const check = checkWebhookUrl(url, policy);
      if (problem === null) assert.equal(check.ok, true);
      else assert.ok(!check.ok && check.problem.includes(problem), JSON.stringify(check));
    });
  }

  it('tells public addresses from the rest', () => {
    assert.deepEqual(
      [
        '8.8.8.8',
        '127.0.0.1',
        '192.168.1.1',
        '100.64.0.1',
        '::1',
        'fe80::1',
        '2001:db8::1',
        '::ffff:10.0.0.1',
        '::127.0.0.1',
        '::7f00:1',
        '::ffff:7f00:1',
        '64:ff9b::7f00:1',
        '64:ff9b:1::1',
        '2002:7f00:1::1',
        '198.18.0.1',
        '255.255.255.255',
        '64:ff9b::808:808',
      ].map(isPublicAddress),
      [
        true,
        false,
        false,
        false,
        false,
        false,
        true,
        false,
        false,
        false,
        false,
        false,
        false,
        false,
        false,
        false,
        true,
      ],
    );
  });
});

describe('webhook delivery over undici', () => {
  const receiver = async (handler: Parameters<typeof createServer>[1]) => {
    const server = createServer(handler);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
  };
  const request = (url: string) => ({
    messageId: 'msg_a',
    url,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    body: '{"type":"webhook.test"}',
    at: new Date(),
  });

  it('posts the signed body and reports status, duration and error', async () => {
    let seen: { headers: Record<string, unknown>; body: string } | undefined;
    let status = 200;
    const { server, url } = await receiver((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen = { headers: req.headers, body };
        res.writeHead(status).end('ok');
      });
    });
    const deliverer = createDeliverer({ timeoutMs: 2_000, policy: { allowPrivate: true } });
    try {
      const ok = await deliverer.deliver(request(url));
      assert.deepEqual([ok.ok, ok.statusCode, ok.error], [true, 200, null]);
      assert.equal(seen?.body, '{"type":"webhook.test"}');
      assert.equal(seen?.headers['content-type'], 'application/json');
      assert.equal(seen?.headers['webhook-id'], 'msg_a');
      assert.match(String(seen?.headers['webhook-signature']), /^v1,/);
      status = 500;
      const failed = await deliverer.deliver(request(url));
      assert.deepEqual([failed.ok, failed.statusCode, failed.error], [false, 500, 'HTTP 500']);
      status = 302;
      const moved = await deliverer.deliver(request(url));
      assert.deepEqual([moved.ok, moved.statusCode], [false, 302], 'redirects are not followed');
    } finally {
      await deliverer.close();
      server.close();
    }
  });

  it('gives up after the time limit and names a refused connection', async () => {
    const { server, url } = await receiver(() => {}); // never answers
    const deliverer = createDeliverer({ timeoutMs: 200, policy: { allowPrivate: true } });
    try {
      const slow = await deliverer.deliver(request(url));
      assert.deepEqual([slow.ok, slow.statusCode, slow.error], [false, null, 'timed out after 200 ms']);
      assert.ok(slow.durationMs >= 150 && slow.durationMs < 2_000, String(slow.durationMs));
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      const refused = await deliverer.deliver(request(url));
      assert.equal(refused.statusCode, null);
      assert.match(String(refused.error), /^ECONNREFUSED/);
    } finally {
      await deliverer.close();
    }
  });

  it('refuses non-public targets unless allowed, also when a name resolves to one', async () => {
    let hits = 0;
    const { server, url } = await receiver((_req, res) => {
      hits++;
      res.end();
    });
    const deliverer = createDeliverer({ timeoutMs: 2_000, policy: { allowPrivate: false } });
    try {
      const literal = await deliverer.deliver(request(url));
      assert.deepEqual([literal.ok, literal.error], [false, '127.0.0.1 is not a public address']);
      for (const [host, shown] of [
        ['[::127.0.0.1]', '::7f00:1'],
        ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
        ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
        ['2130706433', '127.0.0.1'],
      ]) {
        const spelled = await deliverer.deliver(request(url.replace('127.0.0.1', host as string)));
        assert.deepEqual([spelled.ok, spelled.error], [false, `${shown} is not a public address`]);
      }
      const named = await deliverer.deliver(request(url.replace('127.0.0.1', 'localhost')));
      assert.equal(named.ok, false);
      assert.match(String(named.error), /localhost resolves only to non-public addresses/);
      assert.equal(hits, 0);
    } finally {
      await deliverer.close();
      server.close();
    }
  });
});
