import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Dialect, quoteIdentifier, type StorageLocation } from '../../src/storage/index.ts';

/** The PostgreSQL server the tests use (see .ci/run, which starts it where it is not running). */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * The dialects a test file runs its suite against: both by default, one with
 * TEST_DATABASE=sqlite|postgres.
 */
export function testDialects(): Dialect[] {
  const only = process.env.TEST_DATABASE;
  if (only === undefined || only === '' || only === 'both') return ['sqlite', 'postgres'];
  if (only !== 'sqlite' && only !== 'postgres') {
    throw new Error(`TEST_DATABASE must be sqlite, postgres or both (got ${JSON.stringify(only)})`);
  }
  return [only];
}

export interface TestStorage {
  readonly location: StorageLocation;
  /** Removes the SQLite directory or drops the PostgreSQL schema. */
  drop(): Promise<void>;
}

/**
 * A fresh, empty place for one test's data: a temporary SQLite file, or a PostgreSQL schema of its
 * own (so test files run in parallel against one server).
 */
export async function createTestStorage(dialect: Dialect): Promise<TestStorage> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-test-'));
    return {
      location: { kind: 'sqlite', file: join(dir, 'test.db') },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  return {
    location: { kind: 'postgres', url: TEST_POSTGRES_URL, schema, poolSize: 10 },
    drop: () => adminQuery(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`),
  };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${TEST_POSTGRES_URL} (${(error as Error).message}). Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start — or run .ci/run, which installs and starts it. To run only the SQLite suite: TEST_DATABASE=sqlite npm test`,
    );
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
