import type { DeployComparison } from '../api-types.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { deployNotFound } from './deploy-records.ts';
import { type Project, projectFor } from './projects.ts';
import { diffStoredDocuments, storedDocumentAsYaml } from './stored-documents.ts';

/** The changes from one deploy of a project (`againstId`, the base) to another (`deployId`). */
export type { DeployComparison } from '../api-types.ts';

/** A deploy's stored document (JSON text), or why there is none. */
async function documentOf(ctx: PlatformContext, project: Project, id: number): Promise<string> {
  const row = await ctx.db
    .selectFrom('deploys')
    .select(['number', 'document'])
    .where('project_id', '=', project.id)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw deployNotFound(project.slug, id);
  if (row.document === null) {
    throw platformErrors.error(
      'deploy_failed',
      `Deploy #${row.number} of ${project.slug} failed validation and has no document: its problems are listed with the deploy; compare or download a succeeded one.`,
    );
  }
  return row.document;
}

/**
 * What changed from deploy `againstId` (by default the live one) to deploy `deployId`, by the
 * same engine as the deploy gate; any two deploys of the project compare, in either order.
 */
export async function compareDeploys(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
  againstId?: number,
): Promise<DeployComparison> {
  const project = await projectFor(ctx, actor, slug);
  const base = againstId ?? project.activeDeployId;
  if (base === null) {
    throw platformErrors.error(
      'deploy_required',
      `Project ${slug} has no live deploy to compare with: name the other deploy with ?against=ID.`,
    );
  }
  const [revision, against] = await Promise.all([
    documentOf(ctx, project, deployId),
    documentOf(ctx, project, base),
  ]);
  const { changes, breaking } = await diffStoredDocuments(against, revision, ctx.clock.now());
  return { deployId, againstId: base, changes, breaking };
}

/** A deploy's document as stored (JSON text), or as YAML: for viewing, download and comparison. */
export async function readDeployDocumentAs(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
  format: 'json' | 'yaml',
): Promise<string> {
  const project = await projectFor(ctx, actor, slug);
  const document = await documentOf(ctx, project, deployId);
  return format === 'yaml' ? storedDocumentAsYaml(document) : document;
}
