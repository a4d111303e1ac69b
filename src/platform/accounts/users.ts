import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import type { DeriveKey } from './password-hasher.ts';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from './secrets.ts';

export const MIN_PASSWORD_LENGTH = 12;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Makes an account. `emailProved` says whether its holder is known to own the email: true (the
 * default) for the operator's own word (the first admin, seeded accounts); sign-up and an
 * invitation link nobody mailed pass false (docs/decisions/accounts-and-sign-in.md, "Proved emails").
 */
export async function createUser(
  ctx: PlatformContext,
  input: { email: string; password: string; isAdmin?: boolean; name?: string; emailProved?: boolean },
): Promise<Actor> {
  const email = normaliseEmail(input.email);
  const now = ctx.clock.now().toISOString();
  try {
    const row = await ctx.db
      .insertInto('users')
      .values({
        email,
        password_hash: await hashPassword(input.password),
        is_admin: input.isAdmin ? 1 : 0,
        created_at: now,
        name: input.name ?? null,
        email_proved_at: input.emailProved === false ? null : now,
      })
      .returning(['id'])
      .executeTakeFirstOrThrow();
    return { userId: row.id, email, isAdmin: Boolean(input.isAdmin) };
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw platformErrors.error(
        'email_taken',
        `An account already uses ${email}. Sign in, or use another email.`,
      );
    }
    throw error;
  }
}

/**
 * Checks an email and password; the same answer whether the email or the password is wrong, and
 * the same work: an unknown email is checked against a dummy hash, so timing tells nothing either.
 * `derive` runs scrypt (sign-ins pass their PasswordHasher's).
 */
export async function authenticate(
  ctx: PlatformContext,
  email: string,
  password: string,
  derive?: DeriveKey,
): Promise<Actor> {
  const row = await ctx.db
    .selectFrom('users')
    .select(['id', 'email', 'password_hash', 'is_admin'])
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  const matches = await verifyPassword(password, row ? row.password_hash : DUMMY_PASSWORD_HASH, derive);
  const ok = row !== undefined && matches;
  if (!row || !ok) {
    throw platformErrors.error(
      'invalid_credentials',
      'The email or the password is wrong. Check both and try again.',
    );
  }
  return { userId: row.id, email: row.email, isAdmin: Boolean(row.is_admin) };
}

export async function actorById(ctx: PlatformContext, userId: number): Promise<Actor | undefined> {
  const row = await ctx.db
    .selectFrom('users')
    .select(['id', 'email', 'is_admin'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row ? { userId: row.id, email: row.email, isAdmin: Boolean(row.is_admin) } : undefined;
}

/**
 * Locks an account's row until the transaction ends (PostgreSQL; SQLite has one writer anyway):
 * accepting an invitation and redeeming a reset link for one account take turns.
 */
export async function lockUser(
  trx: Kysely<PlatformTables>,
  dialect: PlatformContext['dialect'],
  userId: number,
) {
  let row = trx.selectFrom('users').select('id').where('id', '=', userId);
  if (dialect === 'postgres') row = row.forUpdate();
  await row.executeTakeFirst();
}
