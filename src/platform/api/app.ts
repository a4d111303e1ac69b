import type { FastifyInstance } from 'fastify';
import {
  type AnyOperation,
  buildOpenApiDocument,
  createJsonApi,
  installErrorHandling,
  registerOperations,
} from '../../lib/http-api/index.ts';
import { registerDashboard } from '../../web/dashboard/index.ts';
import type { PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { authenticator } from './auth.ts';
import { domainRoutes } from './routes/domains.ts';
import { projectRoutes } from './routes/projects.ts';
import { sessionRoutes } from './routes/session.ts';
import { teamRoutes } from './routes/teams.ts';
import { tokenRoutes } from './routes/tokens.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { platformSchemas } from './schemas.ts';

export const API_BODY_LIMIT = 6 * 1024 * 1024;

export function managementOperations(): AnyOperation<PlatformContext>[] {
  return [
    ...sessionRoutes,
    ...tokenRoutes,
    ...teamRoutes,
    ...projectRoutes,
    ...domainRoutes,
    ...webhookRoutes,
  ];
}

/** The management API's OpenAPI 3.0.3 document, built from the operations it registers. */
export function managementDocument(): Record<string, unknown> {
  const operations = managementOperations();
  const document = buildOpenApiDocument({
    info: {
      title: 'Kennel management API',
      version: '1.0.0',
      description:
        'Accounts, teams, projects, deploys and custom domains. Authenticate with `Authorization: Bearer <API token>` (create one with `kennel login` or POST /api/v1/tokens), or with the dashboard session cookie plus `X-CSRF-Token` on changes. A project or team you do not belong to answers 404.',
    },
    servers: [{ url: '/', description: 'The platform address' }],
    tags: [
      { name: 'Account', description: 'Sign in, API tokens' },
      { name: 'Teams', description: 'Teams, members, plans' },
      { name: 'Projects', description: 'Projects and deploys' },
      { name: 'Domains', description: 'Custom domains: add, verify, re-verify, remove, YAML configuration' },
      {
        name: 'Webhooks',
        description: "A team's webhook endpoint, its delivery log, redelivery (docs/webhooks.md)",
      },
    ],
    schemas: platformSchemas,
    operations,
    errors: platformErrors.specs,
    errorSchema: 'Error',
    securitySchemes: {
      token: { type: 'http', scheme: 'bearer', description: 'A personal API token (knl_…)' },
      session: { type: 'apiKey', in: 'cookie', name: 'kennel_session', description: 'Dashboard session' },
    },
  });
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const op of operations) {
    const entry = paths[op.path]?.[op.method.toLowerCase()];
    if (entry) entry.security = op.access === 'public' ? [] : [{ token: [] }, { session: [] }];
  }
  return document;
}

/** The control plane's HTTP API; the caller listens (or mounts it behind the edge). */
export function buildManagementApp(
  ctx: PlatformContext,
  options: { logger?: boolean | { level: string } } = {},
): FastifyInstance {
  const app = createJsonApi({
    bodyLimit: API_BODY_LIMIT,
    catalog: platformErrors,
    logger: options.logger,
    timeouts: { headersMs: ctx.config.headersTimeoutMs, requestMs: ctx.config.receiveTimeoutMs },
  });
  const operations = managementOperations();
  installErrorHandling(app, operations, platformErrors, { bodyLimit: API_BODY_LIMIT });
  registerOperations(app, operations, platformSchemas, ctx, authenticator(ctx));
  const json = JSON.stringify(managementDocument(), null, 2);
  app.get('/api/v1/openapi.json', (_req, reply) => reply.type('application/json; charset=utf-8').send(json));
  registerDashboard(app);
  return app;
}
