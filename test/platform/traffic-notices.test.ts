import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PlatformContext } from '../../src/platform/context.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { sendDeprecationNotices } from '../../src/platform/traffic/deprecation-notices.ts';
import { startWebhookWorker } from '../../src/platform/webhooks/index.ts';
import { setWebhookEndpoint } from '../../src/platform/webhooks/webhook-endpoints.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { seedTeamProject } from '../support/platform-config.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const ok = (description: string) => ({ responses: { '200': { description } } });
/** Sunsets as of the clock's 2026-11-22T12:00:00Z: in 8.5 days, in 30 days, and none. */
const DOCUMENT = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1.0.0' },
  paths: {
    '/pets/{petId}': { get: { ...ok('a pet'), deprecated: true, 'x-sunset': '2026-12-01T00:00:00Z' } },
    '/toys': { get: { ...ok('toys'), deprecated: true, 'x-deprecated-sunset': '2026-12-22T12:00:00Z' } },
    '/pets': { post: { ...ok('added'), deprecated: true } },
  },
});

for (const dialect of testDialects()) {
  describe(`the daily deprecation.still_called event (${dialect})`, () => {
    let p: TestPlatform;
    let second: Database<PlatformTables>;
    let receiver: WebhookReceiver;
    let worker: ReturnType<typeof startWebhookWorker>;
    let projectId = 0;

    before(async () => {
      p = await startPlatformContext(dialect, { WEBHOOK_TARGETS: 'private' });
      // A second node: its own connection to the same database.
      second = openDatabase<PlatformTables>(p.storage.location);
      const { owner, team, project } = await seedTeamProject(p.ctx, { document: DOCUMENT });
      projectId = project.id;
      receiver = await new WebhookReceiver(p.clock).start();
      receiver.secret = String((await setWebhookEndpoint(p.ctx, owner, team.id, receiver.url)).secret);
      worker = startWebhookWorker(p.ctx, {
        nodeId: 'node-a',
        start: false,
        onError: (error) => {
          throw error;
        },
      });
      const row = (caller: string, operation: string, day: string, requests: number, last: string) => ({
        node_id: 'node-a',
        project_id: projectId,
        caller: caller.padEnd(32, '0'),
        caller_label: caller === 'aa' ? 'key:sk_liv' : '198.51.100.0/24',
        caller_kind: caller === 'aa' ? 'key' : 'address',
        operation,
        day,
        requests,
        errors: 0,
        last_seen_at: last,
      });
      await p.ctx.db
        .insertInto('traffic_callers')
        .values([
          row('aa', 'GET /pets/{petId}', '2026-11-22', 5, '2026-11-22T11:00:00.000Z'),
          row('bb', 'GET /pets/{petId}', '2026-11-20', 2, '2026-11-20T08:00:00.000Z'),
          // Called, but its sunset is 30 days away, or it has none.
          row('aa', 'GET /toys', '2026-11-22', 9, '2026-11-22T11:00:00.000Z'),
          row('aa', 'POST /pets', '2026-11-22', 9, '2026-11-22T11:00:00.000Z'),
        ])
        .execute();
    });
    after(() => closeAll(worker, receiver, second, p));

    it('sends one event a day per operation whose sunset is under 14 days away, however many nodes look', async () => {
      // SQLite has one writer: there the two passes share a connection (PostgreSQL: one each).
      const nodeB: PlatformContext = dialect === 'postgres' ? { ...p.ctx, db: second.db } : p.ctx;
      const sent = await Promise.all([sendDeprecationNotices(p.ctx), sendDeprecationNotices(nodeB)]);
      assert.equal(sent[0] + sent[1], 1);
      assert.equal(await sendDeprecationNotices(p.ctx), 0, 'the same day again sends nothing');
      await worker.runOnce();
      await receiver.waitFor(1);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(receiver.types(), ['deprecation.still_called']);
      assert.deepEqual(receiver.received[0]?.body.data, {
        project: 'shop',
        operation: 'GET /pets/{petId}',
        sunset: '2026-12-01T00:00:00.000Z',
        days: 7,
        requests: 7,
        callerCount: 2,
        callers: [
          { caller: 'key:sk_liv', callerKind: 'key', requests: 5, lastSeenAt: '2026-11-22T11:00:00.000Z' },
          {
            caller: '198.51.100.0/24',
            callerKind: 'address',
            requests: 2,
            lastSeenAt: '2026-11-20T08:00:00.000Z',
          },
        ],
      });
    });

    it('sends it again the next day, and not once the callers stopped or the sunset passed', async () => {
      p.clock.set('2026-11-23T00:30:00Z');
      assert.equal(await sendDeprecationNotices(p.ctx), 1);
      // 2026-11-28: the last 7 days (the 22nd to the 28th) still hold the 22nd's calls.
      p.clock.set('2026-11-28T06:00:00Z');
      assert.equal(await sendDeprecationNotices(p.ctx), 1);
      p.clock.set('2026-11-29T06:00:00Z');
      assert.equal(await sendDeprecationNotices(p.ctx), 0, 'no callers in the last 7 days');
      await p.ctx.db
        .insertInto('traffic_callers')
        .values({
          node_id: 'node-b',
          project_id: projectId,
          caller: 'cc'.padEnd(32, '0'),
          caller_label: 'key:pk_tes',
          caller_kind: 'key',
          operation: 'GET /pets/{petId}',
          day: '2026-12-01',
          requests: 1,
          last_seen_at: '2026-12-01T00:00:00.000Z',
          errors: 0,
        })
        .execute();
      p.clock.set('2026-12-01T06:00:00Z');
      assert.equal(await sendDeprecationNotices(p.ctx), 0, 'the sunset has passed');
      await worker.runOnce();
      await receiver.waitFor(3);
      assert.deepEqual(receiver.types(), Array(3).fill('deprecation.still_called'));
    });
  });
}
