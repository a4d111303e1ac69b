import type { PlatformContext } from '../context.ts';
import { PLAN_NAMES, PLANS } from '../plans.ts';
import type { Project } from '../projects/projects.ts';
import type { DomainRow } from './domain-store.ts';
import { checkDomain } from './verify-domain.ts';

/**
 * One pass of the background checker: every live domain whose next check is due is checked, at
 * most `concurrency` at a time. Unverified domains retry with back-off until the propagation
 * window closes; verified ones are re-checked periodically and flagged when DNS stops pointing
 * here. Returns how many were checked.
 */
export async function checkDueDomains(
  ctx: PlatformContext,
  options: { limit?: number; concurrency?: number } = {},
): Promise<number> {
  const now = ctx.clock.now().toISOString();
  const rows = await ctx.db
    .selectFrom('domains')
    .innerJoin('projects', 'projects.id', 'domains.project_id')
    .innerJoin('teams', 'teams.id', 'projects.team_id')
    .selectAll('domains')
    .select([
      'projects.slug',
      'projects.team_id',
      'projects.name as project_name',
      'projects.origin_url',
      'projects.active_deploy_id',
      'projects.primary_domain',
      'teams.plan',
    ])
    .where('domains.state', '<>', 'removed')
    // A claim of a team on a plan without custom domains (downgraded since it was added) waits:
    // Verify refuses it, so the checker must not verify it either; it resumes on an upgrade.
    // Domains the team already serves keep being re-checked.
    .where((eb) =>
      eb.or([
        eb('domains.state', '<>', 'unverified'),
        eb(
          'teams.plan',
          'not in',
          PLAN_NAMES.filter((plan) => !PLANS[plan].customDomains),
        ),
      ]),
    )
    .where('domains.next_check_at', '<=', now)
    .orderBy('domains.next_check_at')
    .limit(options.limit ?? 500)
    .execute();
  const queue = [...rows];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      const project: Project = {
        id: row.project_id,
        teamId: row.team_id,
        slug: row.slug,
        name: row.project_name,
        originUrl: row.origin_url,
        activeDeployId: row.active_deploy_id,
        primaryDomain: row.primary_domain,
        plan: row.plan,
        defaultHost: `${row.slug}.${ctx.config.platformDomain}`,
      };
      await checkDomain(ctx, 'system', project, row as unknown as DomainRow, 'background');
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
  return rows.length;
}
