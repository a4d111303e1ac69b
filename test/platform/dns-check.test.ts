import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  checkApex,
  checkCaa,
  checkSubdomain,
  createDnsResolver,
  DNS_CHECK_REASONS,
  type DnsCheckOutcome,
  type DnsResolver,
} from '../../src/platform/domains/index.ts';
import { type DnsRecord, startDns, type TestDns } from '../support/dns.ts';

const TARGET = 'app.platform.test';
const PLATFORM_ADDRESSES = { v4: ['192.0.2.10'], v6: ['2001:db8::10'] };
const TOKEN = 'kennel-verify-7f3a9c1e2b';
const CA = 'letsencrypt.org';
/** The platform's side: the target every project's CNAME points at, and another project's. */
const PLATFORM_RECORDS: DnsRecord[] = [
  { name: 'app', type: 'A', value: '192.0.2.10' },
  { name: 'app', type: 'AAAA', value: '2001:db8::10' },
  { name: 'other', type: 'A', value: '192.0.2.99' },
];

/** Every outcome carries the table's remedy and flags for its reason. */
function assertOutcome(outcome: DnsCheckOutcome, reason: keyof typeof DNS_CHECK_REASONS): void {
  assert.equal(outcome.reason, reason, outcome.message);
  assert.equal(outcome.ok, DNS_CHECK_REASONS[reason].ok);
  assert.equal(outcome.retryable, DNS_CHECK_REASONS[reason].retryable);
  assert.equal(outcome.remedy, DNS_CHECK_REASONS[reason].remedy);
}

describe('DNS checks against NSD', () => {
  let dns: TestDns;
  let resolver: DnsResolver;

  before(async () => {
    dns = await startDns({ zones: ['example.test', 'platform.test'] });
    resolver = createDnsResolver({ servers: dns.servers, timeoutMs: 1000, tries: 2 });
    await dns.setRecords('platform.test', PLATFORM_RECORDS);
  });
  after(() => dns?.stop());
  beforeEach(() => dns.setRecords('example.test', []));

  describe('subdomain (CNAME)', () => {
    it('verified when the CNAME is the value shown (compared normalised)', async () => {
      await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: TARGET }]);
      const outcome = await checkSubdomain(resolver, 'Shop.Example.Test.', 'APP.platform.test.');
      assertOutcome(outcome, 'verified');
      assert.equal(outcome.ok, true);
      assert.deepEqual(outcome.found, { name: 'shop.example.test', cname: [TARGET] });
    });

    it('cname_mismatch names the value found', async () => {
      await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: 'other.platform.test' }]);
      const outcome = await checkSubdomain(resolver, 'shop.example.test', TARGET);
      assertOutcome(outcome, 'cname_mismatch');
      assert.equal(
        outcome.message,
        'shop.example.test has the CNAME other.platform.test instead of app.platform.test.',
      );
      assert.deepEqual(outcome.found.cname, ['other.platform.test']);
    });

    it('an A record where the CNAME belongs is conflicting_record', async () => {
      await dns.setRecords('example.test', [{ name: 'shop', type: 'A', value: '203.0.113.9' }]);
      const outcome = await checkSubdomain(resolver, 'shop.example.test', TARGET);
      assertOutcome(outcome, 'conflicting_record');
      assert.equal(outcome.ok, false);
      assert.equal(outcome.retryable, false);
      assert.equal(
        outcome.message,
        'shop.example.test has an A record 203.0.113.9 where the CNAME app.platform.test belongs.',
      );
      assert.match(
        outcome.remedy,
        /Remove the conflicting A\/AAAA record and create the CNAME listed for this domain, then verify again\./,
      );
      assert.deepEqual(outcome.found, { name: 'shop.example.test', a: ['203.0.113.9'], aaaa: [] });
    });

    it('A and AAAA records are both reported', async () => {
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'A', value: '203.0.113.9' },
        { name: 'shop', type: 'A', value: '203.0.113.10' },
        { name: 'shop', type: 'AAAA', value: '2001:db8:ffff::9' },
      ]);
      const outcome = await checkSubdomain(resolver, 'shop.example.test', TARGET);
      assertOutcome(outcome, 'conflicting_record');
      assert.deepEqual([...(outcome.found.a ?? [])].sort(), ['203.0.113.10', '203.0.113.9']);
      assert.deepEqual(outcome.found.aaaa, ['2001:db8:ffff::9']);
      assert.match(
        outcome.message,
        /A records 203\.0\.113\.\d+, 203\.0\.113\.\d+ and an AAAA record 2001:db8:ffff::9/,
      );
    });

    it('not_found_yet (retryable) while absent, verified once the record is added', async () => {
      const before = await checkSubdomain(resolver, 'shop.example.test', TARGET);
      assertOutcome(before, 'not_found_yet');
      assert.equal(before.retryable, true);
      assert.equal(before.message, 'shop.example.test has no CNAME record yet.');

      // A name that exists with other data (NODATA rather than NXDOMAIN) is still "not found yet".
      await dns.addRecord('example.test', { name: 'shop', type: 'TXT', value: 'unrelated' });
      assertOutcome(await checkSubdomain(resolver, 'shop.example.test', TARGET), 'not_found_yet');

      await dns.removeRecord('example.test', { name: 'shop', type: 'TXT' });
      await dns.addRecord('example.test', { name: 'shop', type: 'CNAME', value: TARGET });
      assertOutcome(await checkSubdomain(resolver, 'shop.example.test', TARGET), 'verified');
    });

    it('an IDN hostname is looked up by its punycode form', async () => {
      await dns.setRecords('example.test', [{ name: 'xn--bcher-kva', type: 'CNAME', value: TARGET }]);
      const outcome = await checkSubdomain(resolver, 'BÜCHER.example.test', TARGET);
      assertOutcome(outcome, 'verified');
      assert.equal(outcome.found.name, 'xn--bcher-kva.example.test');
      assert.match(outcome.message, /^bücher\.example\.test \(xn--bcher-kva\.example\.test\) has the CNAME/);
    });

    it('a server that refuses to answer is dns_error (retryable)', async () => {
      // NSD is not authoritative for .invalid and answers REFUSED, as a broken nameserver would.
      const outcome = await checkSubdomain(resolver, 'shop.example.invalid', TARGET);
      assertOutcome(outcome, 'dns_error');
      assert.equal(outcome.retryable, true);
      assert.match(outcome.found.error ?? '', /CNAME query for shop\.example\.invalid failed: EREFUSED/);
    });
  });

  describe('apex (flattened ALIAS + TXT ownership token)', () => {
    const flattened = [
      { name: '@', type: 'A', value: '192.0.2.10' },
      { name: '@', type: 'AAAA', value: '2001:db8::10' },
    ] as const;

    it('verified with the platform addresses and the token', async () => {
      await dns.setRecords('example.test', [
        ...flattened,
        { name: '_kennel-challenge', type: 'TXT', value: TOKEN },
        { name: '@', type: 'TXT', value: 'v=spf1 -all' },
      ]);
      // The platform's IPv6 address written in another spelling still matches.
      const outcome = await checkApex(
        resolver,
        'example.test',
        { v4: ['192.0.2.10'], v6: ['2001:DB8:0::10'] },
        TOKEN,
      );
      assertOutcome(outcome, 'verified');
      assert.deepEqual(outcome.found, {
        name: 'example.test',
        a: ['192.0.2.10'],
        aaaa: ['2001:db8::10'],
        txt: [TOKEN],
      });
    });

    it('one family is enough', async () => {
      await dns.setRecords('example.test', [
        { name: '@', type: 'A', value: '192.0.2.10' },
        { name: '_kennel-challenge', type: 'TXT', value: `token=${TOKEN}` },
      ]);
      assertOutcome(await checkApex(resolver, 'example.test', PLATFORM_ADDRESSES, TOKEN), 'verified');
    });

    it('ownership_token_missing without the TXT record', async () => {
      await dns.setRecords('example.test', [...flattened]);
      const outcome = await checkApex(resolver, 'example.test', PLATFORM_ADDRESSES, TOKEN);
      assertOutcome(outcome, 'ownership_token_missing');
      assert.equal(
        outcome.message,
        'example.test points at the platform, but _kennel-challenge.example.test has no TXT record with the ownership token.',
      );
    });

    it('ownership_token_missing with a TXT record holding another token', async () => {
      await dns.setRecords('example.test', [
        ...flattened,
        { name: '_kennel-challenge', type: 'TXT', value: 'kennel-verify-someone-else' },
      ]);
      const outcome = await checkApex(resolver, 'example.test', PLATFORM_ADDRESSES, TOKEN);
      assertOutcome(outcome, 'ownership_token_missing');
      assert.deepEqual(outcome.found.txt, ['kennel-verify-someone-else']);
      assert.match(outcome.message, /none with the ownership token/);
    });

    it('address_mismatch when an address is not the platform’s', async () => {
      await dns.setRecords('example.test', [
        ...flattened,
        { name: '@', type: 'A', value: '203.0.113.9' },
        { name: '_kennel-challenge', type: 'TXT', value: TOKEN },
      ]);
      const outcome = await checkApex(resolver, 'example.test', PLATFORM_ADDRESSES, TOKEN);
      assertOutcome(outcome, 'address_mismatch');
      assert.equal(
        outcome.message,
        'example.test points at 203.0.113.9, which is not a platform address (expected only 192.0.2.10, 2001:db8::10).',
      );
    });

    it('not_found_yet without any address', async () => {
      await dns.setRecords('example.test', [{ name: '_kennel-challenge', type: 'TXT', value: TOKEN }]);
      const outcome = await checkApex(resolver, 'example.test', PLATFORM_ADDRESSES, TOKEN);
      assertOutcome(outcome, 'not_found_yet');
      assert.equal(outcome.message, 'example.test has no A or AAAA records yet.');
    });
  });

  describe('CAA (RFC 8659 climb)', () => {
    it('permitted when no name up the tree has CAA records', async () => {
      const outcome = await checkCaa(resolver, 'shop.example.test', CA);
      assertOutcome(outcome, 'permitted');
      assert.deepEqual(outcome.found, { name: 'shop.example.test', caa: [] });
    });

    it('caa_forbids: the apex names another CA, found by climbing from shop.example.test', async () => {
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: TARGET },
        { name: '@', type: 'CAA', value: '0 issue "otherca.test"' },
        { name: '@', type: 'CAA', value: '0 iodef "mailto:security@example.test"' },
      ]);
      const outcome = await checkCaa(resolver, 'shop.example.test', CA);
      assertOutcome(outcome, 'caa_forbids');
      assert.equal(outcome.found.name, 'example.test');
      assert.deepEqual(outcome.found.caa, [
        { flags: 0, tag: 'issue', value: 'otherca.test' },
        { flags: 0, tag: 'iodef', value: 'mailto:security@example.test' },
      ]);
      assert.match(
        outcome.message,
        /^The CAA records at example\.test do not allow letsencrypt\.org: 0 issue "otherca\.test"/,
      );
      // Verify retries a failed certificate at once (issue 17): no 30-minute wait after a CAA fix.
      assert.equal(
        outcome.remedy,
        "Fix the CAA records: add one allowing the platform's certificate authority (or remove those that exclude it), then verify again: it retries the certificate at once.",
      );
    });

    it('permitted when the apex names the CA (parameters ignored, case-insensitive)', async () => {
      await dns.setRecords('example.test', [
        { name: '@', type: 'CAA', value: '0 issue "otherca.test"' },
        { name: '@', type: 'CAA', value: '0 issue "LetsEncrypt.org; validationmethods=http-01"' },
      ]);
      const outcome = await checkCaa(resolver, 'shop.example.test', CA);
      assertOutcome(outcome, 'permitted');
      assert.equal(outcome.found.name, 'example.test');
    });

    it('the closest name wins: a permissive record on the subdomain overrides the apex', async () => {
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CAA', value: `0 issue "${CA}"` },
        { name: '@', type: 'CAA', value: '0 issue ";"' },
      ]);
      assertOutcome(await checkCaa(resolver, 'shop.example.test', CA), 'permitted');
      const apex = await checkCaa(resolver, 'example.test', CA);
      assertOutcome(apex, 'caa_forbids');
      assert.match(apex.message, /allow no certificate authority at all/);
    });

    it('issuewild applies to wildcard names only', async () => {
      await dns.setRecords('example.test', [{ name: '@', type: 'CAA', value: '0 issuewild ";"' }]);
      assertOutcome(await checkCaa(resolver, 'shop.example.test', CA), 'permitted');
      assertOutcome(await checkCaa(resolver, '*.example.test', CA), 'caa_forbids');
    });

    it('an unknown property marked critical forbids every CA', async () => {
      await dns.setRecords('example.test', [
        { name: '@', type: 'CAA', value: `0 issue "${CA}"` },
        { name: '@', type: 'CAA', value: '128 futuretag "x"' },
      ]);
      const outcome = await checkCaa(resolver, 'example.test', CA);
      assertOutcome(outcome, 'caa_forbids');
      assert.match(outcome.message, /unknown critical property "futuretag"/);
    });

    it("follows the CNAME to its target's CAA records, without climbing the target's parents", async () => {
      await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: TARGET }]);
      await dns.setRecords('platform.test', [
        ...PLATFORM_RECORDS,
        { name: 'app', type: 'CAA', value: '0 issue "otherca.test"' },
        { name: 'other', type: 'CAA', value: '0 issue ";"' },
      ]);
      try {
        const outcome = await checkCaa(resolver, 'shop.example.test', CA);
        assertOutcome(outcome, 'caa_forbids');
        assert.equal(outcome.found.name, 'shop.example.test');
        assert.equal(outcome.found.via, TARGET);
        assert.match(outcome.message, /at shop\.example\.test \(through its CNAME app\.platform\.test\)/);

        // RFC 8659 §3: after the alias, the climb continues from shop's parent, not the target's.
        await dns.setRecords('platform.test', [
          { name: 'app', type: 'A', value: '192.0.2.10' },
          { name: '@', type: 'CAA', value: '0 issue ";"' },
        ]);
        const climbed = await checkCaa(resolver, 'shop.example.test', CA);
        assertOutcome(climbed, 'permitted');
      } finally {
        await dns.setRecords('platform.test', PLATFORM_RECORDS);
      }
    });
  });
});
