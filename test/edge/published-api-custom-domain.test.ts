import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { loopbackFetch, walkPetstore } from '../support/published-walk.ts';

const KEY = parseSealingKey(`cd:${Buffer.alloc(32, 6).toString('base64')}`);
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
    let p: TestPlatform;
    let petstore: TestPetstore;
    let edge: TestEdge;
    let rootPem: string;

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' },
      ]);
      p = await startPlatformContext(dialect, { DNS_SERVERS: dns.servers.join(',') });
      // The client checks certificates against the real time: they are issued for now.
      p.clock.set(Date.now());
      const store = new CertificateStore(p.ctx.db, [KEY]);
      const ca = await store.internalCa(p.clock.now());
      rootPem = ca.certificatePem;
      const issuer = new InternalIssuer(ca);
      petstore = await startPetstore(dialect);
      const { owner, team } = await seedTeam(p.ctx, 'enterprise');
      await createProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'petstore',
        name: 'Petstore',
        originUrl: await petstore.listen(),
      });
      await deployProject(p.ctx, owner, 'petstore', {
        document: JSON.stringify(petstoreDocument(TEST_DEPRECATION)),
      });
      edge = await startTestEdge(p, { store, defaultCertificate: await issuer.issue('platform.test') });

      await addDomain(p.ctx, owner, 'petstore', DOMAIN);
      const verified = await verifyDomain(p.ctx, owner, 'petstore', DOMAIN);
      assert.equal(verified.domain.state, 'verified');
      const issued = await obtainDueCertificates(p.ctx, {
        issuer,
        store,
        challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
        nodeId: 'test',
        leaseMs: 60_000,
      });
      assert.deepEqual(issued, [DOMAIN]);
    });

    after(async () => {
      await edge?.close();
      await petstore?.close();
      await p?.close();
      await dns?.stop();
    });

    it('a client built from the document the domain publishes walks the Petstore over HTTPS', async () => {
      await walkPetstore({
        site: `https://${DOMAIN}:${edge.httpsPort}`,
        fetch: loopbackFetch(rootPem),
        adminKey: petstore.adminKey,
        tag: 'custom-domain',
      });
    });
  });
}
