import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { connect } from 'node:tls';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import { processStorage, type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

const HOST = 'restart.example.test';

/** The subject CN of the certificate the node presents for `servername`. */
function presented(port: number, servername: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', servername, rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.destroy();
      resolve(Array.isArray(cn) ? cn[0] : cn);
    });
    socket.on('error', () => resolve(undefined));
  });
}

for (const dialect of testDialects()) {
  describe(`a node killed mid-order and restarted (${dialect})`, () => {
    it('takes its own order back at start and serves the certificate within seconds, not after the lease', async () => {
      const storage = await createTestStorage(dialect);
      const dataDir =
        storage.location.kind === 'sqlite'
          ? join(storage.location.file, '..')
          : mkdtempSync(join(tmpdir(), 'kennel-restart-'));
      const env = {
        ...storageEnv(storage.location),
        DATA_DIR: dataDir,
        HTTP_PORT: '0',
        HTTPS_PORT: '0',
        PETSTORE_PORT: '0',
        NODE_NAME: 'n1',
        CERT_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      };
      let server: RunningProcess | undefined;
      try {
        server = await startProcess('platform.ts', env);
        await server.stop('SIGKILL');

        // What the killed process left: a verified domain whose order it had leased, its last
        // heartbeat just now (a 15 s lease that nobody renews).
        const database = openDatabase<PlatformTables>(processStorage(storage.location, 'kennel.db'));
        try {
          const { db } = database;
          const project = await db
            .selectFrom('projects')
            .select('id')
            .where('slug', '=', 'petstore')
            .executeTakeFirstOrThrow();
          const now = new Date();
          const domain = await db
            .insertInto('domains')
            .values({
              project_id: project.id,
              hostname: HOST,
              state: 'verified',
              is_apex: dialect === 'postgres' ? false : 0,
              ownership_token: 'token',
              reason: null,
              reason_detail: null,
              verified_at: now.toISOString(),
              last_checked_at: now.toISOString(),
              next_check_at: new Date(now.getTime() + 86_400_000).toISOString(),
              check_attempts: 0,
              checks_until: null,
              created_at: now.toISOString(),
              removed_at: null,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          await db
            .insertInto('certificate_jobs')
            .values({
              domain_id: domain.id,
              hostname: HOST,
              state: 'ordering',
              reason: null,
              attempts: 0,
              next_attempt_at: now.toISOString(),
              lease_owner: `${hostname()}:n1`,
              lease_instance: 'the killed process',
              lease_until: new Date(now.getTime() + 15_000).toISOString(),
              updated_at: now.toISOString(),
            })
            .execute();
        } finally {
          await database.close();
        }

        const started = Date.now();
        server = await startProcess('platform.ts', env);
        const https = /"https":"https:\/\/[^"]*:(\d+)"/.exec(server.output())?.[1];
        assert.ok(https, server.output());
        let cn: string | undefined;
        while (Date.now() - started < 14_000) {
          cn = await presented(Number(https), HOST);
          if (cn === HOST) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const seconds = (Date.now() - started) / 1000;
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
