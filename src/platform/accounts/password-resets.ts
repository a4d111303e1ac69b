import type { Kysely } from 'kysely';
import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { memberNotFound } from './members.ts';
import { type Revoked, replacePasswordHash } from './passwords.ts';
import { hashPassword, hashSecret, newSecret } from './secrets.ts';
import { teamFor } from './teams.ts';
import { lockUser } from './users.ts';

/**
 * Password reset links an owner (or a platform admin) makes for a member, and using one. The rule
 * for who may is checked when the link is made and again when it is used.
 */

export const RESET_PREFIX = 'krs_';
/** How long a password reset link works. */
export const RESET_LIFETIME_MS = 24 * 3_600_000;

/**
 * The dashboard page that takes the token. The token rides in the URL fragment, which browsers never
 * send to a server nor put in a Referer, so it stays out of access logs (docs/decisions/dashboard.md).
 */
export const resetLink = (platformUrl: string, token: string) =>
  `${platformUrl}/reset-password#token=${token}`;

/**
 * The one rule for who may set another account's password through a reset link: a platform
 * admin; or an owner, for an account that is no platform admin, shares a team with them, and
 * belongs to no team they do not own (otherwise a reset would hand them another team's access).
 * Checked when the link is made and again, in the same transaction as the change, when it is used:
 * memberships and roles change in between. Undefined when allowed, else why not.
 * A link the account asked for itself ("Forgot password?", request-password-reset.ts) was mailed
 * to `mailedTo`: reading that mailbox is the proof, so it holds while the account still uses that
 * email, proved.
 */
async function resetRefusal(
  db: Kysely<PlatformTables>,
  makerId: number | null,
  userId: number,
  mailedTo: string | null = null,
): Promise<string | undefined> {
  if (mailedTo !== null) {
    const account = await db
      .selectFrom('users')
      .select(['email', 'email_proved_at'])
      .where('id', '=', userId)
      .executeTakeFirst();
    return account?.email === mailedTo && account.email_proved_at !== null
      ? undefined
      : 'the account no longer uses the email the link was mailed to';
  }
  const maker =
    makerId === null
      ? undefined
      : await db.selectFrom('users').select('is_admin').where('id', '=', makerId).executeTakeFirst();
  if (!maker || makerId === null) return 'the account that made the link no longer exists';
  if (maker.is_admin) return undefined;
  const user = await db.selectFrom('users').select('is_admin').where('id', '=', userId).executeTakeFirst();
  if (!user || user.is_admin) return 'the account is a platform admin';
  const teams = await db
    .selectFrom('memberships as theirs')
    .leftJoin('memberships as mine', (join) =>
      join
        .onRef('mine.team_id', '=', 'theirs.team_id')
        .on('mine.user_id', '=', makerId)
        .on('mine.role', '=', 'owner'),
    )
    .select(['theirs.team_id', 'mine.user_id as owner'])
    .where('theirs.user_id', '=', userId)
    .execute();
  if (teams.some((t) => t.owner === null)) return 'the account belongs to a team the maker does not own';
  if (teams.length === 0) return 'the account is in none of the maker’s teams';
  return undefined;
}

/**
 * An owner (or a platform admin) creates a one-time reset link for a member of their team, on
 * `platformUrl` (the platform's address as the owner reached it), if `resetRefusal` allows it.
 */
export async function createPasswordReset(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  userId: number,
  platformUrl = `http://${ctx.config.platformDomain}`,
): Promise<{ userId: number; email: string; token: string; url: string; expiresAt: string }> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  const user = await ctx.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email'])
    .where('memberships.team_id', '=', teamId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
  if (!user) throw memberNotFound(team, userId);
  if (await resetRefusal(ctx.db, actor.userId, userId)) {
    throw platformErrors.error(
      'forbidden',
      `${user.email} also belongs to teams you do not own (or is a platform admin): ask a platform admin to reset their password.`,
    );
  }
  const { secret, hash } = newSecret(RESET_PREFIX);
  const expiresAt = new Date(ctx.clock.now().getTime() + RESET_LIFETIME_MS).toISOString();
  await ctx.db
    .insertInto('password_resets')
    .values({
      user_id: user.id,
      token_hash: hash,
      created_by: actor.userId,
      created_at: ctx.clock.now().toISOString(),
      expires_at: expiresAt,
      used_at: null,
    })
    .execute();
  return {
    userId: user.id,
    email: user.email,
    token: secret,
    url: resetLink(platformUrl, secret),
    expiresAt,
  };
}

const resetLinkNotValid = () =>
  platformErrors.error(
    'reset_link_not_valid',
    'This password reset link does not work: it was used or has expired. Ask for a new one: “Forgot password?” on the sign-in page, or a team owner.',
  );

/**
 * Uses a reset link: in one transaction that locks the account, the link is claimed, the rule
 * that allowed it is checked again (`resetRefusal`), the new password is set, and every session
 * and API token of the account ends.
 */
export async function redeemPasswordReset(
  ctx: PlatformContext,
  token: string,
  password: string,
): Promise<{ email: string } & Revoked> {
  const tokenHash = hashSecret(token);
  const live = (db: Kysely<PlatformTables>, now: string) =>
    db
      .selectFrom('password_resets')
      .innerJoin('users', 'users.id', 'password_resets.user_id')
      .select([
        'password_resets.id',
        'password_resets.created_by',
        'password_resets.mailed_to',
        'users.id as userId',
        'users.email',
      ])
      .where('password_resets.token_hash', '=', tokenHash)
      .where('password_resets.used_at', 'is', null)
      .where('password_resets.expires_at', '>', now)
      .executeTakeFirst();
  // Looked up first, so an unknown token costs no password hash; hashed outside the transaction.
  if (!(await live(ctx.db, ctx.clock.now().toISOString()))) throw resetLinkNotValid();
  const hash = await hashPassword(password);
  return transact(ctx.db, async (trx) => {
    const now = ctx.clock.now().toISOString();
    const reset = await live(trx, now);
    if (!reset) throw resetLinkNotValid();
    await lockUser(trx, ctx.dialect, reset.userId);
    const refusal = await resetRefusal(trx, reset.created_by, reset.userId, reset.mailed_to);
    if (refusal) {
      throw platformErrors.error(
        'reset_link_outdated',
        `This password reset link no longer holds: ${refusal}. Your password is unchanged. Ask a platform admin (or an owner of every team of the account) for a new link.`,
      );
    }
    const claimed = await trx
      .updateTable('password_resets')
      .set({ used_at: now })
      .where('id', '=', reset.id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw resetLinkNotValid();
    const revoked = await replacePasswordHash(trx, reset.userId, hash, { revokeTokens: true, now });
    return { email: reset.email, ...revoked };
  });
}
