import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { projectFor } from '../projects/projects.ts';
import { readDeprecatedOperations } from './read-operation-lifecycle.ts';
import { DAY_MS, isoDay } from './read-range.ts';

/**
 * Who still calls what is going away: for each deprecated operation of the live document, the
 * callers that called it in the last 7 days (today and the six days before, UTC: callers are
 * counted per day), with their requests and their last call.
 */
export const REACH_DAYS = 7;

export interface ReachCaller {
  /** The display label (`key:sk_liv…`, `203.0.113.0/24`), never the credential. */
  caller: string;
  callerKind: string;
  requests: number;
  lastSeenAt: string;
}

export interface OperationReach {
  operation: string;
  sunset: string | null;
  callers: ReachCaller[];
}

/** The first day (`YYYY-MM-DD`) of the last REACH_DAYS days at `now`. */
export const reachStartDay = (now: Date) => isoDay(new Date(now.getTime() - (REACH_DAYS - 1) * DAY_MS));

/** The callers of `operations` in the last 7 days, by operation, busiest first. */
export async function callersOf(
  db: PlatformDb,
  projectId: number,
  operations: readonly string[],
  now: Date,
): Promise<Map<string, ReachCaller[]>> {
  const found = new Map<string, ReachCaller[]>(operations.map((op) => [op, []]));
  if (operations.length === 0) return found;
  const rows = await db
    .selectFrom('traffic_callers')
    .select((eb) => [
      'operation',
      'caller',
      eb.fn.max('caller_label').as('label'),
      eb.fn.max('caller_kind').as('kind'),
      eb.fn.sum<number | string>('requests').as('requests'),
      eb.fn.max('last_seen_at').as('last_seen_at'),
    ])
    .where('project_id', '=', projectId)
    .where('operation', 'in', [...operations])
    .where('day', '>=', reachStartDay(now))
    .groupBy(['operation', 'caller'])
    .execute();
  for (const row of rows) {
    found.get(row.operation)?.push({
      caller: row.label,
      callerKind: row.kind,
      requests: Number(row.requests),
      lastSeenAt: row.last_seen_at,
    });
  }
  for (const callers of found.values()) {
    callers.sort((a, b) => b.requests - a.requests || (a.lastSeenAt < b.lastSeenAt ? 1 : -1));
  }
  return found;
}

/** Each deprecated operation of the project's live deploy, with its callers of the last 7 days. */
export async function readDeprecationReach(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
): Promise<{ operations: OperationReach[] }> {
  const project = await projectFor(ctx, actor, slug);
  const deprecated = await readDeprecatedOperations(ctx.db, project.id);
  const names = Object.keys(deprecated).sort();
  const callers = await callersOf(ctx.db, project.id, names, ctx.clock.now());
  return {
    operations: names.map((operation) => ({
      operation,
      sunset: deprecated[operation]?.sunset ?? null,
      callers: callers.get(operation) ?? [],
    })),
  };
}
