import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sealedWith } from '../../src/lib/sealed-box.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { processStorage, startProcess, storageEnv } from '../support/processes.ts';

const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

/** The key id of every sealed platform secret, read with the platform stopped. */
async function sealedUnder(storage: TestStorage): Promise<Record<string, string | undefined>> {
  const database = openDatabase<PlatformTables>(processStorage(storage.location, 'kennel.db'));
  try {
    const rows = await database.db.selectFrom('platform_keys').select(['name', 'value']).execute();
    return Object.fromEntries(
      rows.map((row) => [
        row.name,
        sealedWith(
          row.value.startsWith('{') ? (JSON.parse(row.value) as { keySealed: string }).keySealed : row.value,
        ),
      ]),
    );
  } finally {
    await database.close();
  }
}

for (const dialect of testDialects()) {
  describe(`rotating CERT_KEYS across restarts (${dialect})`, () => {
    it('k1 → "k2,k1" re-seals at start (logged) → k2 alone starts and serves', async () => {
      const storage = await createTestStorage(dialect);
      const dataDir =
        storage.location.kind === 'sqlite'
          ? join(storage.location.file, '..')
          : mkdtempSync(join(tmpdir(), 'kennel-keys-'));
      const [k1, k2] = [newKey('k1'), newKey('k2')];
      const run = async (certKeys: string) => {
        const server = await startProcess('platform.ts', {
          ...storageEnv(storage.location),
          DATA_DIR: dataDir,
          HTTP_PORT: '0',
          HTTPS_PORT: '0',
          PETSTORE_PORT: '0',
          CERT_KEYS: certKeys,
        });
        const ready = await requestAs(Number(new URL(server.url).port), 'localhost', '/readyz');
        await server.stop('SIGTERM');
        assert.equal(server.child.exitCode, 0, server.output());
        return { ready: ready.status, output: server.output() };
      };
      try {
        const first = await run(k1);
        assert.equal(first.ready, 200);
        assert.doesNotMatch(first.output, /secrets re-sealed/);
        assert.deepEqual(await sealedUnder(storage), { internal_ca: 'k1', tls_ticket_keys: 'k1' });

        const second = await run(`${k2},${k1}`);
        assert.equal(second.ready, 200);
        assert.match(second.output, /"resealed":2,"key":"k2","before":\{"k1":2\},"msg":"secrets re-sealed"/);
        assert.deepEqual(await sealedUnder(storage), { internal_ca: 'k2', tls_ticket_keys: 'k2' });

        const third = await run(k2);
        assert.equal(third.ready, 200);
        assert.doesNotMatch(third.output, /secrets re-sealed/);
      } finally {
        await storage.drop();
      }
    });
  });
}
