import { teamFor } from '../../accounts/teams.ts';
import { deleteProject, previewProjectDeletion } from '../../projects/delete-project.ts';
import { checkTenantOriginUrl, createProject, listProjects, projectFor } from '../../projects/projects.ts';
import { updateProject } from '../../projects/update-project.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { forCaller, inProject, passing } from './answers.ts';
import { created, jsonBody, ok } from './contract.ts';

export const projectRoutes = operations('Projects', {
  listProjects: {
    route: 'GET /api/v1/projects',
    summary: 'List projects',
    description: "Your teams' projects.",
    responses: ok('Projects', ['Project']),
    handler: forCaller(listProjects),
  },
  createProject: {
    route: 'POST /api/v1/projects',
    summary: 'Create a project',
    description:
      'Creates a project of one of your teams, published at <slug>.<platform domain> once deployed.',
    requestBody: jsonBody('The project', 'NewProject'),
    responses: created('The project', 'Project'),
    errors: ['team_not_found', 'slug_taken', 'origin_not_allowed'],
    async handler({ caller, body }, reply, ctx) {
      const actor = actorOf(caller);
      // The team first: an origin grant is the team's, and a stranger learns nothing of it.
      await teamFor(ctx, actor, body.teamId);
      const originUrl = await checkTenantOriginUrl(ctx, body.teamId, body.originUrl);
      reply.code(201);
      return createProject(ctx, actor, { ...body, originUrl });
    },
  },
  getProject: {
    route: 'GET /api/v1/projects/{slug}',
    summary: 'Read a project',
    description: 'One project: default address, active deploy, plan, primary domain.',
    responses: ok('The project', 'Project'),
    handler: inProject(projectFor),
  },
  updateProject: {
    route: 'PATCH /api/v1/projects/{slug}',
    summary: 'Rename a project or change its origin',
    description:
      "Changes the project's display name, its origin, or both; any member of its team may. The slug stays: it is the published host. A new origin is checked as at creation (origin_not_allowed for a private address without the team's grant) and the edge uses it from the next request; past deploys keep the origin they were made with.",
    requestBody: jsonBody('The changes', 'ProjectChange'),
    responses: ok('The project as changed', 'Project'),
    errors: ['origin_not_allowed'],
    handler: passing('slug', 'body')(updateProject),
  },
  getProjectDeletion: {
    route: 'GET /api/v1/projects/{slug}/deletion',
    summary: 'What deleting a project would remove',
    description:
      'Counts what goes with the project if it is deleted now: its custom domains, their certificates and its deploys. Any member of its team may ask.',
    responses: ok('What would go', 'ProjectDeletion'),
    handler: inProject(previewProjectDeletion),
  },
  deleteProject: {
    route: 'DELETE /api/v1/projects/{slug}',
    summary: 'Delete a project',
    description:
      'Deletes the project with its domains, their certificates, its deploys (previews and share links too), its changelog, CORS policy and traffic, in one transaction; the edge stops serving all of its addresses at once. Team owners and platform admins only. Answers what was removed; the slug is free again. There is no undo.',
    responses: ok('What was removed', 'ProjectDeletion'),
    errors: ['forbidden'],
    handler: inProject(deleteProject),
  },
});
