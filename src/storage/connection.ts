import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { backup, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { type GroupCommit, postgresGroupCommit, sqliteGroupCommit } from './group-commit.ts';
import { type CheckpointMode, createPrivately, openSqliteFile, sqliteDialect } from './sqlite-adapter.ts';

export type Dialect = 'sqlite' | 'postgres';

/** Where the data lives: a SQLite file (the default) or a PostgreSQL URL. */
export type StorageLocation =
  | {
      readonly kind: 'sqlite';
      readonly file: string;
      /** Servers: 'background' (sqlite-checkpointer.ts); default 'inline'. */
      readonly checkpoint?: CheckpointMode;
    }
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
 * numbers (ids stay below 2^53, see docs/decisions/petstore.md), text as strings, and booleans are read
 * through `Boolean()` because SQLite stores them as 0/1.
 */
export interface Database<Schema> {
  readonly dialect: Dialect;
  readonly db: Kysely<Schema>;
  /**
   * Group commit for hot writes, on both dialects: work queued together shares one transaction
   * (on SQLite run synchronously on the writer, on PostgreSQL on a connection of its own).
   */
  readonly groupCommit: GroupCommit;
  /** SQLite only: synchronous reads for the hottest paths, between transactions (prepared.ts). */
  readonly sqlite?: SqliteSync;
  /** PostgreSQL only: the pool, for reads run as named prepared statements (prepared.ts). */
  readonly pgPool?: pg.Pool;
  close(): Promise<void>;
}

export interface SqliteSync {
  /**
   * A statement of the caller's own, outside the cache the writes share, so that its settings
   * (rows as arrays) touch no other query. Run it only while `canReadNow()`.
   */
  prepareOwn(sql: string): StatementSync;
  /** False while a Kysely transaction holds the writer connection (then read through Kysely). */
  canReadNow(): boolean;
  /**
   * Copies the database, consistent as of the end of the copy, into a new file with SQLite's
   * online backup (a few pages per event-loop turn, so the server keeps serving). A plain copy of
   * the file while the server runs can be torn: recent commits live in the write-ahead log.
   */
  backupTo(file: string): Promise<void>;
}

export type { SQLInputValue };

const INT8_OID = 20;

export function openDatabase<Schema>(location: StorageLocation): Database<Schema> {
  if (location.kind === 'sqlite') {
    // The data directory, when created here, is the owner's alone (it holds the databases).
    if (location.file !== ':memory:') mkdirSync(dirname(location.file), { recursive: true, mode: 0o700 });
    const writer = openSqliteFile(location.file, location.checkpoint);
    const db = new Kysely<Schema>({ dialect: sqliteDialect(writer.kysely) });
    const sqlite: SqliteSync = {
      prepareOwn: (sql) => writer.raw.prepare(sql),
      canReadNow: () => !writer.raw.isTransaction,
      backupTo: async (file) => {
        // A backup holds everything the database does: as private as the database itself.
        createPrivately(file);
        await backup(writer.raw, file, { rate: 256 });
      },
    };
    return {
      dialect: 'sqlite',
      db,
      groupCommit: sqliteGroupCommit(db, writer),
      sqlite,
      close: async () => {
        // The thread's connection first: the writer's close is then the last, and checkpoints.
        await writer.checkpointer?.close();
        await db.destroy();
      },
    };
  }
  const pool = postgresPool(location, location.poolSize ?? 10);
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  // Group commit's batches run one at a time on a connection of their own, so they never wait
  // for a pooled client behind the requests they would unblock.
  const writer = postgresPool(location, 1);
  return {
    dialect: 'postgres',
    db,
    groupCommit: postgresGroupCommit(writer),
    pgPool: pool,
    close: async () => {
      await Promise.all([db.destroy(), writer.end()]);
    },
  };
}

function postgresPool(location: Extract<StorageLocation, { kind: 'postgres' }>, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: location.url,
    max,
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
  return pool;
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
