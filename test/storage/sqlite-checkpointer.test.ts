import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/storage/index.ts';
import { BACKSTOP_PAGES, startCheckpointer } from '../../src/storage/sqlite-checkpointer.ts';
import { testDialects } from '../support/databases.ts';

interface Tables {
  notes: { id: number; body: string };
}

const PAGE = 4096;
const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'kennel-checkpoint-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A thread starts in tens of milliseconds, in seconds on a machine busy with other tests. */
async function firstError(errors: readonly Error[]): Promise<void> {
  for (const until = Date.now() + 10_000; errors.length === 0 && Date.now() < until; ) {
    await new Promise((done) => setTimeout(done, 20));
  }
}

const walPages = (file: string) => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size / PAGE : 0);

/**
 * Servers open their SQLite files with `checkpoint: 'background'`: the WAL checkpoint (two
 * fsyncs) runs on a thread of its own, never on the connection that commits on the event loop.
 */
describe('the background WAL checkpointer (sqlite)', {
  skip: !testDialects().includes('sqlite') && 'TEST_DATABASE excludes sqlite',
}, () => {
  it('copies the log into the file off the writer; the log starts over; close leaves every row and no log', async () => {
    const file = join(scratch(), 'busy.db');
    const database = openDatabase<Tables>({ kind: 'sqlite', file, checkpoint: 'background' });
    after(() => database.close());
    const { db } = database;
    await sql`CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)`.execute(db);
    const autocheckpoint = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(db);
    assert.equal(autocheckpoint.rows[0]?.wal_autocheckpoint, BACKSTOP_PAGES);

    // About 9 pages a commit, some 1,800 in all: far below the writer's backstop, so whatever
    // reaches the database file was copied there by the thread.
    const commits = 200;
    const body = 'x'.repeat(8 * PAGE);
    const fileSize = () => statSync(file).size;
    const before = fileSize();
    for (let i = 1; i <= commits; i++) await db.insertInto('notes').values({ id: i, body }).execute();
    const logged = walPages(file);
    assert.ok(logged > commits * 8, `the commits went to the log (${logged} pages)`);
    assert.ok(logged < BACKSTOP_PAGES);

    const until = Date.now() + 10_000;
    while (fileSize() < before + commits * body.length && Date.now() < until) {
      await new Promise((done) => setTimeout(done, 20));
    }
    assert.ok(fileSize() >= before + commits * body.length, `the file holds ${fileSize()} bytes`);
    // Let the last checkpoint finish: a commit after it finds the whole log copied, and the log
    // starts over from its first page instead of growing.
    await new Promise((done) => setTimeout(done, 300));
    await db
      .insertInto('notes')
      .values({ id: commits + 1, body: 'after' })
      .execute();
    const log = await sql<{ log: number }>`PRAGMA wal_checkpoint(PASSIVE)`.execute(db);
    assert.ok(
      (log.rows[0]?.log ?? Infinity) < 10,
      `the log holds ${log.rows[0]?.log} frames, not ${logged}+`,
    );
    assert.equal(walPages(file), logged, 'the log file was reused, not grown');

    await database.close();
    assert.equal(existsSync(`${file}-wal`), false, 'the last close checkpoints and removes the log');
    const reopened = new DatabaseSync(file, { readOnly: true });
    try {
      assert.deepEqual(
        { ...reopened.prepare('SELECT count(*) AS n, sum(length(body)) AS bytes FROM notes').get() },
        { n: commits + 1, bytes: commits * body.length + 'after'.length },
      );
    } finally {
      reopened.close();
    }
  });

  it('inline mode (tools, tests) leaves checkpoints to SQLite on the writer', async () => {
    const file = join(scratch(), 'inline.db');
    const database = openDatabase<Tables>({ kind: 'sqlite', file });
    try {
      const autocheckpoint = await sql<{
        wal_autocheckpoint: number;
      }>`PRAGMA wal_autocheckpoint`.execute(database.db);
      assert.equal(autocheckpoint.rows[0]?.wal_autocheckpoint, 1000);
    } finally {
      await database.close();
    }
  });

  it('reports a failing checkpoint once, not on every tick, and still closes', async () => {
    const file = join(scratch(), 'not-a-database.db');
    writeFileSync(
      file,
      'this is not a SQLite database, just text long enough to be read as one. '.repeat(100),
    );
    const errors: Error[] = [];
    const checkpointer = startCheckpointer(file, { everyMs: 5, onError: (error) => errors.push(error) });
    await firstError(errors);
    // Past the first restart (1 s), which fails the same way.
    await new Promise((done) => setTimeout(done, 1_500));
    await checkpointer.close();
    assert.equal(errors.length, 1, errors.map((e) => e.message).join('\n'));
    assert.match(errors[0]?.message ?? '', /WAL checkpoint of .*not-a-database\.db failed: .*not a database/);
  });

  it('starts a thread that died again, which then checkpoints the file', async () => {
    const file = join(scratch(), 'repaired.db');
    writeFileSync(file, 'not a database yet '.repeat(300));
    const errors: Error[] = [];
    const checkpointer = startCheckpointer(file, { everyMs: 5, onError: (error) => errors.push(error) });
    try {
      await firstError(errors);
      assert.equal(errors.length, 1, 'the first thread died on the file');
      // The file becomes a database in WAL mode whose writer never checkpoints by itself.
      rmSync(file);
      const writer = new DatabaseSync(file);
      try {
        writer.exec('PRAGMA journal_mode = WAL');
        writer.exec('PRAGMA wal_autocheckpoint = 0');
        writer.exec('CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)');
        const insert = writer.prepare('INSERT INTO notes (body) VALUES (?)');
        for (let i = 0; i < 50; i++) insert.run('y'.repeat(PAGE));
        const before = statSync(file).size;
        const until = Date.now() + 10_000;
        while (statSync(file).size <= before + 50 * PAGE && Date.now() < until) {
          await new Promise((done) => setTimeout(done, 20));
        }
        assert.ok(statSync(file).size > before + 50 * PAGE, 'a new thread copied the log into the file');
      } finally {
        writer.close();
      }
    } finally {
      await checkpointer.close();
    }
    assert.equal(errors.length, 1, errors.map((e) => e.message).join('\n'));
  });
});
