import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SQLInputValue, StatementSync } from 'node:sqlite';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { openSqliteFile, openSqliteReader } from './sqlite-adapter.ts';

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
  /**
   * SQLite only: synchronous access for the hottest paths. `read` runs on a separate read
   * connection (committed data only); `writeSync` runs a whole transaction in one tick on the
   * writer, holding Kysely's connection lock so no Kysely transaction interleaves with it.
   */
  readonly sqlite?: SqliteSync;
  close(): Promise<void>;
}

export interface SqliteSync {
  read(sql: string): StatementSync;
  writeSync<T>(work: (statement: (sql: string) => StatementSync) => T): Promise<T>;
}

export type { SQLInputValue };

const INT8_OID = 20;

export function openDatabase<Schema>(location: StorageLocation): Database<Schema> {
  if (location.kind === 'sqlite') {
    if (location.file !== ':memory:') mkdirSync(dirname(location.file), { recursive: true });
    const writer = openSqliteFile(location.file);
    const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: writer.kysely }) });
    let reader: ReturnType<typeof openSqliteReader> | undefined;
    const sqlite: SqliteSync = {
      read(sql) {
        // Opened on first use: the file (and its WAL) exists once migrations have run.
        reader ??= openSqliteReader(location.file);
        return reader.statement(sql);
      },
      writeSync: (work) =>
        db.connection().execute(async () => {
          writer.raw.exec('BEGIN IMMEDIATE');
          try {
            const result = work(writer.statement);
            writer.raw.exec('COMMIT');
            return result;
          } catch (error) {
            if (writer.raw.isTransaction) writer.raw.exec('ROLLBACK');
            throw error;
          }
        }),
    };
    return {
      dialect: 'sqlite',
      db,
      sqlite,
      close: async () => {
        reader?.raw.close();
        await db.destroy();
      },
    };
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
