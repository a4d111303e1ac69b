import { ref } from '../../../lib/http-api/index.ts';
import { createTeam, deleteTeam, listTeams, renameTeam, setPlan, teamFor } from '../../accounts/teams.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { answerCreated, created, forCaller, inTeam, noContent, ok, thenNoContent } from './answers.ts';
import { teamIdParam, teamOwnerChangeErrors } from './parameters.ts';
import { invite, inviteErrors } from './people.ts';

const TAG = ['Teams'];

export const teamRoutes = [
  managementOperation({
    operationId: 'listTeams',
    method: 'GET',
    path: '/api/v1/teams',
    tags: TAG,
    summary: 'List your teams',
    description: 'The teams you belong to (every team, for platform admins).',
    responses: ok('Teams', ['Team']),
    errors: ['unauthenticated'],
    handler: forCaller(listTeams),
  }),
  managementOperation({
    operationId: 'createTeam',
    method: 'POST',
    path: '/api/v1/teams',
    tags: TAG,
    summary: 'Create a team',
    description: 'Creates a team on the Free plan with you as its owner.',
    requestBody: { description: 'The team', schema: ref('NewTeam') },
    responses: created('The team', 'Team'),
    errors: ['unauthenticated', 'csrf_failed'],
    handler: answerCreated(({ caller, body }, ctx) => createTeam(ctx, actorOf(caller), body.name)),
  }),
  managementOperation({
    operationId: 'getTeam',
    method: 'GET',
    path: '/api/v1/teams/{teamId}',
    tags: TAG,
    summary: 'Read a team',
    description: 'A team you belong to.',
    parameters: [teamIdParam],
    responses: ok('The team', 'Team'),
    errors: ['unauthenticated', 'team_not_found'],
    handler: inTeam(teamFor),
  }),
  managementOperation({
    operationId: 'renameTeam',
    method: 'PATCH',
    path: '/api/v1/teams/{teamId}',
    tags: TAG,
    summary: 'Rename a team',
    description: 'Team owners (and platform admins). The name is trimmed and cannot be blank.',
    parameters: [teamIdParam],
    requestBody: { description: 'The new name', schema: ref('TeamChange') },
    responses: ok('The team', 'Team'),
    errors: [...teamOwnerChangeErrors, 'validation_failed'],
    handler: ({ caller, params, body }, _reply, ctx) =>
      renameTeam(ctx, actorOf(caller), params.teamId, body.name),
  }),
  managementOperation({
    operationId: 'deleteTeam',
    method: 'DELETE',
    path: '/api/v1/teams/{teamId}',
    tags: TAG,
    summary: 'Delete a team',
    description:
      'Team owners (and platform admins), once the team has no projects (409 team_has_projects names them: delete them or move them first). Its memberships, invitations, webhook endpoint and origin grants go with it.',
    parameters: [teamIdParam],
    responses: noContent('Deleted'),
    errors: [...teamOwnerChangeErrors, 'team_has_projects'],
    handler: thenNoContent(({ caller, params }, ctx) => deleteTeam(ctx, actorOf(caller), params.teamId)),
  }),
  managementOperation({
    operationId: 'setTeamPlan',
    method: 'PUT',
    path: '/api/v1/teams/{teamId}/plan',
    tags: TAG,
    summary: "Set a team's plan",
    description: 'Platform admins only (there is no billing). Custom domains need Pro or above.',
    access: 'admin',
    parameters: [teamIdParam],
    requestBody: { description: 'The plan', schema: ref('PlanChange') },
    responses: ok('The team', 'Team'),
    errors: teamOwnerChangeErrors,
    handler: ({ caller, params, body }, _reply, ctx) =>
      setPlan(ctx, actorOf(caller), params.teamId, body.plan),
  }),
  managementOperation({
    operationId: 'addTeamMember',
    method: 'POST',
    path: '/api/v1/teams/{teamId}/members',
    tags: TAG,
    summary: 'Add a member (by invitation)',
    description:
      'Team owners invite an email to join as owner or member: as POST /api/v1/teams/{teamId}/invitations, with a role. Nobody is added without accepting, and the answer is the same whether or not the email has an account.',
    parameters: [teamIdParam],
    requestBody: { description: 'Who, and their role', schema: ref('NewMember') },
    responses: created('The invitation', 'CreatedInvitation'),
    errors: inviteErrors,
    handler: invite,
  }),
];
