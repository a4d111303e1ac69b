import { readProjectCors, setProjectCors } from '../../projects/project-cors.ts';
import { operations } from '../operation.ts';
import { inProject, passing } from './answers.ts';
import { jsonBody, ok } from './contract.ts';

/** A project's CORS policy: which browser apps on other origins may call its published API. */
export const corsRoutes = operations('Projects', {
  getProjectCors: {
    route: 'GET /api/v1/projects/{slug}/cors',
    summary: "Read a project's CORS policy",
    description:
      "The project's CORS policy; off (`enabled: false`) with default settings until someone sets one. Any member of the project's team may read it.",
    responses: ok('The policy', 'CorsPolicy'),
    handler: inProject(readProjectCors),
  },
  setProjectCors: {
    route: 'PUT /api/v1/projects/{slug}/cors',
    summary: "Set a project's CORS policy",
    description:
      "Replaces the project's CORS policy; the edge applies it from the next request. With it on, the edge answers preflights to the project's API itself (204, or 403 `cors_not_allowed`) and adds `Access-Control-Allow-Origin` for allowed origins to every answer, replacing what the origin sent. Any member of the project's team may set it (as its domains).",
    requestBody: jsonBody('The whole policy', 'CorsPolicy'),
    responses: ok('The policy as stored (normalised)', 'CorsPolicy'),
    errors: ['invalid_cors_policy'],
    handler: passing('slug', 'body')(setProjectCors),
  },
});
