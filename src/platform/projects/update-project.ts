import type { ProjectChange } from '../api-types.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { checkTenantOriginUrl, type Project, projectFor } from './projects.ts';

/** What a project's settings change: its display name, its origin, or both (the schema's type). */
export type { ProjectChange } from '../api-types.ts';

/**
 * Renames a project and/or moves it to another origin; any member of its team may (as its
 * domains and CORS policy). The slug never changes: it is the published host,
 * `<slug>.<platform domain>`, that callers and DNS records point at. A new origin passes the
 * same checks as at creation (`checkTenantOriginUrl`: a URL, http(s), no credentials, the address
 * policy with the team's grants) and the edge uses it from the next request. Deploys keep the
 * origin they were made with in their history; promoting an older deploy brings its origin back.
 */
export async function updateProject(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  change: ProjectChange,
): Promise<Project> {
  const project = await projectFor(ctx, actor, slug);
  if (change.name === undefined && change.originUrl === undefined) {
    throw platformErrors.error(
      'validation_failed',
      'Nothing to change: send a new name, a new originUrl, or both. The slug cannot change.',
    );
  }
  const name = change.name === undefined ? undefined : change.name.trim();
  if (name === '') {
    throw platformErrors.error('validation_failed', 'The name is blank: give the project a name to show.');
  }
  const originUrl =
    change.originUrl === undefined
      ? undefined
      : await checkTenantOriginUrl(ctx, project.teamId, change.originUrl);
  const updated = await ctx.db
    .updateTable('projects')
    .set({ ...(name !== undefined && { name }), ...(originUrl !== undefined && { origin_url: originUrl }) })
    .where('id', '=', project.id)
    .executeTakeFirst();
  // Deleted since it was read: as if it never was.
  if (updated.numUpdatedRows === 0n) await projectFor(ctx, actor, slug);
  // Only the origin reaches the edge; a name is the dashboard's and the API's.
  if (originUrl !== undefined && originUrl !== project.originUrl) {
    ctx.changes.publish({ kind: 'projects', projectId: project.id });
  }
  return { ...project, ...(name !== undefined && { name }), ...(originUrl !== undefined && { originUrl }) };
}
