import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, it } from 'node:test';
import { Agent, request } from 'undici';
import {
  checkOriginUrl,
  guardedLookup,
  isPublicAddress,
  normaliseOrigin,
  type OriginPolicy,
  originAllowed,
} from '../../src/lib/address-policy.ts';

/** The IPv4 ranges that are not public, as a table of its own (the oracle of the property tests). */
const NON_PUBLIC_V4: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const toInt = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
const inRange = (n: number, [base, prefix]: [string, number]) =>
  Math.floor(n / 2 ** (32 - prefix)) === Math.floor(toInt(base) / 2 ** (32 - prefix));
const publicV4 = (n: number) => !NON_PUBLIC_V4.some((r) => inRange(n, r));

/** A small seeded generator (mulberry32): the same cases on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Some IPv4 addresses: many in each non-public range (their edges too), many anywhere. */
function sampleV4(): number[] {
  const next = random(13);
  const out: number[] = [];
  for (const [base, prefix] of NON_PUBLIC_V4) {
    const size = 2 ** (32 - prefix);
    out.push(toInt(base), toInt(base) + size - 1, toInt(base) - 1, toInt(base) + size);
    for (let i = 0; i < 20; i++) out.push(toInt(base) + Math.floor(next() * size));
  }
  for (let i = 0; i < 400; i++) out.push(Math.floor(next() * 2 ** 32));
  return out.filter((n) => n >= 0 && n < 2 ** 32);
}

const hex = (n: number) => [Math.floor(n / 65536).toString(16), (n % 65536).toString(16)];
const pad = (h: string) => h.padStart(4, '0');

/** IPv6 spellings that reach the IPv4 address `n`: mapped (every way of writing it), NAT64, 6to4. */
function reachingSpellings(n: number): string[] {
  const [hi, lo] = hex(n) as [string, string];
  const ip = toIp(n);
  return [
    `::ffff:${ip}`,
    `::FFFF:${ip}`,
    `::ffff:${hi}:${lo}`,
    `0:0:0:0:0:ffff:${hi}:${lo}`,
    `0000:0000:0000:0000:0000:FFFF:${pad(hi)}:${pad(lo)}`,
    `0::ffff:${ip}`,
    `64:ff9b::${ip}`,
    `64:ff9b::${hi}:${lo}`,
    `0064:ff9b:0:0:0:0:${pad(hi)}:${pad(lo)}`,
    `2002:${hi}:${lo}::1`,
    `2002:${pad(hi)}:${pad(lo)}:beef::`,
  ];
}

/** How WHATWG URL parsing lets one write an IPv4 host: decimal, octal, hex, short forms. */
function urlHostSpellings(n: number): string[] {
  const octets = toIp(n).split('.').map(Number);
  const [a, b] = octets as [number, number];
  return [
    toIp(n),
    String(n),
    `0x${n.toString(16)}`,
    octets.map((o) => `0${o.toString(8)}`).join('.'),
    octets.map((o) => `0x${o.toString(16)}`).join('.'),
    `${a}.${b}.${n % 65536}`,
    `${a}.${n % 2 ** 24}`,
    `[::ffff:${toIp(n)}]`,
    `[64:ff9b::${toIp(n)}]`,
  ];
}

describe('isPublicAddress', () => {
  it('judges the ranges named in the issue, one table', () => {
    const rows: [string, boolean][] = [
      ['8.8.8.8', true],
      ['93.184.216.34', true],
      ['2606:4700:4700::1111', true],
      ['2001:db8::1', true],
      ['0.0.0.0', false],
      ['0.1.2.3', false],
      ['127.0.0.1', false],
      ['127.255.255.254', false],
      ['10.1.2.3', false],
      ['172.16.0.1', false],
      ['172.31.255.255', false],
      ['172.32.0.1', true],
      ['192.168.1.1', false],
      ['169.254.169.254', false],
      ['100.64.0.1', false],
      ['100.100.100.200', false],
      ['100.128.0.1', true],
      ['192.0.0.192', false],
      ['198.18.0.1', false],
      ['198.19.255.255', false],
      ['198.20.0.1', true],
      ['224.0.0.251', false],
      ['239.255.255.250', false],
      ['240.0.0.1', false],
      ['255.255.255.255', false],
      ['::', false],
      ['::1', false],
      ['[::1]', false],
      ['0:0:0:0:0:0:0:1', false],
      ['::127.0.0.1', false],
      ['::7f00:1', false],
      ['::8.8.8.8', false], // IPv4-compatible: refused whatever it embeds
      ['::ffff:127.0.0.1', false],
      ['::ffff:7f00:1', false],
      ['::FFFF:7F00:0001', false],
      ['::ffff:10.0.0.1', false],
      ['::ffff:8.8.8.8', true],
      ['::ffff:0:127.0.0.1', false], // IPv4-translated
      ['64:ff9b::7f00:1', false],
      ['64:ff9b::169.254.169.254', false],
      ['64:ff9b::808:808', true],
      ['64:ff9b:1::808:808', false], // local-use NAT64
      ['2002:7f00:1::', false],
      ['2002:a9fe:a9fe::1', false],
      ['2002:808:808::1', true],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false], // Teredo
      ['100::1', false],
      ['fc00::1', false],
      ['fd00:ec2::254', false],
      ['fe80::1', false],
      ['fe80::1%eth0', false],
      ['fec0::1', false],
      ['ff02::1', false],
      ['localhost', false],
      ['example.com', false],
      ['', false],
    ];
    assert.deepEqual(
      rows.map(([address]) => [address, isPublicAddress(address)]),
      rows,
    );
  });

  it('judges an IPv4 address the same in every IPv6 spelling that reaches it (property)', () => {
    let publicSeen = 0;
    for (const n of sampleV4()) {
      const expected = publicV4(n);
      if (expected) publicSeen++;
      assert.equal(isPublicAddress(toIp(n)), expected, toIp(n));
      for (const spelling of reachingSpellings(n))
        assert.equal(isPublicAddress(spelling), expected, spelling);
      // IPv4-compatible addresses are deprecated and never public, whatever they embed.
      const [hi, lo] = hex(n) as [string, string];
      assert.equal(isPublicAddress(`::${toIp(n)}`), false);
      assert.equal(isPublicAddress(`::${hi}:${lo}`), false);
    }
    assert.ok(publicSeen > 300, `${publicSeen} public samples`);
  });
});

describe('checkOriginUrl and originAllowed', () => {
  const none: OriginPolicy = { allowlist: [] };

  it('refuses the spellings of the issue, through WHATWG URL parsing', () => {
    const rows: [string, string | undefined][] = [
      ['http://127.0.0.1:9464/metrics', 'points at a loopback, private or reserved address (127.0.0.1)'],
      ['http://0177.0.0.1/', 'points at a loopback, private or reserved address (127.0.0.1)'],
      ['http://2130706433/', 'points at a loopback, private or reserved address (127.0.0.1)'],
      ['http://0x7f.1/', 'points at a loopback, private or reserved address (127.0.0.1)'],
      ['http://[::127.0.0.1]/', 'points at a loopback, private or reserved address (::7f00:1)'],
      ['http://[::ffff:127.0.0.1]/', 'points at a loopback, private or reserved address (::ffff:7f00:1)'],
      ['http://[64:ff9b::7f00:1]/', 'points at a loopback, private or reserved address (64:ff9b::7f00:1)'],
      ['http://[64:ff9b:1::a00:1]/', 'points at a loopback, private or reserved address (64:ff9b:1::a00:1)'],
      ['http://[2002:7f00:1::]/', 'points at a loopback, private or reserved address (2002:7f00:1::)'],
      [
        'http://169.254.169.254/latest',
        'points at a loopback, private or reserved address (169.254.169.254)',
      ],
      ['http://[fe80::1]/', 'points at a loopback, private or reserved address (fe80::1)'],
      ['http://100.64.0.1/', 'points at a loopback, private or reserved address (100.64.0.1)'],
      ['http://[::]/', 'points at a loopback, private or reserved address (::)'],
      ['http://0/', 'points at a loopback, private or reserved address (0.0.0.0)'],
      ['http://localhost/', 'points at localhost, a loopback address'],
      ['http://LOCALHOST.:8080/', 'points at localhost., a loopback address'],
      ['http://foo.localhost/', 'points at foo.localhost, a loopback address'],
      ['ftp://example.com/', 'is not an http:// or https:// URL'],
      ['not a url', 'is not an absolute URL'],
      ['https://api.example.com/v1', undefined],
      ['http://93.184.216.34:8080', undefined],
      ['http://[2606:4700:4700::1111]/', undefined],
      ['http://[::ffff:8.8.8.8]/', undefined],
      ['http://134744072/', undefined], // 8.8.8.8
    ];
    assert.deepEqual(
      rows.map(([url]) => [url, checkOriginUrl(url, none)]),
      rows,
    );
    assert.equal(originAllowed(new URL('http://2130706433/'), none), false);
    assert.equal(originAllowed(new URL('https://api.example.com'), none), true);
  });

  it('refuses every URL spelling of a non-public IPv4 address and accepts the public ones (property)', () => {
    for (const n of sampleV4()) {
      for (const host of urlHostSpellings(n)) {
        const url = new URL(`http://${host}:8080/x`);
        assert.equal(originAllowed(url, none), publicV4(n), `${host} (${url.host})`);
      }
    }
  });

  it('allows exactly the allowlisted origins, whatever their spelling', () => {
    const policy: OriginPolicy = {
      allowlist: [normaliseOrigin('http://127.0.0.1:4010'), normaliseOrigin('HTTP://Internal.Example:80/')],
    };
    assert.deepEqual(policy.allowlist, ['http://127.0.0.1:4010', 'http://internal.example']);
    const rows: [string, string | undefined][] = [
      ['http://127.0.0.1:4010', undefined],
      ['http://127.0.0.1:4010/v1/pets?x=1', undefined],
      ['http://2130706433:4010/', undefined],
      ['http://0177.0.0.1:4010/', undefined],
      ['http://127.0.0.1:4011', 'points at a loopback, private or reserved address (127.0.0.1)'],
      ['https://127.0.0.1:4010', 'points at a loopback, private or reserved address (127.0.0.1)'],
      ['http://[::ffff:127.0.0.1]:4010', 'points at a loopback, private or reserved address (::ffff:7f00:1)'],
      ['http://internal.example/', undefined],
      ['http://INTERNAL.example:80/api', undefined],
      [
        'http://internal.example:22/',
        'uses internal.example, which is allowed only as http://internal.example',
      ],
      [
        'https://internal.example/',
        'uses internal.example, which is allowed only as http://internal.example',
      ],
    ];
    assert.deepEqual(
      rows.map(([url]) => [url, checkOriginUrl(url, policy)]),
      rows,
    );
  });

  it('normalises an origin or says what an origin is', () => {
    assert.equal(normaliseOrigin('https://API.example.com:443'), 'https://api.example.com');
    assert.equal(normaliseOrigin('http://[::1]:4010/'), 'http://[::1]:4010');
    assert.equal(normaliseOrigin('http://2130706433:4010'), 'http://127.0.0.1:4010');
    for (const bad of [
      'http://127.0.0.1:4010/api',
      'http://127.0.0.1:4010/?x',
      'http://127.0.0.1:4010/#top',
      'http://user:pw@127.0.0.1:4010',
      'ftp://127.0.0.1',
      '127.0.0.1:4010',
      'http://',
    ]) {
      assert.throws(
        () => normaliseOrigin(bad),
        {
          message: `"${bad}" is not an origin: write scheme://host:port, e.g. http://127.0.0.1:4010`,
        },
        bad,
      );
    }
  });
});

describe('guardedLookup', () => {
  const lookupWith = (policy: OriginPolicy, hostname: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[] }>((done) => {
      guardedLookup(policy)(hostname, { all }, (error, address) => done({ error, address }));
    });

  it('answers like dns.lookup for public addresses, one or all', async () => {
    const none: OriginPolicy = { allowlist: [] };
    assert.deepEqual(await lookupWith(none, '8.8.8.8', false), { error: null, address: '8.8.8.8' });
    assert.deepEqual(await lookupWith(none, '2606:4700:4700::1111', true), {
      error: null,
      address: [{ address: '2606:4700:4700::1111', family: 6 }],
    });
  });

  it('fails with ORIGIN_ADDRESS_FORBIDDEN when a name or address resolves to a non-public address', async () => {
    const none: OriginPolicy = { allowlist: [] };
    for (const [hostname, all] of [
      ['localhost', false],
      ['localhost', true],
      ['127.0.0.1', false],
      ['::ffff:169.254.169.254', true],
    ] as const) {
      const { error } = await lookupWith(none, hostname, all);
      assert.equal(error?.code, 'ORIGIN_ADDRESS_FORBIDDEN', hostname);
      assert.match(
        String(error?.message),
        new RegExp(`^${hostname.replace(/\./g, '\\.')} resolves to .+, which is not a public address$`),
      );
    }
  });

  it('lets names of allowlisted origins resolve, whatever their addresses', async () => {
    const { error, address } = await lookupWith({ allowlist: ['http://localhost:4010'] }, 'localhost', true);
    assert.equal(error, null);
    assert.ok(Array.isArray(address) && address.every((a) => ['127.0.0.1', '::1'].includes(a.address)));
  });

  it('stops net.connect and undici before they connect to a forbidden address', async () => {
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits++;
      res.end('operator secrets');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const none: OriginPolicy = { allowlist: [] };
    try {
      const socketError = await new Promise<NodeJS.ErrnoException>((done) => {
        const socket = connect({ host: 'localhost', port, lookup: guardedLookup(none) });
        socket.on('error', done);
        socket.on('connect', () => {
          socket.destroy();
          done(Object.assign(new Error('connected'), { code: 'CONNECTED' }));
        });
      });
      assert.equal(socketError.code, 'ORIGIN_ADDRESS_FORBIDDEN');

      const guarded = new Agent({ connect: { lookup: guardedLookup(none) } });
      await assert.rejects(request(`http://localhost:${port}/metrics`, { dispatcher: guarded }), {
        code: 'ORIGIN_ADDRESS_FORBIDDEN',
      });
      await guarded.close();
      assert.equal(hits, 0);

      const allowed = new Agent({
        connect: { lookup: guardedLookup({ allowlist: [`http://localhost:${port}`] }) },
      });
      const answer = await request(`http://localhost:${port}/`, { dispatcher: allowed });
      assert.equal(await answer.body.text(), 'operator secrets');
      await allowed.close();
      assert.equal(hits, 1);
    } finally {
      server.close();
    }
  });
});
