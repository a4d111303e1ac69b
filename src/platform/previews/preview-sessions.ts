import { sql } from 'kysely';
import { hashSecret, newSecret } from '../accounts/secrets.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { previewDeployFor } from './preview-deploy.ts';
import { liveLinkFor, PREVIEW_LINK_PREFIX } from './preview-links.ts';

/**
 * How a browser gets into a private preview host (docs/security.md, "Previews"). The dashboard's
 * session cookie is host-only on the platform domain, so it never reaches a preview host; instead
 * a member is handed over: the platform makes a one-minute, single-use hand-off token and sends
 * the browser to `https://<preview host>/?kennel_preview=<token>`; the edge exchanges it (or a
 * share link's token) for a cookie of that host alone and sends the browser on to the clean URL.
 * Every token and cookie is 256 random bits stored only as its SHA-256.
 */
export const PREVIEW_HANDOFF_PREFIX = 'kph_';
export const PREVIEW_COOKIE_PREFIX = 'kpc_';
/** A hand-off is exchanged right away by the browser it was made for: one minute is plenty. */
export const HANDOFF_LIFETIME_MS = 60_000;
/** A member's cookie on a preview host; past it, the dashboard hands them over again. */
export const MEMBER_PREVIEW_SESSION_MS = 12 * 3_600_000;

/** A hand-off for a member of the preview's team (or a platform admin): the token is shown once. */
export async function startPreviewHandoff(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  deployId: number,
): Promise<{ token: string; host: string; expiresAt: string }> {
  const preview = await previewDeployFor(ctx, actor, slug, deployId);
  const { secret, hash } = newSecret(PREVIEW_HANDOFF_PREFIX);
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + HANDOFF_LIFETIME_MS).toISOString();
  await ctx.db
    .insertInto('preview_sessions')
    .values({
      deploy_id: deployId,
      token_hash: hash,
      link_id: null,
      user_id: actor.userId,
      created_at: now.toISOString(),
      expires_at: expiresAt,
      exchanged_at: null,
    })
    .execute();
  return { token: secret, host: preview.host, expiresAt };
}

/**
 * Exchanges a hand-off's or a share link's token, sent to preview `deployId`'s host, for that
 * host's cookie (shown once). Undefined when the token opens nothing there: unknown, used,
 * expired, revoked, or made for another preview — the edge answers all of these alike.
 */
export async function exchangePreviewToken(
  db: PlatformDb,
  now: Date,
  deployId: number,
  token: string,
): Promise<{ cookie: string; expiresAt: Date } | undefined> {
  const at = now.toISOString();
  const { secret, hash } = newSecret(PREVIEW_COOKIE_PREFIX);
  // Expired rows of this preview go with each exchange, so the table holds only live ones.
  await db
    .deleteFrom('preview_sessions')
    .where('deploy_id', '=', deployId)
    .where('expires_at', '<=', at)
    .execute();
  if (token.startsWith(PREVIEW_HANDOFF_PREFIX)) {
    const expiresAt = new Date(now.getTime() + MEMBER_PREVIEW_SESSION_MS);
    // Single use: only the update that finds it unexchanged takes it.
    const taken = await db
      .updateTable('preview_sessions')
      .set({ token_hash: hash, exchanged_at: at, expires_at: expiresAt.toISOString() })
      .where('token_hash', '=', hashSecret(token))
      .where('deploy_id', '=', deployId)
      .where('exchanged_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return taken.numUpdatedRows === 0n ? undefined : { cookie: secret, expiresAt };
  }
  if (token.startsWith(PREVIEW_LINK_PREFIX)) {
    const link = await liveLinkFor({ db }, now, deployId, token);
    if (!link) return undefined;
    await db
      .insertInto('preview_sessions')
      .values({
        deploy_id: deployId,
        token_hash: hash,
        link_id: link.id,
        user_id: null,
        created_at: at,
        expires_at: link.expiresAt,
        exchanged_at: at,
      })
      .execute();
    return { cookie: secret, expiresAt: new Date(link.expiresAt) };
  }
  return undefined;
}

/**
 * Whether a preview host's cookie lets its holder see preview `deployId` now: the cookie is
 * that preview's and unexpired, and it came from a share link still live, or from a hand-off to
 * someone who is still in the project's team (or a platform admin). Read on every request, so a
 * revoked link or a member removed from the team loses the preview at once.
 */
export async function previewCookieAdmits(
  db: PlatformDb,
  now: Date,
  deployId: number,
  cookie: string,
): Promise<boolean> {
  if (!cookie.startsWith(PREVIEW_COOKIE_PREFIX)) return false;
  const at = now.toISOString();
  const row = await db
    .selectFrom('preview_sessions as s')
    .innerJoin('deploys as d', 'd.id', 's.deploy_id')
    .innerJoin('projects as p', 'p.id', 'd.project_id')
    .leftJoin('preview_links as l', 'l.id', 's.link_id')
    .select('s.id')
    .where('s.token_hash', '=', hashSecret(cookie))
    .where('s.deploy_id', '=', deployId)
    .where('s.exchanged_at', 'is not', null)
    .where('s.expires_at', '>', at)
    .where((eb) =>
      eb.or([
        eb.and([eb('l.revoked_at', 'is', null), eb('l.expires_at', '>', at)]),
        eb.exists(
          eb
            .selectFrom('memberships as m')
            .select(sql<number>`1`.as('one'))
            .whereRef('m.team_id', '=', 'p.team_id')
            .whereRef('m.user_id', '=', 's.user_id'),
        ),
        eb.exists(
          eb
            .selectFrom('users as u')
            .select(sql<number>`1`.as('one'))
            .whereRef('u.id', '=', 's.user_id')
            .where(sql<boolean>`u.is_admin = true`),
        ),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}
