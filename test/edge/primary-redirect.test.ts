import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { requestAs, secureRequestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 3).toString('base64')}`);
const DEFAULT_HOST = 'petstore.platform.test';
const port = (server: Server | HttpsServer) => (server.address() as AddressInfo).port;
const listen = (server: Server | HttpsServer) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

/**
 * Seed 001: "when a primary custom domain is live, the default subdomain redirects to it". Live is
 * verified with an unexpired certificate (docs/decisions/edge-and-certificates.md); the API under /api/ stays served at
 * the default address so existing clients keep working.
 */
for (const dialect of testDialects()) {
  describe(`the default address redirects to the live primary domain (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let owner: Actor;
    let store: CertificateStore;
    let issuer: InternalIssuer;
    let origin: Server;
    let edge: TestEdge;

    const obtain = () =>
      obtainDueCertificates(p.ctx, {
        issuer,
        store,
        challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
        nodeId: 'test',
        leaseMs: 60_000,
      });
    const plain = (host: string, path: string, init: { method?: string; body?: string } = {}) =>
      requestAs(edge.httpPort, host, path, init);
    /** Over TLS; the default address has no certificate of its own, so the name is not checked. */
    const secure = (host: string, path: string) => secureRequestAs(edge.httpsPort, host, path);
    const apply = (yaml: string) => applyDomainConfig(p.ctx, owner, 'petstore', yaml);
    const servesSite = async (why: string) => {
      const page = await plain(DEFAULT_HOST, '/openapi.json?x=1');
      assert.equal(page.status, 200, why);
      assert.equal((JSON.parse(page.text) as { info: { title: string } }).info.title, 'T');
      assert.equal((await secure(DEFAULT_HOST, '/')).status, 200, why);
    };

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: DEFAULT_HOST },
        { name: 'www', type: 'CNAME', value: DEFAULT_HOST },
      ]);
      p = await startPlatformContext(dialect, { DNS_SERVERS: dns.servers.join(',') });
      p.clock.set(Date.now());
      store = new CertificateStore(p.ctx.db, [KEY]);
      issuer = new InternalIssuer(await store.internalCa(p.clock.now()));
      origin = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url }));
      });
      await listen(origin);
      const seeded = await seedTeam(p.ctx);
      owner = seeded.owner;
      await createProject(p.ctx, owner, {
        teamId: seeded.team.id,
        slug: 'petstore',
        name: 'P',
        originUrl: `http://127.0.0.1:${port(origin)}`,
      });
      await deployProject(p.ctx, owner, 'petstore', {
        document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
      });
      edge = await startTestEdge(p, {
        store,
        defaultCertificate: await issuer.issue('platform.test'),
        responseTimeoutMs: 2000,
      });
    });

    after(async () => {
      await edge?.close();
      origin?.close();
      await p?.close();
      await dns?.stop();
    });

    it('serves the site at the default address while the primary is not live yet', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await apply('domains:\n  primary: shop.example.test\n');
      await servesSite('primary set, not verified');
      await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await servesSite('primary verified, no certificate yet');
    });

    it('redirects the default address with 308 once the certificate is issued, path and query kept, the API still served', async () => {
      assert.deepEqual(await obtain(), ['shop.example.test']);
      // No restart: issuing published a change, the next request sees the live primary.
      const fromHttp = await plain(DEFAULT_HOST, '/openapi.json?x=1');
      assert.equal(fromHttp.status, 308);
      // Straight to HTTPS on the primary: one hop.
      assert.equal(fromHttp.headers.location, `https://shop.example.test:${edge.httpsPort}/openapi.json?x=1`);
      assert.equal(fromHttp.headers['cache-control'], 'max-age=3600');
      const fromHttps = await secure(DEFAULT_HOST, '/?tab=pets');
      assert.equal(fromHttps.status, 308);
      // The port the connection came to, whatever the Host header says (it said none here).
      assert.equal(fromHttps.headers.location, `https://shop.example.test:${edge.httpsPort}/?tab=pets`);
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
      await addDomain(p.ctx, owner, 'petstore', 'www.example.test');
      await apply(
        `domains:\n  primary: shop.example.test\n  redirects:\n    - from: www.example.test\n      to: ${DEFAULT_HOST}\n      status: 301\n`,
      );
      await verifyDomain(p.ctx, owner, 'petstore', 'www.example.test');
      const www = await plain('www.example.test', '/a?b=c');
      assert.equal(www.status, 301);
      assert.equal(www.headers.location, `https://shop.example.test:${edge.httpsPort}/a?b=c`);
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
      const stored = await store.load('shop.example.test');
      assert.ok(stored);
      const now = p.clock.now().getTime();
      p.clock.set(stored.notAfter.getTime() + 1);
      try {
        assert.equal((await plain(DEFAULT_HOST, '/openapi.json')).status, 200);
      } finally {
        p.clock.set(now);
      }
      edge.handler.table.invalidate();
      assert.equal((await plain(DEFAULT_HOST, '/')).status, 308);
    });

    it('serves the default address again when the primary domain is removed', async () => {
      await removeDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await servesSite('primary removed');
    });
  });
}
