import { defineOperation, ref } from '../../../lib/http-api/index.ts';
import { teamFor } from '../../accounts/teams.ts';
import type { PlatformContext } from '../../context.ts';
import { checkTenantOriginUrl, createProject, listProjects, projectFor } from '../../projects/projects.ts';
import { actorOf } from '../auth.ts';

const TAG = ['Projects'];
export const slugParam = {
  name: 'slug',
  in: 'path' as const,
  description: 'Project slug',
  schema: { type: 'string', minLength: 1, maxLength: 63 },
};

export const projectRoutes = [
  defineOperation<PlatformContext>({
    operationId: 'listProjects',
    method: 'GET',
    path: '/api/v1/projects',
    tags: TAG,
    summary: 'List projects',
    description: "Your teams' projects.",
    responses: { 200: { description: 'Projects', schema: { type: 'array', items: ref('Project') } } },
    errors: ['unauthenticated'],
    handler: ({ caller }, _reply, ctx) => listProjects(ctx, actorOf(caller)),
  }),
  defineOperation<
    PlatformContext,
    unknown,
    unknown,
    { teamId: number; slug: string; name: string; originUrl: string }
  >({
    operationId: 'createProject',
    method: 'POST',
    path: '/api/v1/projects',
    tags: TAG,
    summary: 'Create a project',
    description:
      'Creates a project of one of your teams, published at <slug>.<platform domain> once deployed.',
    requestBody: { description: 'The project', schema: ref('NewProject') },
    responses: { 201: { description: 'The project', schema: ref('Project') } },
    errors: ['unauthenticated', 'csrf_failed', 'team_not_found', 'slug_taken', 'origin_not_allowed'],
    async handler({ caller, body }, reply, ctx) {
      const actor = actorOf(caller);
      // The team first: an origin grant is the team's, and a stranger learns nothing of it.
      await teamFor(ctx, actor, body.teamId);
      const originUrl = await checkTenantOriginUrl(ctx, body.teamId, body.originUrl);
      reply.code(201);
      return createProject(ctx, actor, { ...body, originUrl });
    },
  }),
  defineOperation<PlatformContext, { slug: string }>({
    operationId: 'getProject',
    method: 'GET',
    path: '/api/v1/projects/{slug}',
    tags: TAG,
    summary: 'Read a project',
    description: 'One project: default address, active deploy, plan, primary domain.',
    parameters: [slugParam],
    responses: { 200: { description: 'The project', schema: ref('Project') } },
    errors: ['unauthenticated', 'project_not_found'],
    handler: ({ caller, params }, _reply, ctx) => projectFor(ctx, actorOf(caller), params.slug),
  }),
];
