import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { petstoreMigrations } from '../../src/petstore/index.ts';
import { migrateToLatest, openDatabase, quoteIdentifier } from '../../src/storage/index.ts';
import { createTestStorage, TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';

/**
 * Migrating while other schemas on the same server come and go (test suites in parallel, or
 * other installations): Kysely's own introspection reads every schema, and PostgreSQL fails that
 * query when one is dropped under it; migrateToLatest gives the migrator one that reads only the
 * current schema. Without it this test fails within a few migrations.
 */
describe('migrating while other schemas are created and dropped (postgres)', {
  skip: !testDialects().includes('postgres'),
}, () => {
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 2 });
  after(() => admin.end());

  it('brings 25 fresh schemas up to date while another connection drops schemas with tables', async () => {
    let churning = true;
    let dropped = 0;
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        const name = quoteIdentifier(`churn_${process.pid}_${i}`);
        await admin.query(`CREATE SCHEMA ${name}`);
        await admin.query(
          `CREATE TABLE ${name}.a (id bigserial primary key, b text); CREATE TABLE ${name}.c (id bigserial primary key)`,
        );
        await admin.query(`DROP SCHEMA ${name} CASCADE`);
        dropped += 1;
      }
    })();
    try {
      for (let i = 0; i < 25; i++) {
        const storage = await createTestStorage('postgres');
        const database = openDatabase(storage.location);
        try {
          await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
        } finally {
          await database.close();
          await storage.drop();
        }
      }
    } finally {
      churning = false;
      await churn;
    }
    assert.ok(dropped > 25, `schemas were dropped meanwhile (${dropped})`);
  });
});
