import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { type Project, projectFor } from '../projects/projects.ts';
import { previewHost } from './preview-address.ts';

/** A preview deploy that the actor may reach, with its project and its address. */
export interface PreviewDeploy {
  readonly project: Project;
  readonly deployId: number;
  /** `<slug>--<deployId>.<platform domain>` */
  readonly host: string;
}

/**
 * The preview deploy `deployId` of project `slug`, if the actor is in the project's team (or a
 * platform admin). A project the actor cannot see is "not found" (projectFor); a deploy that is
 * not a succeeded preview has no preview address to open or share.
 */
export async function previewDeployFor(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
): Promise<PreviewDeploy> {
  const project = await projectFor(ctx, actor, slug);
  const row = await ctx.db
    .selectFrom('deploys')
    .select(['id', 'status', 'preview'])
    .where('project_id', '=', project.id)
    .where('id', '=', deployId)
    .executeTakeFirst();
  if (!row) {
    throw platformErrors.error(
      'deploy_not_found',
      `Project ${slug} has no deploy ${deployId}: check the id against the project's list of deploys.`,
    );
  }
  if (!row.preview || row.status !== 'succeeded') {
    throw platformErrors.error(
      'deploy_not_preview',
      row.preview
        ? `Deploy ${deployId} failed validation, so it has no preview address. Fix the document and deploy it again with preview: true.`
        : `Deploy ${deployId} is not a preview: it was deployed to the live site at ${project.defaultHost}. Deploy with preview: true (kennel deploy --preview) for a private preview address.`,
    );
  }
  return { project, deployId, host: previewHost(project.slug, deployId, ctx.config.platformDomain) };
}
