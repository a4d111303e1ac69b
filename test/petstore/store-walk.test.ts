import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}
interface Order {
  id: number;
  petId: number;
  quantity: number;
  complete: boolean;
  shipDate?: string;
}
interface Item {
  petId: number;
  quantity: number;
  status: string;
}

for (const dialect of testDialects()) {
  describe(`the store, end to end (${dialect})`, () => {
    let ps: TestPetstore;
    before(async () => {
      ps = await startPetstore(dialect);
    });
    after(() => ps.close());

    it('walks a category, a pet, stock, orders, completion and cancellation through the state table', async () => {
      const category = await ps.request<{ id: number }>('POST', '/categories', {
        name: 'Dogs',
        description: 'Loyal',
      });
      assert.equal(category.status, 201);
      assert.equal(category.headers.location, `/categories/${category.body.id}`);

      const pet = await ps.request<Pet>('POST', '/pets', { name: 'Rex', categoryId: category.body.id });
      assert.equal(pet.status, 201);
      assert.equal(pet.headers.location, `/pets/${pet.body.id}`);
      assert.deepEqual(pet.body, {
        id: pet.body.id,
        name: 'Rex',
        categoryId: category.body.id,
        status: 'available',
      });
      const petId = pet.body.id;
      // A new available pet is one animal in stock.
      assert.deepEqual((await ps.request('GET', `/store/inventory/${petId}`)).body, {
        petId,
        quantity: 1,
        status: 'available',
      });

      const stocked = await ps.request<Item>('PUT', `/store/inventory/${petId}`, { quantity: 3 });
      assert.deepEqual(stocked.body, { petId, quantity: 3, status: 'available' });

      const orders: Order[] = [];
      for (const quantity of [1, 2]) {
        const placed = await ps.request<Order>('POST', '/store/orders', { petId, quantity });
        assert.equal(placed.status, 201);
        assert.deepEqual(placed.body, { id: placed.body.id, petId, quantity, complete: false });
        assert.equal(placed.headers.location, `/store/orders/${placed.body.id}`);
        orders.push(placed.body);
      }
      // Stock ran out with orders open: pending.
      assert.deepEqual((await ps.request('GET', `/store/inventory/${petId}`)).body, {
        petId,
        quantity: 0,
        status: 'pending',
      });
      assert.equal((await ps.request<Pet>('GET', `/pets/${petId}`)).body.status, 'pending');

      const refused = await ps.request('POST', '/store/orders', { petId, quantity: 1 });
      assert.equal(refused.status, 409);
      assert.deepEqual(refused.body, {
        code: 'insufficient_stock',
        message: `Pet ${petId} has 0 in stock and the order asks for 1. Order at most 0, or wait for stock.`,
        status: 409,
      });

      // Complete the first order: shipDate is now, still pending (the second order holds units).
      const [first, second] = orders as [Order, Order];
      const completed = await ps.request<Order>('POST', `/store/orders/${first.id}/complete`);
      assert.equal(completed.status, 200);
      assert.deepEqual(completed.body, {
        id: first.id,
        petId,
        quantity: 1,
        complete: true,
        shipDate: ps.clock.now().toISOString(),
      });
      assert.equal((await ps.request<Item>('GET', `/store/inventory/${petId}`)).body.status, 'pending');
      const again = await ps.request('POST', `/store/orders/${first.id}/complete`);
      assert.equal(again.status, 409);
      assert.equal((again.body as { code: string }).code, 'order_already_complete');
      const cancelComplete = await ps.request('DELETE', `/store/orders/${first.id}`);
      assert.equal(cancelComplete.status, 409);

      // Cancel the second: its 2 units return, the pet is available again.
      const cancelled = await ps.request('DELETE', `/store/orders/${second.id}`);
      assert.equal(cancelled.status, 204);
      assert.equal(cancelled.text, '');
      assert.equal((await ps.request('GET', `/store/orders/${second.id}`)).status, 404);
      assert.deepEqual((await ps.request('GET', `/store/inventory/${petId}`)).body, {
        petId,
        quantity: 2,
        status: 'available',
      });

      // Sell the rest and complete it: stock 0, nothing open → sold.
      const last = await ps.request<Order>('POST', '/store/orders', { petId, quantity: 2 });
      await ps.request('POST', `/store/orders/${last.body.id}/complete`);
      assert.deepEqual((await ps.request('GET', `/store/inventory/${petId}`)).body, {
        petId,
        quantity: 0,
        status: 'sold',
      });
      const sold = await ps.request<Pet[]>('GET', '/pets?status=sold');
      assert.deepEqual(
        sold.body.map((p) => p.id),
        [petId],
      );

      // Orders list: the two complete orders, the cancelled one gone.
      const list = await ps.request<Order[]>('GET', `/store/orders?petId=${petId}`);
      assert.deepEqual(
        list.body.map((o) => [o.id, o.complete]),
        [
          [first.id, true],
          [last.body.id, true],
        ],
      );

      // A pet with orders cannot be deleted; its category cannot either while it is used.
      assert.equal(
        ((await ps.request('DELETE', `/pets/${petId}`)).body as { code: string }).code,
        'pet_has_orders',
      );
      assert.equal(
        ((await ps.request('DELETE', `/categories/${category.body.id}`)).body as { code: string }).code,
        'category_in_use',
      );
    });

    it('paginates with a cursor in Link: rel="next" while the body stays a Pets array', async () => {
      const category = await ps.request<{ id: number }>('POST', '/categories', { name: 'Fish' });
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          (await ps.request<Pet>('POST', '/pets', { name: `Fish ${i}`, categoryId: category.body.id })).body
            .id,
        );
      }
      const seen: number[] = [];
      let url: string | undefined = `/pets?categoryId=${category.body.id}&limit=2`;
      let pages = 0;
      while (url) {
        const page: { body: Pet[]; headers: Record<string, unknown> } = await ps.request<Pet[]>('GET', url);
        assert.ok(Array.isArray(page.body));
        assert.ok(page.body.length <= 2);
        seen.push(...page.body.map((p) => p.id));
        const link = page.headers.link as string | undefined;
        url = link ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined;
        pages++;
      }
      assert.deepEqual(seen, ids);
      assert.equal(pages, 3);
      const bad = await ps.request('GET', '/pets?cursor=bm9wZQ');
      assert.equal(bad.status, 400);
      assert.equal((bad.body as { code: string }).code, 'validation_failed');
    });

    it('updates and deletes pets and categories', async () => {
      const cats = await ps.request<{ id: number }>('POST', '/categories', { name: 'Cats' });
      const birds = await ps.request<{ id: number }>('POST', '/categories', { name: 'Birds' });
      const dup = await ps.request('POST', '/categories', { name: ' cats' });
      assert.equal(dup.status, 409);
      assert.equal((dup.body as { code: string }).code, 'category_name_taken');
      const pet = await ps.request<Pet>('POST', '/pets', {
        name: 'Tom',
        categoryId: cats.body.id,
        status: 'sold',
      });
      assert.equal(pet.body.status, 'sold');
      const moved = await ps.request<Pet>('PUT', `/pets/${pet.body.id}`, {
        name: 'Tweety',
        categoryId: birds.body.id,
      });
      assert.deepEqual(moved.body, {
        id: pet.body.id,
        name: 'Tweety',
        categoryId: birds.body.id,
        status: 'sold',
      });
      const conflict = await ps.request('PUT', `/pets/${pet.body.id}`, {
        name: 'Tweety',
        categoryId: birds.body.id,
        status: 'available',
      });
      assert.equal(conflict.status, 409);
      assert.equal((conflict.body as { code: string }).code, 'pet_status_conflict');
      const renamed = await ps.request('PUT', `/categories/${cats.body.id}`, {
        name: 'Felines',
        description: 'Cats',
      });
      assert.deepEqual(renamed.body, { id: cats.body.id, name: 'Felines', description: 'Cats' });
      assert.equal((await ps.request('DELETE', `/categories/${cats.body.id}`)).status, 204);
      assert.equal((await ps.request('GET', `/categories/${cats.body.id}`)).status, 404);
      assert.equal((await ps.request('DELETE', `/pets/${pet.body.id}`)).status, 204);
      assert.equal((await ps.request('GET', `/pets/${pet.body.id}`)).status, 404);
      assert.equal((await ps.request('GET', `/store/inventory/${pet.body.id}`)).status, 404);
    });
  });
}
