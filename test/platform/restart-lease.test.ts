import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import { httpsPortOf, insertLeasedOrder, nodeEnv, waitForCertificate } from '../support/leased-orders.ts';
import { processStorage, type RunningProcess, startProcess } from '../support/processes.ts';

const HOST = 'restart.example.test';

for (const dialect of testDialects()) {
  describe(`a node killed mid-order and restarted (${dialect})`, () => {
    it('takes its own order back at start and serves the certificate within seconds, not after the lease', async () => {
      const storage = await createTestStorage(dialect);
      const dataDir =
        storage.location.kind === 'sqlite'
          ? join(storage.location.file, '..')
          : mkdtempSync(join(tmpdir(), 'kennel-restart-'));
      const env = nodeEnv(storage.location, {
        dataDir,
        name: 'n1',
        certKeys: `k1:${randomBytes(32).toString('base64')}`,
      });
      let server: RunningProcess | undefined;
      try {
        server = await startProcess('platform.ts', env);
        await server.stop('SIGKILL');

        // What the killed process left: a verified domain whose order it had leased, its last
        // heartbeat just now (a 15 s lease that nobody renews).
        const database = openDatabase<PlatformTables>(processStorage(storage.location, 'kennel.db'));
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
        server = await startProcess('platform.ts', env);
        const https = httpsPortOf(server);
        assert.ok(https, server.output());
        const { cn, ms } = await waitForCertificate(https, HOST, started, 14_000);
        const seconds = ms / 1000;
        assert.equal(cn, HOST, `no certificate for ${HOST} after ${seconds} s:\n${server.output()}`);
        assert.ok(seconds < 10, `served after ${seconds} s`);
        assert.match(
          server.output(),
          /"reclaimed":1,"node":"[^"]+:n1","msg":"certificate orders taken back after a restart"/,
        );
        process.stdout.write(`# restarted node served the certificate after ${seconds.toFixed(1)} s\n`);
      } finally {
        await server?.stop('SIGKILL');
        await storage.drop();
      }
    });
  });
}
