import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { testDialects } from '../support/databases.ts';
import { insertLeasedOrder, platformNodes, servedWithin } from '../support/leased-orders.ts';
import { processStorage } from '../support/processes.ts';

const HOST = 'restart.example.test';

for (const dialect of testDialects()) {
  describe(`a node killed mid-order and restarted (${dialect})`, () => {
    it('takes its own order back at start and serves the certificate within seconds, not after the lease', async () => {
      const nodes = await platformNodes(dialect);
      try {
        const { location } = nodes.storage;
        const env = nodes.env('n1', location.kind === 'sqlite' ? join(location.file, '..') : undefined);
        await (await nodes.start(env)).stop('SIGKILL');

        // What the killed process left: a verified domain whose order it had leased, its last
        // heartbeat just now (a 15 s lease that nobody renews).
        const database = openDatabase<PlatformTables>(processStorage(location, 'kennel.db'));
        try {
          await insertLeasedOrder(database.db, dialect, {
            hostname: HOST,
            leaseOwner: `${hostname()}:n1`,
            leaseInstance: 'the killed process',
          });
        } finally {
          await database.close();
        }

        const started = Date.now();
        const server = await nodes.start(env);
        const seconds = (await servedWithin(server, HOST, started, 14_000)) / 1000;
        assert.ok(seconds < 10, `served after ${seconds} s`);
        assert.match(
          server.output(),
          /"reclaimed":1,"node":"[^"]+:n1","msg":"certificate orders taken back after a restart"/,
        );
        process.stdout.write(`# restarted node served the certificate after ${seconds.toFixed(1)} s\n`);
      } finally {
        await nodes.close();
      }
    });
  });
}
