import type { FastifyReply } from 'fastify';
import { defineOperation, type OperationRequest, ref } from '../../../lib/http-api/index.ts';
import { acceptInvitation, inspectInvitation } from '../../accounts/accept-invitation.ts';
import { inviteMember, listInvitations, revokeInvitation } from '../../accounts/invitations.ts';
import { listMembers, removeMember, setMemberRole } from '../../accounts/members.ts';
import { createPasswordReset, redeemPasswordReset } from '../../accounts/password-resets.ts';
import { setPassword } from '../../accounts/passwords.ts';
import { hashSecret } from '../../accounts/secrets.ts';
import type { SignInGuard } from '../../accounts/sign-in.ts';
import { signUp } from '../../accounts/sign-up.ts';
import type { Role } from '../../accounts/teams.ts';
import type { PlatformContext } from '../../context.ts';
import { platformErrors } from '../../errors.ts';
import { actorOf, type Caller } from '../auth.ts';
import { platformAddress } from '../platform-address.ts';
import { idParam, teamIdParam, teamOwnerChangeErrors, teamOwnerErrors } from './parameters.ts';

const TEAMS = ['Teams'];
const ACCOUNT = ['Account'];
const userId = idParam('userId', 'User id of the member');

/** What inviting can answer, by either route (POST …/invitations, and …/members with a role). */
export const inviteErrors = [...teamOwnerChangeErrors, 'validation_failed', 'already_member'];

/** Both invitation routes' handler: 201 with the invitation (its link when it was not mailed). */
export async function invite(
  { caller, params, body }: OperationRequest<{ teamId: number }, unknown, { email: string; role?: Role }>,
  reply: FastifyReply,
  ctx: PlatformContext,
) {
  reply.code(201);
  const platformUrl = platformAddress(reply.request, ctx.config.platformDomain);
  return inviteMember(ctx, actorOf(caller), params.teamId, body.email, platformUrl, body.role);
}

/**
 * Members, invitations, sign-up and passwords. Passwords are checked through `guard` (the
 * sign-in limits and hashing threads), so changing a password cannot be used to guess one faster
 * than signing in.
 */
export const peopleRoutes = (guard: SignInGuard) => [
  defineOperation<PlatformContext, { teamId: number }>({
    operationId: 'listTeamMembers',
    method: 'GET',
    path: '/api/v1/teams/{teamId}/members',
    tags: TEAMS,
    summary: 'List members',
    description: 'Every member of a team you belong to, with their role.',
    parameters: [teamIdParam],
    responses: { 200: { description: 'Members', schema: { type: 'array', items: ref('TeamMember') } } },
    errors: ['unauthenticated', 'team_not_found'],
    handler: ({ caller, params }, _reply, ctx) => listMembers(ctx, actorOf(caller), params.teamId),
  }),
  defineOperation<PlatformContext, { teamId: number; userId: number }, unknown, { role: Role }>({
    operationId: 'setTeamMemberRole',
    method: 'PUT',
    path: '/api/v1/teams/{teamId}/members/{userId}/role',
    tags: TEAMS,
    summary: "Change a member's role",
    description: 'Team owners only. The last owner cannot be made a member.',
    parameters: [teamIdParam, userId],
    requestBody: { description: 'The role', schema: ref('RoleChange') },
    responses: { 200: { description: 'The membership', schema: ref('TeamMember') } },
    errors: [...teamOwnerChangeErrors, 'member_not_found', 'last_owner'],
    handler: ({ caller, params, body }, _reply, ctx) =>
      setMemberRole(ctx, actorOf(caller), params.teamId, params.userId, body.role),
  }),
  defineOperation<PlatformContext, { teamId: number; userId: number }>({
    operationId: 'removeTeamMember',
    method: 'DELETE',
    path: '/api/v1/teams/{teamId}/members/{userId}',
    tags: TEAMS,
    summary: 'Remove a member',
    description:
      'Team owners remove anyone; every member may remove themself (leave the team). The last owner cannot go.',
    parameters: [teamIdParam, userId],
    responses: { 204: { description: 'Removed' } },
    errors: [...teamOwnerChangeErrors, 'member_not_found', 'last_owner'],
    async handler({ caller, params }, reply, ctx) {
      await removeMember(ctx, actorOf(caller), params.teamId, params.userId);
      return reply.code(204).send();
    },
  }),
  defineOperation<PlatformContext, { teamId: number }>({
    operationId: 'leaveTeam',
    method: 'DELETE',
    path: '/api/v1/teams/{teamId}/membership',
    tags: TEAMS,
    summary: 'Leave a team',
    description: 'Ends your own membership. The last owner cannot leave.',
    parameters: [teamIdParam],
    responses: { 204: { description: 'Left' } },
    errors: ['unauthenticated', 'csrf_failed', 'team_not_found', 'member_not_found', 'last_owner'],
    async handler({ caller, params }, reply, ctx) {
      const actor = actorOf(caller);
      await removeMember(ctx, actor, params.teamId, actor.userId);
      return reply.code(204).send();
    },
  }),
  defineOperation<PlatformContext, { teamId: number }, unknown, { email: string }>({
    operationId: 'inviteTeamMember',
    method: 'POST',
    path: '/api/v1/teams/{teamId}/invitations',
    tags: TEAMS,
    summary: 'Invite someone',
    description:
      'Team owners invite an email to join as a member; the answer is the same whether or not the email has an account. With SMTP_URL set the link is mailed (`mailed: true`) and is not in the answer: accepting it proves the email. Otherwise (no SMTP_URL, or the SMTP server refused it) the answer holds the invitation token once (stored only as a hash) and `url`, the dashboard link that accepts it (the token in its fragment): pass it on over a channel you trust; it proves nothing about the email, so it cannot add an existing account whose email was never proved. It works once, until `expiresAt` (INVITATION_LIFETIME, 7 days by default), unless revoked; it is accepted in the dashboard or with POST /api/v1/invitations/accept.',
    parameters: [teamIdParam],
    requestBody: { description: 'Who', schema: ref('NewInvitation') },
    responses: { 201: { description: 'The invitation, with its token', schema: ref('CreatedInvitation') } },
    errors: inviteErrors,
    handler: invite,
  }),
  defineOperation<PlatformContext, { teamId: number }>({
    operationId: 'listTeamInvitations',
    method: 'GET',
    path: '/api/v1/teams/{teamId}/invitations',
    tags: TEAMS,
    summary: 'List invitations',
    description: "Team owners only: the team's invitations, newest first, with their status (never a token).",
    parameters: [teamIdParam],
    responses: {
      200: { description: 'Invitations', schema: { type: 'array', items: ref('Invitation') } },
    },
    errors: teamOwnerErrors,
    handler: ({ caller, params }, _reply, ctx) => listInvitations(ctx, actorOf(caller), params.teamId),
  }),
  defineOperation<PlatformContext, { teamId: number; invitationId: number }>({
    operationId: 'revokeTeamInvitation',
    method: 'DELETE',
    path: '/api/v1/teams/{teamId}/invitations/{invitationId}',
    tags: TEAMS,
    summary: 'Revoke an invitation',
    description: 'Team owners only: the invitation link stops working at once.',
    parameters: [teamIdParam, idParam('invitationId', 'Invitation id')],
    responses: { 204: { description: 'Revoked' } },
    errors: [...teamOwnerChangeErrors, 'invitation_not_found'],
    async handler({ caller, params }, reply, ctx) {
      await revokeInvitation(ctx, actorOf(caller), params.teamId, params.invitationId);
      return reply.code(204).send();
    },
  }),
  defineOperation<PlatformContext, unknown, unknown, { token: string }>({
    operationId: 'inspectInvitation',
    method: 'POST',
    path: '/api/v1/invitations/inspect',
    tags: ACCOUNT,
    summary: 'Read an invitation',
    description:
      'No sign-in: the token is the proof. What a live invitation is for: the team, who invited, the invited email and role, and until when it works; nothing changes. A POST, so the token travels in the body and stays out of URLs and logs. A used, revoked, replaced or expired token is 404 invitation_not_valid, as accepting it would be.',
    access: 'public',
    requestBody: { description: 'The token', schema: ref('InvitationToken') },
    responses: { 200: { description: 'The invitation', schema: ref('InvitationDetails') } },
    errors: ['invitation_not_valid'],
    handler: ({ body }, _reply, ctx) => inspectInvitation(ctx, body.token),
  }),
  defineOperation<PlatformContext, unknown, unknown, { token: string; name?: string; password: string }>({
    operationId: 'acceptInvitation',
    method: 'POST',
    path: '/api/v1/invitations/accept',
    tags: ACCOUNT,
    summary: 'Accept an invitation',
    description:
      "No sign-in: the token is the proof. An email without an account gets one, with this name and password (at least 12 characters); an email that has an account must send its current password. Then the account joins the team with the invitation's role, and the token stops working. A mailed invitation proves the account's email; an account that never proved its email cannot join through an invitation that was not mailed (403 email_not_proved). Sign in with POST /api/v1/session.",
    access: 'public',
    requestBody: { description: 'The token, your name and password', schema: ref('InvitationAcceptance') },
    responses: { 201: { description: 'Joined', schema: ref('AcceptedInvitation') } },
    errors: [
      'invitation_not_valid',
      'invalid_credentials',
      'email_not_proved',
      'email_taken',
      'too_many_sign_in_attempts',
      'sign_in_busy',
    ],
    async handler({ body }, reply, ctx) {
      const accepted = await acceptInvitation(ctx, body, (email, password) =>
        guard.signIn(ctx, email, password, reply.request.ip),
      );
      reply.code(201);
      return accepted;
    },
  }),
  defineOperation<PlatformContext, unknown, unknown, { email: string; name: string; password: string }>({
    operationId: 'signUp',
    method: 'POST',
    path: '/api/v1/users',
    tags: ACCOUNT,
    summary: 'Sign up',
    description:
      'Only when the operator allows open sign-up (KENNEL_OPEN_SIGNUP=on; off by default): creates an account and a team it owns. Sign in with POST /api/v1/session.',
    access: 'public',
    requestBody: { description: 'The account', schema: ref('SignUp') },
    responses: { 201: { description: 'The account and its team', schema: ref('SignedUp') } },
    errors: ['sign_up_closed', 'email_taken'],
    async handler({ body }, reply, ctx) {
      reply.code(201);
      return signUp(ctx, body);
    },
  }),
  defineOperation<PlatformContext>({
    operationId: 'getSignUpPolicy',
    method: 'GET',
    path: '/api/v1/sign-up',
    tags: ACCOUNT,
    summary: 'Whether sign-up is open',
    description:
      'No sign-in: whether POST /api/v1/users takes sign-ups (KENNEL_OPEN_SIGNUP), so the sign-in page offers "Create an account" only when it works.',
    access: 'public',
    responses: { 200: { description: 'The policy', schema: ref('SignUpPolicy') } },
    errors: ['malformed_url'],
    handler: async (_request, _reply, ctx) => ({ open: ctx.config.openSignUp }),
  }),
  defineOperation<PlatformContext, unknown, unknown, { currentPassword: string; newPassword: string }>({
    operationId: 'changePassword',
    method: 'PUT',
    path: '/api/v1/me/password',
    tags: ACCOUNT,
    summary: 'Change your password',
    description:
      'Needs your current password (checked under the sign-in limits). Every other session of yours is signed out; the one making the change stays, and API tokens keep working.',
    requestBody: { description: 'Current and new password', schema: ref('PasswordChange') },
    responses: { 204: { description: 'Changed' } },
    errors: [
      'unauthenticated',
      'csrf_failed',
      'wrong_current_password',
      'too_many_sign_in_attempts',
      'sign_in_busy',
    ],
    async handler({ caller, body }, reply, ctx) {
      const { actor, sessionCookie } = caller as Caller;
      try {
        await guard.signIn(ctx, actor.email, body.currentPassword, reply.request.ip);
      } catch (error) {
        if ((error as { code?: string }).code !== 'invalid_credentials') throw error;
        throw platformErrors.error(
          'wrong_current_password',
          'The current password is not right; your password is unchanged.',
        );
      }
      await setPassword(
        ctx,
        actor.userId,
        body.newPassword,
        sessionCookie ? hashSecret(sessionCookie) : undefined,
      );
      return reply.code(204).send();
    },
  }),
  defineOperation<PlatformContext, { teamId: number; userId: number }>({
    operationId: 'createPasswordReset',
    method: 'POST',
    path: '/api/v1/teams/{teamId}/members/{userId}/password-reset',
    tags: TEAMS,
    summary: "Create a member's password reset link",
    description:
      'Team owners (and platform admins) create a one-time reset token for a member, valid 24 hours, in this answer only (stored as a hash), with `url`, the dashboard link that uses it (the token in its fragment); the member opens it, or sets a new password with POST /api/v1/password-reset. An owner cannot reset a platform admin, nor an account that also belongs to a team they do not own.',
    parameters: [teamIdParam, userId],
    responses: { 201: { description: 'The reset token', schema: ref('PasswordResetLink') } },
    errors: [...teamOwnerChangeErrors, 'member_not_found'],
    async handler({ caller, params }, reply, ctx) {
      reply.code(201);
      const platformUrl = platformAddress(reply.request, ctx.config.platformDomain);
      return createPasswordReset(ctx, actorOf(caller), params.teamId, params.userId, platformUrl);
    },
  }),
  defineOperation<PlatformContext, unknown, unknown, { token: string; password: string }>({
    operationId: 'resetPassword',
    method: 'POST',
    path: '/api/v1/password-reset',
    tags: ACCOUNT,
    summary: 'Set a new password with a reset token',
    description:
      "No sign-in: the token is the proof, once. Only while the link would still be allowed: an owner's link stops holding once the account joins a team that owner does not own or becomes a platform admin (403 reset_link_outdated: ask for a new link). Sets the password (at least 12 characters), signs out every session of the account and revokes its API tokens; the answer counts both.",
    access: 'public',
    requestBody: { description: 'The token and the new password', schema: ref('PasswordResetRedemption') },
    responses: { 200: { description: 'The account', schema: ref('PasswordResetDone') } },
    errors: ['reset_link_not_valid', 'reset_link_outdated'],
    handler: ({ body }, _reply, ctx) => redeemPasswordReset(ctx, body.token, body.password),
  }),
];
