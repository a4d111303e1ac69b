import { ref } from '../../../lib/http-api/index.ts';
import { teamFor } from '../../accounts/teams.ts';
import { deleteProject, previewProjectDeletion } from '../../projects/delete-project.ts';
import { checkTenantOriginUrl, createProject, listProjects, projectFor } from '../../projects/projects.ts';
import { updateProject } from '../../projects/update-project.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { created, forCaller, inProject, ok } from './answers.ts';
import { slugParam } from './parameters.ts';

const TAG = ['Projects'];

export const projectRoutes = [
  managementOperation({
    operationId: 'listProjects',
    method: 'GET',
    path: '/api/v1/projects',
    tags: TAG,
    summary: 'List projects',
    description: "Your teams' projects.",
    responses: ok('Projects', ['Project']),
    errors: ['unauthenticated'],
    handler: forCaller(listProjects),
  }),
  managementOperation({
    operationId: 'createProject',
    method: 'POST',
    path: '/api/v1/projects',
    tags: TAG,
    summary: 'Create a project',
    description:
      'Creates a project of one of your teams, published at <slug>.<platform domain> once deployed.',
    requestBody: { description: 'The project', schema: ref('NewProject') },
    responses: created('The project', 'Project'),
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
  managementOperation({
    operationId: 'getProject',
    method: 'GET',
    path: '/api/v1/projects/{slug}',
    tags: TAG,
    summary: 'Read a project',
    description: 'One project: default address, active deploy, plan, primary domain.',
    parameters: [slugParam],
    responses: ok('The project', 'Project'),
    errors: ['unauthenticated', 'project_not_found'],
    handler: inProject(projectFor),
  }),
  managementOperation({
    operationId: 'updateProject',
    method: 'PATCH',
    path: '/api/v1/projects/{slug}',
    tags: TAG,
    summary: 'Rename a project or change its origin',
    description:
      "Changes the project's display name, its origin, or both; any member of its team may. The slug stays: it is the published host. A new origin is checked as at creation (origin_not_allowed for a private address without the team's grant) and the edge uses it from the next request; past deploys keep the origin they were made with.",
    parameters: [slugParam],
    requestBody: { description: 'The changes', schema: ref('ProjectChange') },
    responses: ok('The project as changed', 'Project'),
    errors: ['unauthenticated', 'csrf_failed', 'project_not_found', 'origin_not_allowed'],
    handler: ({ caller, params, body }, _reply, ctx) =>
      updateProject(ctx, actorOf(caller), params.slug, body),
  }),
  managementOperation({
    operationId: 'getProjectDeletion',
    method: 'GET',
    path: '/api/v1/projects/{slug}/deletion',
    tags: TAG,
    summary: 'What deleting a project would remove',
    description:
      'Counts what goes with the project if it is deleted now: its custom domains, their certificates and its deploys. Any member of its team may ask.',
    parameters: [slugParam],
    responses: ok('What would go', 'ProjectDeletion'),
    errors: ['unauthenticated', 'project_not_found'],
    handler: inProject(previewProjectDeletion),
  }),
  managementOperation({
    operationId: 'deleteProject',
    method: 'DELETE',
    path: '/api/v1/projects/{slug}',
    tags: TAG,
    summary: 'Delete a project',
    description:
      'Deletes the project with its domains, their certificates, its deploys (previews and share links too), its changelog, CORS policy and traffic, in one transaction; the edge stops serving all of its addresses at once. Team owners and platform admins only. Answers what was removed; the slug is free again. There is no undo.',
    parameters: [slugParam],
    responses: ok('What was removed', 'ProjectDeletion'),
    errors: ['unauthenticated', 'csrf_failed', 'project_not_found', 'forbidden'],
    handler: inProject(deleteProject),
  }),
];
