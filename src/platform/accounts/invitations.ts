import type { Selectable } from 'kysely';
import { isUniqueViolation, transact } from '../../storage/index.ts';
import type { CreatedInvitation, Invitation } from '../api-types.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { sendMail } from '../mail/smtp.ts';
import { newSecret } from './secrets.ts';
import { type Role, teamFor, teamLabel } from './teams.ts';
import { normaliseEmail } from './users.ts';

/**
 * Invitations: the only way anyone is added to a team by email. Inviting (mailed with its text
 * below when this Kennel has SMTP, else handed to the owner), listing and revoking; accepting is
 * accept-invitation.ts.
 */

const INVITATION_PREFIX = 'kin_';

/**
 * The dashboard page that takes the token. The token rides in the URL fragment, which browsers never
 * send to a server nor put in a Referer, so it stays out of access logs (docs/decisions/dashboard.md).
 */
export const invitationLink = (platformUrl: string, token: string) =>
  `${platformUrl}/invitations/accept#token=${token}`;

export type { CreatedInvitation, Invitation } from '../api-types.ts';

type InvitationRow = Pick<
  Selectable<PlatformTables['invitations']>,
  'id' | 'team_id' | 'email' | 'role' | 'created_at' | 'expires_at' | 'accepted_at' | 'revoked_at'
>;

const invitationOf = (row: InvitationRow, now: string): Invitation => ({
  id: row.id,
  teamId: row.team_id,
  email: row.email,
  role: row.role,
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

/** One address, nothing a mail header or an SMTP command could be split on. */
const EMAIL = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

/**
 * Invites an email to join a team (as a member unless `role` says owner): the only way anyone is
 * added by email, and the same answer whether or not the email has an account. With SMTP_URL set
 * the link (built on `platformUrl`, the platform's address as the owner reached it) is mailed and
 * kept out of the answer, so accepting it proves the email is the acceptor's. Without SMTP, or when
 * the mail fails (`mailed: false`), the answer holds the token and link for the owner to pass on
 * over a channel they trust; such a link proves nothing about the email (docs/decisions/accounts-and-sign-in.md).
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
    throw platformErrors.error('already_member', `${address} is already a member of the ${teamLabel(team)}.`);
  const { secret, hash } = newSecret(INVITATION_PREFIX);
  const url = invitationLink(platformUrl, secret);
  const now = ctx.clock.now().toISOString();
  const expiresAt = new Date(ctx.clock.now().getTime() + ctx.config.invitationLifetimeMs).toISOString();
  // One open invitation per team and email (a unique index, 0015): a new one revokes the one
  // before, whose link stops working. Two owners inviting the same email at once on PostgreSQL:
  // the second insert waits for the first and hits the index; trying again revokes the first.
  const replace = () =>
    transact(ctx.db, async (trx) => {
      await trx
        .updateTable('invitations')
        .set({ revoked_at: now })
        .where('team_id', '=', teamId)
        .where('email', '=', address)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .execute();
      return trx
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
    });
  const row = await replace().catch((error: unknown) => {
    if (isUniqueViolation(error)) return replace();
    throw error;
  });
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
  const team = await teamFor(ctx, actor, teamId, 'owner');
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
      `The ${teamLabel(team)} has no pending invitation with id ${invitationId}: check the id against the team's invitations.`,
    );
  }
}
