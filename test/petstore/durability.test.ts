import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PetstoreTables } from '../../src/petstore/index.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { callPetstore, stockOf } from '../support/petstore.ts';
import {
  processStorage,
  processSuite,
  type RunningProcess,
  startProcess,
  storageEnv,
} from '../support/processes.ts';

/** Registered at each start through PETSTORE_ADMIN_KEY; every call sends it. */
const ADMIN_KEY = `pk_${'d'.repeat(43)}`;
const AUTH = { authorization: `Bearer ${ADMIN_KEY}` };

function petstoreEnv(location: Parameters<typeof storageEnv>[0]): Record<string, string> {
  return { ...storageEnv(location), PETSTORE_ADMIN_KEY: ADMIN_KEY, PETSTORE_RATE_LIMIT_PER_KEY: '100000000' };
}

/** A call to the Petstore process at `base` with the admin key. */
const call = <T>(base: string, method: string, path: string, body?: unknown) =>
  callPetstore<T>(base, ADMIN_KEY, method, path, body);

interface Order {
  id: number;
  quantity: number;
  complete: boolean;
}

async function allOrders(base: string, petId: number): Promise<Order[]> {
  const orders: Order[] = [];
  let path: string | undefined = `/store/orders?petId=${petId}&limit=100`;
  while (path) {
    const response = await fetch(`${base}${path}`, { headers: AUTH });
    orders.push(...((await response.json()) as Order[]));
    path = /^<([^>]+)>/.exec(response.headers.get('link') ?? '')?.[1];
  }
  return orders;
}

for (const dialect of testDialects()) {
  describe(`durability (${dialect})`, () => {
    const suite = processSuite(dialect);

    it('keeps its data across a restart', async () => {
      suite.server = await startProcess('petstore.ts', petstoreEnv(suite.storage.location));
      const category = await call<{ id: number }>(suite.server.url, 'POST', '/categories', { name: 'Kept' });
      const pet = await call<{ id: number }>(suite.server.url, 'POST', '/pets', {
        name: 'Lasting',
        categoryId: category.body.id,
      });
      await call(suite.server.url, 'PUT', `/store/inventory/${pet.body.id}`, { quantity: 7 });
      await call(suite.server.url, 'POST', '/store/orders', { petId: pet.body.id, quantity: 3 });
      await suite.server.stop('SIGTERM');

      suite.server = await startProcess('petstore.ts', petstoreEnv(suite.storage.location));
      assert.deepEqual((await call(suite.server.url, 'GET', `/pets?id=${pet.body.id}`)).body, [
        { id: pet.body.id, name: 'Lasting', categoryId: category.body.id, status: 'available' },
      ]);
      assert.deepEqual((await call(suite.server.url, 'GET', `/store/inventory/${pet.body.id}`)).body, {
        petId: pet.body.id,
        quantity: 4,
        status: 'available',
      });
      await suite.server.stop('SIGTERM');
      suite.server = undefined;
    });

    it('comes back consistent after SIGKILL in the middle of a stream of orders', async () => {
      const STOCK = 100_000;
      suite.server = await startProcess('petstore.ts', petstoreEnv(suite.storage.location));
      const base = suite.server.url;
      const category = await call<{ id: number }>(base, 'POST', '/categories', { name: 'Crash' });
      const pet = await call<{ id: number }>(base, 'POST', '/pets', {
        name: 'Crashy',
        categoryId: category.body.id,
      });
      const petId = pet.body.id;
      await call(base, 'PUT', `/store/inventory/${petId}`, { quantity: STOCK });

      // Eight clients place orders (1–3 units) and complete or cancel some, until the kill.
      const acknowledged = new Set<number>();
      const cancelSent = new Set<number>();
      let stop = false;
      const client = async (seed: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const placed = await call<{ id: number }>(base, 'POST', '/store/orders', {
              petId,
              quantity: 1 + ((seed + i) % 3),
            });
            if (placed.status === 201) acknowledged.add(placed.body.id);
            if (i % 5 === 1) await call(base, 'POST', `/store/orders/${placed.body.id}/complete`);
            if (i % 7 === 3) {
              cancelSent.add(placed.body.id);
              await call(base, 'DELETE', `/store/orders/${placed.body.id}`);
            }
          } catch {
            return; // the server is gone
          }
        }
      };
      const clients = Array.from({ length: 8 }, (_, seed) => client(seed));
      // Kill once enough orders are acknowledged to prove something (a loaded machine is slower
      // than a fixed sleep assumes), still mid-stream: the clients keep ordering until the kill.
      for (const deadline = Date.now() + 20_000; acknowledged.size <= 40 && Date.now() < deadline; )
        await sleep(25);
      await suite.server.stop('SIGKILL');
      stop = true;
      await Promise.all(clients);
      assert.ok(
        acknowledged.size > 20,
        `only ${acknowledged.size} orders before the kill; the test proves nothing`,
      );

      suite.server = await startProcess('petstore.ts', petstoreEnv(suite.storage.location));
      const orders = await allOrders(suite.server.url, petId);
      const item = await call<{ quantity: number; status: string }>(
        suite.server.url,
        'GET',
        `/store/inventory/${petId}`,
      );
      // Every unit is in stock or in an order (open or shipped); cancelled orders gave theirs back.
      const ordered = orders.reduce((sum, o) => sum + o.quantity, 0);
      assert.equal(item.body.quantity + ordered, STOCK);
      // Every acknowledged order survived, unless a cancel was sent for it.
      const ids = new Set(orders.map((o) => o.id));
      const lost = [...acknowledged].filter((id) => !ids.has(id) && !cancelSent.has(id));
      assert.deepEqual(lost, []);
      assert.equal(item.body.status, 'available');
      // Units held for open orders are exactly the open orders' quantities, read in the database
      // itself once the server has stopped.
      await suite.server.stop('SIGTERM');
      suite.server = undefined;
      const database = openDatabase<PetstoreTables>(processStorage(suite.storage.location, 'petstore.db'));
      try {
        const row = await stockOf(database.db, petId);
        const open = orders.filter((o) => !o.complete).reduce((sum, o) => sum + o.quantity, 0);
        assert.equal(row.reserved, open);
      } finally {
        await database.close();
      }
    });
  });
}

/**
 * Two nodes on one PostgreSQL, one killed in the middle of a stream of orders: every order either
 * node acknowledged is in the database, and the batch the dead node had in flight left no trace
 * (every unit is in stock or in an order).
 */
describe('durability on two nodes, one killed (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let storage: TestStorage;
  const nodes: RunningProcess[] = [];
  before(async () => {
    storage = await createTestStorage('postgres');
    nodes.push(await startProcess('petstore.ts', petstoreEnv(storage.location)));
    nodes.push(await startProcess('petstore.ts', petstoreEnv(storage.location)));
  });
  after(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
    await storage.drop();
  });

  it('keeps every acknowledged order of the killed node and of the live one', async () => {
    const STOCK = 100_000;
    const [killed, live] = nodes as [RunningProcess, RunningProcess];
    const category = await call<{ id: number }>(live.url, 'POST', '/categories', { name: 'Split' });
    const pet = await call<{ id: number }>(live.url, 'POST', '/pets', {
      name: 'Shared',
      categoryId: category.body.id,
    });
    const petId = pet.body.id;
    await call(live.url, 'PUT', `/store/inventory/${petId}`, { quantity: STOCK });

    const acknowledged = { killed: new Set<number>(), live: new Set<number>() };
    let stop = false;
    const client = async (node: 'killed' | 'live', seed: number) => {
      const base = node === 'killed' ? killed.url : live.url;
      for (let i = 0; !stop; i++) {
        try {
          const placed = await call<{ id: number }>(base, 'POST', '/store/orders', {
            petId,
            quantity: 1 + ((seed + i) % 3),
          });
          if (placed.status === 201) acknowledged[node].add(placed.body.id);
        } catch {
          if (node === 'killed') return; // the node is gone
          throw new Error('the live node stopped answering');
        }
      }
    };
    const clients = [
      ...Array.from({ length: 12 }, (_, seed) => client('killed', seed)),
      ...Array.from({ length: 12 }, (_, seed) => client('live', seed)),
    ];
    for (const deadline = Date.now() + 20_000; acknowledged.killed.size <= 60 && Date.now() < deadline; )
      await sleep(25);
    await killed.stop('SIGKILL');
    // The live node goes on a little after the kill: its orders contend with no one now.
    const before = acknowledged.live.size;
    for (
      const deadline = Date.now() + 10_000;
      acknowledged.live.size < before + 20 && Date.now() < deadline;
    )
      await sleep(25);
    stop = true;
    await Promise.all(clients);
    assert.ok(acknowledged.killed.size > 40, `only ${acknowledged.killed.size} orders before the kill`);
    assert.ok(acknowledged.live.size > before, 'the live node placed no order after the kill');

    const database = openDatabase<PetstoreTables>(storage.location);
    try {
      const orders = await database.db
        .selectFrom('orders')
        .select(['id', 'quantity'])
        .where('pet_id', '=', petId)
        .execute();
      const ids = new Set(orders.map((o) => o.id));
      for (const node of ['killed', 'live'] as const) {
        const lost = [...acknowledged[node]].filter((id) => !ids.has(id));
        assert.deepEqual(lost, [], `acknowledged by the ${node} node but not in the database`);
      }
      const row = await stockOf(database.db, petId);
      const ordered = orders.reduce((sum, o) => sum + o.quantity, 0);
      assert.equal(row.quantity + ordered, STOCK, 'every unit is in stock or in an order');
      assert.equal(row.reserved, ordered);
    } finally {
      await database.close();
    }
  });
});
