import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTeam, setPlan } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import {
  type CertificateDeps,
  obtainDueCertificates,
  reclaimOwnLeases,
} from '../../src/platform/certificates/certificate-job.ts';
import {
  type CertificateStore,
  databaseChallenges,
} from '../../src/platform/certificates/certificate-store.ts';
import { type Issuer, IssuerError } from '../../src/platform/certificates/issuer.ts';
import type { Actor, PlatformContext } from '../../src/platform/context.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { checkDueDomains } from '../../src/platform/domains/check-due-domains.ts';
import { inspectDomain, listDomains } from '../../src/platform/domains/read-domains.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { reverifyDomain, verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { setWebhookEndpoint } from '../../src/platform/webhooks/webhook-endpoints.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { GatedIssuer, internalCertificates } from '../support/platform-certificates.ts';
import { caaZone, dnsEnv, liveDomain, startZones } from '../support/platform-dns.ts';
import { beforeMigration } from '../support/platform-migrations.ts';

const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });

/** Resolves for everyone once `n` callers have arrived. */
function barrier(n: number): () => Promise<void> {
  let count = 0;
  let release: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return async () => {
    if (++count >= n) release();
    await all;
  };
}

/** The real resolver, whose first query waits at `arrive` (so two checks meet there). */
function meeting<T extends object>(resolver: T, arrive: () => Promise<void>): T {
  let first = true;
  return new Proxy(resolver, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (first) {
          first = false;
          await arrive();
        }
        return value.apply(target, args);
      };
    },
  });
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of testDialects()) {
  describe(`domains across teams, races and dead nodes (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let alice: Actor;
    let bob: Actor;
    let store: CertificateStore;
    let issuer: GatedIssuer;
    /** The same CA without a gate, for a second node. */
    let plain: Issuer;
    const deps = (nodeId = 'node-a', extra: Partial<CertificateDeps> = {}): CertificateDeps => ({
      issuer,
      store,
      challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
      nodeId,
      instanceId: `${nodeId}-1`,
      leaseMs: 15_000,
      heartbeatMs: 20,
      ...extra,
    });
    const domainId = async (slug: string, hostname: string) =>
      (await liveDomain(p.ctx.db, slug, hostname).select('domains.id').executeTakeFirstOrThrow()).id;
    /** Issues whatever earlier tests left due, so a test's passes see only its own orders. */
    const drain = () => obtainDueCertificates(p.ctx, deps('drain'));
    const cname = (name: string, project: string) =>
      dns.addRecord('example.test', { name, type: 'CNAME', value: `${project}.platform.test` });
    /**
     * `<label>.example.test` of alpha, once what earlier tests left due is issued: its CNAME made,
     * the domain added and verified (its order due); the hostname and the domain's id.
     */
    const verifiedDomain = async (label: string) => {
      await drain();
      const hostname = `${label}.example.test`;
      await cname(label, 'alpha');
      await addDomain(p.ctx, alice, 'alpha', hostname);
      await verifyDomain(p.ctx, alice, 'alpha', hostname);
      return { hostname, id: await domainId('alpha', hostname) };
    };
    /** Sets fields of a domain's certificate job, as a node's pass would have left them. */
    const setJob = (id: number, fields: Record<string, string | null>) =>
      p.ctx.db.updateTable('certificate_jobs').set(fields).where('domain_id', '=', id).execute();
    /** An order `node`'s process 0 is working on, its lease running `ms` from now. */
    const leasedTo = (node: string, ms: number) => ({
      state: 'ordering',
      lease_owner: node,
      lease_instance: `${node}-0`,
      lease_until: new Date(p.clock.now().getTime() + ms).toISOString(),
    });
    /** A domain's history as [action, outcome] pairs, oldest first. */
    const historyOf = async (id: number) =>
      (
        await p.ctx.db
          .selectFrom('domain_events')
          .select(['action', 'outcome'])
          .where('domain_id', '=', id)
          .orderBy('id')
          .execute()
      ).map((e) => [e.action, e.outcome]);

    before(async () => {
      dns = await startZones({
        'example.test': [],
        'platform.test': ['alpha', 'beta'].map((name) => ({ name, type: 'A', value: '127.0.0.1' })),
        'caa.test': caaZone('pki.goog', 'alpha.platform.test'),
      });
      p = await startPlatformContext(dialect, {
        ...dnsEnv(dns),
        CAA_IDENTIFIER: 'letsencrypt.org',
        DNS_PROPAGATION_WINDOW: '10m',
        WEBHOOK_TARGETS: 'private',
      });
      ({ store, issuer: plain } = await internalCertificates(p));
      issuer = new GatedIssuer(plain);
      const seeded = await seedTeam(p.ctx);
      alice = seeded.owner;
      bob = await createUser(p.ctx, { email: 'bob@x.test', password: 'bob password 1' });
      const bobTeam = await createTeam(p.ctx, bob, 'Beta');
      await setPlan(p.ctx, seeded.admin, bobTeam.id, 'pro');
      for (const [actor, teamId, slug] of [
        [alice, seeded.team.id, 'alpha'],
        [bob, bobTeam.id, 'beta'],
      ] as const) {
        await seedProject(p.ctx, actor, {
          teamId,
          slug,
          name: slug,
          originUrl: 'http://127.0.0.1:1',
          document: DOC,
        });
      }
      // Both teams hear of their domains, so the tests can count the events.
      await setWebhookEndpoint(p.ctx, alice, seeded.team.id, 'http://127.0.0.1:1/hook');
    });
    after(async () => {
      issuer?.release();
      await p?.close();
      await dns?.stop();
    });

    it("another team's claim and removal of a served hostname leaves the owner's certificate and job alone", async () => {
      await verifiedDomain('shop');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['shop.example.test']);
      const served = await store.load('shop.example.test');
      assert.ok(served);

      const claim = await addDomain(p.ctx, bob, 'beta', 'shop.example.test');
      assert.deepEqual(
        claim.domain.records.map((r) => r.type),
        ['CNAME', 'TXT'],
      );
      // Bob's Verify fails (the CNAME still points at alpha); the TXT record stays on show.
      const failed = await verifyDomain(p.ctx, bob, 'beta', 'shop.example.test');
      assert.equal(failed.domain.state, 'unverified');
      assert.equal(failed.domain.reason, 'cname_mismatch');
      assert.deepEqual(
        failed.domain.records.map((r) => r.type),
        ['CNAME', 'TXT'],
      );
      const listed = await listDomains(p.ctx, bob, 'beta');
      assert.deepEqual(
        listed.map((d) => d.records.map((r) => r.type)),
        [['CNAME', 'TXT']],
      );
      const inspected = await inspectDomain(p.ctx, bob, 'beta', 'shop.example.test');
      assert.deepEqual(
        inspected.domain.records.map((r) => r.type),
        ['CNAME', 'TXT'],
      );

      await removeDomain(p.ctx, bob, 'beta', 'shop.example.test');
      const after = await store.load('shop.example.test');
      assert.equal(after?.certificatePem, served.certificatePem, "alice's certificate is still served");
      const alices = (await inspectDomain(p.ctx, alice, 'alpha', 'shop.example.test')).domain;
      assert.equal(alices.status, 'live');
      assert.equal(alices.certificate?.state, 'issued');
      assert.equal(alices.certificate?.notAfter, served.notAfter.toISOString());
    });

    it('discards an order that completes after its domain was removed', async () => {
      const { id } = await verifiedDomain('race');
      issuer.hold('race.example.test');
      const pass = obtainDueCertificates(p.ctx, deps());
      await issuer.started;
      await removeDomain(p.ctx, alice, 'alpha', 'race.example.test');
      issuer.release();
      assert.deepEqual(await pass, []);
      assert.equal(
        await store.load('race.example.test'),
        undefined,
        'the removed name presents no certificate',
      );
      const jobs = await p.ctx.db
        .selectFrom('certificate_jobs')
        .select('domain_id')
        .where('domain_id', '=', id)
        .execute();
      assert.deepEqual(jobs, []);
      assert.deepEqual(await historyOf(id), [
        ['add', 'unverified'],
        ['verify', 'verified'],
        ['remove', 'removed'],
        ['certificate_discarded', 'removed'],
      ]);
    });

    it('discards an order whose domain was removed and added again meanwhile', async () => {
      await drain();
      await addDomain(p.ctx, alice, 'alpha', 'race.example.test');
      await verifyDomain(p.ctx, alice, 'alpha', 'race.example.test');
      issuer.hold('race.example.test');
      const pass = obtainDueCertificates(p.ctx, deps());
      await issuer.started;
      await removeDomain(p.ctx, alice, 'alpha', 'race.example.test');
      await addDomain(p.ctx, alice, 'alpha', 'race.example.test');
      issuer.release();
      assert.deepEqual(await pass, []);
      assert.equal(await store.load('race.example.test'), undefined);
    });

    it('makes one transition, one event and one history entry of two Verify calls at once', async () => {
      // Two nodes share a PostgreSQL database (here: a second pool); on SQLite, one process (one
      // writer) is the node, so its case is two calls through one context.
      const other = dialect === 'postgres' ? openDatabase<PlatformTables>(p.storage.location) : undefined;
      try {
        const cases: [string, PlatformContext['db'][]][] = [['twice.example.test', [p.ctx.db, p.ctx.db]]];
        if (other) cases.push(['nodes.example.test', [p.ctx.db, other.db]]);
        for (const [hostname, dbs] of cases) {
          await cname(hostname.split('.')[0] as string, 'alpha');
          await addDomain(p.ctx, alice, 'alpha', hostname);
          // Both calls read the domain before either applies its outcome: each one's first DNS
          // query (after its read) waits until the other's has started, so the calls overlap.
          const arrive = barrier(2);
          const contexts = dbs.map((db) => ({ ...p.ctx, db, resolver: meeting(p.ctx.resolver, arrive) }));
          const results = await Promise.all(
            contexts.map((ctx) => verifyDomain(ctx, alice, 'alpha', hostname)),
          );
          assert.deepEqual(
            results.map((r) => r.domain.state),
            ['verified', 'verified'],
          );
          const id = await domainId('alpha', hostname);
          assert.deepEqual(
            await historyOf(id),
            [
              ['add', 'unverified'],
              ['verify', 'verified'],
            ],
            hostname,
          );
          const events = await p.ctx.db
            .selectFrom('webhook_messages')
            .select('type')
            .where('subject', '=', `domain:${id}`)
            .execute();
          assert.deepEqual(
            events.map((e) => e.type),
            ['domain.verified'],
            hostname,
          );
        }
      } finally {
        await other?.close();
      }
    });

    it("keeps a live order's lease with its heartbeat, past the lease's length", async () => {
      await verifiedDomain('beat');
      const calls = issuer.calls;
      issuer.hold('beat.example.test');
      const pass = obtainDueCertificates(p.ctx, deps('node-a'));
      await issuer.started;
      p.clock.advance(60_000);
      await tick(100); // heartbeats every 20 ms renew the lease from the clock's now
      const other = new GatedIssuer(plain, 'internal');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-b', { issuer: other })), []);
      issuer.release();
      assert.deepEqual(await pass, ['beat.example.test']);
      assert.equal(issuer.calls - calls, 1);
      assert.equal(other.calls, 0, 'node-b placed no second order');
    });

    it("takes over a dead node's order once its heartbeat is older than the lease", async () => {
      const { id } = await verifiedDomain('dead');
      // node-a claimed the order and died: its last heartbeat was now, and none follows.
      await setJob(id, leasedTo('node-a', 15_000));
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-b')), []);
      p.clock.advance(15_001);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-b')), ['dead.example.test']);
    });

    it('a restarted node takes back the orders its dead process held, at once', async () => {
      const { id } = await verifiedDomain('restart');
      await setJob(id, leasedTo('node-a', 15_000));
      // Another node's leases and this process's own are left alone.
      assert.equal(await reclaimOwnLeases(p.ctx.db, 'node-b', 'node-b-1'), 0);
      assert.equal(await reclaimOwnLeases(p.ctx.db, 'node-a', 'node-a-0'), 0);
      assert.equal(await reclaimOwnLeases(p.ctx.db, 'node-a', 'node-a-1'), 1);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a')), ['restart.example.test']);
    });

    it('Verify of a domain whose order died, or whose certificate failed on CAA, starts a fresh attempt', async () => {
      const { id } = await verifiedDomain('stuck');
      await setJob(id, {
        ...leasedTo('node-z', -1),
        next_attempt_at: new Date(p.clock.now().getTime() + 86_400_000).toISOString(),
      });
      const again = await verifyDomain(p.ctx, alice, 'alpha', 'stuck.example.test');
      assert.equal(again.domain.certificate?.state, 'pending');
      assert.equal(again.domain.certificate?.nextAttemptAt, p.clock.now().toISOString());
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a')), ['stuck.example.test']);

      // An ACME issuer's pre-check (CAA, its identity letsencrypt.org) and a CAA record that
      // forbids it: the order fails before the CA.
      const caa = new AcmeIssuer({
        directoryUrl: 'https://ca.invalid/directory',
        email: 'ops@platform.test',
        caaIdentities: ['letsencrypt.org'],
      });
      after(() => caa.close());
      const acme = new GatedIssuer(issuer, 'acme', (hostname, resolver) => caa.preCheck(hostname, resolver));
      await addDomain(p.ctx, alice, 'alpha', 'www.caa.test');
      await verifyDomain(p.ctx, alice, 'alpha', 'www.caa.test');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a', { issuer: acme })), []);
      const failed = (await inspectDomain(p.ctx, alice, 'alpha', 'www.caa.test')).domain;
      assert.equal(failed.status, 'failed');
      assert.deepEqual(failed.failure?.reason, 'caa_forbids');
      assert.match(failed.failure?.remedy ?? '', /verify again/);
      // Re-verify before its 30 minutes says why, and what to do now.
      await assert.rejects(reverifyDomain(p.ctx, alice, 'alpha', 'www.caa.test'), {
        message:
          /failed \(a CAA record forbids the certificate authority\)\. The platform does not retry on its own: fix the cause, then verify again to retry now\. Re-verify is offered from \S+ \(30 minutes after verification\)\./,
      });
      await dns.setRecords('caa.test', caaZone('letsencrypt.org', 'alpha.platform.test'));
      const fixed = await verifyDomain(p.ctx, alice, 'alpha', 'www.caa.test');
      assert.equal(fixed.domain.status, 'issuing');
      assert.equal(fixed.domain.certificate?.state, 'pending');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a', { issuer: acme })), [
        'www.caa.test',
      ]);
      const history = (await inspectDomain(p.ctx, alice, 'alpha', 'www.caa.test')).history;
      assert.deepEqual(
        history.map((e) => e.action),
        ['add', 'verify', 'certificate_failed', 'verify', 'certificate_issued'],
      );
      assert.equal(history[3]?.detail?.certificate, 'fresh attempt');
    });

    it('Verify retries a failed certificate at once, but keeps a wait the certificate authority asked for', async () => {
      await verifiedDomain('flaky');
      const failures = [
        new IssuerError('the challenge failed', { retryable: true }),
        new IssuerError('rate limited', { retryable: true, retryAfterMs: 3_600_000 }),
      ];
      const failing: Issuer = {
        name: 'internal',
        issue: async () => {
          throw failures.shift();
        },
      };
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a', { issuer: failing })), []);
      const retried = await verifyDomain(p.ctx, alice, 'alpha', 'flaky.example.test');
      assert.equal(retried.domain.certificate?.state, 'pending', 'back-off alone does not hold a click back');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps('node-a', { issuer: failing })), []);
      const waitUntil = new Date(p.clock.now().getTime() + 3_600_000).toISOString();
      const kept = await verifyDomain(p.ctx, alice, 'alpha', 'flaky.example.test');
      assert.deepEqual(
        [kept.domain.certificate?.state, kept.domain.certificate?.nextAttemptAt],
        ['failed', waitUntil],
      );
      await assert.rejects(reverifyDomain(p.ctx, alice, 'alpha', 'flaky.example.test'), {
        message: new RegExp(
          `failed \\(rate limited\\)\\. The certificate authority asked to wait: the platform retries at ${waitUntil.replaceAll('.', '\\.')}\\.`,
        ),
      });
    });

    it('shows a closed propagation window as stopped checks, with Verify as the remedy', async () => {
      await addDomain(p.ctx, bob, 'beta', 'never.example.test');
      for (let i = 0; i < 20; i++) {
        await checkDueDomains(p.ctx);
        p.clock.advance(60_000);
      }
      const stopped = await inspectDomain(p.ctx, bob, 'beta', 'never.example.test');
      assert.equal(stopped.history.at(-1)?.action, 'checks_stopped');
      const view = stopped.domain;
      assert.deepEqual(
        [view.nextCheckAt, view.reason, view.status, view.failure?.reason],
        [null, 'checks_stopped', 'failed', 'checks_stopped'],
      );
      assert.doesNotMatch(view.remedy ?? '', /retried automatically/);
      assert.match(view.remedy ?? '', /verify again: it checks at once and restarts the automatic checks/);
      assert.equal(view.failure?.remedy, view.remedy);
      const listed = (await listDomains(p.ctx, bob, 'beta')).find((d) => d.hostname === 'never.example.test');
      assert.equal(listed?.reason, 'checks_stopped');
      // Verify checks again and restarts the background checks.
      const verified = await verifyDomain(p.ctx, bob, 'beta', 'never.example.test');
      assert.equal(verified.domain.reason, 'not_found_yet');
      assert.equal(verified.domain.status, 'unverified');
      assert.notEqual(verified.domain.nextCheckAt, null);
    });

    it("states the project's real count when a YAML file exceeds the plan's limit", async () => {
      const names = Array.from({ length: 10 }, (_, i) => `    - n${i}.example.test`).join('\n');
      const before = (await listDomains(p.ctx, bob, 'beta')).length;
      assert.equal(before, 1);
      await assert.rejects(
        applyDomainConfig(p.ctx, bob, 'beta', `domains:\n  names:\n${names}\n    - never.example.test\n`),
        (error: { code?: string; message: string }) => {
          assert.equal(error.code, 'domain_limit_reached');
          assert.match(
            error.message,
            /^Project beta has 1 domains; this file would bring it to 11, more than the Pro plan allows \(10\)\. Nothing was changed\./,
          );
          return true;
        },
      );
      assert.equal((await listDomains(p.ctx, bob, 'beta')).length, 1);
    });
  });
}

for (const dialect of testDialects()) {
  describe(`migration 0004: certificates go to the domain serving their hostname (${dialect})`, () => {
    it('assigns existing certificates to the serving domain and makes "issued" jobs without one due again', async () => {
      await beforeMigration(dialect, '0004', async (db, migrateRest) => {
        const at = '2026-11-22T12:00:00.000Z';
        await sql`INSERT INTO teams (name, plan, created_at) VALUES ('T', 'pro', ${at})`.execute(db);
        const team = await sql<{ id: number }>`SELECT id FROM teams`.execute(db);
        for (const slug of ['a', 'b']) {
          await sql`INSERT INTO projects (team_id, slug, name, origin_url, created_at) VALUES (${team.rows[0]?.id}, ${slug}, ${slug}, 'http://127.0.0.1:1', ${at})`.execute(
            db,
          );
        }
        const domain = async (project: string, hostname: string, state: string) => {
          await sql`INSERT INTO domains (project_id, hostname, state, is_apex, ownership_token, check_attempts, created_at) SELECT id, ${hostname}, ${state}, ${dialect === 'postgres' ? sql`false` : sql`0`}, 't', 0, ${at} FROM projects WHERE slug = ${project}`.execute(
            db,
          );
          return (
            await sql<{
              id: number;
            }>`SELECT id FROM domains WHERE hostname = ${hostname} AND state = ${state}`.execute(db)
          ).rows[0]?.id as number;
        };
        const served = await domain('a', 'shop.example.test', 'verified');
        await domain('b', 'shop.example.test', 'unverified');
        const lost = await domain('a', 'lost.example.test', 'verified');
        await sql`INSERT INTO certificates (hostname, issuer, certificate_pem, key_sealed, not_before, not_after, created_at) VALUES ('shop.example.test', 'internal', 'pem', 'sealed', ${at}, ${at}, ${at})`.execute(
          db,
        );
        for (const [id, hostname] of [
          [served, 'shop.example.test'],
          [lost, 'lost.example.test'],
        ] as const) {
          await sql`INSERT INTO certificate_jobs (domain_id, hostname, state, attempts, next_attempt_at, updated_at) VALUES (${id}, ${hostname}, 'issued', 0, '2030-01-01T00:00:00.000Z', ${at})`.execute(
            db,
          );
        }
        await migrateRest();
        const certificates = await db.selectFrom('certificates').select(['hostname', 'domain_id']).execute();
        assert.deepEqual(
          certificates.map((c) => [c.hostname, Number(c.domain_id)]),
          [['shop.example.test', served]],
        );
        const jobs = await db
          .selectFrom('certificate_jobs')
          .select(['hostname', 'state', 'next_attempt_at', 'lease_instance'])
          .orderBy('hostname')
          .execute();
        assert.deepEqual(
          jobs.map((j) => ({ ...j })),
          [
            {
              hostname: 'lost.example.test',
              state: 'pending',
              next_attempt_at: '1970-01-01T00:00:00.000Z',
              lease_instance: null,
            },
            {
              hostname: 'shop.example.test',
              state: 'issued',
              next_attempt_at: '2030-01-01T00:00:00.000Z',
              lease_instance: null,
            },
          ],
        );
      });
    });
  });
}
