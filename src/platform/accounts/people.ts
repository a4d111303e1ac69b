import type { Kysely } from 'kysely';
import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { sendMail } from '../mail/smtp.ts';
import { hashPassword, hashSecret, newSecret } from './secrets.ts';
import { createTeam, type Role, teamFor } from './teams.ts';
import { authenticate, createUser, normaliseEmail } from './users.ts';

const INVITATION_PREFIX = 'kin_';
const RESET_PREFIX = 'krs_';
/** How long a password reset link works. */
export const RESET_LIFETIME_MS = 24 * 3_600_000;

/**
 * The dashboard pages that take a token. The token rides in the URL fragment, which browsers never
 * send to a server nor put in a Referer, so it stays out of access logs (docs/decisions.md).
 */
export const invitationLink = (platformUrl: string, token: string) =>
  `${platformUrl}/invitations/accept#token=${token}`;
export const resetLink = (platformUrl: string, token: string) =>
  `${platformUrl}/reset-password#token=${token}`;

export interface Member {
  userId: number;
  email: string;
  name: string | null;
  role: Role;
  since: string;
}

export interface Invitation {
  id: number;
  teamId: number;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
  /** pending, accepted, revoked or expired (at the time of the answer). */
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
}

type InvitationRow = {
  id: number;
  team_id: number;
  email: string;
  role: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
};

const invitationOf = (row: InvitationRow, now: string): Invitation => ({
  id: row.id,
  teamId: row.team_id,
  email: row.email,
  role: row.role as Role,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  status: row.accepted_at
    ? 'accepted'
    : row.revoked_at
      ? 'revoked'
      : row.expires_at <= now
        ? 'expired'
        : 'pending',
});

const later = (ctx: PlatformContext, ms: number) => new Date(ctx.clock.now().getTime() + ms).toISOString();

/** Every member of a team the actor can see. */
export async function listMembers(ctx: PlatformContext, actor: Actor, teamId: number): Promise<Member[]> {
  await teamFor(ctx, actor, teamId);
  const rows = await ctx.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email', 'users.name', 'memberships.role', 'memberships.created_at'])
    .where('memberships.team_id', '=', teamId)
    .orderBy('users.id')
    .execute();
  return rows.map((r) => ({
    userId: r.id,
    email: r.email,
    name: r.name,
    role: r.role as Role,
    since: r.created_at,
  }));
}

const memberNotFound = (teamId: number, userId: number) =>
  platformErrors.error(
    'member_not_found',
    `Team ${teamId} has no member with user id ${userId}: check the id against the team's members.`,
  );

/**
 * Changes a membership in one transaction that first locks the team's owners (PostgreSQL; SQLite
 * runs one writer at a time), so two owners demoting each other at once cannot leave none.
 */
async function changeMembership(
  ctx: PlatformContext,
  teamId: number,
  userId: number,
  change: { role: Role } | 'remove',
): Promise<Member> {
  return transact(ctx.db, async (trx) => {
    let owners = trx
      .selectFrom('memberships')
      .select('user_id')
      .where('team_id', '=', teamId)
      .where('role', '=', 'owner');
    if (ctx.dialect === 'postgres') owners = owners.forUpdate();
    const ownerIds = (await owners.execute()).map((r) => Number(r.user_id));
    const row = await trx
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['users.id', 'users.email', 'users.name', 'memberships.role', 'memberships.created_at'])
      .where('memberships.team_id', '=', teamId)
      .where('memberships.user_id', '=', userId)
      .executeTakeFirst();
    if (!row) throw memberNotFound(teamId, userId);
    const losesOwner = row.role === 'owner' && (change === 'remove' || change.role !== 'owner');
    if (losesOwner && ownerIds.length <= 1) {
      throw platformErrors.error(
        'last_owner',
        `${row.email} is the last owner of team ${teamId}: make another member owner first.`,
      );
    }
    if (change === 'remove') {
      await trx
        .deleteFrom('memberships')
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .execute();
    } else {
      await trx
        .updateTable('memberships')
        .set({ role: change.role })
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .execute();
    }
    return {
      userId: row.id,
      email: row.email,
      name: row.name,
      role: change === 'remove' ? (row.role as Role) : change.role,
      since: row.created_at,
    };
  });
}

/** Owners (and platform admins) change a member's role; the last owner stays an owner. */
export async function setMemberRole(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  userId: number,
  role: Role,
): Promise<Member> {
  await teamFor(ctx, actor, teamId, 'owner');
  return changeMembership(ctx, teamId, userId, { role });
}

/** Owners remove a member (anyone removes themself: leaving); the last owner cannot go. */
export async function removeMember(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  userId: number,
): Promise<void> {
  await teamFor(ctx, actor, teamId, userId === actor.userId ? 'member' : 'owner');
  await changeMembership(ctx, teamId, userId, 'remove');
}

/** One address, nothing a mail header or an SMTP command could be split on. */
const EMAIL = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

/** What inviting answers: the token and its link only when nobody mailed them (the owner passes them on). */
export type CreatedInvitation = Invitation & { mailed: boolean; token?: string; url?: string };

/**
 * Invites an email to join a team (as a member unless `role` says owner): the only way anyone is
 * added by email, and the same answer whether or not the email has an account. With SMTP_URL set
 * the link (built on `platformUrl`, the platform's address as the owner reached it) is mailed and
 * kept out of the answer, so accepting it proves the email is the acceptor's. Without SMTP, or when
 * the mail fails (`mailed: false`), the answer holds the token and link for the owner to pass on
 * over a channel they trust; such a link proves nothing about the email (docs/decisions.md).
 */
export async function inviteMember(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  email: string,
  platformUrl = `http://${ctx.config.platformDomain}`,
  role: Role = 'member',
): Promise<CreatedInvitation> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  const address = normaliseEmail(email);
  if (!EMAIL.test(address)) {
    throw platformErrors.error(
      'validation_failed',
      `"${address}" is not an email address such as ana@example.com.`,
    );
  }
  const already = await ctx.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select('users.id')
    .where('memberships.team_id', '=', teamId)
    .where('users.email', '=', address)
    .executeTakeFirst();
  if (already)
    throw platformErrors.error('already_member', `${address} is already a member of team ${teamId}.`);
  const { secret, hash } = newSecret(INVITATION_PREFIX);
  const url = invitationLink(platformUrl, secret);
  const now = ctx.clock.now().toISOString();
  const expiresAt = later(ctx, ctx.config.invitationLifetimeMs);
  const row = await ctx.db
    .insertInto('invitations')
    .values({
      team_id: teamId,
      email: address,
      token_hash: hash,
      invited_by: actor.userId,
      created_at: now,
      expires_at: expiresAt,
      accepted_at: null,
      revoked_at: null,
      mailed_at: null,
      role,
    })
    .returning(['id'])
    .executeTakeFirstOrThrow();
  let mailed = false;
  if (ctx.config.smtpUrl) {
    // A team name is free text: on one line, so it cannot add lines to the mail.
    const teamName = team.name.replace(/\s+/g, ' ');
    try {
      await sendMail(
        { url: ctx.config.smtpUrl },
        {
          from: ctx.config.smtpFrom || `kennel@${ctx.config.platformDomain}`,
          to: address,
          subject: `${actor.email} invites you to the team ${teamName} on Kennel`,
          text: [
            `${actor.email} invites you to join the team "${teamName}" on Kennel (${platformUrl}).`,
            '',
            `Open this link to accept (it works once, until ${expiresAt}):`,
            '',
            `  ${url}`,
            '',
            'Your invitation token:',
            '',
            `  ${secret}`,
            '',
            'or accept it with the kennel CLI:',
            '',
            `  kennel members accept ${secret} --name "Your Name" --server ${platformUrl}`,
            '',
            `or with POST ${platformUrl}/api/v1/invitations/accept {"token", "name", "password"}.`,
            'If you did not expect this, ignore this mail.',
          ].join('\n'),
        },
      );
      mailed = true;
    } catch {
      // The owner sees mailed: false and passes the token on; the invitation stands.
    }
  }
  if (mailed) {
    await ctx.db
      .updateTable('invitations')
      .set({ mailed_at: ctx.clock.now().toISOString() })
      .where('id', '=', row.id)
      .execute();
  }
  const invitation: Invitation = {
    id: row.id,
    teamId,
    email: address,
    role,
    createdAt: now,
    expiresAt,
    status: 'pending',
  };
  return mailed ? { ...invitation, mailed } : { ...invitation, token: secret, url, mailed };
}

/** A team's invitations, newest first (owners only: they name people not yet in the team). */
export async function listInvitations(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
): Promise<Invitation[]> {
  await teamFor(ctx, actor, teamId, 'owner');
  const rows = await ctx.db
    .selectFrom('invitations')
    .select(['id', 'team_id', 'email', 'role', 'created_at', 'expires_at', 'accepted_at', 'revoked_at'])
    .where('team_id', '=', teamId)
    .orderBy('id', 'desc')
    .execute();
  const now = ctx.clock.now().toISOString();
  return rows.map((r) => invitationOf(r, now));
}

export async function revokeInvitation(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  invitationId: number,
): Promise<void> {
  await teamFor(ctx, actor, teamId, 'owner');
  const result = await ctx.db
    .updateTable('invitations')
    .set({ revoked_at: ctx.clock.now().toISOString() })
    .where('id', '=', invitationId)
    .where('team_id', '=', teamId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) {
    throw platformErrors.error(
      'invitation_not_found',
      `Team ${teamId} has no pending invitation with id ${invitationId}: check the id against the team's invitations.`,
    );
  }
}

const invitationNotValid = () =>
  platformErrors.error(
    'invitation_not_valid',
    'This invitation link does not work: it was used, revoked or has expired. Ask a team owner for a new one.',
  );

/** Locks an account's row until the transaction ends (PostgreSQL; SQLite has one writer anyway). */
async function lockUser(trx: Kysely<PlatformTables>, dialect: PlatformContext['dialect'], userId: number) {
  let row = trx.selectFrom('users').select('id').where('id', '=', userId);
  if (dialect === 'postgres') row = row.forUpdate();
  await row.executeTakeFirst();
}

/**
 * Accepts an invitation (no sign-in: the token is the proof). A new email gets an account with
 * this name and password; an email that already has an account must give that account's
 * password. Either way the account joins the team with the invitation's role and the link stops
 * working. A mailed invitation proves the email (the acceptor read that mailbox); an account whose
 * email was never proved cannot join through a link the owner copied, which proves nothing.
 */
export async function acceptInvitation(
  ctx: PlatformContext,
  input: { token: string; name?: string; password: string },
  verify: (email: string, password: string) => Promise<Actor> = (email, password) =>
    authenticate(ctx, email, password),
): Promise<{ email: string; teamId: number; role: Role }> {
  const now = ctx.clock.now().toISOString();
  const invitation = await ctx.db
    .selectFrom('invitations')
    .select(['id', 'team_id', 'email', 'role', 'mailed_at'])
    .where('token_hash', '=', hashSecret(input.token))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!invitation) throw invitationNotValid();
  const mailed = invitation.mailed_at !== null;
  const role = invitation.role as Role;
  const existing = await ctx.db
    .selectFrom('users')
    .select(['id', 'email_proved_at'])
    .where('email', '=', invitation.email)
    .executeTakeFirst();
  const account = existing
    ? await verify(invitation.email, input.password)
    : await createUser(ctx, {
        email: invitation.email,
        password: input.password,
        name: input.name,
        emailProved: mailed,
      });
  // Checked after the password, so the link alone tells nothing about the account.
  if (existing && existing.email_proved_at === null && !mailed) {
    throw platformErrors.error(
      'email_not_proved',
      `The account of ${invitation.email} has never proved it owns this email, and this invitation was not mailed, so it cannot add the account to a team. Ask the team owner to invite you again once this Kennel mails invitations (its operator sets SMTP_URL), or ask a platform admin.`,
    );
  }
  await transact(ctx.db, async (trx) => {
    // Claims the link first: of two acceptances at once, one wins.
    const claimed = await trx
      .updateTable('invitations')
      .set({ accepted_at: now })
      .where('id', '=', invitation.id)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) throw invitationNotValid();
    // A password reset being redeemed for this account re-checks its teams under the same lock.
    await lockUser(trx, ctx.dialect, account.userId);
    if (mailed) {
      await trx
        .updateTable('users')
        .set({ email_proved_at: now })
        .where('id', '=', account.userId)
        .where('email_proved_at', 'is', null)
        .execute();
    }
    const member = await trx
      .selectFrom('memberships')
      .select('role')
      .where('team_id', '=', invitation.team_id)
      .where('user_id', '=', account.userId)
      .executeTakeFirst();
    if (!member) {
      await trx
        .insertInto('memberships')
        .values({ team_id: invitation.team_id, user_id: account.userId, role, created_at: now })
        .execute();
    }
  });
  return { email: invitation.email, teamId: Number(invitation.team_id), role };
}

/** Open sign-up (KENNEL_OPEN_SIGNUP=on): an account, and a team of its own to start in. */
export async function signUp(
  ctx: PlatformContext,
  input: { email: string; name: string; password: string },
): Promise<{ email: string; name: string; teamId: number }> {
  if (!ctx.config.openSignUp) {
    throw platformErrors.error(
      'sign_up_closed',
      'This Kennel does not take sign-ups: ask a team owner to invite you.',
    );
  }
  // Nobody mailed the address: the account's email is unproved until a mailed invitation proves it.
  const actor = await createUser(ctx, { ...input, emailProved: false });
  const team = await createTeam(ctx, actor, `${input.name}’s team`);
  return { email: actor.email, name: input.name, teamId: team.id };
}

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
async function replacePasswordHash(
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

/**
 * The one rule for who may set another account's password through a reset link: a platform
 * admin; or an owner, for an account that is no platform admin, shares a team with them, and
 * belongs to no team they do not own (otherwise a reset would hand them another team's access).
 * Checked when the link is made and again, in the same transaction as the change, when it is used:
 * memberships and roles change in between. Undefined when allowed, else why not.
 */
async function resetRefusal(
  db: Kysely<PlatformTables>,
  makerId: number | null,
  userId: number,
): Promise<string | undefined> {
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
  await teamFor(ctx, actor, teamId, 'owner');
  const user = await ctx.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['users.id', 'users.email'])
    .where('memberships.team_id', '=', teamId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
  if (!user) throw memberNotFound(teamId, userId);
  if (await resetRefusal(ctx.db, actor.userId, userId)) {
    throw platformErrors.error(
      'forbidden',
      `${user.email} also belongs to teams you do not own (or is a platform admin): ask a platform admin to reset their password.`,
    );
  }
  const { secret, hash } = newSecret(RESET_PREFIX);
  const expiresAt = later(ctx, RESET_LIFETIME_MS);
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
    'This password reset link does not work: it was used or has expired. Ask a team owner for a new one.',
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
      .select(['password_resets.id', 'password_resets.created_by', 'users.id as userId', 'users.email'])
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
    const refusal = await resetRefusal(trx, reset.created_by, reset.userId);
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
