import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

for (const dialect of testDialects()) {
  describe(`concurrent orders (${dialect})`, () => {
    let ps: TestPetstore;
    let base: string;
    before(async () => {
      ps = await startPetstore(dialect);
      base = await ps.listen();
    });
    after(() => ps.close());

    it('200 simultaneous orders of 1 against stock 50: exactly 50 accepted, stock 0', async () => {
      const category = await ps.request<{ id: number }>('POST', '/categories', { name: 'Rush' });
      const pet = await ps.request<{ id: number }>('POST', '/pets', {
        name: 'Popular',
        categoryId: category.body.id,
      });
      const petId = pet.body.id;
      await ps.request('PUT', `/store/inventory/${petId}`, { quantity: 50 });

      const answers = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const response = await fetch(`${base}/store/orders`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${ps.adminKey}` },
            body: JSON.stringify({ petId, quantity: 1 }),
          });
          const text = await response.text();
          ps.contract.check(
            'POST',
            '/store/orders',
            response.status,
            response.headers.get('content-type') ?? undefined,
            text,
          );
          return { status: response.status, body: JSON.parse(text) as { code?: string; id?: number } };
        }),
      );
      const accepted = answers.filter((a) => a.status === 201);
      const refused = answers.filter((a) => a.status === 409);
      assert.equal(accepted.length, 50);
      assert.equal(refused.length, 150);
      assert.ok(refused.every((a) => a.body.code === 'insufficient_stock'));
      assert.equal(new Set(accepted.map((a) => a.body.id)).size, 50);

      assert.deepEqual((await ps.request('GET', `/store/inventory/${petId}`)).body, {
        petId,
        quantity: 0,
        status: 'pending',
      });
      const orders = await ps.request<unknown[]>('GET', `/store/orders?petId=${petId}&limit=100`);
      assert.equal(orders.body.length, 50);
      const row = await ps.database.db
        .selectFrom('inventory')
        .select(['quantity', 'reserved'])
        .where('pet_id', '=', petId)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...row }, { quantity: 0, reserved: 50 });
    });

    it('concurrent completes and cancels of the same orders apply each order once', async () => {
      const category = await ps.request<{ id: number }>('POST', '/categories', { name: 'Race' });
      const pet = await ps.request<{ id: number }>('POST', '/pets', {
        name: 'Contested',
        categoryId: category.body.id,
      });
      const petId = pet.body.id;
      await ps.request('PUT', `/store/inventory/${petId}`, { quantity: 20 });
      const ids: number[] = [];
      for (let i = 0; i < 10; i++) {
        ids.push((await ps.request<{ id: number }>('POST', '/store/orders', { petId, quantity: 2 })).body.id);
      }
      const auth = { authorization: `Bearer ${ps.adminKey}` };
      // Each order gets a complete and a cancel at once: exactly one of them wins.
      const results = await Promise.all(
        ids.flatMap((id) => [
          fetch(`${base}/store/orders/${id}/complete`, { method: 'POST', headers: auth }).then((r) => ({
            id,
            op: 'complete',
            status: r.status,
          })),
          fetch(`${base}/store/orders/${id}`, { method: 'DELETE', headers: auth }).then((r) => ({
            id,
            op: 'cancel',
            status: r.status,
          })),
        ]),
      );
      let cancelled = 0;
      let completed = 0;
      for (const id of ids) {
        const mine = results.filter((r) => r.id === id);
        const won = mine.filter((r) => r.status === 200 || r.status === 204);
        assert.equal(won.length, 1, `order ${id}: ${JSON.stringify(mine)}`);
        if (won[0]?.op === 'cancel') cancelled++;
        else completed++;
      }
      const item = await ps.request<{ quantity: number }>('GET', `/store/inventory/${petId}`);
      assert.equal(item.body.quantity, cancelled * 2);
      const row = await ps.database.db
        .selectFrom('inventory')
        .select(['reserved'])
        .where('pet_id', '=', petId)
        .executeTakeFirstOrThrow();
      assert.equal(row.reserved, 0);
      assert.equal(cancelled + completed, 10);
    });
  });
}
