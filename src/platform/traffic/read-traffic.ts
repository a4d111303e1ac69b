import { LatencySketch } from '../../lib/latency-sketch.ts';
import type { ProjectTraffic, TrafficGroup, TrafficPoint } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { projectFor } from '../projects/projects.ts';
import { readDeprecatedOperations } from './read-operation-lifecycle.ts';
import { floorTo, HOUR_MS, isoDay, trafficRange } from './read-range.ts';

/**
 * What a project's traffic was over a range: totals, a series per interval and groups (by
 * operation, caller or status), summed over the edge nodes' rows (each node writes its own:
 * docs/traffic.md). Latency percentiles come from merging the rows' sketches, so they hold within
 * LatencySketch.RELATIVE_ACCURACY of the true values whatever the number of nodes and rows.
 */

export type TrafficGrouping = 'operation' | 'caller' | 'status';

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export type { ProjectTraffic, TrafficGroup, TrafficPoint } from '../api-types.ts';

/** At most this many groups are answered, the busiest first (callers can be many). */
export const MAX_GROUPS = 200;

/** Counts and a latency sketch, added row by row. */
class Tally {
  requests = 0;
  errors = 0;
  bytesIn = 0;
  bytesOut = 0;
  readonly sketch = new LatencySketch();

  add(row: SeriesRow, sketch: LatencySketch | undefined): void {
    this.requests += Number(row.requests);
    this.errors += Number(row.errors);
    this.bytesIn += Number(row.bytes_in);
    this.bytesOut += Number(row.bytes_out);
    if (sketch) this.sketch.merge(sketch);
  }

  percentiles(): Percentiles {
    return {
      p50: this.sketch.quantile(0.5) ?? null,
      p95: this.sketch.quantile(0.95) ?? null,
      p99: this.sketch.quantile(0.99) ?? null,
    };
  }
}

interface SeriesRow {
  operation: string;
  status: number | string;
  at: string;
  requests: number | string;
  errors: number | string;
  bytes_in: number | string;
  bytes_out: number | string;
  latency: string;
}

/**
 * The rows of the range, minutes and hours both: minutes older than 48 hours are rolled up into
 * hours (and deleted), so each request is counted in exactly one of the two tables. An hour row
 * counts whole in the range when the range overlaps its hour.
 */
async function seriesRows(db: PlatformDb, projectId: number, from: Date, to: Date): Promise<SeriesRow[]> {
  const columns = ['operation', 'status', 'requests', 'errors', 'bytes_in', 'bytes_out', 'latency'] as const;
  const [minutes, hours] = await Promise.all([
    db
      .selectFrom('traffic_minutes')
      .select([...columns, 'minute as at'])
      .where('project_id', '=', projectId)
      .where('minute', '>=', from.toISOString())
      .where('minute', '<', to.toISOString())
      .execute(),
    db
      .selectFrom('traffic_hours')
      .select([...columns, 'hour as at'])
      .where('project_id', '=', projectId)
      .where('hour', '>=', floorTo(from, 'hour').toISOString())
      .where('hour', '<', to.toISOString())
      .execute(),
  ]);
  return [...minutes, ...hours] as SeriesRow[];
}

function readSketch(text: string): LatencySketch | undefined {
  try {
    return LatencySketch.fromJSON(text);
  } catch {
    // A row this version cannot read still counts; only its latencies are left out.
    return undefined;
  }
}

/** The groups by caller over the days the range touches (callers are kept per day). */
async function callerGroups(
  db: PlatformDb,
  projectId: number,
  from: Date,
  to: Date,
): Promise<TrafficGroup[]> {
  const rows = await db
    .selectFrom('traffic_callers')
    .select((eb) => [
      'caller',
      eb.fn.max('caller_label').as('label'),
      eb.fn.max('caller_kind').as('kind'),
      eb.fn.sum<number | string>('requests').as('requests'),
      eb.fn.sum<number | string>('errors').as('errors'),
      eb.fn.max('last_seen_at').as('last_seen_at'),
    ])
    .where('project_id', '=', projectId)
    .where('day', '>=', isoDay(from))
    .where('day', '<=', isoDay(new Date(to.getTime() - 1)))
    .groupBy('caller')
    .execute();
  return rows.map((row) => ({
    key: row.caller,
    requests: Number(row.requests),
    errors: Number(row.errors),
    p50: null,
    p95: null,
    p99: null,
    caller: row.label,
    callerKind: row.kind,
    lastSeenAt: row.last_seen_at,
  }));
}

function tallyOf(tallies: Map<string, Tally>, key: string): Tally {
  let tally = tallies.get(key);
  if (!tally) {
    tally = new Tally();
    tallies.set(key, tally);
  }
  return tally;
}

const maxText = (a: string, b: string) => (a > b ? a : b);

const busiestFirst = (a: TrafficGroup, b: TrafficGroup) =>
  b.requests - a.requests || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A project's traffic over `since`..`until` (durations before now, or ISO), grouped by `by`. */
export async function readProjectTraffic(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  query: { since?: string; until?: string; by?: TrafficGrouping },
): Promise<ProjectTraffic> {
  const project = await projectFor(ctx, actor, slug);
  const { from, to, interval } = trafficRange(ctx.clock.now(), query.since, query.until);
  const grouping = query.by ?? 'operation';
  const rows = await seriesRows(ctx.db, project.id, from, to);
  const fromText = from.toISOString();

  const totals = new Tally();
  const points = new Map<string, Tally>();
  const groups = new Map<string, Tally>();
  for (const row of rows) {
    const sketch = readSketch(row.latency);
    totals.add(row, sketch);
    // An hour row (minutes rolled up) that began before the range is drawn at its start.
    const at = maxText(interval === 'hour' ? `${row.at.slice(0, 13)}:00:00.000Z` : row.at, fromText);
    tallyOf(points, at).add(row, sketch);
    if (grouping === 'caller') continue;
    const key = grouping === 'operation' ? row.operation : String(Number(row.status));
    tallyOf(groups, key).add(row, sketch);
  }

  // Every interval of the range, empty ones included, so a chart's time axis has no gaps.
  const series: TrafficPoint[] = [];
  const step = interval === 'hour' ? HOUR_MS : 60_000;
  for (let at = from.getTime(); at < to.getTime(); at += step) {
    const key = new Date(at).toISOString();
    const point = points.get(key);
    series.push({
      at: key,
      requests: point?.requests ?? 0,
      errors: point?.errors ?? 0,
      ...(point?.percentiles() ?? { p50: null, p95: null, p99: null }),
    });
  }

  let answered: TrafficGroup[];
  if (grouping === 'caller') {
    answered = await callerGroups(ctx.db, project.id, from, to);
  } else {
    const deprecated = grouping === 'operation' ? await readDeprecatedOperations(ctx.db, project.id) : {};
    answered = [...groups].map(([key, tally]) => ({
      key,
      requests: tally.requests,
      errors: tally.errors,
      ...tally.percentiles(),
      bytesIn: tally.bytesIn,
      bytesOut: tally.bytesOut,
      ...(grouping === 'operation' && {
        operation: key,
        deprecated: Object.hasOwn(deprecated, key),
        sunset: deprecated[key]?.sunset ?? null,
      }),
    }));
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    interval,
    totals: { requests: totals.requests, errors: totals.errors, ...totals.percentiles() },
    series,
    grouping,
    groups: answered.sort(busiestFirst).slice(0, MAX_GROUPS),
  };
}
