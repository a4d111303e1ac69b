import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { PetstoreTables } from '../../src/petstore/index.ts';
import { createPetstoreStore } from '../../src/petstore/store/index.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import { postOverHttp, seedPet, startPetstore, stockOf, type TestPetstore } from '../support/petstore.ts';
import { type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

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
      const petId = await seedPet(ps, 'Rush', 'Popular', 50);

      const answers = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const answer = await postOverHttp(ps, base, '/store/orders', { petId, quantity: 1 });
          return { status: answer.status, body: JSON.parse(answer.text) as { code?: string; id?: number } };
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
      const row = await stockOf(ps.database.db, petId);
      assert.deepEqual({ ...row }, { quantity: 0, reserved: 50 });
    });

    it('orders placed together commit together, and each refused one fails alone', async () => {
      const category = await ps.request<{ id: number }>('POST', '/categories', { name: 'Batch' });
      const newPet = async (name: string, quantity: number) => {
        const pet = await ps.request<{ id: number }>('POST', '/pets', { name, categoryId: category.body.id });
        await ps.request('PUT', `/store/inventory/${pet.body.id}`, { quantity });
        return pet.body.id;
      };
      const a = await newPet('Plenty', 5);
      const b = await newPet('Scarce', 1);
      const etagOfA = (await ps.request('GET', `/pets/${a}`)).headers.etag;
      // A store of its own on the same database: its calls in one turn land in one batch.
      const store = createPetstoreStore(ps.database, ps.clock);
      const results = await Promise.all(
        [
          { petId: a, quantity: 2 },
          { petId: 999_999, quantity: 1 },
          { petId: b, quantity: 3 },
          { petId: a, quantity: 3 },
          { petId: a, quantity: 1 },
          { petId: b, quantity: 1 },
        ].map((order) =>
          store.placeOrder(order).then(
            (placed) => ({ placed: { petId: placed.petId, quantity: placed.quantity }, id: placed.id }),
            (error: { code?: string; message?: string }) => ({ refused: error.code, message: error.message }),
          ),
        ),
      );
      assert.deepEqual(
        results.map((r) => ('placed' in r ? r.placed : { refused: r.refused, message: r.message })),
        [
          { petId: a, quantity: 2 },
          {
            refused: 'unknown_pet',
            message: 'petId 999999 names no pet. Pick one from GET /pets?status=available.',
          },
          {
            refused: 'insufficient_stock',
            message: `Pet ${b} has 1 in stock and the order asks for 3. Order at most 1, or wait for stock.`,
          },
          { petId: a, quantity: 3 },
          // Refused against what the orders before it in the batch left: none.
          {
            refused: 'insufficient_stock',
            message: `Pet ${a} has 0 in stock and the order asks for 1. Order at most 0, or wait for stock.`,
          },
          { petId: b, quantity: 1 },
        ],
      );
      const ids = results.flatMap((r) => ('id' in r ? [r.id] : []));
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
        'ids follow arrival order',
      );
      for (const [petId, reserved] of [
        [a, 5],
        [b, 1],
      ] as const) {
        assert.deepEqual((await ps.request('GET', `/store/inventory/${petId}`)).body, {
          petId,
          quantity: 0,
          status: 'pending',
        });
        const row = await stockOf(ps.database.db, petId);
        assert.equal(row.reserved, reserved);
      }
      const petA = await ps.request<{ status: string }>('GET', `/pets/${a}`);
      assert.equal(petA.body.status, 'pending');
      assert.notEqual(petA.headers.etag, etagOfA, 'the pet shows another status: another ETag');
      if (dialect === 'postgres') {
        // One transaction for the three orders: they carry the same creating transaction id.
        const xids = await ps.database.db
          .selectFrom('orders')
          .select(sql<string>`xmin::text`.as('xid'))
          .where('id', 'in', ids)
          .execute();
        assert.equal(xids.length, 3);
        assert.equal(new Set(xids.map((r) => r.xid)).size, 1, JSON.stringify(xids));
      }
    });

    it('concurrent completes and cancels of the same orders apply each order once', async () => {
      const petId = await seedPet(ps, 'Race', 'Contested', 20);
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
      const row = await stockOf(ps.database.db, petId);
      assert.equal(row.reserved, 0);
      assert.equal(cancelled + completed, 10);
    });
  });
}

/** Two Petstore processes on one PostgreSQL database, each group-committing its own orders. */
describe('concurrent orders on two nodes (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  const ADMIN_KEY = `pk_${'n'.repeat(43)}`;
  const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };
  let storage: Awaited<ReturnType<typeof createTestStorage>>;
  const nodes: RunningProcess[] = [];
  before(async () => {
    storage = await createTestStorage('postgres');
    const env = {
      ...storageEnv(storage.location),
      PETSTORE_ADMIN_KEY: ADMIN_KEY,
      PETSTORE_RATE_LIMIT_PER_KEY: '100000000',
      PETSTORE_RATE_LIMIT_PER_ADDRESS: '100000000',
    };
    // One after the other: the first migrates the database.
    nodes.push(await startProcess('petstore.ts', env));
    nodes.push(await startProcess('petstore.ts', env));
  });
  after(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
    await storage.drop();
  });

  const call = async <T>(base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? AUTH : { ...AUTH, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as T };
  };

  it('200 simultaneous orders of 1 against stock 50, half on each node: exactly 50 accepted', async () => {
    const [one, two] = nodes.map((node) => node.url) as [string, string];
    const category = await call<{ id: number }>(one, 'POST', '/categories', { name: 'Shared' });
    const pet = await call<{ id: number }>(two, 'POST', '/pets', {
      name: 'Wanted',
      categoryId: category.body.id,
    });
    const petId = pet.body.id;
    assert.equal((await call(one, 'PUT', `/store/inventory/${petId}`, { quantity: 50 })).status, 200);

    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call<{ id?: number; code?: string }>(i % 2 ? two : one, 'POST', '/store/orders', {
          petId,
          quantity: 1,
        }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 409);
    assert.equal(accepted.length, 50);
    assert.equal(refused.length, 150);
    assert.ok(refused.every((a) => a.body.code === 'insufficient_stock'));
    const ids = new Set(accepted.map((a) => a.body.id));
    assert.equal(ids.size, 50);

    for (const base of [one, two]) {
      assert.deepEqual((await call(base, 'GET', `/store/inventory/${petId}`)).body, {
        petId,
        quantity: 0,
        status: 'pending',
      });
    }
    const database = openDatabase<PetstoreTables>(storage.location);
    try {
      const orders = await database.db
        .selectFrom('orders')
        .select('id')
        .where('pet_id', '=', petId)
        .execute();
      assert.deepEqual(
        new Set(orders.map((o) => o.id)),
        ids,
        'the database holds exactly the acknowledged orders',
      );
      const row = await stockOf(database.db, petId);
      assert.deepEqual({ ...row }, { quantity: 0, reserved: 50 });
    } finally {
      await database.close();
    }
  });
});
