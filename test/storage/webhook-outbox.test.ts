import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { ManualClock } from '../../src/lib/clock.ts';
import {
  createDeliverer,
  type Deliverer,
  generateSigningSecret,
  retrySpanMs,
} from '../../src/lib/webhooks/index.ts';
import {
  createOutboxTables,
  type Database,
  migrateToLatest,
  openDatabase,
  transact,
  WebhookOutbox,
  WebhookWorker,
} from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const TABLES = { messages: 'demo_webhook_messages', attempts: 'demo_webhook_attempts' };

for (const dialect of testDialects()) {
  describe(`webhook outbox contract (${dialect})`, () => {
    let storage: TestStorage;
    // biome-ignore lint/suspicious/noExplicitAny: a schema of its own, known only by table name
    let database: Database<any>;
    let db: Kysely<Record<string, { id: number; note: string }>>;
    let outbox: WebhookOutbox;
    let clock: ManualClock;
    let receiver: WebhookReceiver;
    let deliverer: Deliverer;
    let endpoint: { url: string; secret: string } | null;
    const worker = (nodeId = 'node-a', pollMs = 60_000) =>
      new WebhookWorker({
        outbox,
        deliverer,
        clock,
        nodeId,
        pollMs,
        resolveEndpoint: async () => endpoint,
        onError: (error) => {
          throw error;
        },
      });

    before(async () => {
      storage = await createTestStorage(dialect);
      database = openDatabase(storage.location);
      await migrateToLatest(database.db, database.dialect, 'demo', {
        '0001_demo': {
          async up(conn, d) {
            await conn.schema
              .createTable('notes')
              .addColumn('id', 'integer', (c) => c.primaryKey())
              .addColumn('note', 'text')
              .execute();
            await createOutboxTables(conn, d, TABLES);
          },
        },
      });
      db = database.db;
      outbox = new WebhookOutbox(database.db, { tables: TABLES, leaseMs: 30_000 });
      clock = new ManualClock(new Date());
      receiver = await new WebhookReceiver(clock).start();
      receiver.secret = generateSigningSecret();
      endpoint = { url: receiver.url, secret: receiver.secret };
      deliverer = createDeliverer({ timeoutMs: 2_000, policy: { allowPrivate: true } });
    });
    after(async () => {
      await deliverer?.close();
      await receiver?.stop();
      await database?.close();
      await storage?.drop();
    });

    it('enqueues with the change it describes, and a rolled-back change enqueues nothing', async () => {
      await assert.rejects(
        transact(db, async (trx) => {
          await trx.insertInto('notes').values({ id: 1, note: 'x' }).execute();
          await outbox.enqueue(
            trx,
            { endpointKey: 'e1', type: 'note.created', data: { id: 1 } },
            clock.now(),
          );
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.deepEqual(await outbox.list({ endpointKey: 'e1' }), []);
      const message = await transact(db, async (trx) => {
        await trx.insertInto('notes').values({ id: 1, note: 'x' }).execute();
        return outbox.enqueue(
          trx,
          { endpointKey: 'e1', subject: 'note:1', type: 'note.created', data: { id: 1 } },
          clock.now(),
        );
      });
      assert.match(message.id, /^msg_[\w-]{24}$/);
      assert.deepEqual(await outbox.list({ endpointKey: 'e1' }), [message]);
      assert.deepEqual(JSON.parse(message.body), {
        type: 'note.created',
        timestamp: clock.now().toISOString(),
        data: { id: 1 },
      });
      assert.equal(await worker().runOnce(), 1);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(
        receiver.received.map((r) => [r.id, r.type, r.body.data]),
        [[message.id, 'note.created', { id: 1 }]],
      );
      const delivered = await outbox.get(message.id);
      assert.deepEqual([delivered?.state, delivered?.attempts, delivered?.lastStatus], ['delivered', 1, 204]);
      const log = await outbox.attemptsOf([message.id]);
      assert.deepEqual(
        log.map((a) => [a.attempt, a.statusCode, a.ok, a.error]),
        [[1, 204, true, null]],
      );
    });

    it('leases each due message to one node at a time; an expired lease is taken over', async () => {
      const ids = await transact(db, async (trx) => {
        const out: string[] = [];
        for (let i = 0; i < 6; i++) {
          out.push(
            (await outbox.enqueue(trx, { endpointKey: 'e2', type: 'note.created', data: { i } }, clock.now()))
              .id,
          );
        }
        return out;
      });
      const [a, b] = await Promise.all([
        outbox.claimDue('node-a', clock.now()),
        outbox.claimDue('node-b', clock.now()),
      ]);
      const claimed = [...a, ...b].map((m) => m.id).sort();
      assert.deepEqual(claimed, [...ids].sort(), 'every message claimed exactly once');
      assert.deepEqual(await outbox.claimDue('node-c', clock.now()), [], 'nothing while leases are live');
      const fail = { ok: false, statusCode: 500, durationMs: 3, error: 'HTTP 500' };
      const first = a[0] ?? b[0];
      assert.ok(first);
      const holder = a.includes(first) ? 'node-a' : 'node-b';
      assert.equal(
        await outbox.recordAttempt(first.id, 'node-c', fail, clock.now()),
        undefined,
        'only the holder records',
      );
      clock.advance(30_001);
      const retaken = await outbox.claimDue('node-c', clock.now());
      assert.equal(retaken.length, 6, 'a dead node’s leases run out');
      assert.equal(
        await outbox.recordAttempt(first.id, holder, fail, clock.now()),
        undefined,
        'the old holder lost it',
      );
      await worker('node-c').runOnce(); // node-c holds them and may attempt now (lease still live)
      clock.advance(30_001);
      assert.equal(await worker('node-c').runOnce(), 6);
      assert.equal(receiver.received.filter((r) => r.type === 'note.created').length, 7);
    });

    it('retries with back-off while the receiver is down, then delivers once it is up', async () => {
      const message = await transact(db, (trx) =>
        outbox.enqueue(trx, { endpointKey: 'e3', type: 'note.updated', data: { id: 1 } }, clock.now()),
      );
      await receiver.stop();
      const w = worker();
      const started = clock.now().getTime();
      await w.runOnce();
      let state = await outbox.get(message.id);
      assert.deepEqual(
        [state?.state, state?.attempts, state?.nextAttemptAt],
        ['pending', 1, new Date(started + 5_000).toISOString()],
      );
      assert.match(String(state?.lastError), /^(ECONNREFUSED|UND_ERR_SOCKET: other side closed)/);
      clock.advance(4_999);
      assert.equal(await w.runOnce(), 0, 'not before it is due');
      clock.advance(1);
      assert.equal(await w.runOnce(), 1);
      state = await outbox.get(message.id);
      assert.equal(state?.nextAttemptAt, new Date(clock.now().getTime() + 300_000).toISOString());
      await receiver.start();
      receiver.status = 503;
      clock.advance(300_000);
      await w.runOnce();
      state = await outbox.get(message.id);
      assert.deepEqual([state?.attempts, state?.lastStatus, state?.lastError], [3, 503, 'HTTP 503']);
      assert.equal(state?.nextAttemptAt, new Date(clock.now().getTime() + 1_800_000).toISOString());
      receiver.status = 204;
      clock.advance(1_800_000);
      await w.runOnce();
      state = await outbox.get(message.id);
      assert.deepEqual([state?.state, state?.attempts, state?.nextAttemptAt], ['delivered', 4, null]);
      assert.deepEqual(
        (await outbox.attemptsOf([message.id])).map((a) => [a.attempt, a.ok, a.statusCode]),
        [
          [1, false, null],
          [2, false, null],
          [3, false, 503],
          [4, true, 204],
        ],
      );
      assert.equal(receiver.received.filter((r) => r.id === message.id).length, 1, 'delivered once');
      assert.deepEqual(receiver.rejected, []);
    });

    it('fails a message once the schedule is exhausted; manual redelivery sends it again', async () => {
      const message = await transact(db, (trx) =>
        outbox.enqueue(trx, { endpointKey: 'e4', type: 'note.deleted', data: { id: 1 } }, clock.now()),
      );
      receiver.status = 500;
      const w = worker();
      const start = clock.now().getTime();
      for (let attempt = 1; attempt <= 8; attempt++) {
        assert.equal(await w.runOnce(), 1, `attempt ${attempt}`);
        const state = await outbox.get(message.id);
        if (state?.nextAttemptAt) clock.set(state.nextAttemptAt);
      }
      const failed = await outbox.get(message.id);
      assert.deepEqual([failed?.state, failed?.attempts, failed?.nextAttemptAt], ['failed', 8, null]);
      assert.equal(
        clock.now().getTime() - start,
        retrySpanMs(),
        'the last attempt came 27 h 35 min 5 s after the first',
      );
      clock.advance(86_400_000);
      assert.equal(await w.runOnce(), 0, 'a failed message is not attempted again by itself');
      receiver.status = 204;
      const again = await outbox.redeliver(message.id, clock.now());
      assert.deepEqual([again?.state, again?.attempts], ['pending', 0]);
      assert.equal(await outbox.redeliver('msg_nope', clock.now()), undefined);
      assert.equal(await w.runOnce(), 1);
      assert.equal((await outbox.get(message.id))?.state, 'delivered');
      assert.equal((await outbox.attemptsOf([message.id])).length, 9, 'the log keeps every attempt');
    });

    it('fails at once when the endpoint is gone', async () => {
      endpoint = null;
      const message = await transact(db, (trx) =>
        outbox.enqueue(trx, { endpointKey: 'e5', type: 'note.created', data: {} }, clock.now()),
      );
      await worker().runOnce();
      const state = await outbox.get(message.id);
      assert.deepEqual([state?.state, state?.lastError], ['failed', 'the webhook endpoint was removed']);
      endpoint = { url: receiver.url, secret: receiver.secret };
    });

    it('the running worker delivers promptly when woken after an enqueue, and stops cleanly', async () => {
      const w = worker('node-a', 600_000);
      w.start();
      await new Promise((done) => setTimeout(done, 50)); // let it reach its long sleep
      const count = receiver.received.length;
      const message = await transact(db, (trx) =>
        outbox.enqueue(trx, { endpointKey: 'e6', type: 'note.created', data: { id: 6 } }, clock.now()),
      );
      const t0 = performance.now();
      w.wake();
      await receiver.waitFor(count + 1);
      assert.ok(performance.now() - t0 < 5_000);
      await w.stop();
      assert.equal(receiver.received.at(-1)?.id, message.id);
      assert.deepEqual(receiver.rejected, []);
    });

    it('a message committed just before a crash is delivered by the next process', async () => {
      const message = await transact(db, (trx) =>
        outbox.enqueue(trx, { endpointKey: 'e7', type: 'note.created', data: { id: 7 } }, clock.now()),
      );
      // Another node had claimed it and died mid-attempt: its lease must run out first.
      assert.equal((await outbox.claimDue('dead-node', clock.now())).length, 1);
      await database.close();
      database = openDatabase(storage.location);
      db = database.db;
      outbox = new WebhookOutbox(database.db, { tables: TABLES, leaseMs: 30_000 });
      assert.equal(await worker('node-new').runOnce(), 0, 'leased by the dead node');
      clock.advance(30_001);
      assert.equal(await worker('node-new').runOnce(), 1);
      assert.equal((await outbox.get(message.id))?.state, 'delivered');
      assert.equal(receiver.received.at(-1)?.id, message.id);
    });
  });
}
