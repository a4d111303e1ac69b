import { transact } from '../../storage/index.ts';
import { teamFor } from '../accounts/teams.ts';
import type { ProjectDeletion } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { projectFor, projectNotFound } from './projects.ts';

/** What deleting a project removes (or removed): counts of what it holds (the schema's type). */
export type { ProjectDeletion } from '../api-types.ts';

async function countHoldings(db: PlatformDb, projectId: number, slug: string): Promise<ProjectDeletion> {
  const count = async (query: Promise<{ n: number | string | bigint } | undefined>) =>
    Number((await query)?.n ?? 0);
  // One after another: inside a transaction they share one connection.
  const domains = await count(
    db
      .selectFrom('domains')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('project_id', '=', projectId)
      .where('state', '<>', 'removed')
      .executeTakeFirst(),
  );
  const certificates = await count(
    db
      .selectFrom('certificates')
      .innerJoin('domains', 'domains.id', 'certificates.domain_id')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('domains.project_id', '=', projectId)
      .executeTakeFirst(),
  );
  const deploys = await count(
    db
      .selectFrom('deploys')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirst(),
  );
  return { slug, domains, certificates, deploys };
}

/** What deleting the project would remove; any member of its team may ask. */
export async function previewProjectDeletion(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
): Promise<ProjectDeletion> {
  const project = await projectFor(ctx, actor, slug);
  return countHoldings(ctx.db, project.id, project.slug);
}

/**
 * Deletes a project and everything it holds, in one transaction: its domains (with their history,
 * redirects and certificate orders), their certificates, its deploys (previews, share links and
 * the changelog with them), its CORS policy and its traffic. Team owners and platform admins only.
 * The edge stops serving its default address, previews and domains once the change is published
 * (right after the commit; other nodes hear it through the change relay). Answers what went.
 * The slug is free again afterwards.
 */
export async function deleteProject(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
): Promise<ProjectDeletion> {
  const project = await projectFor(ctx, actor, slug);
  const team = await teamFor(ctx, actor, project.teamId);
  if (team.role !== 'owner' && !actor.isAdmin) {
    throw platformErrors.error(
      'forbidden',
      `Only owners of team ${JSON.stringify(team.name)} can delete project ${slug}. Ask one of them.`,
    );
  }
  const removed = await transact(ctx.db, async (trx) => {
    // Locked, so a deploy or a domain change waits for the delete, then finds no project.
    let lock = trx.selectFrom('projects').select('id').where('id', '=', project.id);
    if (ctx.dialect === 'postgres') lock = lock.forUpdate();
    if (!(await lock.executeTakeFirst())) return null;
    const holdings = await countHoldings(trx, project.id, project.slug);
    const domainIds = trx.selectFrom('domains').select('id').where('project_id', '=', project.id);
    // Certificates and traffic rows name the project or its domains without a foreign key.
    await trx.deleteFrom('certificates').where('domain_id', 'in', domainIds).execute();
    await trx.deleteFrom('certificate_jobs').where('domain_id', 'in', domainIds).execute();
    for (const table of ['traffic_minutes', 'traffic_hours', 'traffic_callers', 'request_logs'] as const) {
      await trx.deleteFrom(table).where('project_id', '=', project.id).execute();
    }
    // The rest goes by ON DELETE CASCADE (src/platform/db-schema.ts): domains, domain_events,
    // redirects, deploys, publications, preview_links, preview_sessions, project_cors,
    // traffic_notices.
    await trx.deleteFrom('projects').where('id', '=', project.id).execute();
    return holdings;
  });
  // Another delete won the race: the project is gone, as if never seen.
  if (!removed) throw projectNotFound(slug);
  ctx.changes.publish({ kind: 'projects', projectId: project.id });
  ctx.changes.publish({ kind: 'deploys', projectId: project.id });
  return removed;
}
