import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Clock } from '../lib/clock.ts';
import type { Database } from '../storage/index.ts';

/** Only the SQLite side of a database is used. */
type Backed = Pick<Database<never>, 'sqlite'>;

export interface BackupFile {
  readonly database: string;
  readonly file: string;
  readonly bytes: number;
}

/**
 * Backs up SQLite databases while the server runs: each into `<dir>/<name>-<UTC time>.db`, a
 * complete SQLite file of its own (open it with any SQLite tool; restore by stopping the server
 * and putting it in place of the original). One backup at a time; PostgreSQL is backed up with
 * its own tools (pg_dump), never here.
 */
export class SqliteBackups {
  readonly #databases: readonly { name: string; database: Backed }[];
  readonly #dir: string;
  readonly #clock: Clock;
  #running = false;

  constructor(options: {
    databases: readonly { name: string; database: Backed }[];
    dir: string;
    clock: Clock;
  }) {
    this.#databases = options.databases;
    this.#dir = resolve(options.dir);
    this.#clock = options.clock;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Writes one backup of every database; throws when one is already being written. */
  async run(): Promise<BackupFile[]> {
    if (this.#running) throw new Error('a backup is already being written');
    this.#running = true;
    try {
      mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      const stamp = this.#clock
        .now()
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z');
      const files: BackupFile[] = [];
      for (const { name, database } of this.#databases) {
        if (!database.sqlite) throw new Error(`${name} is not a SQLite database: back it up with pg_dump`);
        let file = join(this.#dir, `${name}-${stamp}.db`);
        for (let n = 2; existsSync(file); n++) file = join(this.#dir, `${name}-${stamp}-${n}.db`);
        await database.sqlite.backupTo(file);
        files.push({ database: name, file, bytes: statSync(file).size });
      }
      return files;
    } finally {
      this.#running = false;
    }
  }
}
