import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { testDialects } from '../support/databases.ts';
import { insertLeasedOrder, platformNodes, servedWithin } from '../support/leased-orders.ts';

const HOST = 'takeover.example.test';

// Two nodes share one database only on PostgreSQL (issue 17, item 7).
for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`two nodes, one killed mid-order (${dialect})`, () => {
    it('the surviving node takes the dead node’s order over when its lease runs out and serves the certificate', async () => {
      const nodes = await platformNodes(dialect);
      const database = openDatabase<PlatformTables>(nodes.storage.location);
      try {
        // One after the other: the first start creates the schema and the first project.
        const a = await nodes.start(nodes.env('a'));
        const b = await nodes.start(nodes.env('b'));
        const { db } = database;
        // Node A is ordering the certificate of a verified domain: it holds the lease, and its
        // heartbeat renewed it just now (15 s). Then A dies, and nobody renews it.
        await insertLeasedOrder(db, dialect, {
          hostname: HOST,
          leaseOwner: `${hostname()}:a`,
          leaseInstance: `${a.child.pid}:the process about to be killed`,
        });
        const killed = Date.now();
        await a.stop('SIGKILL');

        const took = await servedWithin(b, HOST, killed, 25_000);
        // Not before the lease ran out (A might still be alive as far as B knows), and within the
        // lease plus one job pass (CERT_CHECK_EVERY, 5 s), the order and 2 s for a loaded machine.
        assert.ok(took >= 14_000, `taken over after ${took} ms, before the dead node's lease ran out`);
        assert.ok(took < 22_000, `taken over after ${took} ms`);
        const job = await db
          .selectFrom('certificate_jobs')
          .select(['state', 'lease_owner'])
          .where('hostname', '=', HOST)
          .executeTakeFirstOrThrow();
        assert.deepEqual(job, { state: 'issued', lease_owner: null });
        const history = await db
          .selectFrom('domain_events')
          .innerJoin('domains', 'domains.id', 'domain_events.domain_id')
          .select('domain_events.action')
          .where('domains.hostname', '=', HOST)
          .execute();
        assert.deepEqual(
          history.map((e) => e.action),
          ['certificate_issued'],
        );
        process.stdout.write(`# took ${took} ms\n`);
      } finally {
        await database.close();
        await nodes.close();
      }
    });
  });
}
