import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { requestCertificate } from '../../src/platform/certificates/certificate-job.ts';
import { newCertificateRequest } from '../../src/platform/certificates/certificate-request.ts';
import { createInternalCa, InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { type Issuer, IssuerError } from '../../src/platform/certificates/issuer.ts';
import { insertDomain } from '../../src/platform/domains/add-domain.ts';
import { PlatformMetrics } from '../../src/platform/metrics.ts';
import { projectFor } from '../../src/platform/projects/projects.ts';
import { transact } from '../../src/storage/index.ts';
import { testDialects } from '../support/databases.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const DAY = 86_400_000;

/** Every sample of one metric family, as `series value` lines, in the order exported. */
function family(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

for (const dialect of testDialects()) {
  describe(`platform metrics, read from the database at scrape time (${dialect})`, () => {
    let p: TestPlatform;
    let registry: Registry;
    let metrics: PlatformMetrics;

    before(async () => {
      p = await startPlatformContext(dialect);
      registry = new Registry();
      metrics = new PlatformMetrics(registry, p.ctx);
    });
    after(async () => {
      await p?.close();
    });

    it('with nothing stored: zero of everything, and no certificate to expire', async () => {
      const text = await registry.metrics();
      assert.deepEqual(family(text, 'kennel_certificates'), [
        'kennel_certificates{state="pending"} 0',
        'kennel_certificates{state="ordering"} 0',
        'kennel_certificates{state="issued"} 0',
        'kennel_certificates{state="failed"} 0',
      ]);
      assert.deepEqual(family(text, 'kennel_certificate_min_days_to_expiry'), [
        'kennel_certificate_min_days_to_expiry +Inf',
      ]);
      assert.deepEqual(family(text, 'kennel_job_queue_depth'), [
        'kennel_job_queue_depth{job="certificates",state="due"} 0',
        'kennel_job_queue_depth{job="certificates",state="leased"} 0',
        'kennel_job_queue_depth{job="domain_checks",state="due"} 0',
      ]);
    });

    it('counts certificates by state and by days to expiry, and the queues due and leased', async () => {
      const { owner, team } = await seedTeam(p.ctx, 'enterprise');
      await seedProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'shop',
        name: 'Shop',
        originUrl: 'http://127.0.0.1:9',
      });
      const project = await projectFor(p.ctx, owner, 'shop');
      const now = p.clock.now();
      const hosts = [
        'a.example.test',
        'b.example.test',
        'c.example.test',
        'd.example.test',
        'e.example.test',
      ];
      const ids: number[] = [];
      for (const hostname of hosts) {
        const row = await transact(p.ctx.db, (trx) =>
          insertDomain(trx, p.ctx, owner, project, { hostname, kind: 'subdomain', warnings: [] }),
        );
        ids.push(row.id);
        await requestCertificate(p.ctx.db, row.id, hostname, now);
      }
      // Domain checks: new domains are due at once; push two of them an hour out.
      await p.ctx.db
        .updateTable('domains')
        .set({ next_check_at: new Date(now.getTime() + 3_600_000).toISOString() })
        .where('hostname', 'in', ['a.example.test', 'b.example.test'])
        .execute();
      const job = (hostname: string) =>
        p.ctx.db.updateTable('certificate_jobs').where('hostname', '=', hostname);
      const later = new Date(now.getTime() + 30 * DAY).toISOString();
      await job('a.example.test').set({ state: 'issued', next_attempt_at: later }).execute();
      await job('b.example.test').set({ state: 'issued', next_attempt_at: later }).execute();
      await job('c.example.test')
        .set({
          state: 'ordering',
          lease_owner: 'node-2',
          lease_until: new Date(now.getTime() + 60_000).toISOString(),
        })
        .execute();
      await job('d.example.test')
        .set({ state: 'failed', attempts: 2, next_attempt_at: new Date(now.getTime() - 1000).toISOString() })
        .execute();
      // e stays pending and due.
      const stored = async (hostname: string, daysLeft: number) => {
        const notAfter = new Date(now.getTime() + daysLeft * DAY).toISOString();
        await p.ctx.db
          .insertInto('certificates')
          .values({
            hostname,
            issuer: 'internal',
            certificate_pem: 'pem',
            key_sealed: 'v1:k:iv:tag:data',
            not_before: now.toISOString(),
            not_after: notAfter,
            created_at: now.toISOString(),
          })
          .execute();
      };
      await stored('a.example.test', 60);
      await stored('b.example.test', 5.5);
      await stored('d.example.test', -1.25);

      const text = await registry.metrics();
      assert.deepEqual(family(text, 'kennel_certificates'), [
        'kennel_certificates{state="pending"} 1',
        'kennel_certificates{state="ordering"} 1',
        'kennel_certificates{state="issued"} 2',
        'kennel_certificates{state="failed"} 1',
      ]);
      assert.deepEqual(family(text, 'kennel_certificates_expiring'), [
        'kennel_certificates_expiring{within_days="0"} 1',
        'kennel_certificates_expiring{within_days="7"} 2',
        'kennel_certificates_expiring{within_days="14"} 2',
        'kennel_certificates_expiring{within_days="30"} 2',
      ]);
      assert.deepEqual(family(text, 'kennel_certificate_min_days_to_expiry'), [
        'kennel_certificate_min_days_to_expiry -1.25',
      ]);
      assert.deepEqual(family(text, 'kennel_job_queue_depth'), [
        'kennel_job_queue_depth{job="certificates",state="due"} 2',
        'kennel_job_queue_depth{job="certificates",state="leased"} 1',
        'kennel_job_queue_depth{job="domain_checks",state="due"} 3',
      ]);

      // Time passes: the lease runs out (due again), b's certificate expires too.
      p.clock.advance(6 * DAY);
      const afterwards = await registry.metrics();
      assert.deepEqual(family(afterwards, 'kennel_job_queue_depth'), [
        'kennel_job_queue_depth{job="certificates",state="due"} 3',
        'kennel_job_queue_depth{job="certificates",state="leased"} 0',
        'kennel_job_queue_depth{job="domain_checks",state="due"} 5',
      ]);
      assert.equal(
        family(afterwards, 'kennel_certificates_expiring')[0],
        'kennel_certificates_expiring{within_days="0"} 2',
      );
      assert.deepEqual(family(afterwards, 'kennel_certificate_min_days_to_expiry'), [
        'kennel_certificate_min_days_to_expiry -7.25',
      ]);
    });

    it('counts orders by outcome through the issuer, and failed passes by job', async () => {
      const ca = await createInternalCa('Test CA', p.clock.now());
      const issuing = metrics.countOrders(new InternalIssuer(ca));
      const refusing: Issuer = metrics.countOrders({
        name: 'acme',
        issue: async () => {
          throw new IssuerError('rate limited', { retryable: true, retryAfterMs: 1000 });
        },
      });
      assert.equal(issuing.name, 'internal');
      const challenges = { put: async () => {}, remove: async () => {} };
      const request = {
        hostname: 'shop.example.test',
        csrPem: (await newCertificateRequest('shop.example.test')).csrPem,
      };
      const issued = await issuing.issue(request, challenges);
      assert.match(issued.certificatePem, /BEGIN CERTIFICATE/);
      await assert.rejects(refusing.issue(request, challenges), /rate limited/);
      await assert.rejects(refusing.issue(request, challenges), IssuerError);
      metrics.passFailed('domain_checks');
      const text = await registry.metrics();
      assert.deepEqual(family(text, 'kennel_certificate_orders_total'), [
        'kennel_certificate_orders_total{outcome="issued"} 1',
        'kennel_certificate_orders_total{outcome="failed"} 2',
      ]);
      assert.deepEqual(family(text, 'kennel_job_pass_failures_total'), [
        'kennel_job_pass_failures_total{job="certificates"} 0',
        'kennel_job_pass_failures_total{job="domain_checks"} 1',
      ]);
    });
  });
}
