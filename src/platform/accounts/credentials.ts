import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { hashSecret, newSecret } from './secrets.ts';
import { actorById } from './users.ts';

export const TOKEN_PREFIX = 'knl_';
const SESSION_PREFIX = 'kss_';
export const SESSION_LIFETIME_MS = 7 * 24 * 3_600_000;

export interface TokenInfo {
  id: number;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** Creates a personal API token; the secret is returned here once and stored only as a hash. */
export async function createToken(
  ctx: PlatformContext,
  actor: Actor,
  name: string,
): Promise<TokenInfo & { token: string }> {
  const { secret, hash } = newSecret(TOKEN_PREFIX);
  const createdAt = ctx.clock.now().toISOString();
  const prefix = secret.slice(0, TOKEN_PREFIX.length + 6);
  const row = await ctx.db
    .insertInto('api_tokens')
    .values({ user_id: actor.userId, name, token_hash: hash, prefix, created_at: createdAt })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  return { id: row.id, name, prefix, createdAt, lastUsedAt: null, token: secret };
}

export async function listTokens(ctx: PlatformContext, actor: Actor): Promise<TokenInfo[]> {
  const rows = await ctx.db
    .selectFrom('api_tokens')
    .select(['id', 'name', 'prefix', 'created_at', 'last_used_at'])
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  }));
}

export async function revokeToken(ctx: PlatformContext, actor: Actor, id: number): Promise<void> {
  const result = await ctx.db
    .updateTable('api_tokens')
    .set({ revoked_at: ctx.clock.now().toISOString() })
    .where('id', '=', id)
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) {
    throw platformErrors.error(
      'token_not_found',
      `You have no API token with id ${id}: check the id against the list of your tokens.`,
    );
  }
}

/** The account behind a bearer token, or undefined for an unknown or revoked one. */
export async function actorForToken(ctx: PlatformContext, token: string): Promise<Actor | undefined> {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined;
  const row = await ctx.db
    .selectFrom('api_tokens')
    .select(['id', 'user_id'])
    .where('token_hash', '=', hashSecret(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  await ctx.db
    .updateTable('api_tokens')
    .set({ last_used_at: ctx.clock.now().toISOString() })
    .where('id', '=', row.id)
    .execute();
  return actorById(ctx, row.user_id);
}

/** A dashboard session: the cookie value and the CSRF token the page must echo on changes. */
export async function createSession(
  ctx: PlatformContext,
  actor: Actor,
): Promise<{ cookie: string; csrfToken: string; expiresAt: Date }> {
  const { secret, hash } = newSecret(SESSION_PREFIX);
  const csrfToken = newSecret('').secret;
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
  await ctx.db
    .insertInto('sessions')
    .values({
      id_hash: hash,
      user_id: actor.userId,
      csrf_token: csrfToken,
      created_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
    })
    .execute();
  return { cookie: secret, csrfToken, expiresAt };
}

export async function sessionFor(
  ctx: PlatformContext,
  cookie: string,
): Promise<{ actor: Actor; csrfToken: string } | undefined> {
  if (!cookie.startsWith(SESSION_PREFIX)) return undefined;
  const row = await ctx.db
    .selectFrom('sessions')
    .select(['user_id', 'csrf_token', 'expires_at'])
    .where('id_hash', '=', hashSecret(cookie))
    .executeTakeFirst();
  if (!row || row.expires_at <= ctx.clock.now().toISOString()) return undefined;
  const actor = await actorById(ctx, row.user_id);
  return actor ? { actor, csrfToken: row.csrf_token } : undefined;
}

export async function endSession(ctx: PlatformContext, cookie: string): Promise<void> {
  await ctx.db.deleteFrom('sessions').where('id_hash', '=', hashSecret(cookie)).execute();
}
