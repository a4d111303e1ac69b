import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { ManualClock } from '../../src/lib/clock.ts';
import { DEFAULT_LIMITS } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

/**
 * Rate limits per key and per client address, with the IETF RateLimit-Policy / RateLimit fields:
 * the limit is exceeded, the 429 carries Retry-After and the Error body, and the window resets
 * when the injected clock moves past it. On PostgreSQL the count is the cluster policy's shared
 * one (test/petstore/rate-limit-cluster.test.ts runs it on two nodes); on one node it answers the
 * same as the local policy.
 */
for (const dialect of testDialects()) {
  describe(`rate limits (${dialect})`, () => {
    let ps: TestPetstore;
    // 20 s into a 60 s window: 40 s to the reset.
    const clock = new ManualClock('2026-11-22T12:00:20Z');
    before(async () => {
      ps = await startPetstore(dialect, {
        clock,
        limits: {
          ...DEFAULT_LIMITS,
          perKey: { quota: 5, windowSeconds: 60 },
          perAddress: { quota: 3, windowSeconds: 60 },
        },
      });
    });
    after(() => ps.close());

    it('counts each key apart, answers 429 past the quota and resets with the window', async () => {
      for (let i = 1; i <= 5; i++) {
        const answer = await ps.request('GET', '/store/inventory');
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['ratelimit-policy'], '"key";q=5;w=60');
        assert.equal(answer.headers.ratelimit, `"key";r=${5 - i};t=40`);
      }
      clock.advance(15_000);
      const refused = await ps.request('GET', '/store/inventory');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], '25');
      assert.equal(refused.headers.ratelimit, '"key";r=0;t=25');
      assert.deepEqual(refused.body, {
        code: 'rate_limited',
        message: 'Too many requests: this API key may send 5 per 60 s. Try again in 25 s.',
        status: 429,
      });
      if (dialect === 'postgres') {
        // One node on PostgreSQL counts in the shared table (the cluster policy is the default).
        const { rows } = await sql<{ policy: string; caller: string; claimed: number }>`
          SELECT policy, caller, claimed FROM petstore_rate_limits`.execute(ps.database.db);
        assert.deepEqual(rows, [{ policy: 'key', caller: '1', claimed: 5 }]);
      }
      // Another key has its own count.
      const other = await ps.request<{ secret: string }>('POST', '/keys', { name: 'b', scopes: ['store'] });
      assert.equal(other.status, 429, 'the admin key is still limited');
      clock.advance(25_000);
      const again = await ps.request('GET', '/store/inventory');
      assert.equal(again.status, 200);
      assert.equal(again.headers.ratelimit, '"key";r=4;t=60');
    });

    it('limits requests without a key per client address, public reads included', async () => {
      clock.set('2026-11-22T12:05:00Z');
      for (let i = 1; i <= 3; i++) {
        const answer = await ps.request('GET', '/pets', undefined, { authorization: '' });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['ratelimit-policy'], '"address";q=3;w=60');
        assert.equal(answer.headers.ratelimit, `"address";r=${3 - i};t=60`);
      }
      const refused = await ps.request('GET', '/pets', undefined, { authorization: '' });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], '60');
      assert.equal((refused.body as { code: string }).code, 'rate_limited');
      // A protected operation without a key is counted on the address too: 429 before 401.
      const unauthenticated = await ps.request('GET', '/store/orders', undefined, { authorization: '' });
      assert.equal(unauthenticated.status, 429);
      // A key is not limited by the address's count.
      assert.equal((await ps.request('GET', '/pets')).status, 200);
      if (dialect === 'postgres') {
        // Each policy entering the 12:05 window forgot its windows before 12:04 (the key's 12:00
        // and 12:01 rows), in the background: wait for it a little.
        const windows = async () =>
          (
            await sql<{ window_start: number }>`
              SELECT DISTINCT window_start FROM petstore_rate_limits ORDER BY window_start`.execute(
              ps.database.db,
            )
          ).rows.map((row) => new Date(row.window_start).toISOString());
        for (let i = 0; i < 50 && (await windows()).length > 1; i++) await sleep(20);
        assert.deepEqual(await windows(), ['2026-11-22T12:05:00.000Z']);
      }
      clock.advance(60_000);
      assert.equal((await ps.request('GET', '/pets', undefined, { authorization: '' })).status, 200);
    });
  });
}
