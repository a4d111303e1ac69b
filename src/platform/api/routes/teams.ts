import { defineOperation, ref } from '../../../lib/http-api/index.ts';
import { inviteMember } from '../../accounts/people.ts';
import { createTeam, listTeams, type Role, setPlan, teamFor } from '../../accounts/teams.ts';
import type { PlatformContext } from '../../context.ts';
import { actorOf } from '../auth.ts';
import { platformAddress } from '../platform-address.ts';

const TAG = ['Teams'];
const teamId = {
  name: 'teamId',
  in: 'path' as const,
  description: 'Team id',
  schema: { type: 'integer', minimum: 1 },
};

export const teamRoutes = [
  defineOperation<PlatformContext>({
    operationId: 'listTeams',
    method: 'GET',
    path: '/api/v1/teams',
    tags: TAG,
    summary: 'List your teams',
    description: 'The teams you belong to (every team, for platform admins).',
    responses: { 200: { description: 'Teams', schema: { type: 'array', items: ref('Team') } } },
    errors: ['unauthenticated'],
    handler: ({ caller }, _reply, ctx) => listTeams(ctx, actorOf(caller)),
  }),
  defineOperation<PlatformContext, unknown, unknown, { name: string }>({
    operationId: 'createTeam',
    method: 'POST',
    path: '/api/v1/teams',
    tags: TAG,
    summary: 'Create a team',
    description: 'Creates a team on the Free plan with you as its owner.',
    requestBody: { description: 'The team', schema: ref('NewTeam') },
    responses: { 201: { description: 'The team', schema: ref('Team') } },
    errors: ['unauthenticated', 'csrf_failed'],
    async handler({ caller, body }, reply, ctx) {
      reply.code(201);
      return createTeam(ctx, actorOf(caller), body.name);
    },
  }),
  defineOperation<PlatformContext, { teamId: number }>({
    operationId: 'getTeam',
    method: 'GET',
    path: '/api/v1/teams/{teamId}',
    tags: TAG,
    summary: 'Read a team',
    description: 'A team you belong to.',
    parameters: [teamId],
    responses: { 200: { description: 'The team', schema: ref('Team') } },
    errors: ['unauthenticated', 'team_not_found'],
    handler: ({ caller, params }, _reply, ctx) => teamFor(ctx, actorOf(caller), params.teamId),
  }),
  defineOperation<PlatformContext, { teamId: number }, unknown, { plan: string }>({
    operationId: 'setTeamPlan',
    method: 'PUT',
    path: '/api/v1/teams/{teamId}/plan',
    tags: TAG,
    summary: "Set a team's plan",
    description: 'Platform admins only (there is no billing). Custom domains need Pro or above.',
    access: 'admin',
    parameters: [teamId],
    requestBody: { description: 'The plan', schema: ref('PlanChange') },
    responses: { 200: { description: 'The team', schema: ref('Team') } },
    errors: ['unauthenticated', 'csrf_failed', 'forbidden', 'team_not_found'],
    handler: ({ caller, params, body }, _reply, ctx) =>
      setPlan(ctx, actorOf(caller), params.teamId, body.plan),
  }),
  defineOperation<PlatformContext, { teamId: number }, unknown, { email: string; role?: Role }>({
    operationId: 'addTeamMember',
    method: 'POST',
    path: '/api/v1/teams/{teamId}/members',
    tags: TAG,
    summary: 'Add a member (by invitation)',
    description:
      'Team owners invite an email to join as owner or member: as POST /api/v1/teams/{teamId}/invitations, with a role. Nobody is added without accepting, and the answer is the same whether or not the email has an account.',
    parameters: [teamId],
    requestBody: { description: 'Who, and their role', schema: ref('NewMember') },
    responses: { 201: { description: 'The invitation', schema: ref('CreatedInvitation') } },
    errors: [
      'unauthenticated',
      'csrf_failed',
      'validation_failed',
      'forbidden',
      'team_not_found',
      'already_member',
    ],
    async handler({ caller, params, body }, reply, ctx) {
      reply.code(201);
      const platformUrl = platformAddress(reply.request, ctx.config.platformDomain);
      return inviteMember(
        ctx,
        actorOf(caller),
        params.teamId,
        body.email,
        platformUrl,
        body.role ?? 'member',
      );
    },
  }),
];
