import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AnyOperation,
  buildOpenApiDocument,
  createJsonApi,
  installErrorHandling,
  KENNEL_LICENSE,
  registerOperations,
} from '../../lib/http-api/index.ts';
import { isConnectionLost } from '../../storage/index.ts';
import { SignInGuard, type SignInOptions } from '../accounts/sign-in.ts';
import { registerCliPackage } from '../cli-package/serve-cli-package.ts';
import type { PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { KENNEL_VERSION } from '../kennel-version.ts';
import { authenticator, PLAIN_HTTP_SESSION_COOKIE, SESSION_COOKIE } from './auth.ts';
import { corsRoutes } from './routes/cors.ts';
import { deployRoutes } from './routes/deploys.ts';
import { domainRoutes } from './routes/domains.ts';
import { originGrantRoutes } from './routes/origin-grants.ts';
import { passwordResetRequestRoutes } from './routes/password-reset-requests.ts';
import { peopleRoutes } from './routes/people.ts';
import { previewRoutes } from './routes/previews.ts';
import { projectRoutes } from './routes/projects.ts';
import { sessionRoutes } from './routes/session.ts';
import { teamRoutes } from './routes/teams.ts';
import { tokenRoutes } from './routes/tokens.ts';
import { trafficRoutes } from './routes/traffic.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { platformSchemas } from './schemas.ts';

/**
 * The operations; `signIn` is the app's sign-in guard (a fresh one, unused, for the document).
 * Each group's table (`operations`, ./operation.ts) declares the codes its access implies,
 * the expired and read-only API token among them.
 */
export function managementOperations(
  signIn: SignInGuard = new SignInGuard(),
): AnyOperation<PlatformContext>[] {
  return [
    ...sessionRoutes(signIn),
    ...passwordResetRequestRoutes(signIn.resetRequests),
    ...tokenRoutes,
    ...teamRoutes,
    ...peopleRoutes(signIn),
    ...projectRoutes,
    ...deployRoutes,
    ...previewRoutes,
    ...domainRoutes,
    ...corsRoutes,
    ...webhookRoutes,
    ...originGrantRoutes,
    ...trafficRoutes,
  ];
}

/** The management API's OpenAPI 3.0.3 document, built from the operations it registers. */
export function managementDocument(): Record<string, unknown> {
  const operations = managementOperations();
  const document = buildOpenApiDocument({
    info: {
      title: 'Kennel management API',
      version: '1.0.0',
      license: KENNEL_LICENSE,
      description:
        'Accounts, teams, projects, deploys and custom domains. Authenticate with `Authorization: Bearer <API token>` (create one with `kennel login` or POST /api/v1/tokens), or with the dashboard session cookie plus `X-CSRF-Token` on changes. A project or team you do not belong to answers 404.',
    },
    servers: [{ url: '/', description: 'The platform address' }],
    tags: [
      { name: 'Account', description: 'Sign in, sign up, invitations accepted, passwords, API tokens' },
      { name: 'Teams', description: 'Teams, members, invitations, roles, plans, password reset links' },
      { name: 'Projects', description: 'Projects and deploys' },
      { name: 'Domains', description: 'Custom domains: add, verify, re-verify, remove, YAML configuration' },
      {
        name: 'Webhooks',
        description: "A team's webhook endpoint, its delivery log, redelivery (docs/webhooks.md)",
      },
      {
        name: 'Traffic',
        description:
          "A project's traffic by operation, caller and status; its request log; deprecation reach (docs/traffic.md)",
      },
      {
        name: 'Origin grants',
        description: 'Platform admins: which teams may reach which private origins (docs/security.md)',
      },
    ],
    schemas: platformSchemas,
    operations,
    errors: platformErrors.specs,
    errorSchema: 'Error',
    securitySchemes: {
      token: { type: 'http', scheme: 'bearer', description: 'A personal API token (knl_…)' },
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: SESSION_COOKIE,
        description: 'Dashboard session, over HTTPS',
      },
      plainHttpSession: {
        type: 'apiKey',
        in: 'cookie',
        name: PLAIN_HTTP_SESSION_COOKIE,
        description: 'Dashboard session, over plain HTTP (a local platform)',
      },
    },
  });
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const op of operations) {
    const entry = paths[op.path]?.[op.method.toLowerCase()];
    if (!entry) continue;
    entry.security = op.access === 'public' ? [] : [{ token: [] }, { session: [] }, { plainHttpSession: [] }];
    const responses = entry.responses as Record<string, { headers?: Record<string, unknown> }>;
    for (const status of ['429', '503']) {
      const response = responses[status];
      if (response) response.headers = { ...response.headers, 'Retry-After': RETRY_AFTER };
    }
  }
  return document;
}

/** Where the platform serves the management API's OpenAPI document. */
export const MANAGEMENT_DOCUMENT_PATH = '/api/v1/openapi.json';

/**
 * Pages served beside the API (the dashboard, src/web): handed in by the assembly (src/main), so
 * the control plane does not import the front end.
 */
export interface ManagementPages {
  /** Registers the pages' routes and assets on the app. */
  register(app: FastifyInstance): void;
  /** A browser at an address that is no page gets this page (undefined: the JSON 404). */
  notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined;
}

const RETRY_AFTER = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'integer', minimum: 1 },
};

/**
 * The control plane's HTTP API; the caller listens (or mounts it behind the edge). `signIn`
 * sets the sign-in limits and hashing threads (docs/security.md); closing the app stops them.
 */
export function buildManagementApp(
  ctx: PlatformContext,
  options: {
    logger?: boolean | { level: string };
    /** Fastify's per-request log lines (default on); off behind the edge, which logs one line per request. */
    requestLogging?: boolean;
    signIn?: SignInOptions;
    /** Sent as X-Kennel-Version (the CLI compares it with the version it was made for). */
    version?: string;
    /** The dashboard (src/main/platform-app.ts hands it in); none: the API alone. */
    pages?: ManagementPages;
  } = {},
): FastifyInstance {
  const version = options.version ?? KENNEL_VERSION;
  const app = createJsonApi({
    bodyLimit: ctx.config.apiBodyLimitBytes,
    catalog: platformErrors,
    logger: options.logger,
    requestLogging: options.requestLogging,
    timeouts: { headersMs: ctx.config.headersTimeoutMs, requestMs: ctx.config.receiveTimeoutMs },
  });
  const signIn = new SignInGuard(options.signIn);
  app.addHook('onClose', () => signIn.close());
  const operations = managementOperations(signIn);
  installErrorHandling(app, operations, platformErrors, {
    bodyLimit: ctx.config.apiBodyLimitBytes,
    bodyLimitSetting: 'API_BODY_LIMIT',
    isDatabaseUnavailable: isConnectionLost,
    documentPath: MANAGEMENT_DOCUMENT_PATH,
    // A browser at an address that is no page gets the dashboard's 404 page, not JSON.
    ...(options.pages && { notFoundPage: options.pages.notFound }),
  });
  registerOperations(app, operations, platformSchemas, ctx, authenticator(ctx), {
    // A deploy carries its whole document: big published ones are over the API's general limit.
    createDeploy: { bytes: ctx.config.deployBodyLimitBytes, setting: 'DEPLOY_BODY_LIMIT' },
  });
  const json = JSON.stringify(managementDocument(), null, 2);
  app.get(MANAGEMENT_DOCUMENT_PATH, (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(json),
  );
  options.pages?.register(app);
  app.addHook('onSend', async (_request, reply) => {
    reply.header('x-kennel-version', version);
  });
  // The CLI, installable anywhere from the platform (docs/cli.md, "Install").
  registerCliPackage(app, {
    root: fileURLToPath(new URL('../../..', import.meta.url)),
    dataDir: ctx.config.dataDir,
    version,
    clock: ctx.clock,
  });
  return app;
}
