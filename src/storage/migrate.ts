import { type DatabaseIntrospector, type Kysely, sql } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import type { Dialect } from './connection.ts';

/** A migration that may differ per dialect (id columns, booleans, timestamps). */
export interface DialectMigration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/**
 * Brings a database up to date with a service's migrations, in name order. Each service keeps its
 * own history table, so the Petstore and the platform can share one PostgreSQL database. Kysely
 * takes a lock for the run, so several nodes starting at once migrate once.
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: any service's schema
  db: Kysely<any>,
  dialect: Dialect,
  service: string,
  migrations: Record<string, DialectMigration>,
): Promise<void> {
  const adapted: Record<string, Migration> = {};
  for (const [name, migration] of Object.entries(migrations)) {
    adapted[name] = { up: (conn) => migration.up(conn, dialect) };
  }
  // Kysely looks for its history tables in every schema unless told which one; several schemas
  // on one server (tests, or several installations) would otherwise see each other's tables.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: schema ? scopedToCurrentSchema(db) : db,
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: { getMigrations: async () => adapted },
    migrationTableName: `${service}_migration`,
    migrationLockTableName: `${service}_migration_lock`,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw new Error(`migrating ${service} failed: ${(error as Error).message}`, { cause: error });
}

/**
 * The database as Kysely's migrator sees it, with an introspector that reads the current schema
 * only. Kysely's own lists the tables (and each column's serial sequence) of every schema on the
 * server to find its history table, and PostgreSQL fails that query when another schema is
 * dropped meanwhile: test suites dropping theirs in parallel, or another installation on the same
 * server (test/storage/migrate-race.test.ts). The migrator only asks whether its schema and its
 * tables exist.
 */
// biome-ignore lint/suspicious/noExplicitAny: any service's schema
function scopedToCurrentSchema(db: Kysely<any>): Kysely<any> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () => (await sql<{ name: string }>`select current_schema() as name`.execute(db)).rows,
    getTables: async () =>
      (
        await sql<{ name: string; schema: string }>`
          select table_name as name, table_schema as schema from information_schema.tables
          where table_schema = current_schema()`.execute(db)
      ).rows.map((table) => ({ ...table, isView: false, isForeign: false, columns: [] })),
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value = Reflect.get(target, property, target);
      // Kysely's methods use private fields: they must run on the instance itself.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The column type of an auto-assigned int64 primary key. */
export function idColumnType(dialect: Dialect): 'integer' | 'bigserial' {
  return dialect === 'sqlite' ? 'integer' : 'bigserial';
}

/** Booleans are stored as 0/1 in SQLite and as `boolean` in PostgreSQL. */
export function booleanColumnType(dialect: Dialect): 'integer' | 'boolean' {
  return dialect === 'sqlite' ? 'integer' : 'boolean';
}
