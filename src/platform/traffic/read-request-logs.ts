import type { RequestLog } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { projectFor } from '../projects/projects.ts';

/**
 * A project's request log, as the edge nodes flush it (each keeps the last REQUEST_LOG_SIZE
 * requests per project: docs/traffic.md). Ids grow in the order rows were written, on every
 * node alike (one sequence in the database), so "after id N" is a cursor across nodes.
 */
export type { RequestLog } from '../api-types.ts';

export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 1000;

function selectLogs(db: PlatformDb, projectId: number) {
  return db
    .selectFrom('request_logs')
    .select([
      'id',
      'at',
      'method',
      'operation',
      'path',
      'status',
      'latency_ms',
      'bytes_in',
      'bytes_out',
      'caller_label',
      'request_id',
    ])
    .where('project_id', '=', projectId);
}

type LogRow = Awaited<ReturnType<ReturnType<typeof selectLogs>['execute']>>[number];

function toLog(row: LogRow): RequestLog {
  return {
    id: Number(row.id),
    at: row.at,
    method: row.method,
    operation: row.operation,
    path: row.path,
    status: Number(row.status),
    latencyMs: Number(row.latency_ms),
    bytesIn: Number(row.bytes_in),
    bytesOut: Number(row.bytes_out),
    caller: row.caller_label ?? null,
    requestId: row.request_id ?? null,
  };
}

/** The project's logged requests, newest first; `before`: only those with a smaller id (the cursor). */
export async function listRequestLogs(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  query: { limit?: number; before?: number },
): Promise<{ logs: RequestLog[] }> {
  const project = await projectFor(ctx, actor, slug);
  const rows = await selectLogs(ctx.db, project.id)
    .$if(query.before !== undefined, (q) => q.where('id', '<', query.before as number))
    .orderBy('id', 'desc')
    .limit(Math.min(query.limit ?? DEFAULT_LOG_LIMIT, MAX_LOG_LIMIT))
    .execute();
  return { logs: rows.map(toLog) };
}

/** Up to `limit` logged requests with an id above `after`, oldest first (what a live stream sends next). */
export async function readRequestLogsAfter(
  db: PlatformDb,
  projectId: number,
  after: number,
  limit = 500,
): Promise<RequestLog[]> {
  const rows = await selectLogs(db, projectId)
    .where('id', '>', after)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.map(toLog);
}

/** The project's newest logged id (0 when none): a stream with no Last-Event-ID starts after it. */
export async function newestRequestLogId(db: PlatformDb, projectId: number): Promise<number> {
  const row = await db
    .selectFrom('request_logs')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}
