import type { FastifyInstance } from 'fastify';
import type { Clock } from '../lib/clock.ts';
import { createJsonApi, installErrorHandling, registerOperations } from '../lib/http-api/index.ts';
import { type Database, isConnectionLost } from '../storage/index.ts';
import type { PetstoreTables } from './db-schema.ts';
import { petstoreErrors } from './errors.ts';
import { type PetstoreWebhooks, petstoreWebhookWorker, type WebhookSettings } from './events/index.ts';
import { DEFAULT_LIMITS, type PetstoreLimits } from './limits.ts';
import { BODY_LIMIT_BYTES, INTERFACE_VERSION, petstoreDocument, toYaml } from './openapi.ts';
import { type PetstoreDeps, petstoreOperations } from './routes/index.ts';
import { schemas } from './schemas.ts';
import { installDeadline } from './security/install-deadline.ts';
import { installGuard } from './security/install-guard.ts';
import { KeyService } from './security/key-service.ts';
import { createRateLimiters, type RateLimitScope } from './security/rate-limiters.ts';
import { purgeExpiredIdempotency } from './store/idempotency.ts';
import { createPetstoreStore } from './store/index.ts';

export interface PetstoreAppOptions {
  readonly database: Database<PetstoreTables>;
  readonly clock: Clock;
  readonly deprecation: PetstoreDeps['deprecation'];
  /** Pino options or false; JSON logs to stdout by default. */
  readonly logger?: boolean | { level: string };
  /** Fastify's per-request log lines (default on); off behind the platform's edge, which logs one. */
  readonly requestLogging?: boolean;
  readonly limits?: PetstoreLimits;
  /** false: no rate limiting (benchmarks compare with and without). */
  readonly rateLimit?: boolean;
  /** Where limits are counted; `auto` (the default): shared by all nodes on PostgreSQL. */
  readonly rateLimitScope?: RateLimitScope;
  /** false: every operation public, no key checked. For benchmarks only. */
  readonly authentication?: boolean;
  /** Take the client address from X-Forwarded-For when the peer is loopback (behind the edge). */
  readonly trustLoopbackProxy?: boolean;
  /**
   * Webhooks: the keys sealing signing secrets and the target policy. Without them the
   * subscriptions API answers 503 `webhooks_unavailable` (no secret could be kept).
   */
  readonly webhooks?: WebhookSettings & {
    /** Time limit of one delivery attempt. */
    readonly timeoutMs: number;
    readonly pollMs?: number;
    /** false: the worker is not started with the app (tests drive it with `runOnce`). */
    readonly start?: boolean;
  };
}

const workers = new WeakMap<FastifyInstance, PetstoreWebhooks>();

/** The app's webhook worker, when webhooks are configured (tests drive it; mains need not). */
export function petstoreWebhooksOf(app: FastifyInstance): PetstoreWebhooks | undefined {
  return workers.get(app);
}

/** Builds the Petstore API; the caller listens (or injects, in tests). */
export function buildPetstoreApp(options: PetstoreAppOptions): FastifyInstance {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const app = createJsonApi({
    bodyLimit: BODY_LIMIT_BYTES,
    catalog: petstoreErrors,
    logger: options.logger,
    requestLogging: options.requestLogging,
    timeouts: { headersMs: limits.headersTimeoutMs, requestMs: limits.receiveTimeoutMs },
  });
  const settings = options.webhooks;
  const webhooks = settings
    ? petstoreWebhookWorker(options.database.db, options.clock, {
        ...settings,
        onError: (error) => app.log.error({ err: error }, 'webhook delivery failed'),
      })
    : undefined;
  if (webhooks) workers.set(app, webhooks);
  const store = createPetstoreStore(options.database, options.clock, () => webhooks?.wake());
  const keys = new KeyService(store.context, { cacheMs: limits.keyCacheMs });

  const deps: PetstoreDeps = {
    store,
    clock: options.clock,
    deprecation: options.deprecation,
    keys,
    idempotencyTtlMs: limits.idempotencyTtlMs,
    webhooks: settings ? { keys: settings.keys, targets: settings.targets } : undefined,
    wakeWebhooks: () => webhooks?.wake(),
  };
  const operations = installDeadline(app, petstoreOperations(options.deprecation), limits.requestTimeoutMs);
  installErrorHandling(app, operations, petstoreErrors, {
    bodyLimit: BODY_LIMIT_BYTES,
    isDatabaseUnavailable: isConnectionLost,
  });
  installGuard(app, operations, keys, {
    authentication: options.authentication ?? true,
    rateLimit:
      options.rateLimit === false
        ? false
        : createRateLimiters(
            options.rateLimitScope ?? 'auto',
            options.database,
            options.clock,
            limits,
            app.log,
          ),
    trustLoopbackProxy: options.trustLoopbackProxy ?? false,
    interfaceVersion: INTERFACE_VERSION,
  });
  // Expired Idempotency-Key records are replaced when their key comes back; the rest are swept
  // hourly so the table stays about one expiry period of creates.
  let sweeper: NodeJS.Timeout | undefined;
  app.addHook('onReady', (done) => {
    sweeper = setInterval(() => {
      purgeExpiredIdempotency(store.context).catch((error: unknown) =>
        app.log.error({ err: error }, 'sweeping expired idempotency keys failed'),
      );
    }, 3_600_000);
    sweeper.unref();
    if (webhooks && settings?.start !== false) webhooks.start();
    done();
  });
  app.addHook('onClose', async () => {
    clearInterval(sweeper);
    // Attempts in flight are recorded before the database closes; the rest wait in the outbox.
    await webhooks?.stop();
  });
  registerOperations(app, operations, schemas, deps);

  const document = petstoreDocument(options.deprecation, limits);
  const json = JSON.stringify(document, null, 2);
  const yaml = toYaml(document);
  app.get('/openapi.json', (_req, reply) => reply.type('application/json; charset=utf-8').send(json));
  app.get('/openapi.yaml', (_req, reply) => reply.type('application/yaml; charset=utf-8').send(yaml));
  return app;
}
