import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { type HttpEdge, startHttpEdge } from '../support/edge.ts';
import {
  type EdgeSite,
  type LoopbackServer,
  startEdgeSite,
  startOrigin,
  startSiteDns,
  WWW_TO_SHOP,
} from '../support/edge-site.ts';
import { requestAs } from '../support/http.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import type { TestPlatform } from '../support/platform.ts';

for (const dialect of testDialects()) {
  describe(`the edge: host routing, published site, proxy (${dialect})`, () => {
    let dns: TestDns;
    let site: EdgeSite;
    let p: TestPlatform;
    let petstore: TestPetstore;
    let edge: HttpEdge;
    let echo: LoopbackServer;
    let edgePort: number;
    let owner: Actor;

    const call = (
      host: string,
      path: string,
      init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    ) => requestAs(edgePort, host, path, init);

    before(async () => {
      dns = await startSiteDns();
      petstore = await startPetstore(dialect);
      // An origin that echoes what it received, slowly when asked to: far beyond the proxy's 300 ms
      // response limit, since undici's coarse timers may fire it several hundred ms late under load.
      echo = await startOrigin((req, res) => {
        const delay = req.url?.includes('slow') ? 8000 : 0;
        const answer = setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ url: req.url, method: req.method, headers: req.headers }));
        }, delay);
        res.on('close', () => clearTimeout(answer));
      });
      const document = JSON.stringify(petstoreDocument(TEST_DEPRECATION));
      site = await startEdgeSite(dialect, {
        env: { DNS_SERVERS: dns.servers.join(',') },
        projects: [
          { slug: 'petstore', name: 'Petstore', originUrl: await petstore.listen(), document },
          { slug: 'echo', name: 'Echo', originUrl: echo.url },
          { slug: 'down', name: 'Down', originUrl: 'http://127.0.0.1:9' },
          { slug: 'undeployed', name: 'U', originUrl: 'http://127.0.0.1:9', document: false },
        ],
      });
      ({ p, owner } = site);
      edge = await startHttpEdge(p.ctx, { connectTimeoutMs: 1000, responseTimeoutMs: 300 });
      edgePort = edge.port;
    });

    after(() => closeAll(edge, echo, petstore, site, dns));

    it("serves a project's reference, its document and its API at the default address", async () => {
      const page = await call('petstore.platform.test', '/');
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.match(page.text, /Petstore API/);
      assert.match(page.text, /deprecated — sunset 2027-06-30/);
      const json = await call('petstore.platform.test', '/openapi.json');
      assert.equal((JSON.parse(json.text) as { openapi: string }).openapi, '3.0.3');
      assert.match((await call('petstore.platform.test', '/openapi.yaml')).text, /^openapi: 3\.0\.3/m);
      const created = await call('petstore.platform.test', '/api/categories', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${petstore.adminKey}` },
        body: JSON.stringify({ name: 'Dogs' }),
      });
      assert.equal(created.status, 201);
      // The origin's Location, moved to where the site serves the API.
      assert.equal(created.headers.location, '/api/categories/1');
      const list = await call('petstore.platform.test', '/api/categories');
      assert.deepEqual(JSON.parse(list.text), [{ id: 1, name: 'Dogs' }]);
    });

    it("forwards with X-Forwarded-*, Forwarded and the edge's own request id, path and query kept", async () => {
      const answer = await call('echo.platform.test', '/api/things?a=1&b=2', {
        headers: {
          'x-request-id': 'req-42',
          connection: 'keep-alive',
          'x-forwarded-for': '10.9.9.9',
          'x-forwarded-host': 'evil.test',
          'x-forwarded-port': '1',
          'x-real-ip': '10.9.9.9',
          forwarded: 'for=10.9.9.9',
        },
      });
      const seen = JSON.parse(answer.text) as { url: string; headers: Record<string, string> };
      assert.equal(seen.url, '/things?a=1&b=2');
      assert.equal(seen.headers['x-forwarded-host'], 'echo.platform.test');
      assert.equal(seen.headers['x-forwarded-proto'], 'http');
      assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
      assert.equal(seen.headers.forwarded, 'for=127.0.0.1;host=echo.platform.test;proto=http');
      assert.equal(seen.headers['x-forwarded-port'], undefined);
      assert.equal(seen.headers['x-real-ip'], undefined);
      // The client's id never reaches the origin as sent: the edge's own does, and comes back.
      assert.match(seen.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(answer.headers['x-request-id'], seen.headers['x-request-id']);
    });

    it('answers 502 when the origin is down and 504 when it is too slow, with the Error body', async () => {
      const down = await call('down.platform.test', '/api/x');
      assert.equal(down.status, 502);
      assert.equal((JSON.parse(down.text) as { code: string }).code, 'origin_unreachable');
      const slow = await call('echo.platform.test', '/api/slow');
      assert.equal(slow.status, 504);
      assert.deepEqual(Object.keys(JSON.parse(slow.text) as object), ['code', 'message', 'status']);
    });

    it('gives unknown hosts and undeployed projects a 404: HTML for browsers, the Error body for API clients', async () => {
      const api = await call('nobody.platform.test', '/api/pets');
      assert.equal(api.status, 404);
      assert.deepEqual(JSON.parse(api.text), {
        code: 'host_not_found',
        message:
          'No project is published at nobody.platform.test. Check the address; a custom domain is served once it is verified.',
        status: 404,
      });
      const html = await call('undeployed.platform.test', '/', { headers: { accept: 'text/html' } });
      assert.equal(html.status, 404);
      assert.match(String(html.headers['content-type']), /^text\/html/);
      // The path is echoed in the message: it must come back as text, never as markup.
      const probe = await call('petstore.platform.test', '/x<script>alert(1)</script>', {
        headers: { accept: 'text/html' },
      });
      assert.equal(probe.status, 404);
      assert.doesNotMatch(probe.text, /<script>/);
      assert.match(probe.text, /There is no page at \/x&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
      assert.equal(
        (await call('shop.example.test', '/api/pets')).status,
        404,
        'an unverified domain is not served',
      );
    });

    it('serves the control plane at the platform domain itself', async () => {
      const document = await call('platform.test', '/api/v1/openapi.json');
      assert.equal(
        (JSON.parse(document.text) as { info: { title: string } }).info.title,
        'Kennel management API',
      );
    });

    it('serves a verified custom domain, redirects keep path and query, and a removed domain stops at once', async () => {
      await dns.addRecord('example.test', { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' });
      await dns.addRecord('example.test', { name: 'www', type: 'CNAME', value: 'petstore.platform.test' });
      await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      assert.deepEqual(JSON.parse((await call('shop.example.test', '/api/categories')).text), [
        { id: 1, name: 'Dogs' },
      ]);

      await applyDomainConfig(p.ctx, owner, 'petstore', WWW_TO_SHOP);
      await verifyDomain(p.ctx, owner, 'petstore', 'www.example.test');
      const redirect = await call('www.example.test', '/api/pets?status=available&limit=5');
      assert.equal(redirect.status, 301);
      // The port the connection came to, whatever the Host header says (it said none here).
      assert.equal(
        redirect.headers.location,
        `http://shop.example.test:${edgePort}/api/pets?status=available&limit=5`,
      );

      await removeDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      const gone = await call('shop.example.test', '/api/categories');
      assert.equal(gone.status, 404);
      assert.equal((JSON.parse(gone.text) as { code: string }).code, 'host_not_found');
      // The redirect to shop went with it; www, still verified, serves the project itself.
      assert.equal((await call('www.example.test', '/api/categories')).status, 200);
    });
  });
}
