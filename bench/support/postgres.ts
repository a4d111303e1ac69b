import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface BenchDatabase {
  readonly name: string;
  /** The admin URL with the new database's name: what DATABASE_URL gets. */
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh database on the PostgreSQL server at `adminUrl`, for one run; `drop()` removes it. */
export async function createBenchDatabase(adminUrl: string, prefix: string): Promise<BenchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${adminUrl} (${(error as Error).message}). Start it (see .ci/run), point BENCH_POSTGRES_URL at another server, or leave PostgreSQL out with BENCH_POSTGRES_URL=off.`,
    );
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
