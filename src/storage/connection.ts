import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { openSqliteFile } from './sqlite-adapter.ts';

export type Dialect = 'sqlite' | 'postgres';

/** Where the data lives: a SQLite file (the default) or a PostgreSQL URL. */
export type StorageLocation =
  | { readonly kind: 'sqlite'; readonly file: string }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      /** A schema to use instead of `public` (tests give each file its own). */
      readonly schema?: string;
      readonly poolSize?: number;
    };

/**
 * An open database. Both dialects return the same JavaScript types: int8 columns come back as
 * numbers (ids stay below 2^53, see docs/decisions.md), text as strings, and booleans are read
 * through `Boolean()` because SQLite stores them as 0/1.
 */
export interface Database<Schema> {
  readonly dialect: Dialect;
  readonly db: Kysely<Schema>;
  close(): Promise<void>;
}

const INT8_OID = 20;

export function openDatabase<Schema>(location: StorageLocation): Database<Schema> {
  if (location.kind === 'sqlite') {
    if (location.file !== ':memory:') mkdirSync(dirname(location.file), { recursive: true });
    const { kysely } = openSqliteFile(location.file);
    const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: kysely }) });
    return { dialect: 'sqlite', db, close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: location.url,
    max: location.poolSize ?? 10,
    ...(location.schema ? { options: `-c search_path=${quoteIdentifier(location.schema)}` } : {}),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  return { dialect: 'postgres', db, close: () => db.destroy() };
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
