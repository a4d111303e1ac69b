import type { Kysely } from 'kysely';
import { type PlatformTables, platformMigrations } from '../../src/platform/db-schema.ts';
import { type Dialect, migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import { createTestStorage } from './databases.ts';

/**
 * A migration test: a fresh platform database migrated up to migration `name` (not included),
 * given to `fill` to write what an older version left, with `migrateRest()` to apply the rest of
 * the migrations; closed and dropped afterwards.
 */
export async function beforeMigration(
  dialect: Dialect,
  name: string,
  fill: (db: Kysely<PlatformTables>, migrateRest: () => Promise<void>) => Promise<void>,
) {
  const storage = await createTestStorage(dialect);
  const database = openDatabase<PlatformTables>(storage.location);
  try {
    const { db } = database;
    const before = Object.fromEntries(Object.entries(platformMigrations).filter(([key]) => key < name));
    await migrateToLatest(db, database.dialect, 'platform', before);
    await fill(db, () => migrateToLatest(db, database.dialect, 'platform', platformMigrations));
  } finally {
    await database.close();
    await storage.drop();
  }
}
