import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname as machineName } from 'node:os';
import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  type PetstoreConfig,
  type PlatformConfig,
  petstoreAppSettings,
  petstoreWebhookSettings,
  withAllowedOrigins,
} from '../config/index.ts';
import {
  CertificateCache,
  createOperatorHandler,
  EdgeMetrics,
  type EdgeOptions,
  NodeHealth,
  observeRequests,
  type StartedEdge,
  type StartedTraffic,
  startEdge,
  startTraffic,
} from '../edge/index.ts';
import { type Clock, systemClock } from '../lib/clock.ts';
import { drainServers } from '../lib/drain-servers.ts';
import { logProcessWarnings } from '../lib/process-warnings.ts';
import { parseSealingKey, type SealingKey } from '../lib/sealed-box.ts';
import { sealingKeysOrFile } from '../lib/sealing-key-file.ts';
import {
  buildPetstoreApp,
  ensureAdminKey,
  type PetstoreTables,
  petstoreDocument,
  petstoreMigrations,
} from '../petstore/index.ts';
import { SqliteBackups } from '../platform/backups.ts';
import { bootstrapPlatform } from '../platform/bootstrap.ts';
import { AcmeIssuer } from '../platform/certificates/acme-issuer.ts';
import { obtainDueCertificates, reclaimOwnLeases } from '../platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../platform/certificates/certificate-store.ts';
import { DefaultAddressCertificates } from '../platform/certificates/default-addresses.ts';
import { InternalIssuer } from '../platform/certificates/internal-issuer.ts';
import type { Issuer } from '../platform/certificates/issuer.ts';
import { PlatformCertificate } from '../platform/certificates/platform-certificate.ts';
import { resealSecrets } from '../platform/certificates/reseal-secrets.ts';
import { type ChangeRelayOptions, startChangeRelay } from '../platform/change-relay.ts';
import { ChangeFeed } from '../platform/changes.ts';
import type { PlatformContext } from '../platform/context.ts';
import { type PlatformTables, platformMigrations } from '../platform/db-schema.ts';
import { checkDueDomains } from '../platform/domains/check-due-domains.ts';
import { createDnsResolver } from '../platform/domains/dns-check.ts';
import { startPeriodic } from '../platform/jobs/periodic.ts';
import { PlatformMetrics } from '../platform/metrics.ts';
import { NOTICE_EVERY_MS, sendDeprecationNotices } from '../platform/traffic/deprecation-notices.ts';
import { rollupTraffic } from '../platform/traffic/index.ts';
import { startWebhookWorker } from '../platform/webhooks/index.ts';
import { type Database, migrateToLatest, openDatabase, type StorageLocation } from '../storage/index.ts';
import { Parts } from './parts.ts';
import { buildPlatformApp } from './platform-app.ts';

/** How often the traffic job rolls minutes into hours and applies retention. */
const TRAFFIC_ROLLUP_EVERY_MS = 10 * 60_000;

/** What a caller may set on the edge: its origin policy and timeouts. */
export type EdgeOverrides = Pick<EdgeOptions, 'guard' | 'connectTimeoutMs' | 'responseTimeoutMs'>;

/**
 * What a caller may hand in instead of what the configuration would make: tests pass a manual
 * clock, their own database and DNS, an issuer; `npm start` passes the Petstore's settings.
 */
export interface PlatformOverrides {
  /** The bundled Petstore API, run as the first project's origin (none: no Petstore, no first project). */
  readonly petstore?: PetstoreConfig;
  /** Where the platform's tables are (default: DATABASE_URL, or kennel.db in DATA_DIR). */
  readonly storage?: StorageLocation;
  readonly clock?: Clock;
  readonly resolver?: PlatformContext['resolver'];
  /** The certificate issuer (default: ACME when ACME_DIRECTORY_URL is set, else the internal CA). */
  readonly issuer?: Issuer;
  /** The keys sealing certificate keys and webhook secrets (default: CERT_KEYS, or a key file). */
  readonly keys?: readonly SealingKey[];
  /** This process's name in leases and traffic rows (default: machine and PID). */
  readonly nodeId?: string;
  /** The channel nodes on one PostgreSQL share changes on (default `kennel_changes`). */
  readonly changeChannel?: string;
  /**
   * The edge's origin policy and timeouts (tests allow their loopback origins), or a function of
   * the node's context returning them, called once the database is migrated (a guard that reads
   * the projects: test/support/origins.ts `seededOriginGuard`).
   */
  readonly edge?: EdgeOverrides | ((ctx: PlatformContext) => EdgeOverrides | Promise<EdgeOverrides>);
  /** The management app's sign-in limits and hashing threads, and the version it announces. */
  readonly app?: Pick<NonNullable<Parameters<typeof buildPlatformApp>[1]>, 'signIn' | 'version'>;
  /**
   * Default true. False: no periodic jobs (domain checks, certificates, traffic rollup,
   * deprecation notices), no webhook worker and no change relay — the edge, its app and traffic
   * recording over a database prepared elsewhere (the benchmarks' edge node).
   */
  readonly jobs?: boolean;
  /**
   * The change relay's session (default: the storage's URL) and timings. `onError` and
   * `onReconnect` are called besides the log lines (a test watching the relay).
   */
  readonly changeRelay?: Partial<
    Pick<ChangeRelayOptions, 'url' | 'backoff' | 'heartbeat' | 'onError' | 'onReconnect'>
  >;
  /** Process warnings also go to the log (default true; a test process runs several nodes). */
  readonly logProcessWarnings?: boolean;
  /**
   * Called once every listener is up and the first start's accounts exist, before the node
   * reports itself started (readiness 200): `npm start` prints its banner here.
   */
  readonly announce?: (node: StartedPlatform) => Promise<void> | void;
}

/** A port the node could not bind: the message names the port and its setting. */
export class PortUnavailableError extends Error {
  readonly port: number;
  readonly setting: string;

  constructor(message: string, port: number, setting: string) {
    super(message);
    this.port = port;
    this.setting = setting;
  }
}

/** What a started node is made of, for its caller (the banner, a test). */
export interface StartedPlatform {
  readonly ctx: PlatformContext;
  readonly app: FastifyInstance;
  readonly log: FastifyInstance['log'];
  readonly database: Database<PlatformTables>;
  readonly edge: StartedEdge;
  /** Traffic recording (none: TRAFFIC_RECORDING=off). */
  readonly traffic: StartedTraffic | undefined;
  readonly health: NodeHealth;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** The operator listener's port (none: METRICS_PORT=off). */
  readonly operatorPort: number | undefined;
  /** The bundled Petstore's address, when it runs. */
  readonly petstoreUrl: string | undefined;
  /** Where the internal CA's root certificate was written. */
  readonly rootPemFile: string;
  /** The first start's admin and project (none on later starts, or without the Petstore). */
  readonly first: Awaited<ReturnType<typeof bootstrapPlatform>> | undefined;
  /** The Petstore's first admin key, when this start created it. */
  readonly petstoreKey: Awaited<ReturnType<typeof ensureAdminKey>> | undefined;
}

export interface PlatformNode {
  /**
   * Starts every part in order; a part that fails to start stops those already started, and the
   * error is thrown (a taken port: `PortUnavailableError`).
   */
  start(): Promise<StartedPlatform>;
  /**
   * Graceful stop: readiness turns 503 at once, the public listeners stop accepting, requests in
   * flight finish (bounded by SHUTDOWN_TIMEOUT), then every other part stops in the reverse order
   * of its start, databases last. Rejects, once all are stopped, if any part failed to stop.
   */
  stop(): Promise<void>;
  /** Cuts the public connections still open (a second signal during `stop`). */
  cutConnections(): void;
  /** The node's logger, once the management app is built. */
  readonly log: FastifyInstance['log'] | undefined;
}

/**
 * The keys sealing certificate private keys: CERT_KEYS, or for a single node a key file in the
 * data directory, created on first start (several nodes must share CERT_KEYS).
 */
function sealingKeys(configured: readonly string[], dataDir: string): SealingKey[] {
  if (configured.length > 0) return configured.map(parseSealingKey);
  mkdirSync(resolve(dataDir), { recursive: true });
  const file = join(resolve(dataDir), 'cert.key');
  if (!existsSync(file))
    writeFileSync(file, `local-${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
  return [parseSealingKey(readFileSync(file, 'utf8').trim())];
}

/** The ACME issuer from configuration; its account key is kept (sealed) in the database. */
async function acmeIssuer(
  config: PlatformConfig,
  store: CertificateStore,
  clock: Clock,
): Promise<AcmeIssuer> {
  const accountKeyPem = await store.secret('acme_account_key');
  return new AcmeIssuer({
    directoryUrl: config.acmeDirectoryUrl as string,
    email: config.acmeEmail,
    // CAA is checked before each order against the CA's identity (the issuer's pre-check).
    caaIdentities: [config.caaIdentifier],
    ...(accountKeyPem ? { accountKeyPem } : {}),
    ...(config.acmeEabKid
      ? { externalAccountBinding: { kid: config.acmeEabKid, hmacKey: config.acmeEabHmacKey } }
      : {}),
    ...(config.acmeCaFile ? { caPem: readFileSync(config.acmeCaFile, 'utf8') } : {}),
    onAccountKey: (pem) => store.saveSecret('acme_account_key', pem, clock.now()),
  });
}

/**
 * Runs `listen`; a port already in use (or refused to this user) becomes a `PortUnavailableError`
 * naming the port and its setting.
 */
async function bound<T>(
  settingOf: (port: number) => string,
  configured: number,
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
    const port = (error as { port?: number }).port ?? configured;
    const name = settingOf(port);
    throw new PortUnavailableError(
      code === 'EADDRINUSE'
        ? `Port ${port} is already in use (${name}): stop what listens on it, or set ${name} to a free port.`
        : `Port ${port} may not be used by this user (${name}): set ${name} to a port above 1023.`,
      port,
      name,
    );
  }
}

/**
 * One platform node: the Petstore (when given), the platform's database, the management app with
 * the dashboard, the jobs, the change relay, traffic, the edge and the operator listener — each
 * registered with its stop in one list (`Parts`), so that stopping is the start read backwards.
 * Nothing starts until `start()`.
 */
export function assemblePlatform(config: PlatformConfig, overrides: PlatformOverrides = {}): PlatformNode {
  const clock = overrides.clock ?? systemClock;
  const jobs = overrides.jobs !== false;
  const dataDir = resolve(config.dataDir);
  const logger = config.logLevel === 'silent' ? false : { level: config.logLevel };
  let log: FastifyInstance['log'] | undefined;
  const parts = new Parts({
    onStopError: (name, error) =>
      log ? log.error({ err: error, part: name }, `stopping ${name} failed`) : console.error(error),
  });
  let edge: StartedEdge | undefined;

  // On PostgreSQL each service's sessions carry its name in pg_stat_activity (unless the URL sets
  // application_name), so an operator can tell them apart.
  const where = (file: string, applicationName: string): StorageLocation =>
    config.databaseUrl
      ? { kind: 'postgres', url: config.databaseUrl, applicationName }
      : { kind: 'sqlite', file: join(dataDir, file), checkpoint: 'background' };

  async function start(): Promise<StartedPlatform> {
    const petstoreConfig = overrides.petstore;
    // The Petstore: its own tables (its own SQLite file), its own listener.
    let petstoreDb: Database<PetstoreTables> | undefined;
    let petstoreUrl: string | undefined;
    const deprecation = petstoreConfig && {
      deprecatedAt: petstoreConfig.deprecatedAt,
      sunsetAt: petstoreConfig.sunsetAt,
    };
    const petstoreSettings = petstoreConfig && petstoreAppSettings(petstoreConfig);
    if (petstoreConfig && deprecation && petstoreSettings) {
      const database = await parts.add(
        'petstore database',
        async () => {
          const database: Database<PetstoreTables> = openDatabase(where('petstore.db', 'kennel-petstore'));
          await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
          return database;
        },
        (database) => database.close(),
      );
      petstoreDb = database;
      const petstore = await parts.add(
        'petstore',
        () =>
          buildPetstoreApp({
            database,
            clock,
            deprecation,
            logger,
            // The edge writes the one access-log line per request (docs/operations.md, "Logs").
            requestLogging: false,
            ...petstoreSettings,
            // The edge proxies every request from loopback and adds the client's address.
            trustLoopbackProxy: true,
            // The Petstore's own sealing key (its own file), as when it runs alone.
            webhooks: petstoreWebhookSettings(
              petstoreConfig,
              sealingKeysOrFile(petstoreConfig.secretKeys, config.dataDir, 'petstore.key'),
            ),
          }),
        (app) => app.close(),
      );
      // Every listener is bound before anything is created (the admin, the Petstore key): a taken
      // port must not leave a first start half done, with credentials that were never printed.
      petstoreUrl = await bound(
        () => 'PETSTORE_PORT',
        config.petstorePort,
        () => petstore.listen({ port: config.petstorePort, host: '127.0.0.1' }),
      );
    }

    const location = overrides.storage ?? where('kennel.db', 'kennel');
    const platformDb = await parts.add(
      'platform database',
      async () => {
        const database: Database<PlatformTables> = openDatabase(location);
        await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
        return database;
      },
      (database) => database.close(),
    );
    const keys = [...(overrides.keys ?? sealingKeys(config.certificateKeys, config.dataDir))];
    // Webhook signing secrets are sealed with the certificate keys; the worker is woken on enqueue.
    const webhookWake = { listener: () => {} };
    const ctx: PlatformContext = {
      webhooks: { keys, wake: () => webhookWake.listener() },
      db: platformDb.db,
      dialect: platformDb.dialect,
      clock,
      // The bundled Petstore listens on loopback; its project is allowed to point at it.
      config: petstoreUrl ? withAllowedOrigins(config, petstoreUrl) : config,
      changes: new ChangeFeed(),
      resolver:
        overrides.resolver ?? createDnsResolver({ servers: config.dnsServers, timeoutMs: 2000, tries: 2 }),
    };
    const api = await parts.add(
      'management app',
      () => buildPlatformApp(ctx, { ...overrides.app, logger, requestLogging: false }),
      (app) => app.close(),
    );
    log = api.log;
    if (overrides.logProcessWarnings !== false) logProcessWarnings(api.log);
    // Operations: metrics (served on the operator listener only) and this node's health.
    const registry = new Registry();
    // The process's own metrics (event-loop delay, GC) cost on every loop turn and collection:
    // only where an operator listener can serve them.
    if (config.metricsPort !== 'off') collectDefaultMetrics({ register: registry });
    const platformMetrics = new PlatformMetrics(registry, ctx);
    // Starting until the first start's admin and project exist: the edge answers 503 until then.
    const health = new NodeHealth({
      pingDatabase: () => sql`select 1`.execute(ctx.db),
      timeoutMs: 2_000,
      starting: true,
    });
    // The operator listener (metrics, health, backups) is stopped late: it still answers while
    // the jobs stop. It is bound after the edge, below.
    const operator =
      config.metricsPort === 'off'
        ? undefined
        : await parts.add(
            'operator listener',
            () =>
              createServer(
                createOperatorHandler({
                  registry,
                  health,
                  ...(platformDb.sqlite && {
                    backup: new SqliteBackups({
                      databases: [
                        { name: 'kennel', database: platformDb },
                        ...(petstoreDb ? [{ name: 'petstore', database: petstoreDb }] : []),
                      ],
                      dir: join(dataDir, 'backups'),
                      clock,
                    }),
                  }),
                  onError: (error) => api.log.error({ err: error }, 'collecting metrics failed'),
                }),
              ),
            (server) => drainServers([server], { timeoutMs: 1_000 }),
          );
    if (jobs)
      await parts.add(
        'domain checks',
        () =>
          startPeriodic(
            config.domainCheckEveryMs,
            () => checkDueDomains(ctx),
            (error) => {
              platformMetrics.passFailed('domain_checks');
              api.log.error({ err: error }, 'domain checks failed');
            },
          ),
        (job) => job.stop(),
      );
    const nodeId = overrides.nodeId ?? `${machineName()}:${process.pid}`;
    // Certificates: the internal CA unless an ACME directory is configured.
    // Rotation: whatever an earlier sealing key sealed is re-sealed under the first key now.
    const resealed = await resealSecrets(ctx.db, keys);
    if (resealed.resealed > 0)
      api.log.info(
        { resealed: resealed.resealed, key: keys[0]?.id, before: resealed.before },
        'secrets re-sealed',
      );
    const store = new CertificateStore(ctx.db, keys);
    const ca = await store.internalCa(clock.now());
    const rootPemFile = join(dataDir, 'kennel-root.pem');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(rootPemFile, ca.certificatePem);
    const issuer = platformMetrics.countOrders(
      overrides.issuer ??
        (config.acmeDirectoryUrl ? await acmeIssuer(config, store, clock) : new InternalIssuer(ca)),
    );
    const challenges = databaseChallenges(ctx.db, () => clock.now());
    const defaultCertificate = await new InternalIssuer(ca).issue(config.platformDomain);
    // Leases name the node as it stays across restarts (machine and NODE_NAME, or the port) plus
    // this process: at start, the orders an earlier process of this node held are taken back at
    // once; a live order's heartbeat renews its 15 s lease, so a dead node's is taken over in 15 s.
    const leaseNode = `${machineName()}:${
      config.nodeName || (config.httpPort !== 0 ? `port-${config.httpPort}` : `pid-${process.pid}`)
    }`;
    const leaseInstance = `${process.pid}:${randomUUID()}`;
    const reclaimed = await reclaimOwnLeases(ctx.db, leaseNode, leaseInstance);
    if (reclaimed > 0)
      api.log.info({ reclaimed, node: leaseNode }, 'certificate orders taken back after a restart');
    // The platform domain's stored certificate (ACME, below) replaces the internal default once
    // issued; projects' default addresses get internal-CA certificates for their own names.
    const certificates = new CertificateCache(store, defaultCertificate, {
      platformDomain: config.platformDomain,
      defaultAddresses: new DefaultAddressCertificates(ctx.db, config.platformDomain, new InternalIssuer(ca)),
    });
    const platformCertificate =
      config.acmeDirectoryUrl && PlatformCertificate.orderable(config.platformDomain)
        ? new PlatformCertificate({
            db: ctx.db,
            clock,
            changes: ctx.changes,
            hostname: config.platformDomain,
            issuer,
            store,
            challenges,
            nodeId,
            leaseMs: 5 * 60_000,
          })
        : undefined;
    const certificateJob = !jobs
      ? undefined
      : await parts.add(
          'certificate job',
          () =>
            startPeriodic(
              config.certificateCheckEveryMs,
              async () => {
                await obtainDueCertificates(ctx, {
                  issuer,
                  store,
                  challenges,
                  nodeId: leaseNode,
                  instanceId: leaseInstance,
                  leaseMs: 15_000,
                  heartbeatMs: 5_000,
                });
                await platformCertificate?.pass();
              },
              (error) => {
                platformMetrics.passFailed('certificates');
                api.log.error({ err: error }, 'certificate job failed');
              },
            ),
          (job) => job.stop(),
        );
    // A domain just verified gets its certificate now, not at the job's next pass (Verify → served).
    if (certificateJob)
      ctx.changes.subscribe((change) => {
        if (change.kind === 'domains') certificateJob.wake();
      });

    if (jobs) {
      const webhooks = await parts.add(
        'webhook worker',
        () =>
          startWebhookWorker(ctx, {
            nodeId,
            onError: (error) => api.log.error({ err: error }, 'webhook delivery failed'),
          }),
        (worker) => worker.stop(),
      );
      webhookWake.listener = () => webhooks.wake();
    }

    // Several nodes on one PostgreSQL hear each other's changes (removed domains, new certificates).
    const relay = overrides.changeRelay;
    if (jobs && location.kind === 'postgres')
      await parts.add(
        'change relay',
        () =>
          startChangeRelay({
            url: relay?.url ?? location.url,
            channel: overrides.changeChannel ?? 'kennel_changes',
            nodeId,
            feed: ctx.changes,
            onError: (error) => {
              api.log.error({ err: error }, 'change relay failed');
              relay?.onError?.(error);
            },
            onReconnect: (attempts) => {
              api.log.warn({ attempts }, 'change relay listening again: reloading routes and certificates');
              relay?.onReconnect?.(attempts);
            },
            ...(relay?.backoff && { backoff: relay.backoff }),
            ...(relay?.heartbeat && { heartbeat: relay.heartbeat }),
          }),
        (started) => started.close(),
      );

    // The edge answers every host: the platform domain is the control plane, <slug>.<domain> and
    // verified custom domains are published projects.
    await api.ready();
    const observed = observeRequests({
      health,
      metrics: new EdgeMetrics(registry),
      logger: api.log,
      // With LOG_LEVEL above info (or silent) the access log is skipped whole, not built and dropped.
      accessLog: ['info', 'debug', 'trace'].includes(config.logLevel),
    });
    // Traffic (TRAFFIC_RECORDING): this node's counts and request log, written under its node id.
    // Stopped after the edge: every request has ended, the last counts are written before the
    // database closes.
    const traffic = await parts.add(
      'traffic',
      () =>
        startTraffic(ctx, {
          nodeId,
          keys,
          onError: (error) => api.log.error({ err: error }, 'writing traffic failed'),
        }),
      (recorder) => recorder?.stop(),
    );
    // Minutes older than 48 h into hours, and retention; safe on every node at once.
    if (jobs)
      await parts.add(
        'traffic rollup',
        () =>
          startPeriodic(
            TRAFFIC_ROLLUP_EVERY_MS,
            () => rollupTraffic(ctx, config.trafficRetentionDays),
            (error) => api.log.error({ err: error }, 'traffic rollup failed'),
          ),
        (job) => job.stop(),
      );
    // deprecation.still_called: looked for hourly, sent once a day per operation whichever node runs it.
    if (jobs)
      await parts.add(
        'deprecation notices',
        () =>
          startPeriodic(
            NOTICE_EVERY_MS,
            () => sendDeprecationNotices(ctx),
            (error) => api.log.error({ err: error }, 'deprecation notices failed'),
          ),
        (job) => job.stop(),
      );
    const ticketKeys = await store.ticketKeys(clock.now());
    const edgeOverrides = typeof overrides.edge === 'function' ? await overrides.edge(ctx) : overrides.edge;
    const started = await parts.add(
      'edge',
      () =>
        bound(
          // The edge binds both; the error names the port it could not have.
          (port) => (port === config.httpsPort && port !== config.httpPort ? 'HTTPS_PORT' : 'HTTP_PORT'),
          config.httpPort,
          () =>
            startEdge({
              ctx,
              platformApp: api,
              host: config.host,
              httpPort: config.httpPort,
              tls: { port: config.httpsPort, certificates, defaultCertificate, ticketKeys },
              challenges,
              hooks: observed.hooks,
              ...(traffic && { traffic: traffic.edge }),
              onProxyError: observed.onProxyError,
              ...edgeOverrides,
            }),
        ),
      // Forwards cut by a forced drain may still wait on their origin: do not wait for them long.
      (started) => Promise.race([started.close(), new Promise((done) => setTimeout(done, 1_000).unref())]),
    );
    edge = started;
    const publicListeners = [started.http, started.https as NonNullable<typeof started.https>];

    const { metricsPort } = config;
    // The operator listener answers (readiness 503) while the public listeners drain.
    if (operator && metricsPort !== 'off')
      await parts.add('operator port', () =>
        bound(
          () => 'METRICS_PORT',
          metricsPort,
          () =>
            new Promise<void>((done, fail) => {
              operator.once('error', fail);
              operator.listen(metricsPort, config.metricsHost, () => {
                operator.off('error', fail);
                done();
              });
            }),
        ),
      );
    // Stopped first: readiness turns 503, then requests in flight finish (SHUTDOWN_TIMEOUT).
    await parts.add(
      'public connections',
      () => {},
      () => drain(api.log, publicListeners),
    );
    await parts.add(
      'readiness',
      () => {},
      () => health.startDraining(),
    );

    // Listening everywhere: now the first start may create the admin, the first project and key.
    const first =
      petstoreUrl && deprecation && petstoreSettings
        ? await bootstrapPlatform(ctx, {
            slug: 'petstore',
            name: 'Petstore API',
            originUrl: petstoreUrl,
            document: JSON.stringify(petstoreDocument(deprecation, petstoreSettings.limits)),
          })
        : undefined;
    const petstoreKey =
      petstoreDb && petstoreConfig
        ? await ensureAdminKey(
            { database: petstoreDb, db: petstoreDb.db, dialect: petstoreDb.dialect, clock },
            petstoreConfig.adminKey,
          )
        : undefined;
    const node: StartedPlatform = {
      ctx,
      app: api,
      log: api.log,
      database: platformDb,
      edge: started,
      traffic,
      health,
      httpPort: started.httpPort,
      httpsPort: started.httpsPort as number,
      operatorPort: operator ? (operator.address() as AddressInfo).port : undefined,
      petstoreUrl,
      rootPemFile,
      first,
      petstoreKey,
    };
    await overrides.announce?.(node);
    // Created and announced: from now on the first 200 (/readyz included) means sign-in works.
    health.started();
    return node;
  }

  async function drain(
    nodeLog: FastifyInstance['log'],
    listeners: Parameters<typeof drainServers>[0],
  ): Promise<void> {
    const { forced } = await drainServers(listeners, { timeoutMs: config.shutdownTimeoutMs });
    if (forced) nodeLog.warn({ timeoutMs: config.shutdownTimeoutMs }, 'drain timed out: connections cut');
  }

  return {
    start,
    stop: () => parts.stop(),
    cutConnections() {
      edge?.http.closeAllConnections();
      edge?.https?.closeAllConnections();
    },
    get log() {
      return log;
    },
  };
}
