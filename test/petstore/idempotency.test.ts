import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { postOverHttp, startPetstore, stockOf, type TestPetstore } from '../support/petstore.ts';

/**
 * Idempotency-Key on POST /store/orders and POST /pets: retries (even 50 at once, over real
 * connections) create once and answer the first answer; another body under the same key is 422;
 * keys expire after the documented 24 hours.
 */
for (const dialect of testDialects()) {
  describe(`Idempotency-Key (${dialect})`, () => {
    let ps: TestPetstore;
    let base: string;
    let categoryId: number;
    before(async () => {
      ps = await startPetstore(dialect);
      base = await ps.listen();
      categoryId = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Retry' })).body.id;
    });
    after(() => ps.close());

    it('50 concurrent retries of one order create exactly one order and one reservation', async () => {
      const pet = await ps.request<{ id: number }>('POST', '/pets', { name: 'Once', categoryId });
      const petId = pet.body.id;
      await ps.request('PUT', `/store/inventory/${petId}`, { quantity: 10 });
      const answers = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const answer = await postOverHttp(
            ps,
            base,
            '/store/orders',
            { petId, quantity: 3 },
            { 'idempotency-key': 'order-7f3a' },
          );
          return {
            status: answer.status,
            body: answer.text,
            location: answer.headers.get('location'),
            replayed: answer.headers.get('idempotent-replayed'),
          };
        }),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(50).fill(201),
      );
      assert.equal(new Set(answers.map((a) => a.body)).size, 1, 'every retry answers the first answer');
      const order = JSON.parse(answers[0]?.body ?? '{}') as { id: number };
      assert.deepEqual(JSON.parse(answers[0]?.body ?? ''), {
        id: order.id,
        petId,
        quantity: 3,
        complete: false,
      });
      assert.ok(answers.every((a) => a.location === `/store/orders/${order.id}`));
      assert.equal(answers.filter((a) => a.replayed === null).length, 1, 'one first answer');
      assert.equal(answers.filter((a) => a.replayed === 'true').length, 49);
      const orders = await ps.database.db
        .selectFrom('orders')
        .selectAll()
        .where('pet_id', '=', petId)
        .execute();
      assert.equal(orders.length, 1);
      const stock = await stockOf(ps.database.db, petId);
      assert.deepEqual({ ...stock }, { quantity: 7, reserved: 3 });
    });

    it('keyed orders among a rush of group-committed ones: each key places one order, every order takes its units once', async () => {
      const pet = await ps.request<{ id: number }>('POST', '/pets', { name: 'Busy', categoryId });
      const petId = pet.body.id;
      await ps.request('PUT', `/store/inventory/${petId}`, { quantity: 100 });
      const order = async (quantity: number, key?: string) => {
        const response = await fetch(`${base}/store/orders`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${ps.adminKey}`,
            ...(key ? { 'idempotency-key': key } : {}),
          },
          body: JSON.stringify({ petId, quantity }),
        });
        return { status: response.status, id: ((await response.json()) as { id: number }).id, key };
      };
      // 30 orders without a key (they share transactions) interleaved with 10 retries of each of two keys.
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          i % 5 === 1 ? order(2, 'rush-a') : i % 5 === 3 ? order(3, 'rush-b') : order(1),
        ),
      );
      assert.ok(
        answers.every((a) => a.status === 201),
        JSON.stringify(answers.map((a) => a.status)),
      );
      const idsOf = (key?: string) => new Set(answers.filter((a) => a.key === key).map((a) => a.id));
      assert.equal(idsOf('rush-a').size, 1, 'every retry of key a answers one order');
      assert.equal(idsOf('rush-b').size, 1, 'every retry of key b answers one order');
      assert.equal(idsOf(undefined).size, 30);
      const orders = await ps.database.db
        .selectFrom('orders')
        .select(['id', 'quantity'])
        .where('pet_id', '=', petId)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        new Set(orders.map((o) => o.id)),
        new Set([...idsOf('rush-a'), ...idsOf('rush-b'), ...idsOf(undefined)]),
      );
      assert.equal(orders.length, 32);
      const stock = await stockOf(ps.database.db, petId);
      assert.deepEqual({ ...stock }, { quantity: 100 - 30 - 2 - 3, reserved: 35 });
    });

    it('refuses the same key with another body (422) and forgets keys after 24 hours', async () => {
      const headers = { 'idempotency-key': 'pet-1' };
      const first = await ps.request<{ id: number }>('POST', '/pets', { name: 'Twin', categoryId }, headers);
      assert.equal(first.status, 201);
      const retry = await ps.request<{ id: number }>('POST', '/pets', { name: 'Twin', categoryId }, headers);
      assert.equal(retry.status, 201);
      assert.deepEqual(retry.body, first.body);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      const other = await ps.request('POST', '/pets', { name: 'Other', categoryId }, headers);
      assert.equal(other.status, 422);
      assert.deepEqual(other.body, {
        code: 'idempotency_key_reused',
        message:
          'Idempotency-Key "pet-1" was already used with a different body. Use a new key for a new request, or resend the first body unchanged.',
        status: 422,
      });
      // Another API key has its own keys.
      const created = await ps.request<{ secret: string }>('POST', '/keys', {
        name: 'w',
        scopes: ['pets:write'],
      });
      const mine = await ps.request<{ id: number }>(
        'POST',
        '/pets',
        { name: 'Other', categoryId },
        {
          ...headers,
          authorization: `Bearer ${created.body.secret}`,
        },
      );
      assert.equal(mine.status, 201);
      assert.notEqual(mine.body.id, first.body.id);
      ps.clock.advance(24 * 3_600_000 - 1000);
      assert.equal((await ps.request('POST', '/pets', { name: 'Other', categoryId }, headers)).status, 422);
      ps.clock.advance(1000);
      const fresh = await ps.request<{ id: number }>('POST', '/pets', { name: 'Other', categoryId }, headers);
      assert.equal(fresh.status, 201);
      assert.equal(fresh.headers['idempotent-replayed'], undefined);
      assert.ok(fresh.body.id > first.body.id);
    });

    it('remembers only successes: after a refused order the same key can succeed', async () => {
      const pet = await ps.request<{ id: number }>('POST', '/pets', { name: 'Scarce', categoryId });
      const headers = { 'idempotency-key': 'order-scarce' };
      const order = { petId: pet.body.id, quantity: 2 };
      assert.equal((await ps.request('POST', '/store/orders', order, headers)).status, 409);
      await ps.request('PUT', `/store/inventory/${pet.body.id}`, { quantity: 2 });
      assert.equal((await ps.request('POST', '/store/orders', order, headers)).status, 201);
      const bad = await ps.request('POST', '/store/orders', order, { 'idempotency-key': 'x'.repeat(256) });
      assert.equal(bad.status, 400);
      assert.equal((bad.body as { code: string }).code, 'validation_failed');
    });
  });
}
