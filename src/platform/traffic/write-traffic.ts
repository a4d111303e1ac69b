import { sql } from 'kysely';
import { compileOnce, compileRowsOnce, transact } from '../../storage/index.ts';
import type { PlatformDb } from '../context.ts';

/** A series' counts for one minute on one node: cumulative since the minute began. */
export interface MinuteCounts {
  readonly projectId: number;
  /** `GET /pets/{petId}`, `unmatched`, `other`. */
  readonly operation: string;
  readonly status: number;
  /** ISO minute start, UTC. */
  readonly minute: string;
  readonly requests: number;
  readonly errors: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** LatencySketch JSON. */
  readonly latency: string;
}

/** A caller's counts since the node's previous flush: added to what the day's row holds. */
export interface CallerCounts {
  readonly projectId: number;
  /** The keyed hash (32 hex), or `other`. */
  readonly caller: string;
  readonly label: string;
  /** `key`, `address` or `other`. */
  readonly kind: string;
  readonly operation: string;
  /** `YYYY-MM-DD`, UTC. */
  readonly day: string;
  readonly requests: number;
  readonly errors: number;
  readonly lastSeenAt: string;
}

export interface RequestLogEntry {
  readonly projectId: number;
  /** ISO, ms. */
  readonly at: string;
  readonly method: string;
  readonly operation: string;
  readonly path: string;
  readonly status: number;
  readonly latencyMs: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly callerLabel: string;
  readonly requestId: string;
}

/**
 * Where an edge node's traffic batches go. `writeCounts` overwrites the node's minute rows with
 * `minutes` (only this node writes rows with its node id, and it holds each minute's running
 * totals, so overwriting is exact and the sketches need no read-merge-write) and adds `callers`
 * to the day's rows, in one transaction; `writeLogs` appends and keeps the last `keep` rows per
 * project of this node.
 */
export interface TrafficWriter {
  writeCounts(batch: { minutes: readonly MinuteCounts[]; callers: readonly CallerCounts[] }): Promise<void>;
  writeLogs(entries: readonly RequestLogEntry[], keep: number): Promise<void>;
}

/** Rows per INSERT: under SQLite's 32,766 bound parameters with 13 columns, and small statements. */
const CHUNK = 500;

export function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/** A series row's key in traffic_minutes and traffic_hours, their time column apart. */
export const SERIES_KEY = ['node_id', 'project_id', 'operation', 'status'] as const;

/**
 * A series row written again (a node's minute, an hour rolled up) takes the counts and sketch
 * written: its writer holds the running totals, the node its minute's, the job the hour's.
 */
export const REPLACE_SERIES_COUNTS = {
  requests: sql<number>`excluded.requests`,
  errors: sql<number>`excluded.errors`,
  bytes_in: sql<number>`excluded.bytes_in`,
  bytes_out: sql<number>`excluded.bytes_out`,
  latency: sql<string>`excluded.latency`,
};

/** Request-log rows per INSERT: compiled once per count (at most LOG_CHUNK shapes). */
const LOG_CHUNK = 100;

/** The database side of one edge node's traffic (tables of migration 0011_traffic). */
export function trafficWriter(db: PlatformDb, nodeId: string): TrafficWriter {
  // A busy node writes its logs every second: building a Kysely INSERT of hundreds of rows each
  // time would cost more than the database's own work, so the statement is compiled once.
  const insertLogs = compileRowsOnce(
    (rows: readonly RequestLogEntry[]) =>
      db.insertInto('request_logs').values(
        rows.map((e) => ({
          node_id: nodeId,
          project_id: e.projectId,
          at: e.at,
          method: e.method,
          operation: e.operation,
          path: e.path,
          status: e.status,
          latency_ms: e.latencyMs,
          bytes_in: e.bytesIn,
          bytes_out: e.bytesOut,
          caller_label: e.callerLabel,
          request_id: e.requestId,
        })),
      ),
    {
      projectId: 0,
      at: '',
      method: '',
      operation: '',
      path: '',
      status: 0,
      latencyMs: 0,
      bytesIn: 0,
      bytesOut: 0,
      callerLabel: '',
      requestId: '',
    },
    (e) => [
      nodeId,
      e.projectId,
      e.at,
      e.method,
      e.operation,
      e.path,
      e.status,
      e.latencyMs,
      e.bytesIn,
      e.bytesOut,
      e.callerLabel,
      e.requestId,
    ],
  );
  // The last `keep` rows of a project this node wrote stay, older ones go: one DELETE below the
  // id `keep` rows down the (node_id, project_id, id) index, found by the same statement.
  const pruneLogs = compileOnce(
    (node: string, projectId: number, sameNode: string, sameProject: number, one: number, keep: number) =>
      db
        .deleteFrom('request_logs')
        .where('node_id', '=', node)
        .where('project_id', '=', projectId)
        .where('id', '<=', (eb) =>
          eb
            .selectFrom('request_logs')
            .select('id')
            .where('node_id', '=', sameNode)
            .where('project_id', '=', sameProject)
            .orderBy('id', 'desc')
            .limit(one)
            .offset(keep),
        ),
    [nodeId, 0, nodeId, 0, 1, 0],
  );
  return {
    async writeCounts({ minutes, callers }) {
      if (minutes.length === 0 && callers.length === 0) return;
      await transact(db, async (trx) => {
        for (const rows of chunks(minutes)) {
          await trx
            .insertInto('traffic_minutes')
            .values(
              rows.map((r) => ({
                node_id: nodeId,
                project_id: r.projectId,
                operation: r.operation,
                status: r.status,
                minute: r.minute,
                requests: r.requests,
                errors: r.errors,
                bytes_in: r.bytesIn,
                bytes_out: r.bytesOut,
                latency: r.latency,
              })),
            )
            .onConflict((oc) => oc.columns([...SERIES_KEY, 'minute']).doUpdateSet(REPLACE_SERIES_COUNTS))
            .execute();
        }
        for (const rows of chunks(callers)) {
          await trx
            .insertInto('traffic_callers')
            .values(
              rows.map((r) => ({
                node_id: nodeId,
                project_id: r.projectId,
                caller: r.caller,
                caller_label: r.label,
                caller_kind: r.kind,
                operation: r.operation,
                day: r.day,
                requests: r.requests,
                errors: r.errors,
                last_seen_at: r.lastSeenAt,
              })),
            )
            .onConflict((oc) =>
              oc.columns(['node_id', 'project_id', 'caller', 'operation', 'day']).doUpdateSet({
                requests: sql`traffic_callers.requests + excluded.requests`,
                errors: sql`traffic_callers.errors + excluded.errors`,
                caller_label: sql`excluded.caller_label`,
                last_seen_at: sql`CASE WHEN excluded.last_seen_at > traffic_callers.last_seen_at THEN excluded.last_seen_at ELSE traffic_callers.last_seen_at END`,
              }),
            )
            .execute();
        }
      });
    },

    async writeLogs(entries, keep) {
      if (entries.length === 0) return;
      const projects = new Set(entries.map((e) => e.projectId));
      await transact(db, async (trx) => {
        for (let i = 0; i < entries.length; i += LOG_CHUNK) {
          await trx.executeQuery(insertLogs(entries.slice(i, i + LOG_CHUNK)));
        }
        for (const projectId of projects) {
          await trx.executeQuery(pruneLogs(nodeId, projectId, nodeId, projectId, 1, keep));
        }
      });
    },
  };
}
