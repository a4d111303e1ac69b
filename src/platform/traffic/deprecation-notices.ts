import { transact } from '../../storage/index.ts';
import type { PlatformContext } from '../context.ts';
import { emitEvent } from '../webhooks/webhook-events.ts';
import { callersOf, REACH_DAYS, reachStartDay } from './read-deprecation-reach.ts';
import { readDeprecatedOperations } from './read-operation-lifecycle.ts';
import { DAY_MS, isoDay } from './read-range.ts';

/**
 * The team's daily `deprecation.still_called` event: once a day per deprecated operation while
 * its sunset is less than 14 days away and callers called it in the last 7 days. Any node's job
 * may send it: a row in traffic_notices per (project, operation, UTC day), inserted in the
 * transaction that enqueues the event, makes the second node's insert a no-op, so each is sent
 * once (docs/webhooks.md).
 */
export const NOTICE_BEFORE_SUNSET_MS = 14 * DAY_MS;
/** At most this many callers are named in one event (the busiest); `callerCount` counts them all. */
export const NOTICE_CALLERS = 20;
/** How often nodes look (the dedupe keeps it to one event a day). */
export const NOTICE_EVERY_MS = 60 * 60_000;
/** How long sent notices are remembered (they only need to outlive their day). */
const NOTICES_KEPT_DAYS = 30;

/** Sends what is due now; returns how many events were enqueued (teams without an endpoint get none). */
export async function sendDeprecationNotices(ctx: PlatformContext): Promise<number> {
  const now = ctx.clock.now();
  const day = isoDay(now);
  // Only operations someone called lately can be due: start from those, not from every document.
  const called = await ctx.db
    .selectFrom('traffic_callers')
    .select(['project_id', 'operation'])
    .distinct()
    .where('day', '>=', reachStartDay(now))
    .execute();
  const byProject = new Map<number, string[]>();
  for (const row of called) {
    const id = Number(row.project_id);
    byProject.set(id, [...(byProject.get(id) ?? []), row.operation]);
  }
  let sent = 0;
  for (const [projectId, operations] of byProject) {
    const deprecated = await readDeprecatedOperations(ctx.db, projectId);
    const due = operations.filter((operation) => {
      const sunset = deprecated[operation]?.sunset;
      if (!sunset) return false;
      const left = Date.parse(sunset) - now.getTime();
      return left > 0 && left < NOTICE_BEFORE_SUNSET_MS;
    });
    if (due.length === 0) continue;
    const project = await ctx.db
      .selectFrom('projects')
      .select(['team_id', 'slug'])
      .where('id', '=', projectId)
      .executeTakeFirst();
    if (!project) continue;
    const callers = await callersOf(ctx.db, projectId, due, now);
    for (const operation of due.sort()) {
      const seen = callers.get(operation) ?? [];
      if (seen.length === 0) continue;
      const enqueued = await transact(ctx.db, async (trx) => {
        const claimed = await trx
          .insertInto('traffic_notices')
          .values({ project_id: projectId, operation, day, sent_at: now.toISOString() })
          .onConflict((oc) => oc.columns(['project_id', 'operation', 'day']).doNothing())
          .returning('day')
          .executeTakeFirst();
        if (!claimed) return false;
        const message = await emitEvent(trx, now, {
          teamId: Number(project.team_id),
          type: 'deprecation.still_called',
          subject: `project:${projectId}`,
          data: {
            project: project.slug,
            operation,
            sunset: deprecated[operation]?.sunset ?? null,
            days: REACH_DAYS,
            requests: seen.reduce((sum, c) => sum + c.requests, 0),
            callerCount: seen.length,
            callers: seen.slice(0, NOTICE_CALLERS),
          },
        });
        // Without an endpoint nothing is sent, and the day's notice is done all the same.
        return message !== null;
      });
      if (enqueued) sent += 1;
    }
  }
  await ctx.db
    .deleteFrom('traffic_notices')
    .where('day', '<', isoDay(new Date(now.getTime() - NOTICES_KEPT_DAYS * DAY_MS)))
    .execute();
  if (sent > 0) ctx.webhooks?.wake();
  return sent;
}
