import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

/** ETags on reads and changes; If-Match makes a stale change fail with 412 instead of overwriting. */
for (const dialect of testDialects()) {
  describe(`ETag and If-Match (${dialect})`, () => {
    let ps: TestPetstore;
    let categoryId: number;
    before(async () => {
      ps = await startPetstore(dialect);
      categoryId = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Tagged' })).body.id;
    });
    after(() => ps.close());

    it('two clients editing the same pet: the second, stale one gets 412 and changes nothing', async () => {
      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Rex', categoryId })).body;
      const read = await ps.request('GET', `/pets/${pet.id}`);
      const etag = read.headers.etag as string;
      assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
      assert.equal((await ps.request('GET', `/pets/${pet.id}`)).headers.etag, etag, 'stable while unchanged');

      const [a, b] = await Promise.all([
        ps.request('PUT', `/pets/${pet.id}`, { name: 'Rex A', categoryId }, { 'if-match': etag }),
        ps.request('PUT', `/pets/${pet.id}`, { name: 'Rex B', categoryId }, { 'if-match': etag }),
      ]);
      assert.deepEqual([a.status, b.status].sort(), [200, 412]);
      const [won, lost] = a.status === 200 ? [a, b] : [b, a];
      assert.equal((lost.body as { code: string }).code, 'precondition_failed');
      assert.match((lost.body as { message: string }).message, /^Pet \d+ changed since you read it/);
      const now = await ps.request<{ name: string }>('GET', `/pets/${pet.id}`);
      assert.equal(now.body.name, (won.body as { name: string }).name);
      assert.equal(now.headers.etag, won.headers.etag);
      assert.notEqual(now.headers.etag, etag);

      // A stock change moves the pet's status, so its ETag changes too.
      await ps.request('PUT', `/store/inventory/${pet.id}`, { quantity: 0 });
      const sold = await ps.request('GET', `/pets/${pet.id}`);
      assert.notEqual(sold.headers.etag, now.headers.etag);
      const stale = await ps.request('DELETE', `/pets/${pet.id}`, undefined, {
        'if-match': now.headers.etag as string,
      });
      assert.equal(stale.status, 412);
      assert.equal((await ps.request('GET', `/pets/${pet.id}`)).status, 200, 'not deleted');
      const weak = await ps.request('DELETE', `/pets/${pet.id}`, undefined, {
        'if-match': `W/${sold.headers.etag}`,
      });
      assert.equal(weak.status, 412, 'weak tags never match If-Match');
      const current = await ps.request('DELETE', `/pets/${pet.id}`, undefined, {
        'if-match': `"other", ${sold.headers.etag}`,
      });
      assert.equal(current.status, 204);
    });

    it('categories and inventory entries carry ETags and honour If-Match, * included', async () => {
      const created = await ps.request<{ id: number }>('POST', '/categories', { name: 'Birds' });
      const read = await ps.request('GET', `/categories/${created.body.id}`);
      const stale = await ps.request(
        'PUT',
        `/categories/${created.body.id}`,
        { name: 'Fish' },
        { 'if-match': '"nope"' },
      );
      assert.equal(stale.status, 412);
      assert.equal(
        (await ps.request<{ name: string }>('GET', `/categories/${created.body.id}`)).body.name,
        'Birds',
      );
      const ok = await ps.request(
        'PUT',
        `/categories/${created.body.id}`,
        { name: 'Parrots' },
        {
          'if-match': read.headers.etag as string,
        },
      );
      assert.equal(ok.status, 200);
      assert.equal(
        (
          await ps.request('DELETE', `/categories/${created.body.id}`, undefined, {
            'if-match': read.headers.etag as string,
          })
        ).status,
        412,
      );
      assert.equal(
        (await ps.request('DELETE', `/categories/${created.body.id}`, undefined, { 'if-match': '*' })).status,
        204,
      );

      const pet = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Kiwi', categoryId })).body;
      const item = await ps.request('GET', `/store/inventory/${pet.id}`);
      const set = await ps.request(
        'PUT',
        `/store/inventory/${pet.id}`,
        { quantity: 5 },
        {
          'if-match': item.headers.etag as string,
        },
      );
      assert.equal(set.status, 200);
      const again = await ps.request(
        'PUT',
        `/store/inventory/${pet.id}`,
        { quantity: 9 },
        {
          'if-match': item.headers.etag as string,
        },
      );
      assert.equal(again.status, 412);
      assert.equal(
        (await ps.request<{ quantity: number }>('GET', `/store/inventory/${pet.id}`)).body.quantity,
        5,
      );
      assert.equal(
        (await ps.request('PUT', `/store/inventory/${pet.id}`, { quantity: 9 }, { 'if-match': '*' })).status,
        200,
      );
      const order = await ps.request<{ id: number }>('POST', '/store/orders', { petId: pet.id, quantity: 1 });
      assert.match((await ps.request('GET', `/store/orders/${order.body.id}`)).headers.etag as string, /^"/);
    });
  });
}
