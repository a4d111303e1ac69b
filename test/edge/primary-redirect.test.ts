import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startTlsEdgeSite, type TlsEdgeSite } from '../support/edge.ts';
import { type LoopbackServer, recordingOrigin, startSiteDns } from '../support/edge-site.ts';
import { requestAs, secureRequestAs } from '../support/http.ts';

const DEFAULT_HOST = 'petstore.platform.test';

/**
 * Seed 001: "when a primary custom domain is live, the default subdomain redirects to it". Live is
 * verified with an unexpired certificate (docs/decisions/edge-and-certificates.md); the API under /api/ stays served at
 * the default address so existing clients keep working.
 */
for (const dialect of testDialects()) {
  describe(`the default address redirects to the live primary domain (${dialect})`, () => {
    let dns: TestDns;
    let origin: LoopbackServer;
    let s: TlsEdgeSite;

    const obtain = () => s.obtain({ nodeId: 'test' });
    const plain = (host: string, path: string, init: { method?: string; body?: string } = {}) =>
      requestAs(s.edge.httpPort, host, path, init);
    /** Over TLS; the default address has no certificate of its own, so the name is not checked. */
    const secure = (host: string, path: string) => secureRequestAs(s.edge.httpsPort, host, path);
    const apply = (yaml: string) => applyDomainConfig(s.p.ctx, s.owner, 'petstore', yaml);
    const servesSite = async (why: string) => {
      const page = await plain(DEFAULT_HOST, '/openapi.json?x=1');
      assert.equal(page.status, 200, why);
      assert.equal((JSON.parse(page.text) as { info: { title: string } }).info.title, 'T');
      assert.equal((await secure(DEFAULT_HOST, '/')).status, 200, why);
    };

    before(async () => {
      dns = await startSiteDns('shop', 'www');
      origin = await recordingOrigin({ reply: ({ method, url }) => ({ method, url }) });
      s = await startTlsEdgeSite(dialect, {
        env: { DNS_SERVERS: dns.servers.join(',') },
        now: true,
        projects: [{ slug: 'petstore', name: 'P', originUrl: origin.url, title: 'T' }],
        responseTimeoutMs: 2000,
      });
    });

    after(() => closeAll(s, origin, dns));

    it('serves the site at the default address while the primary is not live yet', async () => {
      await addDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      await apply('domains:\n  primary: shop.example.test\n');
      await servesSite('primary set, not verified');
      await verifyDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      await servesSite('primary verified, no certificate yet');
    });

    it('redirects the default address with 308 once the certificate is issued, path and query kept, the API still served', async () => {
      assert.deepEqual(await obtain(), ['shop.example.test']);
      // No restart: issuing published a change, the next request sees the live primary.
      const fromHttp = await plain(DEFAULT_HOST, '/openapi.json?x=1');
      assert.equal(fromHttp.status, 308);
      // Straight to HTTPS on the primary: one hop.
      assert.equal(
        fromHttp.headers.location,
        `https://shop.example.test:${s.edge.httpsPort}/openapi.json?x=1`,
      );
      assert.equal(fromHttp.headers['cache-control'], 'max-age=3600');
      const fromHttps = await secure(DEFAULT_HOST, '/?tab=pets');
      assert.equal(fromHttps.status, 308);
      // The port the connection came to, whatever the Host header says (it said none here).
      assert.equal(fromHttps.headers.location, `https://shop.example.test:${s.edge.httpsPort}/?tab=pets`);
      // Existing API clients keep working at the default address (no cross-host redirect).
      const api = await plain(DEFAULT_HOST, '/api/pets?limit=1', { method: 'POST', body: '{}' });
      assert.equal(api.status, 200);
      assert.deepEqual(JSON.parse(api.text), { method: 'POST', url: '/pets?limit=1' });
      // The primary itself serves: no chain.
      const primary = await secure('shop.example.test', '/openapi.json');
      assert.equal(primary.status, 200);
      // The platform domain is never redirected.
      assert.equal((await plain('platform.test', '/api/v1/openapi.json')).status, 200);
    });

    it('sends a redirect aimed at the default address straight to the primary', async () => {
      await addDomain(s.p.ctx, s.owner, 'petstore', 'www.example.test');
      await apply(
        `domains:\n  primary: shop.example.test\n  redirects:\n    - from: www.example.test\n      to: ${DEFAULT_HOST}\n      status: 301\n`,
      );
      await verifyDomain(s.p.ctx, s.owner, 'petstore', 'www.example.test');
      const www = await plain('www.example.test', '/a?b=c');
      assert.equal(www.status, 301);
      assert.equal(www.headers.location, `https://shop.example.test:${s.edge.httpsPort}/a?b=c`);
    });

    it('serves the default address again when the primary is unset, and redirects again when set', async () => {
      await apply('domains:\n  primary: null\n');
      await servesSite('primary unset');
      // www's redirect went with the configuration; it serves the project.
      assert.equal((await plain('www.example.test', '/openapi.json')).status, 200);
      await apply('domains:\n  primary: shop.example.test\n');
      assert.equal((await plain(DEFAULT_HOST, '/')).status, 308);
    });

    it('stops redirecting when the primary’s certificate expires, without a published change', async () => {
      const stored = await s.certificates.store.load('shop.example.test');
      assert.ok(stored);
      const now = s.p.clock.now().getTime();
      s.p.clock.set(stored.notAfter.getTime() + 1);
      try {
        assert.equal((await plain(DEFAULT_HOST, '/openapi.json')).status, 200);
      } finally {
        s.p.clock.set(now);
      }
      s.edge.handler.table.invalidate();
      assert.equal((await plain(DEFAULT_HOST, '/')).status, 308);
    });

    it('serves the default address again when the primary domain is removed', async () => {
      await removeDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      await servesSite('primary removed');
    });
  });
}
