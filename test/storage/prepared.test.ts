import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  compileOnce,
  type Database,
  openDatabase,
  prepareValuesQuery,
  rowsOf,
  transact,
} from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';

interface Tables {
  pets: { id: number; name: string; legs: number };
}

/**
 * prepareValuesQuery: a compiled-once read whose rows come as column values in select order. The
 * same values whether it runs on its own statement or through Kysely inside a transaction, and on
 * SQLite its rows-as-arrays setting leaves every other query of the same text returning objects.
 */
for (const dialect of testDialects()) {
  describe(`prepareValuesQuery (${dialect})`, () => {
    let storage: TestStorage;
    let database: Database<Tables>;

    before(async () => {
      storage = await createTestStorage(dialect);
      database = openDatabase<Tables>(storage.location);
      await sql`CREATE TABLE pets (id integer PRIMARY KEY, name text NOT NULL, legs integer NOT NULL)`.execute(
        database.db,
      );
      await database.db
        .insertInto('pets')
        .values([
          { id: 1, name: 'Rex', legs: 4 },
          { id: 2, name: 'Tweety', legs: 2 },
          { id: 3, name: 'Nemo', legs: 0 },
        ])
        .execute();
    });
    after(async () => {
      await database.close();
      await storage.drop();
    });

    const build = (after: number) =>
      database.db.selectFrom('pets').select(['legs', 'name', 'id']).where('id', '>', after).orderBy('id');

    it('maps each row from its values in select order, not in table order', async () => {
      const read = prepareValuesQuery(database, build, [0], (values) => [...values]);
      assert.deepEqual(await read(1), [
        [2, 'Tweety', 2],
        [0, 'Nemo', 3],
      ]);
      assert.deepEqual(await read(3), []);
    });

    it('while a transaction holds the connection it reads through Kysely, with the same values', async () => {
      const read = prepareValuesQuery(database, build, [0], (values) => [...values]);
      let release = () => {};
      let opened = () => {};
      const held = new Promise<void>((resolve) => {
        opened = resolve;
      });
      const transaction = transact(database.db, async (trx) => {
        await trx.selectFrom('pets').select('id').execute();
        opened();
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      await held;
      if (dialect === 'sqlite') assert.equal(database.sqlite?.canReadNow(), false);
      const reading = read(0);
      release();
      await transaction;
      assert.deepEqual(await reading, [
        [4, 'Rex', 1],
        [2, 'Tweety', 2],
        [0, 'Nemo', 3],
      ]);
    });

    it('other queries of the same text still get rows as objects', async () => {
      prepareValuesQuery(database, build, [0], (values) => values);
      const query = compileOnce(build, [0]);
      const { rows } = await database.db.executeQuery(query(2));
      assert.deepEqual(
        rows.map((row) => ({ ...row })),
        [{ legs: 0, name: 'Nemo', id: 3 }],
      );
      // Group commit runs its statements from the cache the writes share (on SQLite, the one a
      // rows-as-arrays setting must not reach).
      const viaGroupCommit = database.groupCommit.batched<number, unknown[]>(function* (items) {
        const shared = yield* rowsOf(query(items[0] as number));
        return items.map(() => ({ ok: true, value: shared }));
      });
      assert.deepEqual(
        (await viaGroupCommit(2)).map((row) => ({ ...(row as object) })),
        [{ legs: 0, name: 'Nemo', id: 3 }],
      );
    });
  });
}
