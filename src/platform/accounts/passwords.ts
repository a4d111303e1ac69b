import type { Kysely } from 'kysely';
import { transact } from '../../storage/index.ts';
import type { PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { hashPassword } from './secrets.ts';
import { normaliseEmail } from './users.ts';

/** Setting a password: an account's own change, and the operator's `npm run reset-password`. */

/** What a password change ended: sessions signed out, API tokens revoked. */
export interface Revoked {
  sessionsEnded: number;
  tokensRevoked: number;
}

/**
 * Replaces an account's password hash inside `trx` and signs out its sessions (but `keepSession`,
 * a session id hash). `revokeTokens` also revokes its API tokens: a reset (link or command) is for
 * an account someone else may hold, so nothing made before it keeps working.
 */
export async function replacePasswordHash(
  trx: Kysely<PlatformTables>,
  userId: number,
  hash: string,
  options: { keepSession?: string; revokeTokens: boolean; now: string },
): Promise<Revoked> {
  await trx.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();
  const sessions = await trx
    .deleteFrom('sessions')
    .where('user_id', '=', userId)
    .$if(options.keepSession !== undefined, (q) => q.where('id_hash', '<>', options.keepSession as string))
    .executeTakeFirst();
  const tokens = options.revokeTokens
    ? await trx
        .updateTable('api_tokens')
        .set({ revoked_at: options.now })
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst()
    : undefined;
  return {
    sessionsEnded: Number(sessions.numDeletedRows),
    tokensRevoked: Number(tokens?.numUpdatedRows ?? 0n),
  };
}

/**
 * Changes an account's own password (the current one was checked): its other sessions end (all
 * but `keepSession`, a session id hash); its API tokens keep working, since the holder is known.
 */
export async function setPassword(
  ctx: Pick<PlatformContext, 'db' | 'clock'>,
  userId: number,
  password: string,
  keepSession?: string,
): Promise<void> {
  const hash = await hashPassword(password);
  await transact(ctx.db, (trx) =>
    replacePasswordHash(trx, userId, hash, {
      keepSession,
      revokeTokens: false,
      now: ctx.clock.now().toISOString(),
    }),
  );
}

export type ResetAnswer = ({ ok: true } & Revoked) | { ok: false; message: string };

/**
 * `npm run reset-password`'s change: sets the hash of the account that uses `email`, signs out its
 * sessions and revokes its API tokens. For an unknown email the answer names the platform admins.
 */
export async function applyPasswordHash(
  ctx: Pick<PlatformContext, 'db'>,
  email: string,
  passwordHash: string,
  now = new Date(),
): Promise<ResetAnswer> {
  const user = await ctx.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  if (!user) {
    const admins = await ctx.db.selectFrom('users').select(['email', 'is_admin']).orderBy('id').execute();
    const names = admins.filter((a) => Boolean(a.is_admin)).map((a) => a.email);
    return {
      ok: false,
      message: `No account uses ${normaliseEmail(email)}. ${
        names.length > 0
          ? `Platform admins: ${names.join(', ')}.`
          : 'There is no account yet: npm start creates the first admin.'
      }`,
    };
  }
  const revoked = await transact(ctx.db, (trx) =>
    replacePasswordHash(trx, user.id, passwordHash, { revokeTokens: true, now: now.toISOString() }),
  );
  return { ok: true, ...revoked };
}
