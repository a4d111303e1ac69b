import { hashSecret, newSecret } from '../accounts/secrets.ts';
import type { PreviewLink } from '../api-types.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { previewDeployFor } from './preview-deploy.ts';

/** Share-link tokens: `kpl_` and 43 random characters (256 bits), stored only as SHA-256. */
export const PREVIEW_LINK_PREFIX = 'kpl_';
/** How long a share link may live: five minutes to thirty days, a week when not said. */
export const PREVIEW_LINK_LIFETIME = { minSeconds: 300, maxSeconds: 30 * 86_400, defaultSeconds: 7 * 86_400 };
/** The query parameter that carries a share link's (or a hand-off's) token to the preview host. */
export const PREVIEW_TOKEN_PARAM = 'kennel_preview';

export type { PreviewLink } from '../api-types.ts';

/**
 * The share link's address on the preview host, as the caller reached the platform (`http://…:8080`
 * locally, `https://…` in production): the edge serves every host on the same listeners.
 */
export function previewLinkUrl(platformUrl: string, host: string, token: string): string {
  const url = new URL(platformUrl);
  url.hostname = host;
  url.pathname = '/';
  url.search = `?${PREVIEW_TOKEN_PARAM}=${token}`;
  return url.toString();
}

/**
 * Makes a share link for a preview deploy: whoever holds its token opens the preview until
 * `expiresInSeconds` have passed or a team member revokes it. The token is in this answer only.
 */
export async function createPreviewLink(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
  expiresInSeconds: number = PREVIEW_LINK_LIFETIME.defaultSeconds,
): Promise<PreviewLink & { token: string }> {
  const preview = await previewDeployFor(ctx, actor, slug, deployId);
  const { minSeconds, maxSeconds } = PREVIEW_LINK_LIFETIME;
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < minSeconds || expiresInSeconds > maxSeconds) {
    throw platformErrors.error(
      'validation_failed',
      `expiresIn is ${expiresInSeconds}: give whole seconds from ${minSeconds} (five minutes) to ${maxSeconds} (thirty days).`,
    );
  }
  const { secret, hash } = newSecret(PREVIEW_LINK_PREFIX);
  const now = ctx.clock.now();
  const createdAt = now.toISOString();
  const expiresAt = new Date(now.getTime() + expiresInSeconds * 1000).toISOString();
  const row = await ctx.db
    .insertInto('preview_links')
    .values({
      project_id: preview.project.id,
      deploy_id: deployId,
      token_hash: hash,
      created_by: actor.userId,
      created_at: createdAt,
      expires_at: expiresAt,
      revoked_at: null,
    })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  return {
    id: Number(row.id),
    deployId,
    host: preview.host,
    createdBy: actor.email,
    createdAt,
    expiresAt,
    revokedAt: null,
    active: true,
    token: secret,
  };
}

/** A preview deploy's share links, newest first, the revoked and expired ones included. */
export async function listPreviewLinks(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
): Promise<PreviewLink[]> {
  const preview = await previewDeployFor(ctx, actor, slug, deployId);
  const rows = await ctx.db
    .selectFrom('preview_links')
    .leftJoin('users', 'users.id', 'preview_links.created_by')
    .select([
      'preview_links.id',
      'preview_links.created_at',
      'preview_links.expires_at',
      'preview_links.revoked_at',
      'users.email',
    ])
    .where('preview_links.deploy_id', '=', deployId)
    .orderBy('preview_links.id', 'desc')
    .execute();
  const now = ctx.clock.now().toISOString();
  return rows.map((r) => ({
    id: Number(r.id),
    deployId,
    host: preview.host,
    createdBy: r.email ?? null,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    active: r.revoked_at === null && r.expires_at > now,
  }));
}

/** Revokes a share link: it stops opening the preview, and so do the browsers it opened it for. */
export async function revokePreviewLink(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
  linkId: number,
): Promise<void> {
  await previewDeployFor(ctx, actor, slug, deployId);
  const result = await ctx.db
    .updateTable('preview_links')
    .set({ revoked_at: ctx.clock.now().toISOString() })
    .where('id', '=', linkId)
    .where('deploy_id', '=', deployId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) {
    throw platformErrors.error(
      'preview_link_not_found',
      `Deploy ${deployId} of ${slug} has no live share link ${linkId}: check the id against the preview's list of links.`,
    );
  }
}

/** The live share link a token names for this deploy, or undefined. */
export async function liveLinkFor(
  ctx: Pick<PlatformContext, 'db'>,
  now: Date,
  deployId: number,
  token: string,
): Promise<{ id: number; expiresAt: string } | undefined> {
  if (!token.startsWith(PREVIEW_LINK_PREFIX)) return undefined;
  const row = await ctx.db
    .selectFrom('preview_links')
    .select(['id', 'expires_at'])
    .where('token_hash', '=', hashSecret(token))
    .where('deploy_id', '=', deployId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return row ? { id: Number(row.id), expiresAt: row.expires_at } : undefined;
}
