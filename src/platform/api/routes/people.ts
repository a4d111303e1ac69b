import type { OperationRequest } from '../../../lib/http-api/index.ts';
import { acceptInvitation, inspectInvitation } from '../../accounts/accept-invitation.ts';
import { inviteMember, listInvitations, revokeInvitation } from '../../accounts/invitations.ts';
import { listMembers, removeMember, setMemberRole } from '../../accounts/members.ts';
import { createPasswordReset, redeemPasswordReset } from '../../accounts/password-resets.ts';
import { setPassword } from '../../accounts/passwords.ts';
import { hashSecret } from '../../accounts/secrets.ts';
import type { SignInGuard } from '../../accounts/sign-in.ts';
import { signUp } from '../../accounts/sign-up.ts';
import type { Operations } from '../../api-types.ts';
import { platformErrors } from '../../errors.ts';
import { actorOf, type Caller } from '../auth.ts';
import { operations } from '../operation.ts';
import { platformAddress } from '../platform-address.ts';
import { answerCreated, inTeam, passing, thenNoContent } from './answers.ts';
import { created, jsonBody, noContent, ok } from './contract.ts';

/** What inviting can answer, by either route (POST …/invitations, and …/members with a role). */
export const inviteErrors = ['forbidden', 'validation_failed', 'already_member'] as const;

/** What both invitation routes take: addTeamMember's body, and inviteTeamMember's (without a role). */
type Invite = Operations['addTeamMember'];

/** Both invitation routes' handler: 201 with the invitation (its link when it was not mailed). */
export const invite = answerCreated(
  ({ caller, params, body }: OperationRequest<Invite['params'], unknown, Invite['body']>, reply, ctx) =>
    inviteMember(
      ctx,
      actorOf(caller),
      params.teamId,
      body.email,
      platformAddress(reply.request, ctx.config.platformDomain),
      body.role,
    ),
);

/** A team's members and invitations, and its owners' password reset links. */
const memberRoutes = operations('Teams', {
  listTeamMembers: {
    route: 'GET /api/v1/teams/{teamId}/members',
    summary: 'List members',
    description: 'Every member of a team you belong to, with their role.',
    responses: ok('Members', ['TeamMember']),
    handler: inTeam(listMembers),
  },
  setTeamMemberRole: {
    route: 'PUT /api/v1/teams/{teamId}/members/{userId}/role',
    summary: "Change a member's role",
    description: 'Team owners only. The last owner cannot be made a member.',
    requestBody: jsonBody('The role', 'RoleChange'),
    responses: ok('The membership', 'TeamMember'),
    errors: ['forbidden', 'last_owner'],
    handler: passing('teamId', 'userId', 'body.role')(setMemberRole),
  },
  removeTeamMember: {
    route: 'DELETE /api/v1/teams/{teamId}/members/{userId}',
    summary: 'Remove a member',
    description:
      'Team owners remove anyone; every member may remove themself (leave the team). The last owner cannot go.',
    responses: noContent('Removed'),
    errors: ['forbidden', 'last_owner'],
    handler: thenNoContent(passing('teamId', 'userId')(removeMember)),
  },
  leaveTeam: {
    route: 'DELETE /api/v1/teams/{teamId}/membership',
    summary: 'Leave a team',
    description: 'Ends your own membership. The last owner cannot leave.',
    responses: noContent('Left'),
    errors: ['member_not_found', 'last_owner'],
    async handler({ caller, params }, reply, ctx) {
      const actor = actorOf(caller);
      await removeMember(ctx, actor, params.teamId, actor.userId);
      return reply.code(204).send();
    },
  },
  inviteTeamMember: {
    route: 'POST /api/v1/teams/{teamId}/invitations',
    summary: 'Invite someone',
    description:
      'Team owners invite an email to join as a member; the answer is the same whether or not the email has an account. With SMTP_URL set the link is mailed (`mailed: true`) and is not in the answer: accepting it proves the email. Otherwise (no SMTP_URL, or the SMTP server refused it) the answer holds the invitation token once (stored only as a hash) and `url`, the dashboard link that accepts it (the token in its fragment): pass it on over a channel you trust; it proves nothing about the email, so it cannot add an existing account whose email was never proved. It works once, until `expiresAt` (INVITATION_LIFETIME, 7 days by default), unless revoked; it is accepted in the dashboard or with POST /api/v1/invitations/accept.',
    requestBody: jsonBody('Who', 'NewInvitation'),
    responses: created('The invitation, with its token', 'CreatedInvitation'),
    errors: inviteErrors,
    handler: invite,
  },
  listTeamInvitations: {
    route: 'GET /api/v1/teams/{teamId}/invitations',
    summary: 'List invitations',
    description: "Team owners only: the team's invitations, newest first, with their status (never a token).",
    responses: ok('Invitations', ['Invitation']),
    errors: ['forbidden'],
    handler: inTeam(listInvitations),
  },
  revokeTeamInvitation: {
    route: 'DELETE /api/v1/teams/{teamId}/invitations/{invitationId}',
    summary: 'Revoke an invitation',
    description: 'Team owners only: the invitation link stops working at once.',
    responses: noContent('Revoked'),
    errors: ['forbidden'],
    handler: thenNoContent(passing('teamId', 'invitationId')(revokeInvitation)),
  },
  createPasswordReset: {
    route: 'POST /api/v1/teams/{teamId}/members/{userId}/password-reset',
    summary: "Create a member's password reset link",
    description:
      'Team owners (and platform admins) create a one-time reset token for a member, valid 24 hours, in this answer only (stored as a hash), with `url`, the dashboard link that uses it (the token in its fragment); the member opens it, or sets a new password with POST /api/v1/password-reset. An owner cannot reset a platform admin, nor an account that also belongs to a team they do not own.',
    responses: created('The reset token', 'PasswordResetLink'),
    errors: ['forbidden'],
    handler: answerCreated(({ caller, params }, reply, ctx) =>
      createPasswordReset(
        ctx,
        actorOf(caller),
        params.teamId,
        params.userId,
        platformAddress(reply.request, ctx.config.platformDomain),
      ),
    ),
  },
});

/**
 * Invitations accepted, sign-up and passwords. Passwords are checked through `guard` (the sign-in
 * limits and hashing threads), so changing a password cannot be used to guess one faster than
 * signing in.
 */
const accountRoutes = (guard: SignInGuard) =>
  operations('Account', {
    inspectInvitation: {
      route: 'POST /api/v1/invitations/inspect',
      summary: 'Read an invitation',
      description:
        'No sign-in: the token is the proof. What a live invitation is for: the team, who invited, the invited email and role, and until when it works; nothing changes. A POST, so the token travels in the body and stays out of URLs and logs. A used, revoked, replaced or expired token is 404 invitation_not_valid, as accepting it would be.',
      access: 'public',
      requestBody: jsonBody('The token', 'InvitationToken'),
      responses: ok('The invitation', 'InvitationDetails'),
      errors: ['invitation_not_valid'],
      handler: ({ body }, _reply, ctx) => inspectInvitation(ctx, body.token),
    },
    acceptInvitation: {
      route: 'POST /api/v1/invitations/accept',
      summary: 'Accept an invitation',
      description:
        "No sign-in: the token is the proof. An email without an account gets one, with this name and password (at least 12 characters); an email that has an account must send its current password. Then the account joins the team with the invitation's role, and the token stops working. A mailed invitation proves the account's email; an account that never proved its email cannot join through an invitation that was not mailed (403 email_not_proved). Sign in with POST /api/v1/session.",
      access: 'public',
      requestBody: jsonBody('The token, your name and password', 'InvitationAcceptance'),
      responses: created('Joined', 'AcceptedInvitation'),
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
    },
    signUp: {
      route: 'POST /api/v1/users',
      summary: 'Sign up',
      description:
        'Only when the operator allows open sign-up (KENNEL_OPEN_SIGNUP=on; off by default): creates an account and a team it owns. Sign in with POST /api/v1/session.',
      access: 'public',
      requestBody: jsonBody('The account', 'SignUp'),
      responses: created('The account and its team', 'SignedUp'),
      errors: ['sign_up_closed', 'email_taken'],
      handler: answerCreated(({ body }, _reply, ctx) => signUp(ctx, body)),
    },
    getSignUpPolicy: {
      route: 'GET /api/v1/sign-up',
      summary: 'Whether sign-up is open',
      description:
        'No sign-in: whether POST /api/v1/users takes sign-ups (KENNEL_OPEN_SIGNUP), so the sign-in page offers "Create an account" only when it works.',
      access: 'public',
      responses: ok('The policy', 'SignUpPolicy'),
      errors: ['malformed_url'],
      handler: async (_request, _reply, ctx) => ({ open: ctx.config.openSignUp }),
    },
    changePassword: {
      route: 'PUT /api/v1/me/password',
      summary: 'Change your password',
      description:
        'Needs your current password (checked under the sign-in limits). Every other session of yours is signed out; the one making the change stays, and API tokens keep working.',
      requestBody: jsonBody('Current and new password', 'PasswordChange'),
      responses: noContent('Changed'),
      errors: ['wrong_current_password', 'too_many_sign_in_attempts', 'sign_in_busy'],
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
    },
    resetPassword: {
      route: 'POST /api/v1/password-reset',
      summary: 'Set a new password with a reset token',
      description:
        "No sign-in: the token is the proof, once. Only while the link would still be allowed: an owner's link stops holding once the account joins a team that owner does not own or becomes a platform admin (403 reset_link_outdated: ask for a new link). Sets the password (at least 12 characters), signs out every session of the account and revokes its API tokens; the answer counts both.",
      access: 'public',
      requestBody: jsonBody('The token and the new password', 'PasswordResetRedemption'),
      responses: ok('The account', 'PasswordResetDone'),
      errors: ['reset_link_not_valid', 'reset_link_outdated'],
      handler: ({ body }, _reply, ctx) => redeemPasswordReset(ctx, body.token, body.password),
    },
  });

/** Members, invitations, sign-up and passwords. */
export const peopleRoutes = (guard: SignInGuard) => [...memberRoutes, ...accountRoutes(guard)];
