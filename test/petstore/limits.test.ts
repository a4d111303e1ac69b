import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { INTERFACE_VERSION } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { seedPet, startPetstore, TEST_LIMITS, type TestPetstore } from '../support/petstore.ts';

/**
 * The request-time cap (a change stuck behind a lock is answered 503 request_timeout) and the
 * interface version every answer names, which a client may ask for.
 */
for (const dialect of testDialects()) {
  describe(`request time limit and API-Version (${dialect})`, () => {
    let ps: TestPetstore;
    before(async () => {
      ps = await startPetstore(dialect, { limits: { ...TEST_LIMITS, requestTimeoutMs: 300 } });
    });
    after(() => ps.close());

    it('answers 503 request_timeout when a change waits past the limit, and nothing is lost', async () => {
      const petId = await seedPet(ps, 'Slow', 'Sloth');
      let release = () => {};
      const held = new Promise<void>((done) => {
        release = done;
      });
      let locked = () => {};
      const isLocked = new Promise<void>((done) => {
        locked = done;
      });
      // Another writer holds the pet's inventory row (PostgreSQL) or the writer (SQLite).
      const holder = ps.database.db.transaction().execute(async (trx) => {
        if (dialect === 'postgres') {
          await sql`SELECT pet_id FROM inventory WHERE pet_id = ${petId} FOR UPDATE`.execute(trx);
        } else {
          await sql`UPDATE inventory SET quantity = quantity WHERE pet_id = ${petId}`.execute(trx);
        }
        locked();
        await held;
      });
      await isLocked;
      const started = performance.now();
      const answer = await ps.request('PUT', `/store/inventory/${petId}`, { quantity: 4 });
      const tookMs = performance.now() - started;
      release();
      await holder;
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.body, {
        code: 'request_timeout',
        message:
          'The request took longer than 0.3 s and was cut off; it may still have taken effect. Read the resource before retrying, or retry with the same Idempotency-Key.',
        status: 503,
      });
      assert.ok(tookMs >= 300 && tookMs < 1500, `answered after ${tookMs} ms`);
      // The change itself went through once the lock was released: read before retrying.
      let quantity = 0;
      // Polled for up to 10 s: on a loaded machine the released change takes a while to commit.
      const deadline = Date.now() + 10_000;
      while (quantity !== 4 && Date.now() < deadline) {
        quantity = (await ps.request<{ quantity: number }>('GET', `/store/inventory/${petId}`)).body.quantity;
        if (quantity !== 4) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(quantity, 4);
    });

    it('names the interface version on every answer and refuses another major version', async () => {
      for (const [method, url] of [
        ['GET', '/pets'],
        ['GET', '/pets/999999'],
        ['GET', '/nowhere'],
      ] as const) {
        const answer = await ps.request(method, url);
        assert.equal(answer.headers['api-version'], INTERFACE_VERSION, `${method} ${url}`);
      }
      const document = await ps.app.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(document.headers['api-version'], INTERFACE_VERSION);
      assert.equal(INTERFACE_VERSION, '1.0.0');
      for (const asked of ['1', '1.0', '1.0.0', '1.7.2']) {
        assert.equal(
          (await ps.request('GET', '/pets', undefined, { 'api-version': asked })).status,
          200,
          asked,
        );
      }
      for (const asked of ['2', '0.9', 'latest', '1.0.0.0']) {
        const refused = await ps.request('GET', '/pets', undefined, { 'api-version': asked });
        assert.equal(refused.status, 400, asked);
        assert.equal((refused.body as { code: string }).code, 'unsupported_version');
        assert.equal(refused.headers['api-version'], '1.0.0');
      }
    });
  });
}
