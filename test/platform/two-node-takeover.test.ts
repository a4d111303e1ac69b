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
import { type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

const HOST = 'takeover.example.test';

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

const httpsPort = (node: RunningProcess) =>
  Number(/"https":"https:\/\/[^"]*:(\d+)"/.exec(node.output())?.[1]);

// Two nodes share one database only on PostgreSQL (issue 17, item 7).
for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`two nodes, one killed mid-order (${dialect})`, () => {
    it('the surviving node takes the dead node’s order over when its lease runs out and serves the certificate', async () => {
      const storage = await createTestStorage(dialect);
      const keys = `k1:${randomBytes(32).toString('base64')}`;
      const env = (node: string) => ({
        ...storageEnv(storage.location),
        DATA_DIR: mkdtempSync(join(tmpdir(), `kennel-${node}-`)),
        HTTP_PORT: '0',
        HTTPS_PORT: '0',
        PETSTORE_PORT: '0',
        NODE_NAME: node,
        CERT_KEYS: keys,
      });
      let a: RunningProcess | undefined;
      let b: RunningProcess | undefined;
      const database = openDatabase<PlatformTables>(storage.location);
      try {
        // One after the other: the first start creates the schema and the first project.
        a = await startProcess('platform.ts', env('a'));
        b = await startProcess('platform.ts', env('b'));
        const { db } = database;
        const project = await db
          .selectFrom('projects')
          .select('id')
          .where('slug', '=', 'petstore')
          .executeTakeFirstOrThrow();
        // Node A is ordering the certificate of a verified domain: it holds the lease, and its
        // heartbeat renewed it just now (15 s). Then A dies, and nobody renews it.
        const now = new Date();
        await db.transaction().execute(async (trx) => {
          const domain = await trx
            .insertInto('domains')
            .values({
              project_id: project.id,
              hostname: HOST,
              state: 'verified',
              is_apex: false as never,
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
          await trx
            .insertInto('certificate_jobs')
            .values({
              domain_id: domain.id,
              hostname: HOST,
              state: 'ordering',
              reason: null,
              attempts: 0,
              next_attempt_at: now.toISOString(),
              lease_owner: `${hostname()}:a`,
              lease_instance: `${a?.child.pid}:the process about to be killed`,
              lease_until: new Date(now.getTime() + 15_000).toISOString(),
              updated_at: now.toISOString(),
            })
            .execute();
        });
        const killed = Date.now();
        await a.stop('SIGKILL');

        const port = httpsPort(b);
        assert.ok(port, b.output());
        let cn: string | undefined;
        while (Date.now() - killed < 25_000) {
          cn = await presented(port, HOST);
          if (cn === HOST) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const took = Date.now() - killed;
        assert.equal(cn, HOST, `node b presents no certificate for ${HOST} after ${took} ms:\n${b.output()}`);
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
        await a?.stop('SIGKILL');
        await b?.stop('SIGKILL');
        await database.close();
        await storage.drop();
      }
    });
  });
}
