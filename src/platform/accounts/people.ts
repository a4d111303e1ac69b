import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
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
  role: 'member';
  createdAt: string;
  expiresAt: string;
  /** pending, accepted, revoked or expired (at the time of the answer). */
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
}

type InvitationRow = {
  id: number;
  team_id: number;
  email: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
};

const invitationOf = (row: InvitationRow, now: string): Invitation => ({
  id: row.id,
  teamId: row.team_id,
  email: row.email,
  role: 'member',
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

/**
 * Invites an email to join a team as a member; the token (and the dashboard link holding it) is in
 * this answer only. With SMTP_URL set it is also mailed, the link built on `platformUrl` (the
 * platform's address as the owner reached it); a mail that fails leaves the invitation as it is
 * (`mailed: false`: pass the link on).
 */
export async function inviteMember(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  email: string,
  platformUrl = `http://${ctx.config.platformDomain}`,
): Promise<Invitation & { token: string; url: string; mailed: boolean }> {
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
  return {
    id: row.id,
    teamId,
    email: address,
    role: 'member',
    createdAt: now,
    expiresAt,
    status: 'pending',
    token: secret,
    url,
    mailed,
  };
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
    .select(['id', 'team_id', 'email', 'created_at', 'expires_at', 'accepted_at', 'revoked_at'])
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

/**
 * Accepts an invitation (no sign-in: the token is the proof). A new email gets an account with
 * this name and password; an email that already has an account must give that account's
 * password. Either way the account joins the team as a member and the link stops working.
 */
export async function acceptInvitation(
  ctx: PlatformContext,
  input: { token: string; name?: string; password: string },
  verify: (email: string, password: string) => Promise<Actor> = (email, password) =>
    authenticate(ctx, email, password),
): Promise<{ email: string; teamId: number; role: 'member' }> {
  const now = ctx.clock.now().toISOString();
  const invitation = await ctx.db
    .selectFrom('invitations')
    .select(['id', 'team_id', 'email'])
    .where('token_hash', '=', hashSecret(input.token))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!invitation) throw invitationNotValid();
  const existing = await ctx.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', invitation.email)
    .executeTakeFirst();
  const account = existing
    ? await verify(invitation.email, input.password)
    : await createUser(ctx, { email: invitation.email, password: input.password, name: input.name });
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
    const member = await trx
      .selectFrom('memberships')
      .select('role')
      .where('team_id', '=', invitation.team_id)
      .where('user_id', '=', account.userId)
      .executeTakeFirst();
    if (!member) {
      await trx
        .insertInto('memberships')
        .values({ team_id: invitation.team_id, user_id: account.userId, role: 'member', created_at: now })
        .execute();
    }
  });
  return { email: invitation.email, teamId: Number(invitation.team_id), role: 'member' };
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
  const actor = await createUser(ctx, input);
  const team = await createTeam(ctx, actor, `${input.name}’s team`);
  return { email: actor.email, name: input.name, teamId: team.id };
}

/** Sets an account's password and signs out its sessions (but `keepSession`, a session id hash). */
export async function setPassword(
  ctx: Pick<PlatformContext, 'db'>,
  userId: number,
  password: string,
  keepSession?: string,
): Promise<void> {
  await setPasswordHash(ctx, userId, await hashPassword(password), keepSession);
}

/** As setPassword, with the hash made already (`npm run reset-password` hashes it itself). */
export async function setPasswordHash(
  ctx: Pick<PlatformContext, 'db'>,
  userId: number,
  hash: string,
  keepSession?: string,
): Promise<void> {
  await transact(ctx.db, async (trx) => {
    await trx.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();
    await trx
      .deleteFrom('sessions')
      .where('user_id', '=', userId)
      .$if(keepSession !== undefined, (q) => q.where('id_hash', '<>', keepSession as string))
      .execute();
  });
}

export type ResetAnswer = { ok: true } | { ok: false; message: string };

/**
 * `npm run reset-password`'s change: sets the hash of the account that uses `email` and signs out
 * its sessions. For an unknown email the answer names the platform admins instead.
 */
export async function applyPasswordHash(
  ctx: Pick<PlatformContext, 'db'>,
  email: string,
  passwordHash: string,
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
  await setPasswordHash(ctx, user.id, passwordHash);
  return { ok: true };
}

/**
 * An owner (or a platform admin) creates a one-time reset link for a member of their team, on
 * `platformUrl` (the platform's address as the owner reached it). An owner may reset only an
 * account every team of which they own and that is no platform admin: otherwise a reset would
 * hand them another team's access.
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
    .select(['users.id', 'users.email', 'users.is_admin'])
    .where('memberships.team_id', '=', teamId)
    .where('memberships.user_id', '=', userId)
    .executeTakeFirst();
  if (!user) throw memberNotFound(teamId, userId);
  if (!actor.isAdmin) {
    const elsewhere = await ctx.db
      .selectFrom('memberships as theirs')
      .leftJoin('memberships as mine', (join) =>
        join
          .onRef('mine.team_id', '=', 'theirs.team_id')
          .on('mine.user_id', '=', actor.userId)
          .on('mine.role', '=', 'owner'),
      )
      .select('theirs.team_id')
      .where('theirs.user_id', '=', userId)
      .where('mine.user_id', 'is', null)
      .executeTakeFirst();
    if (user.is_admin || elsewhere) {
      throw platformErrors.error(
        'forbidden',
        `${user.email} also belongs to teams you do not own (or is a platform admin): ask a platform admin to reset their password.`,
      );
    }
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

/** Uses a reset link: the new password is set and every session of the account ends. */
export async function redeemPasswordReset(
  ctx: PlatformContext,
  token: string,
  password: string,
): Promise<{ email: string }> {
  const now = ctx.clock.now().toISOString();
  const reset = await ctx.db
    .selectFrom('password_resets')
    .innerJoin('users', 'users.id', 'password_resets.user_id')
    .select(['password_resets.id', 'users.id as userId', 'users.email'])
    .where('password_resets.token_hash', '=', hashSecret(token))
    .where('password_resets.used_at', 'is', null)
    .where('password_resets.expires_at', '>', now)
    .executeTakeFirst();
  const claimed = reset
    ? await ctx.db
        .updateTable('password_resets')
        .set({ used_at: now })
        .where('id', '=', reset.id)
        .where('used_at', 'is', null)
        .executeTakeFirst()
    : undefined;
  if (!reset || claimed?.numUpdatedRows === 0n) {
    throw platformErrors.error(
      'reset_link_not_valid',
      'This password reset link does not work: it was used or has expired. Ask a team owner for a new one.',
    );
  }
  await setPassword(ctx, reset.userId, password);
  return { email: reset.email };
}
