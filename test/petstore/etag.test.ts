import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { INTERFACE_VERSION, type PetstoreTables, petstoreMigrations } from '../../src/petstore/index.ts';
import { migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

const tag = (kind: string, id: number, version: number) => `"${kind}-${id}-v${version}@${INTERFACE_VERSION}"`;

/**
 * ETags from row versions (issue 14): a tag changes exactly when its row changes (every change,
 * even one that restores an earlier representation), If-None-Match answers 304 while it holds,
 * and If-Match makes a stale change fail with 412 instead of overwriting.
 */
for (const dialect of testDialects()) {
  describe(`ETag, If-None-Match and If-Match (${dialect})`, () => {
    let ps: TestPetstore;
    let categoryId: number;
    before(async () => {
      ps = await startPetstore(dialect);
      categoryId = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Tagged' })).body.id;
    });
    after(() => ps.close());

    const etagOf = async (path: string) => {
      const answer = await ps.request('GET', path);
      assert.equal(answer.status, 200, path);
      return answer.headers.etag as string;
    };

    it('a pet: a strong tag from its version, equal on every read until a change, new with every change', async () => {
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Rex', categoryId })).body;
      const path = `/pets/${pet.id}`;
      const first = await etagOf(path);
      assert.equal(first, tag('pet', pet.id, 1));
      assert.equal(await etagOf(path), first, 'two reads, one tag');

      // Two changes that give back the same representation: a hash would give the first tag
      // back; the version does not, so a client holding it learns that the pet changed.
      const renamed = await ps.request('PUT', path, { name: 'Rex II', categoryId });
      assert.equal(renamed.headers.etag, tag('pet', pet.id, 2));
      const restored = await ps.request<{ name: string }>('PUT', path, { name: 'Rex', categoryId });
      assert.equal(restored.body.name, 'Rex');
      assert.equal(restored.headers.etag, tag('pet', pet.id, 3));
      assert.equal(await etagOf(path), tag('pet', pet.id, 3), 'a read gives the tag the change answered');
      const stale = await ps.request('PUT', path, { name: 'Rex III', categoryId }, { 'if-match': first });
      assert.equal(stale.status, 412);
      assert.equal(
        (stale.body as { message: string }).message,
        `Pet ${pet.id} changed since you read it: If-Match names none of its current ETags (it is now ${tag('pet', pet.id, 3)}). Read it again and apply your change to what it says now.`,
      );
      const revalidated = await ps.request('GET', path, undefined, { 'if-none-match': first });
      assert.equal(revalidated.status, 200, 'the old tag no longer matches: the body comes');
      assert.equal(revalidated.headers.etag, tag('pet', pet.id, 3));

      // An update that changes nothing is still a change of the row.
      const same = await ps.request('PUT', path, { name: 'Rex', categoryId });
      assert.equal(same.headers.etag, tag('pet', pet.id, 4));
    });

    it('failed changes leave the tag as it was', async () => {
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Bolt', categoryId })).body;
      const path = `/pets/${pet.id}`;
      const before = await etagOf(path);
      assert.equal((await ps.request('PUT', path, { name: 'Bolt', categoryId: 999_999 })).status, 422);
      assert.equal(
        (await ps.request('PUT', path, { name: 'Bolt', categoryId, status: 'sold' })).status,
        409,
        'status follows stock',
      );
      assert.equal(
        (await ps.request('PUT', path, { name: 'Other', categoryId }, { 'if-match': '"pet-1-v1"' })).status,
        412,
      );
      assert.equal((await ps.request('DELETE', path, undefined, { 'if-match': `W/${before}` })).status, 412);
      assert.equal(await etagOf(path), before);

      const item = `/store/inventory/${pet.id}`;
      const stock = await etagOf(item);
      const order = await ps.request('POST', '/store/orders', { petId: pet.id, quantity: 10_000 });
      assert.equal(order.status, 409, 'more than the stock');
      assert.equal(await etagOf(item), stock, 'a refused order changes no stock');
      assert.equal(await etagOf(path), before);
    });

    it('orders move the inventory tag with every stock change, and the pet tag when its status moves', async () => {
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Kiwi', categoryId })).body;
      const item = `/store/inventory/${pet.id}`;
      const petPath = `/pets/${pet.id}`;
      const set = await ps.request('PUT', item, { quantity: 2 });
      assert.equal(set.headers.etag, tag('inventory', pet.id, 2));
      assert.equal(await etagOf(petPath), tag('pet', pet.id, 1), 'still available: the pet shows no change');

      const one = (await ps.request<{ id: number }>('POST', '/store/orders', { petId: pet.id, quantity: 1 }))
        .body;
      assert.equal(await etagOf(item), tag('inventory', pet.id, 3));
      assert.equal(await etagOf(petPath), tag('pet', pet.id, 1));
      const two = (await ps.request<{ id: number }>('POST', '/store/orders', { petId: pet.id, quantity: 1 }))
        .body;
      assert.equal(await etagOf(item), tag('inventory', pet.id, 4));
      const pending = await ps.request<{ status: string }>('GET', petPath);
      assert.equal(pending.body.status, 'pending');
      assert.equal(pending.headers.etag, tag('pet', pet.id, 2), 'the last unit taken: the status moved');

      // Cancelling gives back the stock and the status the pet had: same bodies, new tags.
      assert.equal((await ps.request('DELETE', `/store/orders/${two.id}`)).status, 204);
      const back = await ps.request<{ quantity: number; status: string }>('GET', item);
      assert.deepEqual(back.body, { petId: pet.id, quantity: 1, status: 'available' });
      assert.equal(back.headers.etag, tag('inventory', pet.id, 5));
      assert.equal(await etagOf(petPath), tag('pet', pet.id, 3));
      const held = await ps.request(
        'PUT',
        item,
        { quantity: 7 },
        { 'if-match': tag('inventory', pet.id, 3) },
      );
      assert.equal(held.status, 412, 'a tag from before the orders is stale, though the body is the same');

      // Completing an order changes the order and the entry (its held units leave).
      const orderPath = `/store/orders/${one.id}`;
      const open = await etagOf(orderPath);
      assert.equal(open, tag('order', one.id, 1));
      assert.equal((await ps.request('POST', `${orderPath}/complete`)).status, 200);
      assert.equal(await etagOf(orderPath), tag('order', one.id, 2));
      assert.equal(await etagOf(item), tag('inventory', pet.id, 6));
      assert.equal(await etagOf(petPath), tag('pet', pet.id, 3), 'still available');
    });

    it('If-None-Match: 304 with the tag and no body while it holds, the body once the row changed', async () => {
      const created = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Birds' })).body;
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Tweety', categoryId })).body;
      const order = (
        await ps.request<{ id: number }>('POST', '/store/orders', { petId: pet.id, quantity: 1 })
      ).body;
      for (const [path, current] of [
        [`/categories/${created.id}`, tag('category', created.id, 1)],
        [`/pets/${pet.id}`, tag('pet', pet.id, 2)], // its only unit ordered: pending
        [`/store/orders/${order.id}`, tag('order', order.id, 1)],
        [`/store/inventory/${pet.id}`, tag('inventory', pet.id, 2)],
      ] as const) {
        for (const sent of [current, `W/${current}`, `"x", ${current}`, '*']) {
          const answer = await ps.request('GET', path, undefined, { 'if-none-match': sent });
          assert.equal(answer.status, 304, `${path} ${sent}`);
          assert.equal(answer.text, '');
          assert.equal(answer.headers.etag, current);
        }
        const other = await ps.request('GET', path, undefined, { 'if-none-match': '"x"' });
        assert.equal(other.status, 200);
        assert.equal(other.headers.etag, current);
      }
      // Another kind's tag with the same id and version is not this resource's.
      const kindless = await ps.request('GET', `/pets/${pet.id}`, undefined, {
        'if-none-match': tag('inventory', pet.id, 2),
      });
      assert.equal(kindless.status, 200);
    });

    it('two clients editing with one tag: exactly one wins, the other gets 412 and changes nothing', async () => {
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Rex', categoryId })).body;
      const etag = await etagOf(`/pets/${pet.id}`);
      const [a, b] = await Promise.all([
        ps.request('PUT', `/pets/${pet.id}`, { name: 'Rex A', categoryId }, { 'if-match': etag }),
        ps.request('PUT', `/pets/${pet.id}`, { name: 'Rex B', categoryId }, { 'if-match': etag }),
      ]);
      assert.deepEqual([a.status, b.status].sort(), [200, 412]);
      const won = a.status === 200 ? a : b;
      const now = await ps.request<{ name: string }>('GET', `/pets/${pet.id}`);
      assert.equal(now.body.name, (won.body as { name: string }).name);
      assert.equal(now.headers.etag, tag('pet', pet.id, 2));
      assert.equal(won.headers.etag, now.headers.etag);

      // A stock change that moves the status makes the pet's tag stale.
      await ps.request('PUT', `/store/inventory/${pet.id}`, { quantity: 0 });
      const sold = await etagOf(`/pets/${pet.id}`);
      assert.equal(sold, tag('pet', pet.id, 3));
      const stale = await ps.request('DELETE', `/pets/${pet.id}`, undefined, {
        'if-match': now.headers.etag as string,
      });
      assert.equal(stale.status, 412);
      assert.equal((await ps.request('GET', `/pets/${pet.id}`)).status, 200, 'not deleted');
      const current = await ps.request('DELETE', `/pets/${pet.id}`, undefined, {
        'if-match': `"other", ${sold}`,
      });
      assert.equal(current.status, 204);
    });

    it('concurrent orders and pet updates: each change counted once, the status move once', async () => {
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Busy', categoryId })).body;
      await ps.request('PUT', `/store/inventory/${pet.id}`, { quantity: 10 });
      const petTag = await etagOf(`/pets/${pet.id}`);
      const answers = await Promise.all([
        ...Array.from({ length: 20 }, () =>
          ps.request('POST', '/store/orders', { petId: pet.id, quantity: 1 }),
        ),
        ...['A', 'B', 'C'].map((n) =>
          ps.request('PUT', `/pets/${pet.id}`, { name: `Busy ${n}`, categoryId }, { 'if-match': petTag }),
        ),
      ]);
      const orders = answers.slice(0, 20).map((a) => a.status);
      assert.deepEqual(
        [orders.filter((s) => s === 201).length, orders.filter((s) => s === 409).length],
        [10, 10],
      );
      // The tag is stale once another update or the status move lands: at most one update wins,
      // and only before the status move (its answer's tag is the pet's second version).
      const won = answers.slice(20).filter((a) => a.status === 200);
      assert.equal(won.length + answers.slice(20).filter((a) => a.status === 412).length, 3);
      assert.ok(won.length <= 1, 'one tag, at most one winner');
      for (const w of won) assert.equal(w.headers.etag, tag('pet', pet.id, 2));
      // Created (1), stocked (2), ten orders; refused orders change nothing.
      assert.equal(await etagOf(`/store/inventory/${pet.id}`), tag('inventory', pet.id, 12));
      // Created (1), the update if one won, one status move (the tenth order made it pending).
      const now = await ps.request<{ status: string }>('GET', `/pets/${pet.id}`);
      assert.equal(now.body.status, 'pending');
      assert.equal(now.headers.etag, tag('pet', pet.id, 2 + won.length));
    });

    it('categories and inventory entries honour If-Match, * included', async () => {
      const created = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Fish' })).body;
      const path = `/categories/${created.id}`;
      const read = await etagOf(path);
      assert.equal((await ps.request('PUT', path, { name: 'Carp' }, { 'if-match': '"nope"' })).status, 412);
      assert.equal((await ps.request<{ name: string }>('GET', path)).body.name, 'Fish');
      const renamed = await ps.request('PUT', path, { name: 'Fish' }, { 'if-match': read });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.headers.etag, tag('category', created.id, 2), 'the same name again is a change');
      assert.equal((await ps.request('DELETE', path, undefined, { 'if-match': read })).status, 412);
      assert.equal((await ps.request('DELETE', path, undefined, { 'if-match': '*' })).status, 204);

      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Nemo', categoryId })).body;
      const item = `/store/inventory/${pet.id}`;
      const first = await etagOf(item);
      const set = await ps.request('PUT', item, { quantity: 5 }, { 'if-match': first });
      assert.equal(set.status, 200);
      assert.equal((await ps.request('PUT', item, { quantity: 9 }, { 'if-match': first })).status, 412);
      assert.equal((await ps.request<{ quantity: number }>('GET', item)).body.quantity, 5);
      assert.equal((await ps.request('PUT', item, { quantity: 9 }, { 'if-match': '*' })).status, 200);
    });
  });

  describe(`Row versions on an existing database (${dialect})`, () => {
    it('rows made before the versions start at version 1', async () => {
      const storage = await createTestStorage(dialect);
      const database = openDatabase<PetstoreTables>(storage.location);
      try {
        const before = Object.fromEntries(
          Object.entries(petstoreMigrations).filter(([name]) => name < '0004'),
        );
        await migrateToLatest(database.db, database.dialect, 'petstore', before);
        const db = database.db;
        const at = '2026-11-22T12:00:00.000Z';
        // biome-ignore lint/suspicious/noExplicitAny: the tables as they were, without `version`
        const old = db as any;
        const { id: category } = await old
          .insertInto('categories')
          .values({ name: 'Dogs', name_key: 'dogs', description: null })
          .returning('id')
          .executeTakeFirstOrThrow();
        const { id: pet } = await old
          .insertInto('pets')
          .values({ name: 'Rex', category_id: category, created_at: at })
          .returning('id')
          .executeTakeFirstOrThrow();
        await old
          .insertInto('inventory')
          .values({ pet_id: pet, quantity: 1, reserved: 0, status: 'available' })
          .execute();
        await old
          .insertInto('orders')
          .values({ pet_id: pet, quantity: 1, ship_date: null, complete: 0, created_at: at })
          .execute();
        await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
        for (const table of ['categories', 'pets', 'inventory', 'orders'] as const) {
          const rows = await db.selectFrom(table).select('version').execute();
          assert.deepEqual(
            rows.map((r) => r.version),
            [1],
            table,
          );
        }
      } finally {
        await database.close();
        await storage.drop();
      }
    });
  });
}
