import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { after, before, describe, it } from 'node:test';
import { startDns, type TestDns } from './dns.ts';

/** The NSD harness itself: what the DNS tests rely on. */
describe('NSD test harness', () => {
  let dns: TestDns;
  let resolver: Resolver;

  before(async () => {
    dns = await startDns({ zones: ['example.test', 'platform.test'] });
    resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers(dns.servers);
  });
  after(() => dns?.stop());

  it('serves the zones and their ancestors, empty but for SOA and NS', async () => {
    assert.deepEqual(dns.servers, [`127.0.0.1:${dns.port}`]);
    for (const zone of ['example.test', 'platform.test', 'test']) {
      assert.equal((await resolver.resolveSoa(zone)).minttl, 0);
      assert.deepEqual(await resolver.resolveNs(zone), [`ns.${zone}`]);
    }
  });

  it('accepts relative, absolute and apex names', async () => {
    await dns.setRecords('example.test', [
      { name: '@', type: 'A', value: '192.0.2.1' },
      { name: 'shop', type: 'A', value: '192.0.2.2' },
      { name: 'www.example.test.', type: 'AAAA', value: '2001:db8::3' },
      { name: '_kennel-challenge.shop', type: 'TXT', value: 'token' },
    ]);
    assert.deepEqual(await resolver.resolve4('example.test'), ['192.0.2.1']);
    assert.deepEqual(await resolver.resolve4('shop.example.test'), ['192.0.2.2']);
    assert.deepEqual(await resolver.resolve6('www.example.test'), ['2001:db8::3']);
    assert.deepEqual(await resolver.resolveTxt('_kennel-challenge.shop.example.test'), [['token']]);
  });

  it('answers a CNAME into another served zone with the target records too', async () => {
    await dns.setRecords('platform.test', [{ name: 'app', type: 'A', value: '192.0.2.10' }]);
    await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: 'app.platform.test' }]);
    assert.deepEqual(await resolver.resolveCname('shop.example.test'), ['app.platform.test']);
    assert.deepEqual(await resolver.resolve4('shop.example.test'), ['192.0.2.10']);
  });

  it('quotes TXT text and splits it into 255-byte strings', async () => {
    const long = `say "hi" \\ ${'x'.repeat(300)}`;
    await dns.setRecords('example.test', [{ name: 'txt', type: 'TXT', value: long }]);
    const [record] = await resolver.resolveTxt('txt.example.test');
    assert.equal(record?.length, 2);
    assert.equal(record?.[0]?.length, 255);
    assert.equal(record?.join(''), long);
  });

  it('serves CAA in zone syntax', async () => {
    await dns.setRecords('example.test', [{ name: '@', type: 'CAA', value: '0 issue "letsencrypt.org"' }]);
    const caa = await resolver.resolveCaa('example.test');
    assert.equal(caa.length, 1);
    assert.equal(caa[0]?.critical, 0);
    assert.equal(caa[0]?.issue, 'letsencrypt.org');
  });

  it('adds and removes single records', async () => {
    await dns.setRecords('example.test', [{ name: 'a', type: 'A', value: '192.0.2.1' }]);
    await dns.addRecord('example.test', { name: 'a', type: 'A', value: '192.0.2.2' });
    assert.deepEqual((await resolver.resolve4('a.example.test')).sort(), ['192.0.2.1', '192.0.2.2']);
    await dns.removeRecord('example.test', { name: 'a.example.test', type: 'A', value: '192.0.2.1' });
    assert.deepEqual(await resolver.resolve4('a.example.test'), ['192.0.2.2']);
    await dns.removeRecord('example.test', { name: 'a', type: 'A' });
    await assert.rejects(resolver.resolve4('a.example.test'), { code: 'ENOTFOUND' });
    assert.deepEqual(dns.records('example.test'), []);
  });

  it('every change is served at once (no stale answers from the server being replaced)', async () => {
    for (let i = 1; i <= 15; i++) {
      await dns.setRecords('example.test', [{ name: 'v', type: 'TXT', value: String(i) }]);
      for (let k = 0; k < 5; k++)
        assert.deepEqual(await resolver.resolveTxt('v.example.test'), [[String(i)]]);
    }
  });

  it('refuses records nsd-checkzone rejects, and keeps serving the previous ones', async () => {
    await dns.setRecords('example.test', [{ name: 'shop', type: 'A', value: '192.0.2.2' }]);
    await assert.rejects(
      dns.addRecord('example.test', { name: 'shop', type: 'CNAME', value: 'app.platform.test' }),
      {
        message: /nsd-checkzone refused the records for example\.test:[\s\S]*CNAME and other data/,
      },
    );
    assert.deepEqual(await resolver.resolve4('shop.example.test'), ['192.0.2.2']);
    assert.deepEqual(dns.records('example.test'), [{ name: 'shop', type: 'A', value: '192.0.2.2' }]);
    await assert.rejects(dns.setRecords('nowhere.test', []), { message: /zone nowhere\.test is not served/ });
  });

  it('stop() ends NSD: the port no longer answers', async () => {
    const other = await startDns({ zones: ['stop.test'] });
    const probe = new Resolver({ timeout: 300, tries: 1 });
    probe.setServers(other.servers);
    assert.equal((await probe.resolveSoa('stop.test')).serial, 1);
    await other.stop();
    await assert.rejects(probe.resolveSoa('stop.test'), { code: /ECONNREFUSED|ETIMEOUT/ });
  });
});
