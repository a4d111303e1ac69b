import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { openDatabase, transact } from '../../src/storage/index.ts';
import { testDialects } from '../support/databases.ts';

interface Tables {
  notes: { id: number; body: string };
}

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Another process (the CLI's reset-password, say) that inserts one note, waiting its turn. */
function writeFromAnotherProcess(file: string, id: number) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const { DatabaseSync } = require('node:sqlite');
       const db = new DatabaseSync(${JSON.stringify(file)}, { timeout: 5000 });
       db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)').run(${id}, 'from the other process');
       db.close();`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return {
    exited: once(child, 'exit').then(([code]) => ({ code, stderr })),
  };
}

/**
 * The running platform shares its SQLite file with other writers (reset-password, a backup tool).
 * A transaction that reads and then writes must not fail because another process committed in
 * between: it takes the write lock when it begins (BEGIN IMMEDIATE), and the other writer waits.
 */
describe('Kysely transactions on a SQLite file another process writes (sqlite)', {
  skip: !testDialects().includes('sqlite') && 'TEST_DATABASE excludes sqlite',
}, () => {
  it('a transaction that reads, then writes, commits while another process writes; both rows stay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-trx-'));
    dirs.push(dir);
    const file = join(dir, 'shared.db');
    const database = openDatabase<Tables>({ kind: 'sqlite', file });
    after(() => database.close());
    const { db } = database;
    await sql`CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)`.execute(db);

    let other: ReturnType<typeof writeFromAnotherProcess> | undefined;
    await transact(db, async (trx) => {
      const before = await trx.selectFrom('notes').select('id').execute();
      assert.deepEqual(before, []);
      other = writeFromAnotherProcess(file, 2);
      // Long enough for the other process to start and commit, were it let in.
      await sleep(1_000);
      await trx.insertInto('notes').values({ id: 1, body: 'from the transaction' }).execute();
    });
    assert.ok(other);
    assert.deepEqual(await other.exited, { code: 0, stderr: '' });

    const rows = await db.selectFrom('notes').select(['id', 'body']).orderBy('id').execute();
    assert.deepEqual(
      rows.map((row) => ({ ...row })),
      [
        { id: 1, body: 'from the transaction' },
        { id: 2, body: 'from the other process' },
      ],
    );
  });
});
