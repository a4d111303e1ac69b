import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { seedSites, startSiteDns } from '../support/edge-site.ts';
import { seededOriginGuard } from '../support/origins.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import { loopbackFetch, walkPetstore } from '../support/published-walk.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';

const DOMAIN = 'shop.example.test';

/**
 * Issue 14: a client generated from the published document works on a custom domain too. The
 * domain is made live as a team makes it (added, its CNAME in DNS, verified, its certificate
 * issued by the certificate job), then a client built from the document the domain publishes
 * walks the Petstore over HTTPS at `https://shop.example.test:<port>/api`, following the
 * Location, next-page and successor links as given, on a connection that checks the domain's
 * own certificate.
 */
for (const dialect of testDialects()) {
  describe(`a published API on a live custom domain (${dialect})`, () => {
    let dns: TestDns;
    let node: TestNode;
    let petstore: TestPetstore;
    let rootPem: string;

    before(async () => {
      dns = await startSiteDns('shop');
      node = await startTestNode(dialect, { env: { DNS_SERVERS: dns.servers.join(',') } });
      // The client checks certificates against the real time: they are issued for now.
      node.clock.set(Date.now());
      rootPem = readFileSync(node.node.rootPemFile, 'utf8');
      petstore = await startPetstore(dialect);
      const document = JSON.stringify(petstoreDocument(TEST_DEPRECATION));
      const { owner } = await seedSites(
        node.ctx,
        [{ slug: 'petstore', name: 'Petstore', originUrl: await petstore.listen(), document }],
        'enterprise',
      );
      // The project's loopback origin is granted to its team (an admin's grant).
      await seededOriginGuard(node.ctx);

      await addDomain(node.ctx, owner, 'petstore', DOMAIN);
      const verified = await verifyDomain(node.ctx, owner, 'petstore', DOMAIN);
      assert.equal(verified.domain.state, 'verified');
      // The node's certificate job is woken by the verification and issues the domain's certificate.
      const issued = async () =>
        (
          await node.ctx.db
            .selectFrom('certificates')
            .select('hostname')
            .where('hostname', '=', DOMAIN)
            .execute()
        ).length;
      for (let waited = 0; (await issued()) === 0 && waited < 30_000; waited += 50) await sleep(50);
      assert.equal(await issued(), 1, 'the certificate job issued the domain its certificate');
    });

    after(async () => {
      await node?.stop();
      await petstore?.close();
      await dns?.stop();
    });

    it('a client built from the document the domain publishes walks the Petstore over HTTPS', async () => {
      await walkPetstore({
        site: `https://${DOMAIN}:${node.httpsPort}`,
        fetch: loopbackFetch(rootPem),
        adminKey: petstore.adminKey,
        tag: 'custom-domain',
      });
    });
  });
}
