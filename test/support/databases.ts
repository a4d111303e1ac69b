import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { petstoreMigrations } from '../../src/petstore/db-schema.ts';
import { platformMigrations } from '../../src/platform/db-schema.ts';
import {
  type Dialect,
  type DialectMigration,
  migrateToLatest,
  openDatabase,
  quoteIdentifier,
  type StorageLocation,
} from '../../src/storage/index.ts';

/** The PostgreSQL server the tests use (see .ci/run, which starts it where it is not running). */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * The dialects a test file runs its suite against: both by default, one with
 * TEST_DATABASE=sqlite|postgres.
 */
export function testDialects(): Dialect[] {
  const only = process.env.TEST_DATABASE;
  if (only === undefined || only === '' || only === 'both') return ['sqlite', 'postgres'];
  if (only !== 'sqlite' && only !== 'postgres') {
    throw new Error(`TEST_DATABASE must be sqlite, postgres or both (got ${JSON.stringify(only)})`);
  }
  return [only];
}

export interface TestStorage {
  readonly location: StorageLocation;
  /** Removes the SQLite directory or drops the PostgreSQL schema. */
  drop(): Promise<void>;
}

/** The services whose tables a test storage can start with (`createTestStorage`'s `migrated`). */
const SERVICES = { platform: platformMigrations, petstore: petstoreMigrations } as const satisfies Record<
  string,
  Record<string, DialectMigration>
>;
export type MigratedService = keyof typeof SERVICES;

/**
 * A fresh place for one test's data: a temporary SQLite file, or a PostgreSQL schema of its own
 * (so test files run in parallel against one server). Empty, or with `migrated`, holding that
 * service's tables as its migrations leave them: a copy of a template migrated once (see
 * `template`), which the service's own migrateToLatest then finds up to date.
 */
export async function createTestStorage(
  dialect: Dialect,
  options: { migrated?: MigratedService } = {},
): Promise<TestStorage> {
  const { migrated } = options;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-test-'));
    const file = join(dir, 'test.db');
    if (migrated) copyFileSync(await sqliteTemplate(migrated), file);
    return {
      location: { kind: 'sqlite', file },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (migrated) return claimPooledSchema(migrated);
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  return {
    location: { kind: 'postgres', url: TEST_POSTGRES_URL, schema, poolSize: 10 },
    drop: () => adminQuery(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`),
  };
}

/** The files whose code makes a service's tables: a change to any of them is a new version. */
const STORAGE_SOURCES = [
  '../../src/storage/migrate.ts',
  '../../src/storage/connection.ts',
  '../../src/storage/sqlite-adapter.ts',
  '../../src/platform/db-schema.ts',
  '../../src/petstore/db-schema.ts',
];

function versionOf(service: MigratedService, dialect: Dialect): string {
  const hash = createHash('sha256').update(`${service} ${dialect}\n`);
  for (const file of STORAGE_SOURCES) hash.update(readFileSync(join(import.meta.dirname, file)));
  for (const [name, migration] of Object.entries(SERVICES[service]))
    hash.update(`${name}\n${String(migration.up)}\n`);
  return `${service}-${dialect}-${hash.digest('hex').slice(0, 16)}`;
}

async function migrate(location: StorageLocation, service: MigratedService): Promise<void> {
  const database = openDatabase(location);
  try {
    await migrateToLatest(database.db, database.dialect, service, SERVICES[service]);
  } finally {
    await database.close();
  }
}

/**
 * SQLite: migrating a new file runs every migration (about 0.1 s for the platform's), copying a
 * migrated one takes a millisecond. The template is made once per version of the migrations and
 * kept in the temporary directory under a hash of the code that makes the tables (versionOf), so
 * every test process of a run, and the next run, copies it; changed migrations make a new one. It
 * is written under a temporary name and renamed, so processes making it at once never read half
 * of one. Closed, its write-ahead log is checkpointed into it: the one file is the whole database.
 */
function sqliteTemplate(service: MigratedService): Promise<string> {
  let made = sqliteTemplates.get(service);
  if (!made) {
    made = (async () => {
      const path = join(tmpdir(), `kennel-test-template-${versionOf(service, 'sqlite')}.db`);
      if (existsSync(path)) return path;
      const dir = mkdtempSync(join(tmpdir(), 'kennel-template-'));
      try {
        const file = join(dir, 'template.db');
        await migrate({ kind: 'sqlite', file }, service);
        if (existsSync(`${file}-wal`)) throw new Error(`${file}: the write-ahead log was left after closing`);
        renameSync(file, path);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return path;
    })();
    sqliteTemplates.set(service, made);
  }
  return made;
}
const sqliteTemplates = new Map<MigratedService, Promise<string>>();

/**
 * PostgreSQL: making a schema's tables costs about as much as migrating them (each table and index
 * is files and catalog rows: 0.5 to 1.5 s for the platform's on this machine, as much again to
 * drop them), and a restore from pg_dump costs the same. So a migrated schema is not dropped at
 * the end of its test: it is emptied and kept in a pool on the server, for the next test of any
 * process of this and later runs — renamed, as the one atomic step, from `kp_<service>_<version>_…`
 * to the claiming storage's own `t_…` name, and back when it is dropped.
 *
 * Given back, a schema must be as its migrations left it: its catalog (tables, columns, types,
 * defaults, constraints, indexes, storage options, functions, triggers) and its migration history
 * are compared with those recorded (in the schema's comment) when it was migrated; if anything
 * differs (a test dropped a table or ran a migration again) the schema is dropped instead. Its rows
 * are deleted and its sequences restarted, so ids start at 1 again. Autovacuum is off on pooled
 * tables: a vacuum would let new rows take the slots of deleted ones, and rows read without an
 * ORDER BY would no longer come back in the order they were written, as they do in a new table;
 * instead a schema is dropped after POOL_USES uses, which bounds what the deleted rows leave. Left
 * on, it would not find such reads either: it wakes once a minute, so a test would see rows
 * reordered only when one happened to run during it — a failure that does not come back when run
 * again. A read whose order matters says so with ORDER BY (production vacuums at any time).
 */
const POOL_USES = 25;

const poolPrefix = (service: MigratedService) => `kp_${versionOf(service, 'postgres').replaceAll('-', '_')}_`;

async function claimPooledSchema(service: MigratedService): Promise<TestStorage> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = await adminClient();
  try {
    await dropStaleOnce(client, service);
    const prefix = poolPrefix(service);
    const { rows } = await client.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY random() LIMIT 8`,
      [prefix],
    );
    let claimed = false;
    for (const { name } of rows) {
      // Another process may rename it first: then it is gone under that name, and the next is tried.
      claimed = await client
        .query(`ALTER SCHEMA ${quoteIdentifier(name)} RENAME TO ${quoteIdentifier(schema)}`)
        .then(
          () => true,
          () => false,
        );
      if (claimed) break;
    }
    if (!claimed) {
      await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
      await migrate({ kind: 'postgres', url: TEST_POSTGRES_URL, schema, poolSize: 1 }, service);
      await client
        .query(
          `SELECT format('ALTER TABLE %I.%I SET (autovacuum_enabled = false)', $1::text, relname) AS q
         FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r'`,
          [schema],
        )
        .then(async ({ rows: statements }) => {
          for (const { q } of statements as { q: string }[]) await client.query(q);
        });
      const fingerprint = await fingerprintOf(client, schema, service);
      await client.query(`COMMENT ON SCHEMA ${quoteIdentifier(schema)} IS '${fingerprint} 0'`);
    }
  } finally {
    await client.end();
  }
  return {
    location: { kind: 'postgres', url: TEST_POSTGRES_URL, schema, poolSize: 10 },
    drop: () => releasePooledSchema(schema, service),
  };
}

/**
 * The pool's schemas of other versions of the migrations (an earlier checkout's, or one since
 * changed back) are of no more use: dropped when the pool first serves this process. Only idle ones
 * carry a `kp_` name — a claimed schema, of any version, is `t_…` until it is given back — and the
 * current version's are never matched. A schema another process renames meanwhile is not dropped
 * under its new name: DROP looks the name up again once it holds the lock.
 */
function dropStaleOnce(client: pg.Client, service: MigratedService): Promise<void> {
  let dropped = staleDropped.get(service);
  if (!dropped) {
    dropped = (async () => {
      const { rows: stale } = await client.query<{ name: string }>(
        `SELECT nspname AS name FROM pg_namespace
         WHERE starts_with(nspname, $1) AND NOT starts_with(nspname, $2) ORDER BY nspname`,
        [`kp_${service}_postgres_`, poolPrefix(service)],
      );
      for (const { name } of stale)
        await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(name)} CASCADE`);
    })();
    staleDropped.set(service, dropped);
  }
  return dropped;
}
const staleDropped = new Map<MigratedService, Promise<void>>();

async function releasePooledSchema(schema: string, service: MigratedService): Promise<void> {
  const client = await adminClient();
  try {
    // Dropped already (a second drop()): nothing to give back.
    const { rows: found } = await client.query(`SELECT to_regnamespace($1) AS oid`, [
      quoteIdentifier(schema),
    ]);
    if (found[0]?.oid === null) return;
    const [recorded = '', uses = '0'] = (
      (
        await client.query<{ comment: string | null }>(
          `SELECT obj_description($1::regnamespace, 'pg_namespace') AS comment`,
          [schema],
        )
      ).rows[0]?.comment ?? ''
    ).split(' ');
    const fingerprint = await fingerprintOf(client, schema, service);
    if (fingerprint !== recorded || Number(uses) + 1 >= POOL_USES) {
      await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
      return;
    }
    const history = [`${service}_migration`, `${service}_migration_lock`];
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class
       WHERE relnamespace = $1::regnamespace AND relkind = 'r' AND NOT relname = ANY($2)`,
      [schema, history],
    );
    await client.query('BEGIN');
    try {
      // Foreign keys are triggers: off for this transaction, so the order of the deletes is free.
      await client.query(`SET LOCAL session_replication_role = replica`);
      await client.query(
        tables
          .map(({ name }) => `DELETE FROM ${quoteIdentifier(schema)}.${quoteIdentifier(name)};`)
          .join('\n'),
      );
      await client.query(
        `SELECT setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s
         JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = $1::regnamespace`,
        [schema],
      );
      await client.query(
        `COMMENT ON SCHEMA ${quoteIdentifier(schema)} IS '${fingerprint} ${Number(uses) + 1}'`,
      );
      await client.query(
        `ALTER SCHEMA ${quoteIdentifier(schema)} RENAME TO ${quoteIdentifier(`${poolPrefix(service)}${randomBytes(4).toString('hex')}`)}`,
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
      throw error;
    }
  } finally {
    await client.end();
  }
}

/** What a schema's tables are, without its name, and its migration history: an md5. */
async function fingerprintOf(client: pg.Client, schema: string, service: MigratedService): Promise<string> {
  const { rows } = await client.query<{ fingerprint: string }>(
    `WITH ns AS (SELECT oid, nspname || '.' AS prefix FROM pg_namespace WHERE nspname = $1)
     SELECT md5(coalesce(string_agg(item, E'\n' ORDER BY item), '')) AS fingerprint FROM (
       SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.reloptions::text, '') AS item
         FROM pg_class c, ns WHERE c.relnamespace = ns.oid
       UNION ALL
       SELECT 'col ' || c.relname || '.' || a.attname || ' ' || a.attnum || ' ' || format_type(a.atttypid, a.atttypmod)
           || ' ' || a.attnotnull || ' ' || coalesce(replace(pg_get_expr(d.adbin, d.adrelid), ns.prefix, ''), '')
         FROM pg_class c JOIN ns ON c.relnamespace = ns.oid
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
       UNION ALL
       SELECT 'con ' || co.conname || ' ' || replace(pg_get_constraintdef(co.oid), ns.prefix, '')
         FROM pg_constraint co, ns WHERE co.connamespace = ns.oid
       UNION ALL
       SELECT 'idx ' || replace(pg_get_indexdef(i.indexrelid), ns.prefix, '')
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN ns ON c.relnamespace = ns.oid
       UNION ALL
       SELECT 'fn ' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p, ns WHERE p.pronamespace = ns.oid
       UNION ALL
       SELECT 'type ' || t.typname || ' ' || t.typtype::text FROM pg_type t, ns WHERE t.typnamespace = ns.oid
       UNION ALL
       SELECT 'trg ' || t.tgname || ' ' || c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
         JOIN ns ON c.relnamespace = ns.oid WHERE NOT t.tgisinternal
     ) items`,
    [schema],
  );
  const history = await client.query<{ name: string }>(
    `SELECT name FROM ${quoteIdentifier(schema)}.${quoteIdentifier(`${service}_migration`)} ORDER BY name`,
  );
  return createHash('md5')
    .update(`${rows[0]?.fingerprint}\n${history.rows.map((row) => row.name).join('\n')}`)
    .digest('hex');
}

async function adminClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  try {
    await client.connect();
  } catch (error) {
    throw unreachable(error);
  }
  return client;
}

const unreachable = (error: unknown) =>
  new Error(
    `PostgreSQL is not reachable at ${TEST_POSTGRES_URL} (${(error as Error).message}). Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start — or run .ci/run, which installs and starts it. To run only the SQLite suite: TEST_DATABASE=sqlite npm test`,
  );

async function adminQuery(sql: string): Promise<void> {
  const client = await adminClient();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
