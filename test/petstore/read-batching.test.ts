import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { INTERFACE_VERSION } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

const tag = (kind: string, id: number, version: number) => `"${kind}-${id}-v${version}@${INTERFACE_VERSION}"`;

/**
 * The hot reads share queries when they arrive together (on PostgreSQL: one query for the pets
 * or inventory entries asked in one turn, one for identical pages). Each request must still get
 * its own answer, a missing row its own 404, and a read asked after a change was answered must
 * show the change.
 */
for (const dialect of testDialects()) {
  describe(`reads asked together (${dialect})`, () => {
    let ps: TestPetstore;
    const ids: number[] = [];
    before(async () => {
      ps = await startPetstore(dialect);
      const categoryId = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Batch' })).body.id;
      for (let i = 1; i <= 25; i++) {
        const pet = await ps.request<{ id: number }>('POST', '/pets', { name: `Pet ${i}`, categoryId });
        ids.push(pet.body.id);
      }
    });
    after(() => ps.close());

    it('many pets and inventory entries at once, a missing one among them: each answer its own', async () => {
      const missing = (ids.at(-1) as number) + 1000;
      const asked = [...ids, missing, ...ids.slice(0, 5)];
      const [pets, stock] = await Promise.all([
        Promise.all(asked.map((id) => ps.request<{ id: number; name: string }>('GET', `/pets/${id}`))),
        Promise.all(asked.map((id) => ps.request<{ petId: number }>('GET', `/store/inventory/${id}`))),
      ]);
      asked.forEach((id, i) => {
        const pet = pets[i];
        const item = stock[i];
        assert.ok(pet && item);
        if (id === missing) {
          assert.equal(pet.status, 404);
          assert.equal((pet.body as unknown as { code: string }).code, 'pet_not_found');
          assert.equal(item.status, 404);
          assert.equal((item.body as unknown as { code: string }).code, 'inventory_not_found');
          return;
        }
        assert.equal(pet.status, 200);
        assert.deepEqual(pet.body, {
          id,
          name: `Pet ${ids.indexOf(id) + 1}`,
          categoryId: (pet.body as unknown as { categoryId: number }).categoryId,
          status: 'available',
        });
        assert.equal(pet.headers.etag, tag('pet', id, 1));
        assert.equal(item.status, 200);
        assert.deepEqual(item.body, { petId: id, quantity: 1, status: 'available' });
        assert.equal(item.headers.etag, tag('inventory', id, 1));
      });
    });

    it('identical pages asked together are the same page, each with its Link', async () => {
      const pages = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          ps.request<{ id: number }[]>('GET', i % 2 ? '/pets' : '/pets?limit=10'),
        ),
      );
      for (const [i, page] of pages.entries()) {
        const size = i % 2 ? 20 : 10;
        assert.equal(page.status, 200);
        assert.deepEqual(
          page.body.map((pet) => pet.id),
          ids.slice(0, size),
        );
        assert.match(
          String(page.headers.link),
          new RegExp(`^</pets\\?limit=${size}&cursor=[\\w-]+>; rel="next"$`),
        );
      }
    });

    it('a read asked after a change was answered shows the change, while other reads keep coming', async () => {
      const id = ids[0] as number;
      const categoryId = (await ps.request<{ categoryId: number }>('GET', `/pets/${id}`)).body.categoryId;
      let stop = false;
      const flood = (async () => {
        let reads = 0;
        while (!stop) {
          await Promise.all(ids.map((other) => ps.request('GET', `/pets/${other}`)));
          reads++;
          // Injected requests can settle without leaving the microtask queue (SQLite reads are
          // synchronous); over HTTP each arrives in a turn of its own.
          await nextTurn();
        }
        return reads;
      })();
      for (let round = 1; round <= 5; round++) {
        const name = `Renamed ${round}`;
        const changed = await ps.request('PUT', `/pets/${id}`, { name, categoryId });
        assert.equal(changed.status, 200);
        const [read, listed] = await Promise.all([
          ps.request<{ name: string }>('GET', `/pets/${id}`),
          ps.request<{ id: number; name: string }[]>('GET', '/pets'),
        ]);
        assert.equal(read.body.name, name);
        assert.equal(read.headers.etag, changed.headers.etag);
        assert.equal(listed.body[0]?.name, name);
        const stock = await ps.request('PUT', `/store/inventory/${id}`, { quantity: round * 10 });
        assert.equal(stock.status, 200);
        const item = await ps.request<{ quantity: number }>('GET', `/store/inventory/${id}`);
        assert.equal(item.body.quantity, round * 10);
      }
      stop = true;
      assert.ok((await flood) > 0);
    });
  });
}
