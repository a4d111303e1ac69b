import { closeSync, openSync } from 'node:fs';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
  type SqliteStatement,
} from 'kysely';
import { BACKSTOP_PAGES, type Checkpointer, startCheckpointer } from './sqlite-checkpointer.ts';

/**
 * Who checkpoints the write-ahead log: SQLite itself, on the connection that commits (tools and
 * tests), or a thread of its own (servers, whose event loop must not wait for `fsync`).
 */
export type CheckpointMode = 'inline' | 'background';

/**
 * Kysely's SqliteDialect over `node:sqlite` (no native add-on). Statements are prepared once per
 * SQL text and reused: Kysely prepares on every call, which costs more than running a point read.
 */
export function openSqliteFile(
  path: string,
  checkpoint: CheckpointMode = 'inline',
): {
  raw: DatabaseSync;
  kysely: SqliteDatabase;
  statement: (sql: string) => StatementSync;
  /** Present in background mode: close it before the connection. */
  checkpointer?: Checkpointer;
} {
  createPrivately(path);
  const raw = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5000 });
  // WAL: readers never block the writer; NORMAL sync in WAL survives a process crash (SIGKILL)
  // without an fsync per commit. busy_timeout covers other connections (the checkpointer, the
  // CLI, a backup tool). Locking stays shared: the WAL checkpoint, whose fsyncs would stall the
  // event loop, runs on a connection of its own (sqlite-checkpointer.ts).
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA foreign_keys = ON');
  raw.exec('PRAGMA busy_timeout = 5000');
  let checkpointer: Checkpointer | undefined;
  if (checkpoint === 'background' && path !== ':memory:' && path !== '') {
    raw.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    checkpointer = startCheckpointer(path);
  }
  const cache = new Map<string, SqliteStatement>();
  const rawCache = new Map<string, StatementSync>();
  const statement = (sql: string) => {
    let prepared = rawCache.get(sql);
    if (!prepared) {
      prepared = raw.prepare(sql);
      if (rawCache.size > 500) rawCache.clear();
      rawCache.set(sql, prepared);
    }
    return prepared;
  };
  const kysely: SqliteDatabase = {
    close: () => raw.close(),
    prepare(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = adapt(raw.prepare(sql));
        // Queries are built from a fixed set of shapes; the bound keeps a pathological caller
        // (say, IN lists of every length) from growing the cache forever.
        if (cache.size > 500) cache.clear();
        cache.set(sql, statement);
      }
      return statement;
    },
  };
  return { raw, kysely, statement, checkpointer };
}

/**
 * Kysely's SQLite dialect, but a transaction takes the write lock when it begins (`BEGIN
 * IMMEDIATE`). Other processes write the same file (reset-password, a backup tool): a deferred
 * transaction that read before another process committed could not write afterwards
 * (SQLITE_BUSY_SNAPSHOT, which no busy timeout waits out). Begun immediately, it waits its turn
 * under the busy timeout instead, and the other writer waits for it.
 */
export function sqliteDialect(database: SqliteDatabase): SqliteDialect {
  return new ImmediateSqliteDialect({ database });
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase;
  constructor(config: { database: SqliteDatabase }) {
    super(config);
    this.#database = config.database;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.#database });
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }
}

function adapt(statement: StatementSync): SqliteStatement {
  type Param = SQLInputValue;
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...(parameters as Param[])),
    run: (parameters) => statement.run(...(parameters as Param[])),
    iterate: (parameters) => statement.iterate(...(parameters as Param[])) as IterableIterator<unknown>,
  };
}

/**
 * Creates the database file readable by its owner only (0600) when it does not exist yet; SQLite
 * would create it 0644 (less the umask). SQLite gives the -wal and -shm files it creates the
 * database file's own permissions, so they are private too. An existing file keeps its mode:
 * the operator chose it.
 */
export function createPrivately(path: string): void {
  if (path === ':memory:' || path === '') return;
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
