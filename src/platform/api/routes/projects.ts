import { defineOperation, ref } from '../../../lib/http-api/index.ts';
import { teamFor } from '../../accounts/teams.ts';
import type { PlatformContext } from '../../context.ts';
import { deployProject, listDeploys, readDeploy } from '../../projects/deploys.ts';
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
  defineOperation<PlatformContext, { slug: string }, unknown, { document: string; originUrl?: string }>({
    operationId: 'createDeploy',
    method: 'POST',
    path: '/api/v1/projects/{slug}/deploys',
    tags: TAG,
    summary: 'Deploy',
    description:
      "Uploads an OpenAPI 3.0.x or 3.1.x document (JSON or YAML) and optionally a new origin. A valid document becomes the active deploy; an invalid one is kept as a failed deploy with the validator's messages (the answer is still 201: the deploy exists). A document that expands past the platform's limits (size once parsed, YAML aliases, depth, paths, operations) is refused with 413 or 422 and not stored. The project keeps its live deploy and its latest DEPLOY_RETENTION deploys; older ones are deleted.",
    parameters: [slugParam],
    requestBody: { description: 'The document', schema: ref('NewDeploy') },
    responses: { 201: { description: 'The deploy, succeeded or failed', schema: ref('Deploy') } },
    errors: [
      'unauthenticated',
      'csrf_failed',
      'project_not_found',
      'origin_not_allowed',
      'document_too_large',
      'document_too_complex',
    ],
    async handler({ caller, params, body }, reply, ctx) {
      const actor = actorOf(caller);
      const originUrl =
        body.originUrl === undefined
          ? undefined
          : await checkTenantOriginUrl(
              ctx,
              (await projectFor(ctx, actor, params.slug)).teamId,
              body.originUrl,
            );
      reply.code(201);
      return deployProject(ctx, actor, params.slug, {
        document: body.document,
        ...(originUrl === undefined ? {} : { originUrl }),
      });
    },
  }),
  defineOperation<PlatformContext, { slug: string }>({
    operationId: 'listDeploys',
    method: 'GET',
    path: '/api/v1/projects/{slug}/deploys',
    tags: TAG,
    summary: 'Deploy history',
    description: 'Every deploy of the project, newest first; `active` marks the one served.',
    parameters: [slugParam],
    responses: { 200: { description: 'Deploys', schema: { type: 'array', items: ref('Deploy') } } },
    errors: ['unauthenticated', 'project_not_found'],
    handler: ({ caller, params }, _reply, ctx) => listDeploys(ctx, actorOf(caller), params.slug),
  }),
  defineOperation<PlatformContext, { slug: string; deployId: number }>({
    operationId: 'getDeploy',
    method: 'GET',
    path: '/api/v1/projects/{slug}/deploys/{deployId}',
    tags: TAG,
    summary: 'Read a deploy',
    description: 'One deploy, with the validator messages when it failed.',
    parameters: [
      slugParam,
      { name: 'deployId', in: 'path', description: 'Deploy id', schema: { type: 'integer', minimum: 1 } },
    ],
    responses: { 200: { description: 'The deploy', schema: ref('Deploy') } },
    errors: ['unauthenticated', 'project_not_found', 'deploy_not_found'],
    handler: ({ caller, params }, _reply, ctx) =>
      readDeploy(ctx, actorOf(caller), params.slug, params.deployId),
  }),
];
