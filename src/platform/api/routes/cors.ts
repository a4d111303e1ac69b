import { ref } from '../../../lib/http-api/index.ts';
import { readProjectCors, setProjectCors } from '../../projects/project-cors.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { inProject, ok } from './answers.ts';
import { slugParam } from './parameters.ts';

const path = '/api/v1/projects/{slug}/cors';

/** A project's CORS policy: which browser apps on other origins may call its published API. */
export const corsRoutes = [
  managementOperation({
    operationId: 'getProjectCors',
    method: 'GET',
    path,
    tags: ['Projects'],
    summary: "Read a project's CORS policy",
    description:
      "The project's CORS policy; off (`enabled: false`) with default settings until someone sets one. Any member of the project's team may read it.",
    parameters: [slugParam],
    responses: ok('The policy', 'CorsPolicy'),
    errors: ['unauthenticated', 'project_not_found'],
    handler: inProject(readProjectCors),
  }),
  managementOperation({
    operationId: 'setProjectCors',
    method: 'PUT',
    path,
    tags: ['Projects'],
    summary: "Set a project's CORS policy",
    description:
      "Replaces the project's CORS policy; the edge applies it from the next request. With it on, the edge answers preflights to the project's API itself (204, or 403 `cors_not_allowed`) and adds `Access-Control-Allow-Origin` for allowed origins to every answer, replacing what the origin sent. Any member of the project's team may set it (as its domains).",
    parameters: [slugParam],
    requestBody: { description: 'The whole policy', schema: ref('CorsPolicy') },
    responses: ok('The policy as stored (normalised)', 'CorsPolicy'),
    errors: ['unauthenticated', 'csrf_failed', 'project_not_found', 'invalid_cors_policy'],
    handler: ({ caller, params, body }, _reply, ctx) =>
      setProjectCors(ctx, actorOf(caller), params.slug, body),
  }),
];
