import { compareDeploys, readDeployDocumentAs } from '../../projects/compare-deploys.ts';
import { deployProject, dryRunDeploy, listDeploys, readDeploy } from '../../projects/deploys.ts';
import { checkTenantOriginUrl, projectFor } from '../../projects/projects.ts';
import { promoteDeploy } from '../../projects/promote-deploy.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { inProject, passing } from './answers.ts';
import { created, jsonBody, ok } from './contract.ts';

export const deployRoutes = operations('Projects', {
  createDeploy: {
    route: 'POST /api/v1/projects/{slug}/deploys',
    summary: 'Deploy',
    description:
      "Uploads an OpenAPI 3.0.x or 3.1.x document (JSON or YAML) and optionally a new origin. A valid document becomes the live deploy, and the answer lists its changes against the deploy live before; when a change is breaking the deploy is refused with 409 breaking_changes (the body lists the changes) and nothing is stored, unless allowBreaking is true. An invalid one is kept as a failed deploy with its problems (the answer is still 201: the deploy exists). dryRun answers 200 with the problems and the changes and stores nothing; preview stores a deploy that never changes the live site (promote it with promoteDeploy). A document that expands past the platform's limits (size once parsed, YAML aliases, depth, paths, operations) is refused with 413 or 422 and not stored. The project keeps its live deploy and its latest DEPLOY_RETENTION deploys; older ones are deleted.",
    requestBody: jsonBody('The document', 'NewDeploy'),
    responses: {
      ...ok('A dry run: what deploying would do', 'DeployCheck'),
      ...created('The deploy, succeeded or failed', 'Deploy'),
    },
    errors: ['origin_not_allowed', 'breaking_changes', 'document_too_large', 'document_too_complex'],
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
      const input = { document: body.document, ...(originUrl === undefined ? {} : { originUrl }) };
      if (body.dryRun === true) return dryRunDeploy(ctx, actor, params.slug, input);
      reply.code(201);
      return deployProject(ctx, actor, params.slug, {
        ...input,
        ...(body.allowBreaking === undefined ? {} : { allowBreaking: body.allowBreaking }),
        ...(body.preview === undefined ? {} : { preview: body.preview }),
      });
    },
  },
  listDeploys: {
    route: 'GET /api/v1/projects/{slug}/deploys',
    summary: 'Deploy history',
    description:
      'Every deploy of the project, newest first, with its number, author and changes; `active` marks the live one.',
    responses: ok('Deploys', ['Deploy']),
    handler: inProject(listDeploys),
  },
  getDeploy: {
    route: 'GET /api/v1/projects/{slug}/deploys/{deployId}',
    summary: 'Read a deploy',
    description: 'One deploy, with its changes, and its problems when it failed.',
    responses: ok('The deploy', 'Deploy'),
    handler: passing('slug', 'deployId')(readDeploy),
  },
  promoteDeploy: {
    route: 'POST /api/v1/projects/{slug}/deploys/{deployId}/promote',
    summary: 'Make an earlier deploy live again',
    description:
      "Makes a succeeded deploy of the project (an earlier one, or a preview) the live one in one step: its document and its origin. The deploy gate applies: when its changes against the live deploy are breaking it is refused with 409 breaking_changes unless allowBreaking is true. Writes a publication (the changelog's entry) and sends the team's webhook deploy.published.",
    requestBody: jsonBody('Options', 'PromoteDeploy'),
    responses: ok('The deploy, now live, and its publication', 'Promotion'),
    errors: ['deploy_failed', 'deploy_already_live', 'breaking_changes', 'origin_not_allowed'],
    handler: ({ caller, params, body }, _reply, ctx) =>
      promoteDeploy(ctx, actorOf(caller), params.slug, params.deployId, {
        ...(body?.allowBreaking === undefined ? {} : { allowBreaking: body.allowBreaking }),
      }),
  },
  getDeployDocument: {
    route: 'GET /api/v1/projects/{slug}/deploys/{deployId}/document',
    summary: "Download a deploy's document",
    description:
      'The OpenAPI document of a succeeded deploy as it was stored (JSON; YAML with format=yaml), for viewing, download and comparison.',
    parameters: [
      {
        name: 'format',
        in: 'query',
        description: 'json (the default) or yaml',
        schema: { type: 'string', enum: ['json', 'yaml'], default: 'json' },
      },
    ],
    responses: {
      200: {
        description: 'The OpenAPI document',
        schema: { type: 'object', description: 'The OpenAPI document', additionalProperties: true },
        otherContent: { 'application/yaml': { type: 'string', description: 'The document as YAML' } },
      },
    },
    errors: ['deploy_failed'],
    async handler({ caller, params, query }, reply, ctx) {
      const format = query.format ?? 'json';
      const text = await readDeployDocumentAs(ctx, actorOf(caller), params.slug, params.deployId, format);
      // Sent as stored (text): a big document is not parsed and serialized again.
      reply.type(format === 'yaml' ? 'application/yaml; charset=utf-8' : 'application/json; charset=utf-8');
      return text;
    },
  },
  compareDeploys: {
    route: 'GET /api/v1/projects/{slug}/deploys/{deployId}/changes',
    summary: 'Compare two deploys',
    description:
      'The changes from deploy `against` (by default the live one) to this deploy, by the engine that gates deploys (docs/changes.md).',
    parameters: [
      {
        name: 'against',
        in: 'query',
        description: 'The deploy to compare with (the old side); the live deploy when left out',
        schema: { type: 'integer', minimum: 1 },
      },
    ],
    responses: ok('The changes', 'DeployComparison'),
    errors: ['deploy_failed', 'deploy_required'],
    handler: ({ caller, params, query }, _reply, ctx) =>
      compareDeploys(ctx, actorOf(caller), params.slug, params.deployId, query.against),
  },
});
