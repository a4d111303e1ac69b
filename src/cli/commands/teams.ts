import type { CreatedInvitation, Team } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { defineCommand, type GroupSpec, teamCommand } from '../command.ts';
import { printInvitationLink, ROLES } from './members.ts';

export const teamsGroup: GroupSpec = {
  name: 'teams',
  summary: 'Teams, their members and plans',
  description:
    'Projects belong to teams; a team’s plan decides whether its projects can have custom domains (Pro or above).',
  commands: [
    defineCommand({
      name: 'teams list',
      summary: 'List your teams (every team, for platform admins)',
      examples: ['kennel teams list'],
      async run(call) {
        call.out.list(await call.api().get<Team[]>('/api/v1/teams'), {
          headers: ['ID', 'Name', 'Plan', 'Role'],
          row: (t) => [t.id, t.name, t.plan, t.role],
          empty: 'You belong to no team yet. Create one with kennel teams create NAME.',
        });
      },
    }),
    defineCommand({
      name: 'teams create',
      summary: 'Create a team on the Free plan, with you as its owner',
      args: ['NAME'],
      examples: ['kennel teams create "Shop team"'],
      async run(call) {
        const { out } = call;
        const team = await call.api().post<Team>('/api/v1/teams', { name: call.args.NAME });
        out.result(team, () => {
          out.line(`Created team ${team.id} "${team.name}" on the ${team.plan} plan.`);
          out.line(`Next: kennel projects create --team ${team.id} --slug SLUG --name NAME --origin URL`);
        });
      },
    }),
    teamCommand({
      name: 'teams rename',
      summary: 'Rename a team (team owners)',
      args: ['NAME'],
      examples: ['kennel teams rename 3 "Shop floor"'],
      async run(call, id) {
        const team = await call.api().patch<Team>(path`/api/v1/teams/${id}`, { name: call.args.NAME });
        call.out.resultLine(team, `Team ${team.id} is now "${team.name}".`);
      },
    }),
    teamCommand({
      name: 'teams delete',
      summary: 'Delete a team that has no projects (team owners)',
      description:
        'Its memberships, invitations, webhook and origin grants go with it. A team with projects is refused (team_has_projects): delete or move them first.',
      examples: ['kennel teams delete 3'],
      async run(call, id) {
        await call.api().delete(path`/api/v1/teams/${id}`);
        call.out.resultLine({ deleted: id }, `Deleted team ${id}.`);
      },
    }),
    teamCommand({
      name: 'teams set-plan',
      summary: "Set a team's plan (platform admins only)",
      args: ['PLAN'],
      description: 'Plans: free, pro, enterprise. Custom domains need pro or above.',
      examples: ['kennel teams set-plan 3 pro'],
      async run(call, id) {
        const team = await call.api().put<Team>(path`/api/v1/teams/${id}/plan`, { plan: call.args.PLAN });
        call.out.resultLine(team, `Team ${team.id} "${team.name}" is now on the ${team.plan} plan.`);
      },
    }),
    teamCommand({
      name: 'teams add-member',
      summary: 'Invite an email to a team as owner or member (team owners); they accept the invitation',
      args: ['EMAIL'],
      options: {
        role: { type: 'string', value: 'owner|member', description: 'The role to give (default member)' },
      },
      examples: [
        'kennel teams add-member 3 ana@example.com',
        'kennel teams add-member 3 ana@example.com --role owner',
      ],
      async run(call, id) {
        const role = call.string('role') ?? 'member';
        if (!ROLES.includes(role)) throw call.usage(`--role must be owner or member (got "${role}").`);
        const invitation = await call
          .api()
          .post<CreatedInvitation>(path`/api/v1/teams/${id}/members`, { email: call.args.EMAIL, role });
        call.out.result(invitation, () => {
          call.out.line(
            `Invited ${invitation.email} to team ${id} as ${invitation.role} (invitation ${invitation.id}, until ${invitation.expiresAt}); they join when they accept it.`,
          );
          printInvitationLink(call, invitation);
        });
      },
    }),
  ],
};
