import { transact } from '../../storage/index.ts';
import type { InvitationDetails } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { hashSecret } from './secrets.ts';
import type { Role } from './teams.ts';
import { authenticate, createUser, lockUser } from './users.ts';

/** What an invitation link is for, and accepting it (no sign-in: the token is the proof). */

const invitationNotValid = (replaced = false) =>
  platformErrors.error(
    'invitation_not_valid',
    replaced
      ? 'This invitation link was replaced by a newer invitation to the same team and email: open the link of the latest invitation you were sent.'
      : 'This invitation link does not work: it was used, revoked or has expired. Ask a team owner for a new one.',
  );

/**
 * Why a token is not a live invitation: replaced by a newer invitation for the same team and
 * email (inviting again revokes the open one), or else used, revoked or expired.
 */
async function refusedInvitation(ctx: PlatformContext, tokenHash: string) {
  const row = await ctx.db
    .selectFrom('invitations')
    .select(['id', 'team_id', 'email', 'accepted_at', 'revoked_at'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row || row.accepted_at !== null || row.revoked_at === null) return invitationNotValid();
  const newer = await ctx.db
    .selectFrom('invitations')
    .select('id')
    .where('team_id', '=', row.team_id)
    .where('email', '=', row.email)
    .where('id', '>', row.id)
    .where('created_at', '=', row.revoked_at)
    .executeTakeFirst();
  return invitationNotValid(newer !== undefined);
}

/** The invitation a token hash opens while it is live: not accepted, not revoked, not expired. */
function liveInvitation(db: PlatformDb, tokenHash: string, now: string) {
  return db
    .selectFrom('invitations')
    .where('invitations.token_hash', '=', tokenHash)
    .where('invitations.accepted_at', 'is', null)
    .where('invitations.revoked_at', 'is', null)
    .where('invitations.expires_at', '>', now);
}

/** What an invitation link is for, as its page shows it before anyone accepts (the schema's type). */
export type { InvitationDetails } from '../api-types.ts';

/**
 * A live invitation's team, inviter and email, for the holder of its token (no sign-in: the
 * token is the proof, as for accepting it). A token that is not live answers why, as accepting
 * would. Nothing says whether the email has an account: the owner who passed an unmailed link on
 * holds its token too, and must not learn that (docs/decisions/accounts-and-sign-in.md, "Proved emails").
 */
export async function inspectInvitation(ctx: PlatformContext, token: string): Promise<InvitationDetails> {
  const tokenHash = hashSecret(token);
  const row = await liveInvitation(ctx.db, tokenHash, ctx.clock.now().toISOString())
    .innerJoin('teams', 'teams.id', 'invitations.team_id')
    .leftJoin('users as inviter', 'inviter.id', 'invitations.invited_by')
    .select([
      'invitations.team_id',
      'teams.name as team_name',
      'invitations.email',
      'invitations.role',
      'invitations.expires_at',
      'inviter.name as inviter_name',
      'inviter.email as inviter_email',
    ])
    .executeTakeFirst();
  if (!row) throw await refusedInvitation(ctx, tokenHash);
  return {
    teamId: Number(row.team_id),
    teamName: row.team_name,
    email: row.email,
    role: row.role,
    expiresAt: row.expires_at,
    invitedBy: row.inviter_email ? { name: row.inviter_name, email: row.inviter_email } : null,
  };
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
  const tokenHash = hashSecret(input.token);
  const invitation = await liveInvitation(ctx.db, tokenHash, now)
    .select(['id', 'team_id', 'email', 'role', 'mailed_at'])
    .executeTakeFirst();
  if (!invitation) throw await refusedInvitation(ctx, tokenHash);
  const mailed = invitation.mailed_at !== null;
  const role = invitation.role;
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
