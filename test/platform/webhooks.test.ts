import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import {
  type CertificateStore,
  databaseChallenges,
} from '../../src/platform/certificates/certificate-store.ts';
import { type CertificateRequest, type Issuer, IssuerError } from '../../src/platform/certificates/issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { checkDueDomains } from '../../src/platform/domains/check-due-domains.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { emitEvent, startWebhookWorker } from '../../src/platform/webhooks/index.ts';
import { transact } from '../../src/storage/index.ts';
import { bearerClient as client } from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { internalCertificates } from '../support/platform-certificates.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';
import { type WebhookDelivery, WebhookReceiver } from '../support/webhook-receiver.ts';

/** The internal CA, failing while `failing` is set. */
class SwitchableIssuer implements Issuer {
  readonly name = 'internal';
  readonly inner: Issuer;
  failing = false;
  constructor(inner: Issuer) {
    this.inner = inner;
  }
  async issue(request: CertificateRequest) {
    if (this.failing) throw new IssuerError('the CA is down', { retryable: true });
    return this.inner.issue(request, databaseChallenges as never);
  }
}

for (const dialect of testDialects()) {
  describe(`team webhooks: domain and certificate events, signed and retried (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let app: FastifyInstance;
    let receiver: WebhookReceiver;
    let worker: ReturnType<typeof startWebhookWorker>;
    let ownerActor: Actor;
    let teamId: number;
    let owner: ReturnType<typeof client>;
    let member: ReturnType<typeof client>;
    let outsider: ReturnType<typeof client>;
    let store: CertificateStore;
    let issuer: SwitchableIssuer;
    let wakes = 0;
    const certificateDeps = () => ({
      issuer,
      store,
      challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
      nodeId: 'node-a',
      leaseMs: 60_000,
    });
    const hook = () => `/api/v1/teams/${teamId}/webhook`;
    const deliveries = async () => (await owner('GET', `${hook()}/deliveries`)).body as unknown as Delivery[];
    type Delivery = WebhookDelivery;

    before(async () => {
      dns = await startZones(petstoreZones(['shop', 'api']));
      p = await startPlatformContext(dialect, { ...dnsEnv(dns), WEBHOOK_TARGETS: 'private' });
      app = buildPlatformApp(p.ctx);
      await app.ready();
      const seeded = await seedTeam(p.ctx);
      ownerActor = seeded.owner;
      teamId = seeded.team.id;
      const memberActor = await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await addMember(p.ctx, ownerActor, teamId, 'member@x.test', 'member');
      const outsiderActor = await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider pw 1' });
      await createTeam(p.ctx, outsiderActor, 'Elsewhere');
      owner = client(app, (await createToken(p.ctx, ownerActor, 't')).token);
      member = client(app, (await createToken(p.ctx, memberActor, 't')).token);
      outsider = client(app, (await createToken(p.ctx, outsiderActor, 't')).token);
      await seedProject(p.ctx, ownerActor, {
        teamId,
        slug: 'petstore',
        name: 'P',
        originUrl: 'http://127.0.0.1:1',
        title: 'T',
      });
      const internal = await internalCertificates(p);
      store = internal.store;
      issuer = new SwitchableIssuer(internal.issuer);
      receiver = await new WebhookReceiver(p.clock).start();
      worker = startWebhookWorker(p.ctx, {
        nodeId: 'node-a',
        start: false,
        onError: (error) => {
          throw error;
        },
      });
      p.webhookWake.listener = () => {
        wakes++;
      };
    });
    after(() => closeAll(worker, receiver, app, p, dns));

    it('team owners set the endpoint; the secret is shown once and sealed at rest; members and other teams are kept out', async () => {
      const bad = await owner('PUT', hook(), { url: 'ftp://hooks.example.test/x' });
      assert.deepEqual([bad.status, bad.body.code], [422, 'invalid_webhook_url']);
      assert.match(String(bad.body.message), /must use https:\/\//);
      assert.deepEqual((await owner('GET', hook())).body.code, 'webhook_not_found');
      const created = await owner('PUT', hook(), { url: receiver.url });
      assert.equal(created.status, 201);
      const secret = String(created.body.secret);
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      receiver.secret = secret;
      const endpoint = created.body.endpoint as Record<string, unknown>;
      assert.deepEqual([endpoint.url, endpoint.secretHint], [receiver.url, `…${secret.slice(-4)}`]);
      const row = await p.ctx.db.selectFrom('webhook_endpoints').selectAll().executeTakeFirstOrThrow();
      assert.match(row.secret_sealed, /^v1:t1:/);
      assert.ok(!row.secret_sealed.includes(secret.slice(6)));
      const read = await owner('GET', hook());
      assert.equal(read.status, 200);
      assert.ok(!read.text.includes(secret), 'never shown again');
      const changed = await owner('PUT', hook(), { url: `${receiver.url}?v=2` });
      assert.deepEqual([changed.status, changed.body.secret], [200, null]);
      await owner('PUT', hook(), { url: receiver.url });

      const memberAnswers = await Promise.all([
        member('GET', hook()),
        member('PUT', hook(), { url: 'https://member.example.test/' }),
        member('DELETE', hook()),
        member('POST', `${hook()}/secret`),
        member('POST', `${hook()}/test`),
        member('GET', `${hook()}/deliveries`),
      ]);
      assert.deepEqual(
        memberAnswers.map((a) => [a.status, a.body.code]),
        Array(6).fill([403, 'forbidden']),
      );
      const outsiderAnswers = await Promise.all([
        outsider('GET', hook()),
        outsider('PUT', hook(), { url: 'https://evil.example.test/' }),
        outsider('DELETE', hook()),
        outsider('GET', `${hook()}/deliveries`),
      ]);
      assert.deepEqual(
        outsiderAnswers.map((a) => [a.status, a.body.code]),
        Array(4).fill([404, 'team_not_found']),
      );
      assert.ok(outsiderAnswers.every((a) => !a.text.includes(receiver.url)));
      assert.equal((await owner('GET', hook())).body.url, receiver.url, 'unchanged by them');
    });

    it('sends a test event on request, signed so that Webhook.verify accepts it', async () => {
      const before = wakes;
      const sent = await owner('POST', `${hook()}/test`);
      assert.deepEqual([sent.status, sent.body.type, sent.body.state], [202, 'webhook.test', 'pending']);
      assert.equal(wakes, before + 1, 'the worker is woken');
      assert.equal(await worker.runOnce(), 1);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(
        receiver.received.map((r) => [r.id, r.type, r.body.data]),
        [[sent.body.id, 'webhook.test', { team: { id: teamId, name: 'Shop' }, requestedBy: 'owner@x.test' }]],
      );
      assert.equal(receiver.received[0]?.timestamp, Math.floor(p.clock.now().getTime() / 1000));
    });

    it('domain verified against NSD → domain.verified, in the domain history as delivered', async () => {
      await addDomain(p.ctx, ownerActor, 'petstore', 'shop.example.test');
      const before = wakes;
      await verifyDomain(p.ctx, ownerActor, 'petstore', 'shop.example.test');
      assert.equal(wakes, before + 1);
      await worker.runOnce();
      const last = receiver.received.at(-1);
      assert.equal(last?.type, 'domain.verified');
      assert.deepEqual(last?.body.data, {
        hostname: 'shop.example.test',
        project: 'petstore',
        state: 'verified',
        previousState: 'unverified',
        reason: null,
        message: last?.body.data.message,
      });
      const detail = await owner('GET', '/api/v1/projects/petstore/domains/shop.example.test');
      const history = detail.body.history as { action: string; webhook: Record<string, unknown> | null }[];
      assert.deepEqual(
        history.map((h) => [h.action, h.webhook?.type ?? null, h.webhook?.state ?? null]),
        [
          ['add', null, null],
          ['verify', 'domain.verified', 'delivered'],
        ],
      );
      assert.equal(history[1]?.webhook?.id, last?.id);
    });

    it('certificate issued → certificate.issued; renewal → certificate.renewed; failure → certificate.failed once', async () => {
      assert.deepEqual(await obtainDueCertificates(p.ctx, certificateDeps()), ['shop.example.test']);
      await worker.runOnce();
      const issued = receiver.received.at(-1);
      const stored = await store.load('shop.example.test');
      assert.ok(stored);
      assert.deepEqual(issued?.body, {
        type: 'certificate.issued',
        timestamp: p.clock.now().toISOString(),
        data: {
          hostname: 'shop.example.test',
          project: 'petstore',
          issuer: 'internal',
          notBefore: stored.notBefore.toISOString(),
          notAfter: stored.notAfter.toISOString(),
        },
      });
      const lifetime = stored.notAfter.getTime() - stored.notBefore.getTime();
      p.clock.set(stored.notAfter.getTime() - lifetime / 3 + 1_000);
      await p.ctx.db.updateTable('domains').set({ next_check_at: null }).execute(); // keep DNS re-checks out of it
      assert.deepEqual(await obtainDueCertificates(p.ctx, certificateDeps()), ['shop.example.test']);
      await worker.runOnce();
      const renewed = receiver.received.at(-1);
      assert.equal(renewed?.type, 'certificate.renewed');
      assert.equal(renewed?.body.data.previousNotAfter, stored.notAfter.toISOString());

      await addDomain(p.ctx, ownerActor, 'petstore', 'api.example.test');
      await verifyDomain(p.ctx, ownerActor, 'petstore', 'api.example.test');
      issuer.failing = true;
      await obtainDueCertificates(p.ctx, certificateDeps());
      p.clock.advance(60_000);
      await obtainDueCertificates(p.ctx, certificateDeps()); // the retry fails too: no second event
      await worker.runOnce();
      const types = receiver.types();
      assert.deepEqual(
        types.slice(-2).sort(),
        ['certificate.failed', 'domain.verified'],
        'webhooks carry no order',
      );
      assert.equal(types.filter((t) => t === 'certificate.failed').length, 1);
      const failure = receiver.received.find((r) => r.type === 'certificate.failed');
      assert.deepEqual(failure?.body.data, {
        hostname: 'api.example.test',
        project: 'petstore',
        reason: 'the CA is down',
        nextAttemptAt: new Date(Date.parse(failure?.body.timestamp ?? '') + 30_000).toISOString(),
      });
      issuer.failing = false;
      const detail = await owner('GET', '/api/v1/projects/petstore/domains/shop.example.test');
      const history = detail.body.history as {
        action: string;
        webhook: { type: string; state: string } | null;
      }[];
      assert.deepEqual(
        history.slice(-2).map((h) => [h.action, h.webhook?.type, h.webhook?.state]),
        [
          ['certificate_issued', 'certificate.issued', 'delivered'],
          ['certificate_renewed', 'certificate.renewed', 'delivered'],
        ],
      );
      assert.deepEqual(receiver.rejected, []);
    });

    it('a re-check that finds the CNAME gone → domain.not_pointing', async () => {
      await dns.setRecords('example.test', [{ name: 'api', type: 'CNAME', value: 'petstore.platform.test' }]);
      await p.ctx.db
        .updateTable('domains')
        .set({ next_check_at: p.clock.now().toISOString() })
        .where('hostname', '=', 'shop.example.test')
        .execute();
      await p.ctx.db
        .updateTable('domains')
        .set({ next_check_at: null })
        .where('hostname', '=', 'api.example.test')
        .execute();
      assert.equal(await checkDueDomains(p.ctx), 1);
      await worker.runOnce();
      const last = receiver.received.at(-1);
      assert.equal(last?.type, 'domain.not_pointing');
      assert.deepEqual(
        [
          last?.body.data.hostname,
          last?.body.data.state,
          last?.body.data.previousState,
          last?.body.data.reason,
        ],
        ['shop.example.test', 'misconfigured', 'verified', 'not_found_yet'],
      );
    });

    it('retries with back-off while the receiver is down and delivers once it is up', async () => {
      await receiver.stop();
      const sent = await owner('POST', `${hook()}/test`);
      await worker.runOnce();
      let [message] = await deliveries();
      assert.deepEqual([message?.id, message?.state, message?.attempts], [sent.body.id, 'pending', 1]);
      assert.equal(message?.nextAttemptAt, new Date(p.clock.now().getTime() + 5_000).toISOString());
      p.clock.advance(5_000);
      await worker.runOnce();
      [message] = await deliveries();
      assert.equal(message?.nextAttemptAt, new Date(p.clock.now().getTime() + 300_000).toISOString());
      await receiver.start();
      p.clock.advance(299_999);
      assert.equal(await worker.runOnce(), 0, 'not before it is due');
      p.clock.advance(1);
      assert.equal(await worker.runOnce(), 1);
      [message] = await deliveries();
      assert.equal(message?.state, 'delivered');
      assert.deepEqual(
        message?.log.map((a) => [a.attempt, a.ok, a.statusCode]),
        [
          [1, false, null],
          [2, false, null],
          [3, true, 204],
        ],
      );
      assert.equal(receiver.received.filter((r) => r.id === sent.body.id).length, 1);
    });

    it('marks a message failed after the schedule, and redelivers it on request', async () => {
      receiver.status = 500;
      const sent = await owner('POST', `${hook()}/test`);
      const start = p.clock.now().getTime();
      for (let i = 0; i < 8; i++) {
        assert.equal(await worker.runOnce(), 1);
        const [message] = await deliveries();
        if (message?.nextAttemptAt) p.clock.set(message.nextAttemptAt);
      }
      const [failed] = await deliveries();
      assert.deepEqual([failed?.id, failed?.state, failed?.attempts], [sent.body.id, 'failed', 8]);
      assert.ok(p.clock.now().getTime() - start >= 24 * 3_600_000);
      assert.deepEqual(
        failed?.log.map((a) => a.statusCode),
        Array(8).fill(500),
      );
      receiver.status = 204;
      const missing = await owner('POST', `${hook()}/deliveries/msg_nope/redeliver`);
      assert.deepEqual([missing.status, missing.body.code], [404, 'delivery_not_found']);
      const outsiderTry = await outsider('POST', `${hook()}/deliveries/${sent.body.id}/redeliver`);
      assert.equal(outsiderTry.status, 404);
      const again = await owner('POST', `${hook()}/deliveries/${sent.body.id}/redeliver`);
      assert.deepEqual([again.status, again.body.state, again.body.attempts], [202, 'pending', 0]);
      await worker.runOnce();
      const [delivered] = await deliveries();
      assert.deepEqual([delivered?.state, delivered?.log.length], ['delivered', 9]);
      assert.deepEqual(receiver.rejected, []);
    });

    it('a rolled-back change enqueues nothing', async () => {
      const count = async () =>
        (
          await p.ctx.db
            .selectFrom('webhook_messages')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n;
      const before = Number(await count());
      await assert.rejects(
        transact(p.ctx.db, async (trx) => {
          await trx
            .updateTable('domains')
            .set({ state: 'misconfigured' })
            .where('hostname', '=', 'api.example.test')
            .execute();
          await emitEvent(trx, p.clock.now(), {
            teamId,
            type: 'domain.not_pointing',
            subject: null,
            data: { hostname: 'api.example.test' },
          });
          throw new Error('aborted');
        }),
        /aborted/,
      );
      assert.equal(Number(await count()), before);
      const state = await p.ctx.db
        .selectFrom('domains')
        .select('state')
        .where('hostname', '=', 'api.example.test')
        .where('state', '<>', 'removed')
        .executeTakeFirstOrThrow();
      assert.equal(state.state, 'verified');
    });

    it('removing the endpoint stops events; undelivered messages fail', async () => {
      await receiver.stop();
      await owner('POST', `${hook()}/test`);
      const removed = await owner('DELETE', hook());
      assert.equal(removed.status, 204);
      await worker.runOnce();
      const [message] = await deliveries();
      assert.deepEqual(
        [message?.state, message?.log.at(-1)?.error],
        ['failed', 'the webhook endpoint was removed'],
      );
      const none = await owner('POST', `${hook()}/test`);
      assert.deepEqual([none.status, none.body.code], [404, 'webhook_not_found']);
      await receiver.start();
    });
  });
}
