import type { Selectable } from 'kysely';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables, TokenScope } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { hashSecret, newSecret } from './secrets.ts';
import { actorById } from './users.ts';

export const TOKEN_PREFIX = 'knl_';
const SESSION_PREFIX = 'kss_';
export const SESSION_LIFETIME_MS = 7 * 24 * 3_600_000;

export type { TokenScope } from '../db-schema.ts';
export const TOKEN_SCOPES: readonly TokenScope[] = ['full', 'read'];
/** The longest expiry a token can be given, in days. */
export const MAX_TOKEN_DAYS = 366;

export interface TokenInfo {
  id: number;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** When it stops working (null: never). */
  expiresAt: string | null;
  scope: TokenScope;
}

export interface TokenOptions {
  /** Days until it stops working (1 to MAX_TOKEN_DAYS); left out or null: never. */
  readonly expiresInDays?: number | null;
  readonly scope?: TokenScope;
}

/** The columns a TokenInfo is read from. */
const TOKEN_COLUMNS = ['id', 'name', 'prefix', 'created_at', 'last_used_at', 'expires_at', 'scope'] as const;

type TokenRow = Pick<Selectable<PlatformTables['api_tokens']>, (typeof TOKEN_COLUMNS)[number]>;

const toTokenInfo = (r: TokenRow): TokenInfo => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  expiresAt: r.expires_at,
  scope: r.scope,
});

/** Creates a personal API token; the secret is returned here once and stored only as a hash. */
export async function createToken(
  ctx: PlatformContext,
  actor: Actor,
  name: string,
  options: TokenOptions = {},
): Promise<TokenInfo & { token: string }> {
  const days = options.expiresInDays ?? null;
  if (days !== null && !(Number.isInteger(days) && days >= 1 && days <= MAX_TOKEN_DAYS)) {
    throw platformErrors.error(
      'validation_failed',
      `expiresInDays must be a whole number of days from 1 to ${MAX_TOKEN_DAYS}, or left out for a token that does not expire.`,
    );
  }
  const scope = options.scope ?? 'full';
  const { secret, hash } = newSecret(TOKEN_PREFIX);
  const now = ctx.clock.now();
  const createdAt = now.toISOString();
  const expiresAt = days === null ? null : new Date(now.getTime() + days * 86_400_000).toISOString();
  const prefix = secret.slice(0, TOKEN_PREFIX.length + 6);
  const row = await ctx.db
    .insertInto('api_tokens')
    .values({
      user_id: actor.userId,
      name,
      token_hash: hash,
      prefix,
      created_at: createdAt,
      expires_at: expiresAt,
      scope,
    })
    .returning(TOKEN_COLUMNS)
    .executeTakeFirstOrThrow();
  return { ...toTokenInfo(row), token: secret };
}

/** Your live tokens, expired ones included (they say so by `expiresAt`) until revoked. */
export async function listTokens(ctx: PlatformContext, actor: Actor): Promise<TokenInfo[]> {
  const rows = await ctx.db
    .selectFrom('api_tokens')
    .select(TOKEN_COLUMNS)
    .where('user_id', '=', actor.userId)
    .where('revoked_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map(toTokenInfo);
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

/**
 * What a bearer token stands for: its account and scope; `expired` (with when) for a token past
 * its expiry; undefined for an unknown or revoked one. Only a live token's use is recorded.
 */
export async function tokenHolder(
  ctx: PlatformContext,
  token: string,
): Promise<{ actor: Actor; scope: TokenScope } | { expired: string } | undefined> {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined;
  const row = await ctx.db
    .selectFrom('api_tokens')
    .select(['id', 'user_id', 'expires_at', 'scope'])
    .where('token_hash', '=', hashSecret(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const now = ctx.clock.now().toISOString();
  if (row.expires_at !== null && row.expires_at <= now) return { expired: row.expires_at };
  await ctx.db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
  const actor = await actorById(ctx, row.user_id);
  return actor ? { actor, scope: row.scope as TokenScope } : undefined;
}

/** The account behind a live bearer token, or undefined for an unknown, revoked or expired one. */
export async function actorForToken(ctx: PlatformContext, token: string): Promise<Actor | undefined> {
  const holder = await tokenHolder(ctx, token);
  return holder && 'actor' in holder ? holder.actor : undefined;
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
