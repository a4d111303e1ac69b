import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Generated, type Kysely, sql } from 'kysely';
import pg from 'pg';
import { type Database, isConnectionLost, openDatabase, transact } from '../../src/storage/index.ts';
import {
  createTestStorage,
  TEST_POSTGRES_URL,
  type TestStorage,
  testDialects,
} from '../support/databases.ts';

interface Tables {
  items: { id: Generated<number>; name: string };
}

/**
 * Losing PostgreSQL sessions under the process (pg_terminate_backend, a restart): the process
 * stays up, the query in flight fails with an error isConnectionLost recognises, the pool drops
 * the dead client and the next query works. Before the fix, a client cut while checked out
 * emitted an 'error' nobody listened to, which crashed the whole process (this test file too).
 */
describe('PostgreSQL sessions cut under the pool (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 2 });
  let storage: TestStorage;
  let database: Database<Tables>;
  let db: Kysely<Tables>;
  const applicationName = `kennel_test_${randomBytes(4).toString('hex')}`;

  /** Ends every session of this test's pool; resolves with how many there were. */
  async function cutSessions(): Promise<number> {
    const { rowCount } = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rowCount ?? 0;
  }

  before(async () => {
    storage = await createTestStorage('postgres');
    const { location } = storage;
    assert.ok(location.kind === 'postgres');
    database = openDatabase<Tables>({ ...location, applicationName });
    db = database.db;
    await sql`CREATE TABLE items (id bigserial PRIMARY KEY, name text NOT NULL)`.execute(db);
  });
  after(async () => {
    await database?.close();
    await storage?.drop();
    await admin.end();
  });

  it('names its sessions with the application name, so an operator can find them', async () => {
    await sql`select 1`.execute(db);
    const { rows } = await admin.query(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    assert.ok((rows[0] as { n: number }).n >= 1);
  });

  it('a session cut while a transaction holds it: the process lives, the transaction fails as connection lost, the next query works', async () => {
    const failure = await db
      .transaction()
      .execute(async (trx) => {
        await sql`select 1`.execute(trx);
        assert.ok((await cutSessions()) >= 1);
        // The checked-out client hears of its end between queries: the moment that crashed.
        await sleep(200);
        await sql`select 1`.execute(trx);
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(failure, 'the transaction failed');
    assert.equal(isConnectionLost(failure), true, String(failure));
    const { rows } = await sql<{ n: number }>`select 2 as n`.execute(db);
    assert.deepEqual(rows, [{ n: 2 }]);
  });

  it('a session cut during a plain query: the query fails as connection lost, the next one works', async () => {
    const slow = sql`select pg_sleep(5)`.execute(db).then(
      () => undefined,
      (e: unknown) => e,
    );
    await sleep(100);
    await cutSessions();
    const error = await slow;
    assert.equal(isConnectionLost(error), true, String(error));
    // pg_terminate_backend only signals: the pool's idle sessions end a moment later.
    await sleep(100);
    assert.deepEqual((await sql<{ n: number }>`select 3 as n`.execute(db)).rows, [{ n: 3 }]);
  });

  it('every idle session cut at once: the next queries get fresh sessions', async () => {
    await Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(0.05)`.execute(db)));
    assert.ok((await cutSessions()) >= 2);
    await sleep(100);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => sql<{ n: number }>`select ${i}::int as n`.execute(db)),
    );
    assert.deepEqual(
      results.map((r) => r.rows[0]?.n),
      [0, 1, 2, 3, 4],
    );
  });

  it('transact retries a transaction whose session was cut before COMMIT, once, and it commits once', async () => {
    await sql`DELETE FROM items`.execute(db);
    let runs = 0;
    const id = await transact(db, async (trx) => {
      runs++;
      const row = await trx
        .insertInto('items')
        .values({ name: 'kept' })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (runs === 1) {
        await cutSessions();
        await sleep(100);
        await sql`select 1`.execute(trx);
      }
      return row.id;
    });
    assert.equal(runs, 2);
    const rows = await db.selectFrom('items').selectAll().execute();
    assert.deepEqual(rows, [{ id, name: 'kept' }], 'the first attempt rolled back, the second committed');
  });

  it('transact does not retry when the session is cut during COMMIT (it may have committed)', async () => {
    await sql`DELETE FROM items`.execute(db);
    // A deferred trigger makes COMMIT take a while, so the cut lands during it.
    await sql
      .raw(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON items
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`)
      .execute(db);
    try {
      let runs = 0;
      const committing = transact(db, async (trx) => {
        runs++;
        await trx.insertInto('items').values({ name: 'unknown fate' }).execute();
      });
      // Cut only once the session is in its COMMIT (the deferred trigger holds it there for 1 s);
      // a fixed sleep could cut the INSERT instead on a loaded machine.
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline) {
        const { rows } = await admin.query(
          "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query ILIKE 'commit%'",
          [applicationName],
        );
        if (rows.length > 0) break;
        await sleep(20);
      }
      await cutSessions();
      const error = await committing.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal(isConnectionLost(error), true, String(error));
      assert.equal(runs, 1, 'not retried: the caller cannot know whether it committed');
    } finally {
      // The cut may have left a dead session in the pool that this cleanup picks first: retried.
      const drop = () =>
        sql.raw('DROP TRIGGER slow_commit ON items; DROP FUNCTION slow_commit()').execute(db);
      await drop().catch((error: unknown) => {
        if (!isConnectionLost(error)) throw error;
        return drop();
      });
    }
  });

  it('transact gives up at once when the server refuses connections', async () => {
    const down = openDatabase<Tables>({ kind: 'postgres', url: 'postgres://root@127.0.0.1:1/test' });
    try {
      const started = performance.now();
      let runs = 0;
      const error = await transact(down.db, async () => {
        runs++;
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal(isConnectionLost(error), true, String(error));
      assert.equal(runs, 0);
      assert.ok(performance.now() - started < 2_000);
    } finally {
      await down.close();
    }
  });
});

describe('isConnectionLost', () => {
  it('recognises lost and refused connections, and nothing else', () => {
    const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const lost of [
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P02'),
      withCode('57P03', 'the database system is starting up'),
      withCode('08000'),
      withCode('08003'),
      withCode('08006'),
      withCode('53300', 'sorry, too many clients already'),
      withCode('ECONNRESET'),
      withCode('ECONNREFUSED'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
      new Error('wrapped', { cause: withCode('57P01') }),
    ]) {
      assert.equal(isConnectionLost(lost), true, `${(lost as { code?: string }).code} ${lost.message}`);
    }
    for (const other of [
      withCode('23505', 'duplicate key value violates unique constraint'),
      withCode('40001'),
      withCode('42P01', 'relation "x" does not exist'),
      withCode('ERR_SQLITE_ERROR', 'database is locked'),
      new Error('Connection terminated unexpectedly, or so the handler says'),
      undefined,
      null,
      'Connection terminated unexpectedly',
    ]) {
      assert.equal(isConnectionLost(other), false, String(other));
    }
  });
});

describe('SQLite files are private (sqlite)', {
  skip: !testDialects().includes('sqlite') && 'TEST_DATABASE excludes sqlite',
}, () => {
  it('creates the data directory 0700 and the database, its WAL and SHM 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kennel-modes-'));
    const previous = process.umask(0o022);
    try {
      const file = join(root, 'data', 'test.db');
      const database = openDatabase<Tables>({ kind: 'sqlite', file });
      try {
        await sql`CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL)`.execute(database.db);
        await database.db.insertInto('items').values({ id: 1, name: 'a' }).execute();
        const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);
        assert.equal(modeOf(join(root, 'data')), '700');
        assert.equal(modeOf(file), '600');
        assert.ok(existsSync(`${file}-wal`), 'the write went to the WAL');
        assert.equal(modeOf(`${file}-wal`), '600');
        if (existsSync(`${file}-shm`)) assert.equal(modeOf(`${file}-shm`), '600');
        const backup = join(root, 'copy.db');
        await database.sqlite?.backupTo(backup);
        assert.equal(modeOf(backup), '600');
      } finally {
        await database.close();
      }
    } finally {
      process.umask(previous);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
