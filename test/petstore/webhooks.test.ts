import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { RETRY_SCHEDULE, retrySpanMs } from '../../src/lib/webhooks/index.ts';
import { type PetstoreWebhooks, petstoreOutbox, petstoreWebhooksOf } from '../../src/petstore/index.ts';
import { createPetstoreStore } from '../../src/petstore/store/index.ts';
import { transact } from '../../src/storage/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';
import { type WebhookDelivery, WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Petstore webhooks end to end: a real loopback receiver verifies every signature with the
 * standardwebhooks library; the worker is driven pass by pass (`runOnce`) and time through the
 * injected clock, so the retry schedule is walked exactly.
 */

type Delivery = WebhookDelivery;

const sorted = (events: { type: string; data: unknown }[]) =>
  events.map((e) => JSON.stringify({ type: e.type, data: e.data })).sort();

for (const dialect of testDialects()) {
  describe(`Petstore webhooks (${dialect})`, () => {
    let ps: TestPetstore;
    let receiver: WebhookReceiver;
    let worker: PetstoreWebhooks;
    let subscriptionId: number;

    before(async () => {
      ps = await startPetstore(dialect);
      receiver = await new WebhookReceiver(ps.clock).start();
      worker = petstoreWebhooksOf(ps.app) as PetstoreWebhooks;
    });
    after(async () => {
      await receiver.stop();
      await ps.close();
      await ps.storage.drop();
    });

    beforeEach(async () => {
      // Each test has its own subscription (earlier ones removed) and a receiver that answers.
      for (const sub of (await ps.request<{ id: number }[]>('GET', '/webhooks')).body) {
        assert.equal((await ps.request('DELETE', `/webhooks/${sub.id}`)).status, 204);
      }
      await worker.runOnce();
      receiver.received.length = 0;
      receiver.status = 204;
      const created = await ps.request<{ id: number; secret: string; url: string; eventTypes: string[] }>(
        'POST',
        '/webhooks',
        { url: receiver.url, eventTypes: ['*'], description: 'test receiver' },
      );
      assert.equal(created.status, 201);
      assert.equal(created.headers.location, `/webhooks/${created.body.id}`);
      assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      subscriptionId = created.body.id;
      receiver.secret = created.body.secret;
    });

    const deliveries = async (id = subscriptionId) =>
      (await ps.request<Delivery[]>('GET', `/webhooks/${id}/deliveries?limit=100`)).body;

    it('pet, category, order and inventory changes arrive signed, with the resources as payloads', async () => {
      const category = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Dogs' })).body;
      const pet = (
        await ps.request<{ id: number }>('POST', '/pets', { name: 'Rex', categoryId: category.id })
      ).body;
      await ps.request('PUT', `/store/inventory/${pet.id}`, { quantity: 5 });
      const order = (
        await ps.request<{ id: number }>(
          'POST',
          '/store/orders',
          { petId: pet.id, quantity: 2 },
          {
            'idempotency-key': 'order-1',
          },
        )
      ).body;
      await ps.request('POST', `/store/orders/${order.id}/complete`);
      const shipDate = ps.clock.now().toISOString();
      const second = (
        await ps.request<{ id: number }>('POST', '/store/orders', { petId: pet.id, quantity: 3 })
      ).body;
      assert.equal((await ps.request('DELETE', `/store/orders/${second.id}`)).status, 204);
      await ps.request('PUT', `/pets/${pet.id}`, { name: 'Rexy', categoryId: category.id });
      await ps.request('PUT', `/categories/${category.id}`, { name: 'Hounds', description: 'Good dogs' });
      const spare = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Spare' })).body;
      assert.equal((await ps.request('DELETE', `/categories/${spare.id}`)).status, 204);
      const gone = (
        await ps.request<{ id: number }>('POST', '/pets', { name: 'Gone', categoryId: category.id })
      ).body;
      assert.equal((await ps.request('DELETE', `/pets/${gone.id}`)).status, 204);

      const expected = [
        { type: 'category.created', data: { id: category.id, name: 'Dogs' } },
        {
          type: 'pet.created',
          data: { id: pet.id, name: 'Rex', categoryId: category.id, status: 'available' },
        },
        { type: 'inventory.updated', data: { petId: pet.id, quantity: 5, status: 'available' } },
        { type: 'order.placed', data: { id: order.id, petId: pet.id, quantity: 2, complete: false } },
        { type: 'inventory.updated', data: { petId: pet.id, quantity: 3, status: 'available' } },
        {
          type: 'order.completed',
          data: { id: order.id, petId: pet.id, quantity: 2, complete: true, shipDate },
        },
        { type: 'inventory.updated', data: { petId: pet.id, quantity: 3, status: 'available' } },
        { type: 'order.placed', data: { id: second.id, petId: pet.id, quantity: 3, complete: false } },
        { type: 'inventory.updated', data: { petId: pet.id, quantity: 0, status: 'pending' } },
        { type: 'order.cancelled', data: { id: second.id, petId: pet.id, quantity: 3, complete: false } },
        { type: 'inventory.updated', data: { petId: pet.id, quantity: 3, status: 'available' } },
        {
          type: 'pet.updated',
          data: { id: pet.id, name: 'Rexy', categoryId: category.id, status: 'available' },
        },
        { type: 'category.updated', data: { id: category.id, name: 'Hounds', description: 'Good dogs' } },
        { type: 'category.created', data: { id: spare.id, name: 'Spare' } },
        { type: 'category.deleted', data: { id: spare.id, name: 'Spare' } },
        {
          type: 'pet.created',
          data: { id: gone.id, name: 'Gone', categoryId: category.id, status: 'available' },
        },
        {
          type: 'pet.deleted',
          data: { id: gone.id, name: 'Gone', categoryId: category.id, status: 'available' },
        },
      ];
      // The log lists them in the order the changes committed, newest first.
      const log = await deliveries();
      assert.deepEqual(log.map((d) => ({ type: d.payload.type, data: d.payload.data })).reverse(), expected);
      assert.ok(log.every((d) => d.state === 'pending' && d.attempts === 0));

      assert.equal(await worker.runOnce(), expected.length);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(sorted(receiver.received.map((r) => r.body)), sorted(expected));
      const at = ps.clock.now();
      for (const r of receiver.received) {
        assert.equal(r.timestamp, Math.floor(at.getTime() / 1000));
        assert.equal(r.body.timestamp, at.toISOString());
      }
      assert.deepEqual(
        new Set(receiver.received.map((r) => r.id)),
        new Set(log.map((d) => d.id)),
        'webhook-id is the message id of the log',
      );
      const after = await deliveries();
      assert.ok(
        after.every((d) => d.state === 'delivered' && d.attempts === 1 && d.log[0]?.statusCode === 204),
      );
    });

    it('a change that is rolled back or refused emits nothing', async () => {
      const category = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Cats' })).body;
      const pet = (
        await ps.request<{ id: number }>('POST', '/pets', { name: 'Tom', categoryId: category.id })
      ).body;
      const before = (await deliveries()).length;
      // Refused before or after the outbox write: stock too low, unknown category, in use, complete.
      assert.equal((await ps.request('POST', '/store/orders', { petId: pet.id, quantity: 2 })).status, 409);
      assert.equal((await ps.request('POST', '/pets', { name: 'X', categoryId: 999_999 })).status, 422);
      assert.equal((await ps.request('DELETE', `/categories/${category.id}`)).status, 409);
      assert.equal((await ps.request('POST', '/categories', { name: 'cats' })).status, 409);
      // Two orders in one tick share one SQLite group commit: the refused one's savepoint undoes
      // its own events only.
      const [ok, refused] = await Promise.all([
        ps.request<{ id: number }>('POST', '/store/orders', { petId: pet.id, quantity: 1 }),
        ps.request('POST', '/store/orders', { petId: pet.id, quantity: 1 }),
      ]);
      assert.deepEqual([ok.status, refused.status].sort(), [201, 409]);
      // A transaction that fails after the change and its events were written.
      const store = createPetstoreStore(ps.database, ps.clock);
      await assert.rejects(
        transact(ps.database.db, async (trx) => {
          await store.createPet({ name: 'Phantom', categoryId: category.id }, trx);
          throw new Error('forced failure after the outbox write');
        }),
        /forced failure/,
      );
      const log = await deliveries();
      assert.deepEqual(
        log.slice(0, log.length - before).map((d) => d.payload.type),
        ['inventory.updated', 'order.placed'],
      );
      assert.equal((await ps.request<unknown[]>('GET', '/pets?limit=100')).body.length >= 1, true);
      assert.equal(
        (await ps.request<{ name: string }[]>('GET', '/pets?limit=100')).body.some(
          (p) => p.name === 'Phantom',
        ),
        false,
      );
    });

    it('retries with back-off while the receiver is down, then delivers every event', async () => {
      receiver.status = 503;
      for (const name of ['One', 'Two', 'Three'])
        await ps.request('POST', '/categories', { name: `Down ${name}` });
      const start = ps.clock.now().getTime();
      assert.equal(await worker.runOnce(), 3);
      let log = await deliveries();
      for (const d of log) {
        assert.equal(d.state, 'pending');
        assert.equal(d.attempts, 1);
        assert.equal(d.lastStatus, 503);
        assert.equal(d.nextAttemptAt, new Date(start + 5_000).toISOString());
      }
      // Not due yet: nothing is attempted.
      ps.clock.advance(4_999);
      assert.equal(await worker.runOnce(), 0);
      // Closed: the connection is refused.
      await receiver.stop();
      ps.clock.advance(1);
      assert.equal(await worker.runOnce(), 3);
      log = await deliveries();
      for (const d of log) {
        assert.equal(d.attempts, 2);
        assert.equal(d.lastStatus, null);
        // Refused, or the kept-alive connection found closed.
        assert.match(d.lastError ?? '', /ECONNREFUSED|UND_ERR_SOCKET/);
        assert.equal(d.nextAttemptAt, new Date(start + 5_000 + 300_000).toISOString());
      }
      await receiver.start();
      receiver.status = 204;
      ps.clock.advance(300_000);
      assert.equal(await worker.runOnce(), 3);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(receiver.types(), ['category.created', 'category.created', 'category.created']);
      assert.deepEqual(receiver.received.map((r) => (r.body.data as { name: string }).name).sort(), [
        'Down One',
        'Down Three',
        'Down Two',
      ]);
      log = await deliveries();
      assert.ok(log.every((d) => d.state === 'delivered' && d.attempts === 3));
      assert.deepEqual(
        log[0]?.log.map((a) => a.statusCode),
        [503, null, 204],
      );
    });

    it('after retrying for more than 24 hours a message is failed; redelivery sends it again', async () => {
      assert.ok(retrySpanMs() >= 24 * 3_600_000);
      receiver.status = 500;
      await ps.request('POST', '/categories', { name: 'Unlucky' });
      for (const [i, row] of RETRY_SCHEDULE.entries()) {
        ps.clock.advance(row.delayMs);
        assert.equal(await worker.runOnce(), 1, `attempt ${i + 1}`);
      }
      ps.clock.advance(100 * 3_600_000);
      assert.equal(await worker.runOnce(), 0);
      let [message] = await deliveries();
      assert.ok(message);
      assert.equal(message.state, 'failed');
      assert.equal(message.attempts, RETRY_SCHEDULE.length);
      assert.equal(message.nextAttemptAt, null);
      assert.equal(message.log.length, RETRY_SCHEDULE.length);
      assert.equal(receiver.received.length, 0);

      receiver.status = 204;
      const again = await ps.request<Delivery>(
        'POST',
        `/webhooks/${subscriptionId}/deliveries/${message.id}/redeliver`,
      );
      assert.equal(again.status, 202);
      assert.equal(again.body.state, 'pending');
      assert.equal(again.body.attempts, 0);
      assert.equal(await worker.runOnce(), 1);
      assert.deepEqual(receiver.rejected, []);
      assert.deepEqual(
        receiver.received.map((r) => r.id),
        [message.id],
      );
      [message] = await deliveries();
      assert.equal(message?.state, 'delivered');
      assert.equal(message?.log.length, RETRY_SCHEDULE.length + 1);

      // Redelivering a delivered message sends it once more, with the same id.
      await ps.request('POST', `/webhooks/${subscriptionId}/deliveries/${message?.id}/redeliver`);
      assert.equal(await worker.runOnce(), 1);
      assert.deepEqual(
        receiver.received.map((r) => r.id),
        [message?.id, message?.id],
      );
    });

    it('subscriptions: filters, secret shown once, clear errors, admin scope only', async () => {
      const only = await ps.request<{ id: number; secret: string }>('POST', '/webhooks', {
        url: receiver.url,
        eventTypes: ['order.placed', 'pet.*'],
      });
      assert.equal(only.status, 201);
      const view = await ps.request<Record<string, unknown>>('GET', `/webhooks/${only.body.id}`);
      assert.deepEqual(Object.keys(view.body).sort(), ['createdAt', 'eventTypes', 'id', 'url']);
      assert.deepEqual(view.body.eventTypes, ['order.placed', 'pet.*']);
      const category = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Birds' })).body;
      const pet = (
        await ps.request<{ id: number }>('POST', '/pets', { name: 'Tweety', categoryId: category.id })
      ).body;
      await ps.request('POST', '/store/orders', { petId: pet.id, quantity: 1 });
      assert.deepEqual(
        (await deliveries(only.body.id)).map((d) => d.type),
        ['order.placed', 'pet.created'],
      );
      assert.equal((await deliveries()).length, 4, 'the * subscription also got category and inventory');

      const bad = async (body: unknown, status: number, code: string) => {
        const answer = await ps.request<{ code: string }>('POST', '/webhooks', body);
        assert.equal(answer.status, status, JSON.stringify(answer.body));
        assert.equal(answer.body.code, code);
      };
      await bad({ url: 'ftp://example.com/hook', eventTypes: ['*'] }, 422, 'invalid_webhook_url');
      await bad({ url: 'http://example.com/hook', eventTypes: ['*'] }, 422, 'invalid_webhook_url');
      await bad({ url: 'https://u:p@example.com/hook', eventTypes: ['*'] }, 422, 'invalid_webhook_url');
      await bad({ url: 'https://example.com/hook', eventTypes: ['pet.sold'] }, 400, 'validation_failed');
      await bad({ url: 'https://example.com/hook', eventTypes: [] }, 400, 'validation_failed');
      await bad({ url: 'https://example.com/hook' }, 400, 'validation_failed');

      const missing = await ps.request<{ code: string }>('GET', '/webhooks/999999');
      assert.deepEqual([missing.status, missing.body.code], [404, 'webhook_subscription_not_found']);
      const [mine] = await deliveries();
      const foreign = await ps.request<{ code: string }>(
        'POST',
        `/webhooks/${only.body.id}/deliveries/${mine?.id}/redeliver`,
      );
      assert.deepEqual([foreign.status, foreign.body.code], [404, 'delivery_not_found']);
      const unknown = await ps.request<{ code: string }>(
        'POST',
        `/webhooks/${subscriptionId}/deliveries/msg_${'A'.repeat(24)}/redeliver`,
      );
      assert.deepEqual([unknown.status, unknown.body.code], [404, 'delivery_not_found']);

      const store = await ps.request<{ secret: string }>('POST', '/keys', {
        name: 'staff',
        scopes: ['store', 'pets:write'],
      });
      const staff = { authorization: `Bearer ${store.body.secret}` };
      for (const [method, url, body] of [
        ['POST', '/webhooks', { url: receiver.url, eventTypes: ['*'] }],
        ['GET', '/webhooks', undefined],
        ['GET', `/webhooks/${subscriptionId}/deliveries`, undefined],
        ['POST', `/webhooks/${subscriptionId}/deliveries/${mine?.id}/redeliver`, undefined],
        ['DELETE', `/webhooks/${subscriptionId}`, undefined],
      ] as const) {
        const answer = await ps.request<{ code: string }>(method, url, body, staff);
        assert.deepEqual([answer.status, answer.body.code], [403, 'forbidden'], `${method} ${url}`);
      }
    });

    it('a deleted subscription gets nothing new; its undelivered messages fail', async () => {
      receiver.status = 503;
      await ps.request('POST', '/categories', { name: 'Orphan' });
      assert.equal(await worker.runOnce(), 1);
      const outbox = petstoreOutbox(ps.database.db);
      const [pending] = await outbox.list({ endpointKey: `subscription:${subscriptionId}` });
      assert.equal(pending?.state, 'pending');
      assert.equal((await ps.request('DELETE', `/webhooks/${subscriptionId}`)).status, 204);
      await ps.request('POST', '/categories', { name: 'Unheard' });
      ps.clock.advance(5_000);
      assert.equal(await worker.runOnce(), 1);
      const messages = await outbox.list({ endpointKey: `subscription:${subscriptionId}` });
      assert.deepEqual(
        messages.map((m) => [m.state, m.lastError]),
        [['failed', 'the webhook endpoint was removed']],
      );
      const gone = await ps.request<{ code: string }>('GET', `/webhooks/${subscriptionId}/deliveries`);
      assert.deepEqual([gone.status, gone.body.code], [404, 'webhook_subscription_not_found']);
    });
  });
}
