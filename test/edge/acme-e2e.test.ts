import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import type { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import {
  CERTIFICATE_BACKOFF,
  type CertificateStatus,
  obtainDueCertificates,
} from '../../src/platform/certificates/certificate-job.ts';
import { databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startTlsEdgeSite, type TlsEdgeSite } from '../support/edge.ts';
import { pebbleIssuer, startSiteDns, WWW_TO_SHOP } from '../support/edge-site.ts';
import { tlsGet } from '../support/edge-tls.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';

/**
 * Issue 5's end to end: Pebble, NSD and the edge on loopback. A custom domain verifies, Pebble
 * validates http-01 through the edge, and a TLS client trusting only Pebble's root reaches the
 * Petstore through the edge.
 */
for (const dialect of testDialects()) {
  describe(`automatic HTTPS from Pebble through the edge (${dialect})`, () => {
    let dns: TestDns;
    let petstore: TestPetstore;
    let s: TlsEdgeSite;
    let pebble: TestPebble;
    let issuer: AcmeIssuer;

    const get = (host: string, path: string, ca: string) => tlsGet(s.edge.httpsPort, host, path, { ca });
    const obtain = () => s.obtain({ issuer });

    before(async () => {
      dns = await startSiteDns();
      petstore = await startPetstore(dialect);
      const document = JSON.stringify(petstoreDocument(TEST_DEPRECATION));
      s = await startTlsEdgeSite(dialect, {
        env: { DNS_SERVERS: dns.servers.join(','), CAA_IDENTIFIER: 'pebble.test' },
        now: true,
        projects: [{ slug: 'petstore', name: 'Petstore', originUrl: await petstore.listen(), document }],
      });
      // Pebble validates http-01 against the edge's HTTP port, resolving names through NSD.
      pebble = await startPebble({ httpPort: s.edge.httpPort, dnsServer: dns.servers[0] as string });
      issuer = pebbleIssuer(pebble, ['pebble.test']);
    });

    after(() => closeAll(s, issuer, pebble, petstore, dns));

    it('verifies shop.example.test, gets a certificate from Pebble, and serves the API over TLS trusting only Pebble', async () => {
      await dns.addRecord('example.test', { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' });
      await addDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      const started = performance.now();
      const verified = await verifyDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      assert.equal(verified.domain.state, 'verified');
      assert.deepEqual(await obtain(), ['shop.example.test']);
      const root = await pebble.rootPem();
      const answer = await get('shop.example.test', '/api/pets', root);
      const seconds = (performance.now() - started) / 1000;
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), []);
      assert.ok(answer.chain >= 2, `the edge sent ${answer.chain} certificate(s), not the full chain`);
      process.stdout.write(`# Verify → certificate served over TLS: ${seconds.toFixed(2)} s\n`);
    });

    it('redirects www.example.test to shop.example.test with 301, path and query kept', async () => {
      await dns.addRecord('example.test', { name: 'www', type: 'CNAME', value: 'petstore.platform.test' });
      await applyDomainConfig(s.p.ctx, s.owner, 'petstore', WWW_TO_SHOP);
      await verifyDomain(s.p.ctx, s.owner, 'petstore', 'www.example.test');
      assert.deepEqual(await obtain(), ['www.example.test']);
      const redirect = await get(
        'www.example.test',
        '/api/pets?status=available&limit=5',
        await pebble.rootPem(),
      );
      assert.equal(redirect.status, 301);
      // The port is the one the connection came to (never the raw Host header's).
      assert.equal(
        redirect.headers.location,
        `https://shop.example.test:${s.edge.httpsPort}/api/pets?status=available&limit=5`,
      );
    });

    it('stops serving the domain the moment it is removed', async () => {
      await removeDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      await assert.rejects(get('shop.example.test', '/api/pets', await pebble.rootPem()));
    });

    // Last: it restarts Pebble (a new CA with a new root, no accounts).
    it('survives Pebble going down during an order: a retryable failure with back-off, then issued and served once it is back', async () => {
      await dns.addRecord('example.test', { name: 'api', type: 'CNAME', value: 'petstore.platform.test' });
      await addDomain(s.p.ctx, s.owner, 'petstore', 'api.example.test');
      await verifyDomain(s.p.ctx, s.owner, 'petstore', 'api.example.test');
      const { token } = await createToken(s.p.ctx, s.owner, 'e2e');
      const certificateStatus = async () => {
        const reply = await s.edge.management.inject({
          method: 'GET',
          url: '/api/v1/projects/petstore/domains/api.example.test',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(reply.statusCode, 200);
        return (reply.json() as { domain: { certificate: CertificateStatus | null } }).domain.certificate;
      };
      const database = databaseChallenges(s.p.ctx.db, () => s.p.clock.now());
      let placed = 0;
      const deps = {
        issuer,
        store: s.certificates.store,
        // Pebble stops while the order is open: the answer is in place, the CA is gone.
        challenges: {
          ...database,
          async put(token: string, keyAuthorization: string, hostname: string) {
            placed++;
            if (placed === 1) await pebble.stop();
            await database.put(token, keyAuthorization, hostname);
          },
        },
        nodeId: 'edge-1',
        leaseMs: 60_000,
      };
      const failedAt = s.p.clock.now().getTime();
      assert.deepEqual(await obtainDueCertificates(s.p.ctx, deps), []);
      assert.equal(placed, 1, 'the order reached the challenge before Pebble went away');
      const failed = await certificateStatus();
      assert.equal(failed?.state, 'failed');
      assert.equal(
        failed?.reason,
        `the ACME CA at ${new URL(pebble.directoryUrl).origin} could not be reached (ECONNREFUSED)`,
      );
      assert.equal(failed?.nextAttemptAt, new Date(failedAt + CERTIFICATE_BACKOFF.baseMs).toISOString());
      assert.equal(failed?.notAfter, null);

      await pebble.restart();
      const root = await pebble.rootPem();
      // Still backing off: nothing is ordered before the next attempt is due.
      s.p.clock.advance(CERTIFICATE_BACKOFF.baseMs - 1000);
      assert.deepEqual(await obtainDueCertificates(s.p.ctx, deps), []);
      assert.equal((await certificateStatus())?.state, 'failed');
      // No certificate yet: the edge's default one, which Pebble's root does not sign.
      await assert.rejects(
        get('api.example.test', '/api/pets', root),
        /unable to verify the first certificate/,
      );

      s.p.clock.advance(1000);
      assert.deepEqual(await obtainDueCertificates(s.p.ctx, deps), ['api.example.test']);
      const issued = await certificateStatus();
      assert.equal(issued?.state, 'issued');
      assert.equal(issued?.reason, null);
      const answer = await get('api.example.test', '/api/pets', root);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), []);
    });
  });
}
