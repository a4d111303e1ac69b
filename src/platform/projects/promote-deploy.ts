import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { listPublications, type Publication } from '../publishing/publications.ts';
import { addTraffic } from '../traffic/read-operation-traffic.ts';
import { deployNotFound, selectDeploys } from './deploy-records.ts';
import { type DeployView, toDeployView } from './deploys.ts';
import {
  changesAgainstLive,
  LiveDeployMoved,
  lockProject,
  makeLive,
  refuseBreaking,
  withSettledLiveDeploy,
} from './go-live.ts';
import { checkTenantOriginUrl, projectFor } from './projects.ts';
import { NO_CHANGES } from './stored-documents.ts';

/** A promotion: the deploy now live, and the publication that records it. */
export interface Promotion {
  deploy: DeployView;
  publication: Publication;
}

/**
 * Makes an earlier succeeded deploy (or a preview) of the project live again, in one step: its
 * document and its origin. The gate of a deploy applies: its changes against the live deploy
 * must not break callers unless `allowBreaking`. Whoever may deploy may promote.
 */
export async function promoteDeploy(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
  options: { allowBreaking?: boolean } = {},
): Promise<Promotion> {
  const project = await projectFor(ctx, actor, slug);
  const target = await ctx.db
    .selectFrom('deploys')
    .select(['id', 'number', 'status', 'document', 'origin_url', 'created_by'])
    .where('project_id', '=', project.id)
    .where('id', '=', deployId)
    .executeTakeFirst();
  if (!target) throw deployNotFound(slug, deployId);
  if (target.status !== 'succeeded' || target.document === null) {
    throw platformErrors.error(
      'deploy_failed',
      `Deploy #${target.number} of ${slug} failed validation and has no document to publish: promote a succeeded deploy (the project's list of deploys shows each one's status).`,
    );
  }
  const document = target.document;
  // Its origin was checked when it was deployed; grants may have changed since.
  if (target.origin_url !== project.originUrl)
    await checkTenantOriginUrl(ctx, project.teamId, target.origin_url);
  const author = target.created_by
    ? await ctx.db.selectFrom('users').select('email').where('id', '=', target.created_by).executeTakeFirst()
    : undefined;
  const { webhook, promotion } = await withSettledLiveDeploy(async () => {
    const { liveId, changes } = await changesAgainstLive(ctx, project, document);
    if (liveId === Number(target.id)) {
      throw platformErrors.error(
        'deploy_already_live',
        `Deploy #${target.number} is already the live deploy of ${slug}: nothing to promote.`,
      );
    }
    if (options.allowBreaking !== true) {
      await refuseBreaking(
        ctx,
        project.id,
        changes,
        `Promoting deploy #${target.number}`,
        'send it again with allowBreaking: true to publish it anyway',
      );
    }
    return transact(ctx.db, async (trx) => {
      if ((await lockProject(trx, ctx.dialect, project.id)) !== liveId) throw new LiveDeployMoved();
      const deploy = { id: Number(target.id), number: Number(target.number), originUrl: target.origin_url };
      const made = await makeLive(ctx, trx, {
        project,
        deploy: { ...deploy, createdBy: author?.email ?? null },
        changes: changes ?? NO_CHANGES,
        actor,
      });
      const row = await selectDeploys(trx, project.id)
        .where('deploys.id', '=', deploy.id)
        .executeTakeFirstOrThrow();
      const [publication] = await listPublications(trx, project.id, 1);
      if (publication?.id !== made.publicationId)
        throw new Error('the publication just written is not the newest');
      return {
        webhook: made.webhook,
        promotion: { deploy: toDeployView(slug, deploy.id, row), publication },
      };
    });
  });
  ctx.changes.publish({ kind: 'deploys', projectId: project.id });
  if (webhook) ctx.webhooks?.wake();
  // Each breaking change with its operation's calls of the last 7 days (docs/traffic.md).
  const now = ctx.clock.now();
  return {
    deploy: {
      ...promotion.deploy,
      changes: await addTraffic(ctx.db, project.id, promotion.deploy.changes, now),
    },
    publication: {
      ...promotion.publication,
      changes: await addTraffic(ctx.db, project.id, promotion.publication.changes, now),
    },
  };
}
