import type {
  AcceptedInvitation,
  CreatedInvitation,
  Invitation,
  PasswordResetLink,
  TeamMember,
} from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type Call, defineCommand, type GroupSpec, idArg, teamCommand } from '../command.ts';
import { PASSWORD_STDIN, passwords } from '../passwords.ts';

/** The roles of a team member. */
export const ROLES = ['owner', 'member'];

export const membersGroup: GroupSpec = {
  name: 'members',
  summary: 'Team members: invite, list, roles, remove, leave, password reset tokens',
  description:
    'Owners invite people by email, change roles, remove members and create password reset tokens; every member sees the list and may leave. A team always keeps one owner.',
  commands: [
    teamCommand({
      name: 'members list',
      summary: "List a team's members and their roles",
      examples: ['kennel members list 3'],
      async run(call, id) {
        call.out.list(await call.api().get<TeamMember[]>(path`/api/v1/teams/${id}/members`), {
          headers: ['User ID', 'Email', 'Name', 'Role', 'Since'],
          row: (m) => [m.userId, m.email, m.name ?? '—', m.role, m.since.slice(0, 10)],
        });
      },
    }),
    teamCommand({
      name: 'members invite',
      summary: 'Invite an email to a team as a member (team owners); prints the token once',
      args: ['EMAIL'],
      description:
        'The invitation works once, until it expires (7 days by default). When the platform has an SMTP server (SMTP_URL), it is mailed and not shown here (accepting it proves the email); otherwise the token is shown this once: pass it on over a channel you trust. The person runs kennel members accept TOKEN.',
      examples: ['kennel members invite 3 ana@example.com'],
      async run(call, id) {
        const invitation = await call
          .api()
          .post<CreatedInvitation>(path`/api/v1/teams/${id}/invitations`, { email: call.args.EMAIL });
        call.out.result(invitation, () => {
          call.out.line(
            `Invited ${invitation.email} to team ${id} (invitation ${invitation.id}, until ${invitation.expiresAt}).`,
          );
          printInvitationLink(call, invitation);
        });
      },
    }),
    teamCommand({
      name: 'members invitations',
      summary: "List a team's invitations and their status (team owners)",
      examples: ['kennel members invitations 3'],
      async run(call, id) {
        call.out.list(await call.api().get<Invitation[]>(path`/api/v1/teams/${id}/invitations`), {
          headers: ['ID', 'Email', 'Status', 'Expires'],
          row: (i) => [i.id, i.email, i.status, i.expiresAt],
        });
      },
    }),
    teamCommand({
      name: 'members revoke-invitation',
      summary: 'Revoke a pending invitation: its token stops working (team owners)',
      args: ['INVITATION_ID'],
      examples: ['kennel members revoke-invitation 3 12'],
      async run(call, id) {
        const invitation = idArg(call, 'INVITATION_ID');
        await call.api().delete(path`/api/v1/teams/${id}/invitations/${invitation}`);
        call.out.resultLine({ revoked: invitation }, `Revoked invitation ${invitation} of team ${id}.`);
      },
    }),
    defineCommand({
      name: 'members accept',
      summary: 'Accept an invitation: creates your account (or uses yours) and joins the team',
      args: ['TOKEN'],
      options: {
        name: { type: 'string', value: 'NAME', description: 'Your name (for a new account)' },
        ...PASSWORD_STDIN,
      },
      description:
        'Needs no sign-in: the token is the proof. A new account gets the password you give (at least 12 characters); if your email already has an account, give its password. Then sign in with kennel login.',
      examples: [
        'kennel members accept kin_… --name "Ana Lima" --server https://kennel.example.com',
        'printf %s "$PASSWORD" | kennel members accept kin_… --name Ana --password-stdin',
      ],
      async run(call) {
        const [password] = await passwords(call, ['Password']);
        const name = call.string('name');
        const accepted = await call.anonymous().post<AcceptedInvitation>('/api/v1/invitations/accept', {
          token: call.args.TOKEN,
          password,
          ...(name !== undefined && { name }),
        });
        call.out.resultLine(
          accepted,
          `${accepted.email} joined team ${accepted.teamId} as ${accepted.role}. Sign in with: kennel login --email ${accepted.email}`,
        );
      },
    }),
    teamCommand({
      name: 'members set-role',
      summary: "Change a member's role (team owners; the last owner stays owner)",
      args: ['USER_ID', 'ROLE'],
      examples: ['kennel members set-role 3 7 owner'],
      async run(call, id) {
        const user = idArg(call, 'USER_ID');
        const role = call.args.ROLE ?? '';
        if (!ROLES.includes(role)) throw call.usage(`ROLE must be owner or member (got "${role}").`);
        const member = await call
          .api()
          .put<TeamMember>(path`/api/v1/teams/${id}/members/${user}/role`, { role });
        call.out.resultLine(member, `${member.email} is now ${member.role} of team ${id}.`);
      },
    }),
    teamCommand({
      name: 'members remove',
      summary: 'Remove a member from a team (team owners)',
      args: ['USER_ID'],
      examples: ['kennel members remove 3 7'],
      async run(call, id) {
        const user = idArg(call, 'USER_ID');
        await call.api().delete(path`/api/v1/teams/${id}/members/${user}`);
        call.out.resultLine({ removed: user }, `Removed user ${user} from team ${id}.`);
      },
    }),
    teamCommand({
      name: 'members leave',
      summary: 'Leave a team (the last owner cannot)',
      examples: ['kennel members leave 3'],
      async run(call, id) {
        await call.api().delete(path`/api/v1/teams/${id}/membership`);
        call.out.resultLine({ left: id }, `You left team ${id}.`);
      },
    }),
    teamCommand({
      name: 'members reset-password',
      summary: 'Create a one-time password reset token for a member (team owners, platform admins)',
      args: ['USER_ID'],
      description:
        'The token is shown this once and works once, for 24 hours; the member sets a new password with kennel password reset TOKEN. An owner cannot reset a platform admin, nor someone who is also in a team the owner does not own.',
      examples: ['kennel members reset-password 3 7'],
      async run(call, id) {
        const user = idArg(call, 'USER_ID');
        const reset = await call
          .api()
          .post<PasswordResetLink>(path`/api/v1/teams/${id}/members/${user}/password-reset`);
        call.out.result(reset, () => {
          call.out.line(
            `Password reset token for ${reset.email} (shown this once; valid until ${reset.expiresAt}):`,
          );
          call.out.line(`  ${reset.token}`);
          call.out.line(`They set a new password in a browser at ${reset.url}`);
          call.out.line(`or with: kennel password reset ${reset.token} --server ${call.target.server}`);
        });
      },
    }),
  ],
};

/** How an invitation's link is told: mailed (then not shown), or shown once to pass on. */
export function printInvitationLink(call: Call, invitation: CreatedInvitation): void {
  if (invitation.mailed) {
    call.out.line(
      `Mailed to ${invitation.email}: the token is only in that mail, so accepting it proves the email is theirs.`,
    );
    return;
  }
  call.out.line('Not mailed. Invitation token (shown this once; send it to them over a channel you trust):');
  call.out.line(`  ${invitation.token}`);
  call.out.line(`They accept in a browser at ${invitation.url}`);
  call.out.line(`or with: kennel members accept ${invitation.token} --server ${call.target.server}`);
  call.out.line(
    'An unmailed link proves nothing about the email: it cannot add an existing account whose email was never proved (the operator sets SMTP_URL so invitations are mailed).',
  );
}
