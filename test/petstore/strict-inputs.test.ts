import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

interface ErrorBody {
  code: string;
  message: string;
  status: number;
}

/**
 * Inputs the two databases would treat differently, or that Number() would read too kindly, are
 * refused the same way everywhere; reads answer If-None-Match; every answer names its request.
 */
for (const dialect of testDialects()) {
  describe(`strict inputs, conditional reads and request ids (${dialect})`, () => {
    let ps: TestPetstore;
    let categoryId: number;
    let petId: number;
    before(async () => {
      ps = await startPetstore(dialect);
      categoryId = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Dogs' })).body.id;
      petId = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Rex', categoryId })).body.id;
    });
    after(() => ps.close());

    it('U+0000 in any text value is 422 invalid_character and stores nothing', async () => {
      const pet = await ps.request<ErrorBody>('POST', '/pets', { name: 'a\u0000b', categoryId });
      assert.equal(pet.status, 422, pet.text);
      assert.deepEqual(pet.body, {
        code: 'invalid_character',
        message:
          'The field body.name contains the character U+0000 (NUL), which no text field can hold. Remove it.',
        status: 422,
      });
      const category = await ps.request<ErrorBody>('POST', '/categories', { name: '\u0000' });
      assert.equal(category.status, 422);
      assert.equal(category.body.code, 'invalid_character');
      const renamed = await ps.request<ErrorBody>('PUT', `/categories/${categoryId}`, { name: 'Do\u0000gs' });
      assert.equal(renamed.status, 422);
      const described = await ps.request<ErrorBody>('PUT', `/categories/${categoryId}`, {
        name: 'Dogs',
        description: 'Good \u0000 dogs',
      });
      assert.equal(described.status, 422, described.text);
      assert.match(described.body.message, /^The field body\.description contains/);
      const query = await ps.request<ErrorBody>('GET', '/pets?cursor=a%00b');
      assert.equal(query.status, 422);
      assert.match(query.body.message, /^The query parameter cursor contains the character U\+0000/);
      // Still a 400 when the value is wrong anyway.
      const wrong = await ps.request<ErrorBody>('POST', '/categories', { name: '\u0000', extra: 1 });
      assert.equal(wrong.status, 400);
      const categories = await ps.request<{ name: string }[]>('GET', '/categories');
      assert.deepEqual(
        categories.body.map((c) => c.name),
        ['Dogs'],
      );
      const pets = await ps.request<{ name: string }[]>('GET', '/pets');
      assert.deepEqual(
        pets.body.map((p) => p.name),
        ['Rex'],
      );
    });

    it('ids and numbers in paths and queries are plain decimals, else 400 validation_failed', async () => {
      for (const id of ['0x1', '1e0', '+1', '1.0', '01', '%201', '1%20', '9007199254740993']) {
        const answer = await ps.request<ErrorBody>('GET', `/pets/${id.replace('1', String(petId))}`);
        assert.equal(answer.status, 400, `${id}: ${answer.text}`);
        assert.equal(answer.body.code, 'validation_failed', id);
      }
      const plain = await ps.request<ErrorBody>('GET', `/pets/${petId}`);
      assert.equal(plain.status, 200);
      for (const query of ['limit=1e2', 'limit=0x10', 'limit=', 'limit=+5', 'id=0x1', `id=${petId}&id=1e0`]) {
        const answer = await ps.request<ErrorBody>('GET', `/pets?${query}`);
        assert.equal(answer.status, 400, `${query}: ${answer.text}`);
        assert.equal(answer.body.code, 'validation_failed', query);
      }
      const hex = await ps.request<ErrorBody>('GET', '/pets?limit=0x10');
      assert.equal(
        hex.body.message,
        'Query parameter limit must be integer, written in plain decimal digits such as 42 (not "0x10"). Fix the request and send it again.',
      );
      const listed = await ps.request<unknown[]>('GET', `/pets?limit=100&id=${petId}`);
      assert.equal(listed.status, 200);
      assert.equal(listed.body.length, 1);
    });

    it('If-Match is held to its schema (1 to 1000 characters) and a 412 does not echo it', async () => {
      const empty = await ps.request<ErrorBody>(
        'PUT',
        `/categories/${categoryId}`,
        { name: 'Dogs' },
        { 'if-match': '' },
      );
      assert.equal(empty.status, 400, empty.text);
      assert.equal(empty.body.code, 'validation_failed');
      assert.match(empty.body.message, /^Header if-match /);
      const long = `"${'x'.repeat(1000)}"`;
      const tooLong = await ps.request<ErrorBody>('DELETE', `/pets/${petId}`, undefined, {
        'if-match': long,
      });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.code, 'validation_failed');
      const stale = `"${'y'.repeat(900)}"`;
      const refused = await ps.request<ErrorBody>(
        'PUT',
        `/categories/${categoryId}`,
        { name: 'Dogs' },
        { 'if-match': stale },
      );
      assert.equal(refused.status, 412);
      assert.ok(!refused.body.message.includes('yyyy'), refused.body.message);
      assert.ok(refused.body.message.length < 300);
      assert.equal((await ps.request('GET', `/pets/${petId}`)).status, 200, 'not deleted');
    });

    it('every answer carries one X-Request-Id: successes, 304s and errors', async () => {
      const listed = await ps.request('GET', '/pets');
      assert.equal(listed.status, 200);
      assert.match(String(listed.headers['x-request-id']), /^[\w-]+$/);
      const echoed = await ps.request('GET', '/pets', undefined, { 'x-request-id': 'trace-42' });
      assert.equal(echoed.headers['x-request-id'], 'trace-42');
      const created = await ps.request(
        'POST',
        '/categories',
        { name: 'Cats' },
        { 'x-request-id': 'trace-43' },
      );
      assert.equal(created.status, 201);
      assert.equal(created.headers['x-request-id'], 'trace-43');
      const id = (created.body as { id: number }).id;
      const deleted = await ps.request('DELETE', `/categories/${id}`, undefined, {
        'x-request-id': 'trace-44',
      });
      assert.equal(deleted.status, 204);
      assert.equal(deleted.headers['x-request-id'], 'trace-44');
      const document = await ps.app.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(typeof document.headers['x-request-id'], 'string');
      const missing = await ps.request('GET', '/nowhere', undefined, { 'x-request-id': 'trace-45' });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['x-request-id'], 'trace-45');
    });

    it('reads answer If-None-Match with 304, no body, while the ETag is current', async () => {
      const order = await (async () => {
        await ps.request('PUT', `/store/inventory/${petId}`, { quantity: 5 });
        return (await ps.request<{ id: number }>('POST', '/store/orders', { petId, quantity: 1 })).body;
      })();
      for (const url of [
        `/pets/${petId}`,
        `/categories/${categoryId}`,
        `/store/orders/${order.id}`,
        `/store/inventory/${petId}`,
      ]) {
        const read = await ps.request('GET', url);
        assert.equal(read.status, 200, url);
        const etag = read.headers.etag as string;
        for (const tags of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
          const again = await ps.request('GET', url, undefined, { 'if-none-match': tags });
          assert.equal(again.status, 304, `${url} ${tags}`);
          assert.equal(again.text, '');
          assert.equal(again.headers.etag, etag);
          assert.equal(typeof again.headers['x-request-id'], 'string');
        }
        const other = await ps.request('GET', url, undefined, { 'if-none-match': '"other"' });
        assert.equal(other.status, 200);
        assert.deepEqual(other.body, read.body);
      }
      // A change gives a new ETag: the old one no longer stops the read.
      const read = await ps.request('GET', `/pets/${petId}`);
      await ps.request('PUT', `/pets/${petId}`, { name: 'Rex II', categoryId });
      const changed = await ps.request<{ name: string }>('GET', `/pets/${petId}`, undefined, {
        'if-none-match': read.headers.etag as string,
      });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.name, 'Rex II');
      assert.notEqual(changed.headers.etag, read.headers.etag);
    });
  });
}
