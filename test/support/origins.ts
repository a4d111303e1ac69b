import { type OriginGuard, originGuard } from '../../src/edge/index.ts';
import type { PlatformContext } from '../../src/platform/context.ts';

/**
 * The origin guard of a test edge. Tests run their origins on loopback, which the address policy
 * refuses without a grant, so this does what a platform admin would: it grants each project seeded
 * before the edge starts its origin, for the project's team (the routing table then forwards it),
 * and returns a guard allowing those origins, the configured allowlist and `extra`. Anything else
 * on loopback stays refused.
 */
export async function seededOriginGuard(
  ctx: PlatformContext,
  extra: readonly string[] = [],
): Promise<OriginGuard> {
  const rows = await ctx.db.selectFrom('projects').select(['team_id', 'origin_url']).execute();
  const grants = new Map<string, { team_id: number; origin: string }>();
  for (const row of rows) {
    const origin = new URL(row.origin_url).origin;
    grants.set(`${row.team_id} ${origin}`, { team_id: row.team_id, origin });
  }
  const granted = await ctx.db.selectFrom('origin_grants').select(['team_id', 'origin']).execute();
  for (const row of granted) grants.delete(`${row.team_id} ${row.origin}`);
  if (grants.size > 0) {
    const createdAt = ctx.clock.now().toISOString();
    await ctx.db
      .insertInto('origin_grants')
      .values([...grants.values()].map((g) => ({ ...g, granted_by: null, created_at: createdAt })))
      .execute();
    ctx.changes.publish({ kind: 'origin_grants', projectId: 0 });
  }
  return originGuard({
    allowlist: [
      ...ctx.config.originAllowlist,
      ...rows.map((row) => new URL(row.origin_url).origin),
      ...extra,
    ],
  });
}
