import { CompiledQuery } from 'kysely';
import type { Database } from '../../storage/index.ts';
import type { PetstoreTables } from '../db-schema.ts';
import type { SharedWindowCounts } from './shared-window-limiter.ts';

/**
 * One statement per claim, atomic across nodes: the row of (policy, window, caller) is created or
 * locked, and the grant is whatever of `want` still fits under the quota. In an UPDATE every
 * right-hand side reads the row as it was, so `granted` and `claimed` use the same old count.
 * (RETURNING cannot show the old row before PostgreSQL 18, hence the `granted` column.)
 */
const CLAIM = `
insert into petstore_rate_limits as r (policy, window_start, caller, claimed, granted)
values ($1, $2, $3, least($4::integer, $5::integer), least($4::integer, $5::integer))
on conflict (policy, window_start, caller) do update
set granted = greatest(0, least(excluded.granted, $5::integer - r.claimed)),
    claimed = r.claimed + greatest(0, least(excluded.granted, $5::integer - r.claimed))
returning claimed, granted`;

const PURGE = 'delete from petstore_rate_limits where policy = $1 and window_start < $2';

/** The shared count in the `petstore_rate_limits` table (UNLOGGED: migration 0005). */
export function postgresWindowCounts(database: Database<PetstoreTables>): SharedWindowCounts {
  if (database.dialect !== 'postgres') {
    throw new Error('the cluster rate-limit policy needs PostgreSQL (set DATABASE_URL)');
  }
  const { db } = database;
  return {
    async claim(policy, caller, windowStart, want, quota) {
      const result = await db.executeQuery<{ claimed: number; granted: number }>(
        CompiledQuery.raw(CLAIM, [policy, windowStart, caller, want, quota]),
      );
      const row = result.rows[0];
      if (!row) throw new Error('the rate-limit claim returned no row');
      return row;
    },
    async purgeBefore(policy, windowStart) {
      await db.executeQuery(CompiledQuery.raw(PURGE, [policy, windowStart]));
    },
  };
}
