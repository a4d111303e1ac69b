import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import {
  CERTIFICATE_BACKOFF,
  type CertificateStatus,
  obtainDueCertificates,
} from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 5).toString('base64')}`);

/**
 * Issue 5's end to end: Pebble, NSD and the edge on loopback. A custom domain verifies, Pebble
 * validates http-01 through the edge, and a TLS client trusting only Pebble's root reaches the
 * Petstore through the edge.
 */
for (const dialect of testDialects()) {
  describe(`automatic HTTPS from Pebble through the edge (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let pebble: TestPebble;
    let petstore: TestPetstore;
    let edge: TestEdge;
    let issuer: AcmeIssuer;
    let store: CertificateStore;
    let owner: Actor;

    const get = (host: string, path: string, ca: string) =>
      new Promise<{ status: number; headers: Record<string, unknown>; text: string; chain: number }>(
        (resolve, reject) => {
          const req = httpsRequest(
            {
              host: '127.0.0.1',
              port: edge.httpsPort,
              path,
              servername: host,
              headers: { host },
              ca,
              agent: false,
            },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => {
                text += c;
              });
              res.on('end', () => {
                // Count the certificates the server sent (leaf + intermediates, up to the root).
                let chain = 0;
                let cert = (res.socket as TLSSocket).getPeerCertificate(true);
                const seen = new Set<string>();
                while (cert && !seen.has(cert.fingerprint256)) {
                  seen.add(cert.fingerprint256);
                  chain++;
                  cert = cert.issuerCertificate;
                }
                resolve({ status: res.statusCode ?? 0, headers: res.headers, text, chain });
              });
            },
          );
          req.on('error', reject);
          req.end();
        },
      );

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
      p = await startPlatformContext(dialect, {
        DNS_SERVERS: dns.servers.join(','),
        CAA_IDENTIFIER: 'pebble.test',
      });
      p.clock.set(Date.now());
      petstore = await startPetstore(dialect);
      const origin = await petstore.listen();
      const seeded = await seedTeam(p.ctx);
      owner = seeded.owner;
      await seedProject(p.ctx, owner, {
        teamId: seeded.team.id,
        slug: 'petstore',
        name: 'Petstore',
        originUrl: origin,
        document: JSON.stringify(petstoreDocument(TEST_DEPRECATION)),
      });

      store = new CertificateStore(p.ctx.db, [KEY]);
      const defaultCertificate = await new InternalIssuer(await store.internalCa(new Date())).issue(
        'platform.test',
      );
      edge = await startTestEdge(p, { store, defaultCertificate });
      // Pebble validates http-01 against the edge's HTTP port, resolving names through NSD.
      pebble = await startPebble({ httpPort: edge.httpPort, dnsServer: dns.servers[0] as string });
      issuer = new AcmeIssuer({
        directoryUrl: pebble.directoryUrl,
        email: 'ops@example.test',
        caPem: pebble.caPem,
        caaIdentities: ['pebble.test'],
        polling: { minDelayMs: 20, maxDelayMs: 200 },
      });
    });

    after(() => closeAll(edge, issuer, pebble, petstore, p, dns));

    it('verifies shop.example.test, gets a certificate from Pebble, and serves the API over TLS trusting only Pebble', async () => {
      await dns.addRecord('example.test', { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' });
      await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      const started = performance.now();
      const verified = await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      assert.equal(verified.domain.state, 'verified');
      const issued = await obtainDueCertificates(p.ctx, {
        issuer,
        store,
        challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
        nodeId: 'edge-1',
        leaseMs: 60_000,
      });
      assert.deepEqual(issued, ['shop.example.test']);
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
      await applyDomainConfig(
        p.ctx,
        owner,
        'petstore',
        'domains:\n  names: [shop.example.test, www.example.test]\n  primary: shop.example.test\n  redirects:\n    - from: www.example.test\n      to: shop.example.test\n      status: 301\n',
      );
      await verifyDomain(p.ctx, owner, 'petstore', 'www.example.test');
      const deps = {
        issuer,
        store,
        challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
        nodeId: 'edge-1',
        leaseMs: 60_000,
      };
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps), ['www.example.test']);
      const redirect = await get(
        'www.example.test',
        '/api/pets?status=available&limit=5',
        await pebble.rootPem(),
      );
      assert.equal(redirect.status, 301);
      // The port is the one the connection came to (never the raw Host header's).
      assert.equal(
        redirect.headers.location,
        `https://shop.example.test:${edge.httpsPort}/api/pets?status=available&limit=5`,
      );
    });

    it('stops serving the domain the moment it is removed', async () => {
      await removeDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await assert.rejects(get('shop.example.test', '/api/pets', await pebble.rootPem()));
    });

    // Last: it restarts Pebble (a new CA with a new root, no accounts).
    it('survives Pebble going down during an order: a retryable failure with back-off, then issued and served once it is back', async () => {
      await dns.addRecord('example.test', { name: 'api', type: 'CNAME', value: 'petstore.platform.test' });
      await addDomain(p.ctx, owner, 'petstore', 'api.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'api.example.test');
      const { token } = await createToken(p.ctx, owner, 'e2e');
      const certificateStatus = async () => {
        const reply = await edge.management.inject({
          method: 'GET',
          url: '/api/v1/projects/petstore/domains/api.example.test',
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(reply.statusCode, 200);
        return (reply.json() as { domain: { certificate: CertificateStatus | null } }).domain.certificate;
      };
      const database = databaseChallenges(p.ctx.db, () => p.clock.now());
      let placed = 0;
      const deps = {
        issuer,
        store,
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
      const failedAt = p.clock.now().getTime();
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps), []);
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
      p.clock.advance(CERTIFICATE_BACKOFF.baseMs - 1000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps), []);
      assert.equal((await certificateStatus())?.state, 'failed');
      // No certificate yet: the edge's default one, which Pebble's root does not sign.
      await assert.rejects(
        get('api.example.test', '/api/pets', root),
        /unable to verify the first certificate/,
      );

      p.clock.advance(1000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps), ['api.example.test']);
      const issued = await certificateStatus();
      assert.equal(issued?.state, 'issued');
      assert.equal(issued?.reason, null);
      const answer = await get('api.example.test', '/api/pets', root);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), []);
    });
  });
}
