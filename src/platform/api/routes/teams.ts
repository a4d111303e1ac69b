import { createTeam, deleteTeam, listTeams, renameTeam, setPlan, teamFor } from '../../accounts/teams.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { answerCreated, forCaller, inTeam, passing, thenNoContent } from './answers.ts';
import { created, jsonBody, noContent, ok } from './contract.ts';
import { invite, inviteErrors } from './people.ts';

export const teamRoutes = operations('Teams', {
  listTeams: {
    route: 'GET /api/v1/teams',
    summary: 'List your teams',
    description: 'The teams you belong to (every team, for platform admins).',
    responses: ok('Teams', ['Team']),
    handler: forCaller(listTeams),
  },
  createTeam: {
    route: 'POST /api/v1/teams',
    summary: 'Create a team',
    description: 'Creates a team on the Free plan with you as its owner.',
    requestBody: jsonBody('The team', 'NewTeam'),
    responses: created('The team', 'Team'),
    handler: answerCreated(({ caller, body }, _reply, ctx) => createTeam(ctx, actorOf(caller), body.name)),
  },
  getTeam: {
    route: 'GET /api/v1/teams/{teamId}',
    summary: 'Read a team',
    description: 'A team you belong to.',
    responses: ok('The team', 'Team'),
    handler: inTeam(teamFor),
  },
  renameTeam: {
    route: 'PATCH /api/v1/teams/{teamId}',
    summary: 'Rename a team',
    description: 'Team owners (and platform admins). The name is trimmed and cannot be blank.',
    requestBody: jsonBody('The new name', 'TeamChange'),
    responses: ok('The team', 'Team'),
    errors: ['forbidden', 'validation_failed'],
    handler: passing('teamId', 'body.name')(renameTeam),
  },
  deleteTeam: {
    route: 'DELETE /api/v1/teams/{teamId}',
    summary: 'Delete a team',
    description:
      'Team owners (and platform admins), once the team has no projects (409 team_has_projects names them: delete them or move them first). Its memberships, invitations, webhook endpoint and origin grants go with it.',
    responses: noContent('Deleted'),
    errors: ['forbidden', 'team_has_projects'],
    handler: thenNoContent(inTeam(deleteTeam)),
  },
  setTeamPlan: {
    route: 'PUT /api/v1/teams/{teamId}/plan',
    summary: "Set a team's plan",
    description: 'Platform admins only (there is no billing). Custom domains need Pro or above.',
    access: 'admin',
    requestBody: jsonBody('The plan', 'PlanChange'),
    responses: ok('The team', 'Team'),
    handler: passing('teamId', 'body.plan')(setPlan),
  },
  addTeamMember: {
    route: 'POST /api/v1/teams/{teamId}/members',
    summary: 'Add a member (by invitation)',
    description:
      'Team owners invite an email to join as owner or member: as POST /api/v1/teams/{teamId}/invitations, with a role. Nobody is added without accepting, and the answer is the same whether or not the email has an account.',
    requestBody: jsonBody('Who, and their role', 'NewMember'),
    responses: created('The invitation', 'CreatedInvitation'),
    errors: inviteErrors,
    handler: invite,
  },
});
