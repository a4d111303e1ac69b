import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import {
  obtainDueCertificates,
  REFUSED_RENEWAL_RETRY_MS,
} from '../../src/platform/certificates/certificate-job.ts';
import {
  type CertificateStore,
  databaseChallenges,
} from '../../src/platform/certificates/certificate-store.ts';
import { type CertificateRequest, type Issuer, IssuerError } from '../../src/platform/certificates/issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { CERTIFICATE_REFUSED_REMEDY } from '../../src/platform/domains/domain-status.ts';
import { inspectDomain } from '../../src/platform/domains/read-domains.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { reverifyDomain, verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { internalCertificates } from '../support/platform-certificates.ts';
import { seedTeamProject } from '../support/platform-config.ts';
import { caaZone, dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 7).toString('base64')}`);

/**
 * The real internal CA, counting its orders, optionally failing the first ones; with `preCheck`,
 * an ACME issuer's pre-check before it (CAA).
 */
class CountingIssuer implements Issuer {
  readonly name: string;
  readonly inner: Issuer;
  readonly preCheck?: Issuer['preCheck'];
  calls = 0;
  failures: IssuerError[] = [];
  constructor(inner: Issuer, name = 'internal', preCheck?: Issuer['preCheck']) {
    this.inner = inner;
    this.name = name;
    if (preCheck) this.preCheck = preCheck;
  }
  async issue(request: CertificateRequest) {
    this.calls++;
    const failure = this.failures.shift();
    if (failure) throw failure;
    return this.inner.issue(request, databaseChallenges as never);
  }
}

for (const dialect of testDialects()) {
  describe(`certificates: ordered on verify, stored sealed, renewed, leased (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let owner: Actor;
    let store: CertificateStore;
    let issuer: CountingIssuer;
    const deps = (nodeId = 'node-a', chosen: Issuer = issuer) => ({
      issuer: chosen,
      store,
      challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
      nodeId,
      leaseMs: 60_000,
    });

    before(async () => {
      dns = await startZones({
        ...petstoreZones(['shop', 'api', 'refused']),
        'caa.test': caaZone('pki.goog', 'petstore.platform.test'),
      });
      p = await startPlatformContext(dialect, dnsEnv(dns));
      const internal = await internalCertificates(p, KEY);
      store = internal.store;
      issuer = new CountingIssuer(internal.issuer);
      ({ owner } = await seedTeamProject(p.ctx, {
        slug: 'petstore',
        name: 'P',
        originUrl: 'http://127.0.0.1:1',
        title: 'T',
      }));
    });
    after(() => closeAll(p, dns));

    it('orders a certificate when a domain verifies, stores its key sealed, and shows the status', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      const verified = await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      assert.equal(verified.domain.certificate?.state, 'pending');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['shop.example.test']);
      const view = (await inspectDomain(p.ctx, owner, 'petstore', 'shop.example.test')).domain;
      assert.equal(view.certificate?.state, 'issued');
      const stored = await store.load('shop.example.test');
      assert.ok(stored);
      assert.equal(view.certificate?.notAfter, stored.notAfter.toISOString());
      assert.equal(new X509Certificate(stored.certificatePem).subjectAltName, 'DNS:shop.example.test');
      const row = await p.ctx.db
        .selectFrom('certificates')
        .select('key_sealed')
        .where('hostname', '=', 'shop.example.test')
        .executeTakeFirstOrThrow();
      assert.match(row.key_sealed, /^v1:k1:/);
      assert.ok(!row.key_sealed.includes('PRIVATE KEY'));
      assert.equal(view.reverifyAvailableAt, null, 'no Re-verify once a certificate is there');
    });

    it('renews when a third of the lifetime remains, and not before', async () => {
      const before = await store.load('shop.example.test');
      assert.ok(before);
      const lifetime = before.notAfter.getTime() - before.notBefore.getTime();
      p.clock.set(before.notAfter.getTime() - lifetime / 3 - 60_000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      p.clock.advance(120_000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['shop.example.test']);
      const after = await store.load('shop.example.test');
      assert.ok(after && after.notAfter > before.notAfter);
    });

    it('places one order per domain when two nodes run the job at once', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'api.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'api.example.test');
      const calls = issuer.calls;
      const [a, b] = await Promise.all([
        obtainDueCertificates(p.ctx, deps('node-a')),
        obtainDueCertificates(p.ctx, deps('node-b')),
      ]);
      assert.deepEqual([...a, ...b], ['api.example.test']);
      assert.equal(issuer.calls - calls, 1);
    });

    it('retries failures with back-off, honouring Retry-After, and a node dying mid-order leaves no domain stuck', async () => {
      await removeDomain(p.ctx, owner, 'petstore', 'api.example.test');
      assert.equal(await store.load('api.example.test'), undefined, 'removal drops the certificate');
      await addDomain(p.ctx, owner, 'petstore', 'api.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'api.example.test');
      issuer.failures.push(new IssuerError('rate limited', { retryable: true, retryAfterMs: 600_000 }));
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      const failed = (await inspectDomain(p.ctx, owner, 'petstore', 'api.example.test')).domain.certificate;
      assert.equal(failed?.state, 'failed');
      assert.equal(failed?.reason, 'rate limited');
      assert.equal(failed?.nextAttemptAt, new Date(p.clock.now().getTime() + 600_000).toISOString());
      p.clock.advance(600_000);
      // A node takes the order and dies: its lease runs out, and another node finishes the order.
      await p.ctx.db
        .updateTable('certificate_jobs')
        .set({
          state: 'ordering',
          lease_owner: 'dead-node',
          lease_until: new Date(p.clock.now().getTime() + 60_000).toISOString(),
        })
        .execute();
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-b')), []);
      p.clock.advance(61_000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-b')), ['api.example.test']);
    });

    it('never orders from an ACME CA when CAA forbids it; Re-verify starts a fresh attempt', async () => {
      // The ACME issuer's own pre-check, carrying the CA's CAA identity; the internal CA signs.
      const caa = new AcmeIssuer({
        directoryUrl: 'https://ca.invalid/directory',
        email: 'ops@platform.test',
        caaIdentities: ['letsencrypt.org'],
      });
      after(() => caa.close());
      const acme = new CountingIssuer(issuer.inner, 'acme', (hostname, resolver) =>
        caa.preCheck(hostname, resolver),
      );
      await addDomain(p.ctx, owner, 'petstore', 'www.caa.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'www.caa.test');
      await obtainDueCertificates(p.ctx, deps('node-a', acme));
      assert.equal(acme.calls, 0);
      const status = (await inspectDomain(p.ctx, owner, 'petstore', 'www.caa.test')).domain.certificate;
      assert.deepEqual(
        [status?.state, status?.reason, status?.nextAttemptAt],
        ['failed', 'caa_forbids', null],
      );
      await dns.setRecords('caa.test', [
        { name: '@', type: 'CAA', value: '0 issue "letsencrypt.org"' },
        { name: 'www', type: 'CNAME', value: 'petstore.platform.test' },
      ]);
      p.clock.advance(30 * 60_000);
      await reverifyDomain(p.ctx, owner, 'petstore', 'www.caa.test');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a', acme)), ['www.caa.test']);
      assert.equal(acme.calls, 1);
    });

    it('does not retry a refusal marked not retryable: the job stops until Verify, while a retryable failure backs off', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'refused.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'refused.example.test');
      // A retryable failure (the CA down for a moment) is tried again after the back-off (30 s).
      issuer.failures.push(new IssuerError('the CA could not be reached', { retryable: true }));
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      const retrying = (await inspectDomain(p.ctx, owner, 'petstore', 'refused.example.test')).domain;
      assert.deepEqual(
        [retrying.certificate?.state, retrying.certificate?.nextAttemptAt],
        ['failed', new Date(p.clock.now().getTime() + 30_000).toISOString()],
      );
      p.clock.advance(30_000);
      // The next attempt is refused for good (the CA fetched a wrong http-01 answer, say).
      const refusal = 'refused.example.test: the ACME CA marked the authorization invalid (unauthorized): no';
      issuer.failures.push(new IssuerError(refusal, { retryable: false }));
      const calls = issuer.calls;
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      assert.equal(issuer.calls - calls, 1);
      const stopped = (await inspectDomain(p.ctx, owner, 'petstore', 'refused.example.test')).domain;
      assert.deepEqual(
        [stopped.certificate?.state, stopped.certificate?.reason, stopped.certificate?.nextAttemptAt],
        ['failed', refusal, null],
      );
      assert.deepEqual(stopped.failure, {
        reason: 'certificate_failed',
        message: refusal,
        remedy: CERTIFICATE_REFUSED_REMEDY,
      });
      // No attempt is scheduled: however long the job runs, the CA is not asked again.
      for (const step of [30_000, 60 * 60_000, 24 * 60 * 60_000]) {
        p.clock.advance(step);
        assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      }
      assert.equal(issuer.calls - calls, 1, 'the refusal was not retried');
      // The owner fixes the cause and clicks Verify: a fresh attempt, and the certificate.
      await verifyDomain(p.ctx, owner, 'petstore', 'refused.example.test');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['refused.example.test']);
      assert.equal(issuer.calls - calls, 2);
    });

    it('tries a refused renewal again a day later: the served certificate is kept and renewed in time', async () => {
      const served = await store.load('shop.example.test');
      assert.ok(served);
      const lifetime = served.notAfter.getTime() - served.notBefore.getTime();
      p.clock.set(Math.max(p.clock.now().getTime(), served.notAfter.getTime() - lifetime / 3) + 1000);
      const refusal = 'shop.example.test: the ACME CA refused the order (rejectedIdentifier)';
      issuer.failures.push(new IssuerError(refusal, { retryable: false }));
      // Other domains fall due too (the clock is far on): only this one is watched.
      assert.ok(!(await obtainDueCertificates(p.ctx, deps())).includes('shop.example.test'));
      const refused = (await inspectDomain(p.ctx, owner, 'petstore', 'shop.example.test')).domain.certificate;
      assert.deepEqual(
        [refused?.state, refused?.reason, refused?.nextAttemptAt],
        ['failed', refusal, new Date(p.clock.now().getTime() + REFUSED_RENEWAL_RETRY_MS).toISOString()],
      );
      assert.equal((await store.load('shop.example.test'))?.notAfter.getTime(), served.notAfter.getTime());
      p.clock.advance(REFUSED_RENEWAL_RETRY_MS - 1000);
      assert.ok(
        !(await obtainDueCertificates(p.ctx, deps())).includes('shop.example.test'),
        'not within the day',
      );
      p.clock.advance(1000);
      assert.ok((await obtainDueCertificates(p.ctx, deps())).includes('shop.example.test'));
      assert.ok(
        ((await store.load('shop.example.test'))?.notAfter.getTime() ?? 0) > served.notAfter.getTime(),
      );
    });
  });
}
