import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { backup, type DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { createPrivately, openSqliteFile } from './sqlite-adapter.ts';

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
      /**
       * How the sessions show in pg_stat_activity when the URL sets no application_name
       * (operators find and cut a service's sessions by it).
       */
      readonly applicationName?: string;
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
   * SQLite only: synchronous access for the hottest paths. `readNow` reads between
   * transactions; `writeSync` runs a whole transaction in one tick on the writer, holding
   * Kysely's connection lock so no Kysely transaction interleaves with it.
   */
  readonly sqlite?: SqliteSync;
  /** PostgreSQL only: the pool, for reads run as named prepared statements (prepared.ts). */
  readonly pgPool?: pg.Pool;
  close(): Promise<void>;
}

export interface SqliteSync {
  /**
   * A statement to run synchronously now on the writer connection, or undefined while a Kysely
   * transaction holds it (then read through Kysely, which waits for the transaction).
   */
  readNow(sql: string): StatementSync | undefined;
  writeSync<T>(work: (statement: (sql: string) => StatementSync) => T): Promise<T>;
  /**
   * Copies the database, consistent as of the end of the copy, into a new file with SQLite's
   * online backup (a few pages per event-loop turn, so the server keeps serving). The only way to
   * copy the file while the server runs: it holds the file's lock exclusively.
   */
  backupTo(file: string): Promise<void>;
}

export type { SQLInputValue };

const INT8_OID = 20;

export function openDatabase<Schema>(location: StorageLocation): Database<Schema> {
  if (location.kind === 'sqlite') {
    // The data directory, when created here, is the owner's alone (it holds the databases).
    if (location.file !== ':memory:') mkdirSync(dirname(location.file), { recursive: true, mode: 0o700 });
    const writer = openSqliteFile(location.file);
    const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: writer.kysely }) });
    const groupCommit = new GroupCommit(db, writer);
    const sqlite: SqliteSync = {
      readNow: (sql) => (writer.raw.isTransaction ? undefined : writer.statement(sql)),
      writeSync: (work) => groupCommit.run(work),
      backupTo: async (file) => {
        // A backup holds everything the database does: as private as the database itself.
        createPrivately(file);
        await backup(writer.raw, file, { rate: 256 });
      },
    };
    return {
      dialect: 'sqlite',
      db,
      sqlite,
      close: async () => {
        await db.destroy();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: location.url,
    max: location.poolSize ?? 10,
    fallback_application_name: location.applicationName ?? 'kennel',
    // Bounds both connecting and waiting for a free pooled client: a server that does not answer
    // (or a pool stuck behind one) fails the request (503) rather than holding it forever.
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    ...(location.schema ? { options: `-c search_path=${quoteIdentifier(location.schema)}` } : {}),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  // A client losing its server (restart, pg_terminate_backend, network) emits 'error'; without a
  // listener that event would crash the process. The pool listens only while a client is idle,
  // so each client gets its own listener for its whole life: while checked out, the query in
  // flight fails (answered 503, see isConnectionLost) and the pool drops the dead client when it
  // is released (pg-pool discards clients that are no longer queryable); the next query connects
  // afresh.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  return { dialect: 'postgres', db, pgPool: pool, close: () => db.destroy() };
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

type Statement = (sql: string) => StatementSync;

/**
 * Group commit: the synchronous writes that arrive in one turn of the event loop share one
 * transaction, each inside its own savepoint, so one that throws undoes only itself. Nobody's
 * promise settles before COMMIT returns, so an answer still means "durable". A commit costs far
 * more than the statements, so under load this multiplies the write rate.
 */
class GroupCommit {
  /** Only its connection lock is used, so any schema will do. */
  readonly #db: { connection(): { execute<T>(fn: () => Promise<T>): Promise<T> } };
  readonly #writer: { raw: DatabaseSync; statement: Statement };
  #queue: {
    work: (statement: Statement) => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  }[] = [];

  constructor(
    db: { connection(): { execute<T>(fn: () => Promise<T>): Promise<T> } },
    writer: { raw: DatabaseSync; statement: Statement },
  ) {
    this.#db = db;
    this.#writer = writer;
  }

  run<T>(work: (statement: Statement) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(() => void this.#flush());
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    const results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await this.#db.connection().execute(async () => {
        const raw = this.#writer.raw;
        raw.exec('BEGIN IMMEDIATE');
        try {
          for (const item of batch) {
            raw.exec('SAVEPOINT item');
            try {
              results.push({ ok: true, value: item.work(this.#writer.statement) });
              raw.exec('RELEASE item');
            } catch (error) {
              raw.exec('ROLLBACK TO item');
              raw.exec('RELEASE item');
              results.push({ ok: false, error });
            }
          }
          raw.exec('COMMIT');
        } catch (error) {
          if (raw.isTransaction) raw.exec('ROLLBACK');
          throw error;
        }
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const result = results[i];
      if (result?.ok) item.resolve(result.value);
      else item.reject(result?.error);
    });
  }
}
