import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import {
  type BatchWork,
  compileOnce,
  type Database,
  isConnectionLost,
  isUniqueViolation,
  MAX_BATCH,
  type Outcome,
  openDatabase,
  rowsOf,
} from '../../src/storage/index.ts';
import {
  createTestStorage,
  TEST_POSTGRES_URL,
  type TestStorage,
  testDialects,
} from '../support/databases.ts';

interface Tables {
  items: { name: string };
}

/**
 * Group commit on both databases: what arrives together commits in one transaction, each item
 * gets its own outcome, a statement the database refuses fails only the item at fault, and on
 * PostgreSQL a lost session is retried only when that cannot commit twice.
 */
for (const dialect of testDialects()) {
  describe(`group commit (${dialect})`, () => {
    const applicationName = `kennel_gc_${randomBytes(4).toString('hex')}`;
    let storage: TestStorage;
    let database: Database<Tables>;
    let db: Kysely<Tables>;
    /** How often the work ran and with how many items. */
    let batches: number[];
    /** Runs once per attempt of a batch, before its inserts (a test's way to cut in). */
    let beforeInserts: (attempt: number) => readonly string[] = () => [];

    before(async () => {
      storage = await createTestStorage(dialect);
      const { location } = storage;
      database = openDatabase<Tables>(
        location.kind === 'postgres' ? { ...location, applicationName } : location,
      );
      db = database.db;
      await db.schema
        .createTable('items')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .execute();
    });
    after(async () => {
      await database?.close();
      await storage?.drop();
    });
    beforeEach(async () => {
      await db.deleteFrom('items').execute();
      batches = [];
      beforeInserts = () => [];
    });

    /** Inserts each item's name; a name starting with `refuse` is refused by the rule itself. */
    function inserter(): (name: string) => Promise<string> {
      const insert = compileOnce(
        (name: string) => db.insertInto('items').values({ name }).returning('name'),
        [''],
      );
      let attempt = 0;
      const work: BatchWork<string, string> = function* (names) {
        batches.push(names.length);
        for (const statement of beforeInserts(++attempt)) yield sql.raw(statement).compile(db);
        const outcomes: Outcome<string>[] = [];
        for (const name of names) {
          if (name.startsWith('refuse')) {
            outcomes.push({ ok: false, error: new Error(`${name} refused`) });
            continue;
          }
          const [row] = yield* rowsOf(insert(name));
          outcomes.push({ ok: true, value: row?.name ?? '' });
        }
        return outcomes;
      };
      return database.groupCommit.batched(work);
    }

    const names = async () =>
      (await db.selectFrom('items').select('name').orderBy('name').execute()).map((r) => r.name);
    const settle = <T>(promise: Promise<T>) =>
      promise.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );

    it('items queued in one turn share one transaction; each is answered after it commits', async () => {
      const place = inserter();
      const seen: string[][] = [];
      const answers = await Promise.all(
        ['a', 'b', 'c', 'd'].map((name) =>
          place(name).then(async (value) => {
            // Answered only once committed: another connection already sees every row.
            seen.push(await names());
            return value;
          }),
        ),
      );
      assert.deepEqual(answers, ['a', 'b', 'c', 'd']);
      assert.deepEqual(batches, [4]);
      for (const rows of seen) assert.deepEqual(rows, ['a', 'b', 'c', 'd']);
    });

    it('a refusal is that item’s alone: the others in its batch commit', async () => {
      const place = inserter();
      const results = await Promise.all(['a', 'refuse-b', 'c'].map((name) => settle(place(name))));
      assert.deepEqual(batches, [3]);
      assert.deepEqual(
        results.map((r) => (r.ok ? r.value : (r.error as Error).message)),
        ['a', 'refuse-b refused', 'c'],
      );
      assert.deepEqual(await names(), ['a', 'c']);
    });

    it('a statement the database refuses fails only the item at fault: the batch is run again item by item', async () => {
      await db.insertInto('items').values({ name: 'taken' }).execute();
      const place = inserter();
      const results = await Promise.all(['a', 'taken', 'b'].map((name) => settle(place(name))));
      // The batch, then each item in a transaction of its own.
      assert.deepEqual(batches, [3, 1, 1, 1]);
      assert.equal(results[0]?.ok && results[0].value, 'a');
      assert.equal(results[1]?.ok, false);
      assert.equal(isUniqueViolation(results[1]?.ok === false && results[1].error), true);
      assert.equal(results[2]?.ok && results[2].value, 'b');
      assert.deepEqual(await names(), ['a', 'b', 'taken']);
    });

    it(`takes at most ${MAX_BATCH} items per transaction; the rest commit in the next`, async () => {
      const place = inserter();
      const all = Array.from({ length: MAX_BATCH + 5 }, (_, i) => `n${String(i).padStart(4, '0')}`);
      assert.deepEqual(await Promise.all(all.map((name) => place(name))), all);
      assert.deepEqual(batches, [MAX_BATCH, 5]);
      assert.deepEqual(await names(), all);
    });

    if (dialect === 'postgres') {
      const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
      after(() => admin.end());

      /** The cut left dead sessions in the pool (one per idle client): retried past them. */
      async function dropSlowCommit(): Promise<void> {
        for (let attempt = 1; ; attempt++) {
          try {
            await sql.raw('DROP TRIGGER slow_commit ON items; DROP FUNCTION slow_commit()').execute(db);
            return;
          } catch (error) {
            if (!isConnectionLost(error) || attempt >= 12) throw error;
          }
        }
      }

      it('a batch whose session is cut before COMMIT runs again on a new session, and commits once', async () => {
        const place = inserter();
        // The first attempt ends its own session mid-transaction (as an administrator would).
        beforeInserts = (attempt) => (attempt === 1 ? ['SELECT pg_terminate_backend(pg_backend_pid())'] : []);
        assert.deepEqual(await Promise.all(['a', 'b'].map((name) => place(name))), ['a', 'b']);
        assert.deepEqual(batches, [2, 2]);
        assert.deepEqual(await names(), ['a', 'b']);
      });

      it('a batch whose session is cut during COMMIT is not run again: every item fails as connection lost', async () => {
        // A deferred trigger holds COMMIT for a second, so the cut lands during it.
        await sql
          .raw(`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(1); RETURN NULL; END $$;
          CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON items
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`)
          .execute(db);
        try {
          const place = inserter();
          const pending = Promise.all(['a', 'b', 'c'].map((name) => settle(place(name))));
          const deadline = Date.now() + 5_000;
          let inCommit = false;
          while (!inCommit && Date.now() < deadline) {
            const { rows } = await admin.query(
              "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND query ILIKE 'commit%'",
              [applicationName],
            );
            inCommit = rows.length > 0;
            if (!inCommit) await sleep(20);
          }
          assert.ok(inCommit, 'the batch never reached its COMMIT');
          await admin.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
            [applicationName],
          );
          const results = await pending;
          for (const result of results) {
            assert.equal(result.ok, false);
            assert.equal(
              isConnectionLost(!result.ok && result.error),
              true,
              String(!result.ok && result.error),
            );
          }
          assert.deepEqual(batches, [3], 'not run again: it may have committed');
        } finally {
          await dropSlowCommit();
        }
        // The writer connects afresh for the next batch.
        assert.equal(await inserter()('after'), 'after');
      });
    }
  });
}
