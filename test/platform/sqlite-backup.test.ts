import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { createTestStorage } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { startProcess, storageEnv } from '../support/processes.ts';

/** The Petstore's admin key (writes need a key), given rather than printed at first start. */
const ADMIN_KEY = `pk_${'k'.repeat(43)}`;

const env = (extra: Record<string, string>) => ({
  HTTP_PORT: '0',
  HTTPS_PORT: '0',
  PETSTORE_PORT: '0',
  KENNEL_ADMIN_PASSWORD: 'a long enough password',
  PETSTORE_ADMIN_KEY: ADMIN_KEY,
  ...extra,
});

const metricsUrlOf = (output: string) => {
  const url = /"metrics":"(http:\/\/[^"]+)"/.exec(output)?.[1];
  assert.ok(url, output);
  return url;
};

describe('backups of the SQLite files while the platform runs (POST /backup, operator listener)', () => {
  it('writes complete copies of kennel.db and petstore.db that open elsewhere; the node keeps serving', async () => {
    const storage = await createTestStorage('sqlite');
    const server = await startProcess('platform.ts', env(storageEnv(storage.location)));
    try {
      const metricsUrl = metricsUrlOf(server.output());
      const edgePort = Number(new URL(server.url).port);
      const created = await requestAs(edgePort, 'petstore.localhost', '/api/categories', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
        body: JSON.stringify({ name: 'Backed up' }),
      });
      assert.equal(created.status, 201);

      // Another process (the sqlite3 shell, say) can read the files while the server runs and sees
      // what the API has committed. A consistent copy still comes from POST /backup (or `.backup`).
      const dataDir = join(storage.location.kind === 'sqlite' ? storage.location.file : '', '..');
      const live = new DatabaseSync(join(dataDir, 'petstore.db'), { readOnly: true });
      try {
        assert.deepEqual(
          live
            .prepare('select name from categories')
            .all()
            .map((r) => r.name),
          ['Backed up'],
        );
      } finally {
        live.close();
      }

      const get = await fetch(`${metricsUrl}/backup`);
      assert.equal(get.status, 405);
      assert.equal(get.headers.get('allow'), 'POST');
      assert.equal(((await get.json()) as { code: string }).code, 'backup_method_not_allowed');
      const answer = await fetch(`${metricsUrl}/backup`, { method: 'POST' });
      assert.equal(answer.status, 201);
      const { files } = (await answer.json()) as {
        files: { database: string; file: string; bytes: number }[];
      };
      assert.deepEqual(
        files.map((f) => f.database),
        ['kennel', 'petstore'],
      );
      const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);
      for (const f of files) {
        assert.match(f.file, new RegExp(`^${dataDir}/backups/${f.database}-\\d{8}T\\d{6}Z\\.db$`));
        assert.ok(f.bytes > 0);
        assert.equal(modeOf(f.file), '600', `${f.file} is the owner's alone`);
      }
      // The databases, their write-ahead logs and the backups are readable by their owner only.
      for (const name of ['kennel.db', 'kennel.db-wal', 'petstore.db', 'petstore.db-wal']) {
        assert.ok(existsSync(join(dataDir, name)), name);
        assert.equal(modeOf(join(dataDir, name)), '600', name);
      }
      for (const name of ['kennel.db-shm', 'petstore.db-shm'])
        if (existsSync(join(dataDir, name))) assert.equal(modeOf(join(dataDir, name)), '600', name);
      assert.equal(modeOf(join(dataDir, 'backups')), '700');
      /** The backup file `index` opened read-only: `column(sql)` is the first column of each row. */
      const backup = (index: number) => {
        const db = new DatabaseSync((files[index] as { file: string }).file, { readOnly: true });
        return {
          db,
          column: (query: string) =>
            db
              .prepare(query)
              .all()
              .map((r) => Object.values(r)[0]),
        };
      };
      const kennel = backup(0);
      assert.deepEqual(kennel.column('select slug from projects'), ['petstore']);
      assert.equal(kennel.db.prepare('pragma integrity_check').get()?.integrity_check, 'ok');
      kennel.db.close();
      const petstore = backup(1);
      assert.deepEqual(petstore.column('select name from categories'), ['Backed up']);
      petstore.db.close();

      // A second backup gets files of its own, and the edge still serves.
      const again = (await (await fetch(`${metricsUrl}/backup`, { method: 'POST' })).json()) as {
        files: { file: string }[];
      };
      assert.notEqual(again.files[0]?.file, files[0]?.file);
      assert.equal((await requestAs(edgePort, 'petstore.localhost', '/api/categories')).status, 200);
    } finally {
      await server.stop('SIGTERM');
      await storage.drop();
    }
  });

  it('on PostgreSQL answers 409 pointing to pg_dump', async () => {
    const storage = await createTestStorage('postgres');
    const server = await startProcess(
      'platform.ts',
      env({ ...storageEnv(storage.location), DATA_DIR: mkdtempSync(join(tmpdir(), 'kennel-backup-')) }),
    );
    try {
      const answer = await fetch(`${metricsUrlOf(server.output())}/backup`, { method: 'POST' });
      assert.equal(answer.status, 409);
      assert.deepEqual(await answer.json(), {
        code: 'backup_not_available',
        message: 'This node stores its data in PostgreSQL: back it up with pg_dump (docs/operations.md).',
        status: 409,
      });
    } finally {
      await server.stop('SIGTERM');
      await storage.drop();
    }
  });
});
