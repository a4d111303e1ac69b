import { LatencySketch } from '../../lib/latency-sketch.ts';
import { transact } from '../../storage/index.ts';
import type { PlatformContext } from '../context.ts';
import type { TrafficSeriesRow } from '../db-schema.ts';
import { chunks, REPLACE_SERIES_COUNTS, SERIES_KEY } from './write-traffic.ts';

/** Minutes are kept this long, then rolled into hours. */
export const MINUTES_KEPT_MS = 48 * 3_600_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Hours rolled per pass at most (a node back from a long stop catches up over a few passes). */
const HOURS_PER_PASS = 72;

/** `2026-11-27T04:00:00.000Z` for any instant of that hour (ISO text in, ISO text out). */
const hourOf = (minute: string) => `${minute.slice(0, 13)}:00:00.000Z`;

export interface RollupResult {
  /** Minute rows rolled into hours (and deleted). */
  readonly minutesRolled: number;
  /** Rows deleted past retention or of projects that are gone, all tables together. */
  readonly expired: number;
}

/**
 * The traffic job: minutes older than 48 h are summed into their hour (requests, errors and
 * bytes added, sketches merged, per node and series) and deleted; hours and callers older than
 * `retentionDays` are deleted, and so are the rows of deleted projects (the tables have no
 * foreign key, so an edge's batch never fails for a project deleted meanwhile).
 *
 * Safe on several nodes at once: each hour is rolled in one transaction that locks the minutes
 * it reads (PostgreSQL `FOR UPDATE`; SQLite has one writer), so a second runner waits, then finds
 * them deleted and adds nothing twice. Deleting is idempotent.
 */
export async function rollupTraffic(
  ctx: Pick<PlatformContext, 'db' | 'dialect' | 'clock'>,
  retentionDays: number,
): Promise<RollupResult> {
  const now = ctx.clock.now().getTime();
  // Whole hours only: an hour is rolled once all its minutes are older than 48 h.
  const cutoff = new Date(now - MINUTES_KEPT_MS - ((now - MINUTES_KEPT_MS) % HOUR_MS)).toISOString();
  let minutesRolled = 0;
  for (let pass = 0; pass < HOURS_PER_PASS; pass++) {
    const oldest = await ctx.db
      .selectFrom('traffic_minutes')
      .select('minute')
      .where('minute', '<', cutoff)
      .orderBy('minute')
      .limit(1)
      .executeTakeFirst();
    if (oldest === undefined) break;
    minutesRolled += await rollHour(ctx, hourOf(oldest.minute));
  }
  const horizon = new Date(now - retentionDays * DAY_MS).toISOString();
  const expired = await transact(ctx.db, async (trx) => {
    let deleted = 0;
    const count = (result: { numDeletedRows: bigint }) => {
      deleted += Number(result.numDeletedRows);
    };
    count(await trx.deleteFrom('traffic_hours').where('hour', '<', horizon).executeTakeFirst());
    count(await trx.deleteFrom('traffic_callers').where('day', '<', horizon.slice(0, 10)).executeTakeFirst());
    for (const table of ['traffic_minutes', 'traffic_hours', 'traffic_callers', 'request_logs'] as const) {
      count(
        await trx
          .deleteFrom(table)
          .where('project_id', 'not in', trx.selectFrom('projects').select('id'))
          .executeTakeFirst(),
      );
    }
    return deleted;
  });
  return { minutesRolled, expired };
}

/** Rolls the minutes of one hour into it, in one transaction; answers how many minute rows. */
async function rollHour(ctx: Pick<PlatformContext, 'db' | 'dialect'>, hour: string): Promise<number> {
  const end = new Date(Date.parse(hour) + HOUR_MS).toISOString();
  return transact(ctx.db, async (trx) => {
    const minutes = await trx
      .selectFrom('traffic_minutes')
      .selectAll()
      .where('minute', '>=', hour)
      .where('minute', '<', end)
      .$if(ctx.dialect === 'postgres', (q) => q.forUpdate())
      .execute();
    if (minutes.length === 0) return 0;
    const sums = new Map<string, Omit<TrafficSeriesRow, 'latency'> & { latency: LatencySketch }>();
    const keyOf = (r: { node_id: string; project_id: number; operation: string; status: number }) =>
      JSON.stringify([r.node_id, Number(r.project_id), r.operation, Number(r.status)]);
    for (const row of minutes) {
      const key = keyOf(row);
      const sum = sums.get(key);
      if (sum === undefined) {
        sums.set(key, {
          node_id: row.node_id,
          project_id: Number(row.project_id),
          operation: row.operation,
          status: Number(row.status),
          requests: Number(row.requests),
          errors: Number(row.errors),
          bytes_in: Number(row.bytes_in),
          bytes_out: Number(row.bytes_out),
          latency: LatencySketch.fromJSON(row.latency),
        });
      } else {
        sum.requests += Number(row.requests);
        sum.errors += Number(row.errors);
        sum.bytes_in += Number(row.bytes_in);
        sum.bytes_out += Number(row.bytes_out);
        sum.latency.merge(LatencySketch.fromJSON(row.latency));
      }
    }
    // An hour may already hold part of this hour (a minute written late): add to it.
    const existing = await trx
      .selectFrom('traffic_hours')
      .selectAll()
      .where('hour', '=', hour)
      .$if(ctx.dialect === 'postgres', (q) => q.forUpdate())
      .execute();
    for (const row of existing) {
      const sum = sums.get(keyOf(row));
      if (sum === undefined) continue;
      sum.requests += Number(row.requests);
      sum.errors += Number(row.errors);
      sum.bytes_in += Number(row.bytes_in);
      sum.bytes_out += Number(row.bytes_out);
      sum.latency.merge(LatencySketch.fromJSON(row.latency));
    }
    const rows = [...sums.values()].map((s) => ({ ...s, hour, latency: s.latency.toJSON() }));
    for (const part of chunks(rows)) {
      await trx
        .insertInto('traffic_hours')
        .values(part)
        .onConflict((oc) => oc.columns([...SERIES_KEY, 'hour']).doUpdateSet(REPLACE_SERIES_COUNTS))
        .execute();
    }
    await trx.deleteFrom('traffic_minutes').where('minute', '>=', hour).where('minute', '<', end).execute();
    return minutes.length;
  });
}
