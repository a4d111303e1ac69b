import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname as machineName } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { collectDefaultMetrics, Registry } from 'prom-client';
import {
  ConfigError,
  loadPetstoreConfig,
  loadPlatformConfig,
  petstoreAppSettings,
  petstoreWebhookSettings,
  withAllowedOrigins,
} from '../config/index.ts';
import {
  CertificateCache,
  createOperatorHandler,
  EdgeMetrics,
  NodeHealth,
  observeRequests,
  startEdge,
  startTraffic,
} from '../edge/index.ts';
import { systemClock } from '../lib/clock.ts';
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
import { buildManagementApp } from '../platform/api/app.ts';
import { SqliteBackups } from '../platform/backups.ts';
import { bootstrapPlatform } from '../platform/bootstrap.ts';
import { AcmeIssuer } from '../platform/certificates/acme-issuer.ts';
import { obtainDueCertificates, reclaimOwnLeases } from '../platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../platform/certificates/certificate-store.ts';
import { DefaultAddressCertificates } from '../platform/certificates/default-addresses.ts';
import { InternalIssuer } from '../platform/certificates/internal-issuer.ts';
import { PlatformCertificate } from '../platform/certificates/platform-certificate.ts';
import { resealSecrets } from '../platform/certificates/reseal-secrets.ts';
import { startChangeRelay } from '../platform/change-relay.ts';
import { ChangeFeed } from '../platform/changes.ts';
import { cliInstallLine } from '../platform/cli-package/serve-cli-package.ts';
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

/** How often the traffic job rolls minutes into hours and applies retention. */
const TRAFFIC_ROLLUP_EVERY_MS = 10 * 60_000;

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

const urlOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The ACME issuer from configuration; its account key is kept (sealed) in the database. */
async function acmeIssuer(
  config: ReturnType<typeof loadPlatformConfig>,
  store: CertificateStore,
): Promise<AcmeIssuer> {
  const accountKeyPem = await store.secret('acme_account_key');
  return new AcmeIssuer({
    directoryUrl: config.acmeDirectoryUrl as string,
    email: config.acmeEmail,
    ...(accountKeyPem ? { accountKeyPem } : {}),
    ...(config.acmeEabKid
      ? { externalAccountBinding: { kid: config.acmeEabKid, hmacKey: config.acmeEabHmacKey } }
      : {}),
    ...(config.acmeCaFile ? { caPem: readFileSync(config.acmeCaFile, 'utf8') } : {}),
    onAccountKey: (pem) => store.saveSecret('acme_account_key', pem, systemClock.now()),
  });
}

/**
 * Runs `listen`; a port already in use ends the start with one line naming the port and its
 * setting, and exit status 2 (a configuration problem), before anything has been created.
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
    process.stderr.write(
      code === 'EADDRINUSE'
        ? `Port ${port} is already in use (${name}): stop what listens on it, or set ${name} to a free port.\n`
        : `Port ${port} may not be used by this user (${name}): set ${name} to a port above 1023.\n`,
    );
    process.exit(2);
  }
}

/** `npm start`: the platform, with the Petstore API running as its first project's origin. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadPlatformConfig>;
  let petstoreConfig: ReturnType<typeof loadPetstoreConfig>;
  try {
    config = loadPlatformConfig(process.env);
    petstoreConfig = loadPetstoreConfig({ ...process.env, PORT: String(process.env.PETSTORE_PORT ?? 4010) });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  // On PostgreSQL each service's sessions carry its name in pg_stat_activity (unless the URL sets
  // application_name), so an operator can tell them apart.
  const where = (file: string, applicationName: string): StorageLocation =>
    config.databaseUrl
      ? { kind: 'postgres', url: config.databaseUrl, applicationName }
      : { kind: 'sqlite', file: join(resolve(config.dataDir), file), checkpoint: 'background' };
  const logger = config.logLevel === 'silent' ? false : { level: config.logLevel };

  // The Petstore: its own tables (its own SQLite file), its own listener.
  const petstoreDb: Database<PetstoreTables> = openDatabase(where('petstore.db', 'kennel-petstore'));
  await migrateToLatest(petstoreDb.db, petstoreDb.dialect, 'petstore', petstoreMigrations);
  const deprecation = { deprecatedAt: petstoreConfig.deprecatedAt, sunsetAt: petstoreConfig.sunsetAt };
  const petstoreSettings = petstoreAppSettings(petstoreConfig);
  const petstore = buildPetstoreApp({
    database: petstoreDb,
    clock: systemClock,
    deprecation,
    logger,
    ...petstoreSettings,
    // The edge proxies every request from loopback and adds the client's address.
    trustLoopbackProxy: true,
    // The Petstore's own sealing key (its own file), as when it runs alone.
    webhooks: petstoreWebhookSettings(
      petstoreConfig,
      sealingKeysOrFile(petstoreConfig.secretKeys, config.dataDir, 'petstore.key'),
    ),
  });
  // Every listener is bound before anything is created (the admin, the Petstore key): a taken
  // port must not leave a first start half done, with credentials that were never printed.
  const petstoreUrl = await bound(
    () => 'PETSTORE_PORT',
    config.petstorePort,
    () => petstore.listen({ port: config.petstorePort, host: '127.0.0.1' }),
  );

  const platformDb: Database<PlatformTables> = openDatabase(where('kennel.db', 'kennel'));
  await migrateToLatest(platformDb.db, platformDb.dialect, 'platform', platformMigrations);
  const keys = sealingKeys(config.certificateKeys, config.dataDir);
  // Webhook signing secrets are sealed with the certificate keys; the worker is woken on enqueue.
  const webhookWake = { listener: () => {} };
  const ctx: PlatformContext = {
    webhooks: { keys, wake: () => webhookWake.listener() },
    db: platformDb.db,
    dialect: platformDb.dialect,
    clock: systemClock,
    // The bundled Petstore listens on loopback; its project is allowed to point at it.
    config: withAllowedOrigins(config, petstoreUrl),
    changes: new ChangeFeed(),
    resolver: createDnsResolver({ servers: config.dnsServers, timeoutMs: 2000, tries: 2 }),
  };
  const api = buildManagementApp(ctx, { logger });
  logProcessWarnings(api.log);
  // Operations: metrics (served on the operator listener only) and this node's health.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const platformMetrics = new PlatformMetrics(registry, ctx);
  // Starting until the first start's admin and project exist: the edge answers 503 until then.
  const health = new NodeHealth({
    pingDatabase: () => sql`select 1`.execute(ctx.db),
    timeoutMs: 2_000,
    starting: true,
  });
  const checker = startPeriodic(
    config.domainCheckEveryMs,
    () => checkDueDomains(ctx),
    (error) => {
      platformMetrics.passFailed('domain_checks');
      api.log.error({ err: error }, 'domain checks failed');
    },
  );
  const nodeId = `${machineName()}:${process.pid}`;
  // Certificates: the internal CA unless an ACME directory is configured.
  // Rotation: whatever an earlier sealing key sealed is re-sealed under the first key now.
  const resealed = await resealSecrets(ctx.db, keys);
  if (resealed.resealed > 0)
    api.log.info(
      { resealed: resealed.resealed, key: keys[0]?.id, before: resealed.before },
      'secrets re-sealed',
    );
  const store = new CertificateStore(ctx.db, keys);
  const ca = await store.internalCa(systemClock.now());
  writeFileSync(join(resolve(config.dataDir), 'kennel-root.pem'), ca.certificatePem);
  const issuer = platformMetrics.countOrders(
    config.acmeDirectoryUrl ? await acmeIssuer(config, store) : new InternalIssuer(ca),
  );
  const challenges = databaseChallenges(ctx.db, () => systemClock.now());
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
          clock: systemClock,
          changes: ctx.changes,
          hostname: config.platformDomain,
          issuer,
          store,
          challenges,
          nodeId,
          leaseMs: 5 * 60_000,
        })
      : undefined;
  const certificateJob = startPeriodic(
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
  );
  // A domain just verified gets its certificate now, not at the job's next pass (Verify → served).
  ctx.changes.subscribe((change) => {
    if (change.kind === 'domains') certificateJob.wake();
  });

  const webhooks = startWebhookWorker(ctx, {
    nodeId,
    onError: (error) => api.log.error({ err: error }, 'webhook delivery failed'),
  });
  webhookWake.listener = () => webhooks.wake();

  // Several nodes on one PostgreSQL hear each other's changes (removed domains, new certificates).
  const relay = config.databaseUrl
    ? await startChangeRelay({
        url: config.databaseUrl,
        channel: 'kennel_changes',
        nodeId,
        feed: ctx.changes,
        onError: (error) => api.log.error({ err: error }, 'change relay failed'),
        onReconnect: (attempts) =>
          api.log.warn({ attempts }, 'change relay listening again: reloading routes and certificates'),
      })
    : undefined;

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
  const traffic = startTraffic(ctx, {
    nodeId,
    keys,
    onError: (error) => api.log.error({ err: error }, 'writing traffic failed'),
  });
  // Minutes older than 48 h into hours, and retention; safe on every node at once.
  const trafficJob = startPeriodic(
    TRAFFIC_ROLLUP_EVERY_MS,
    () => rollupTraffic(ctx, config.trafficRetentionDays),
    (error) => api.log.error({ err: error }, 'traffic rollup failed'),
  );
  // deprecation.still_called: looked for hourly, sent once a day per operation whichever node runs it.
  const noticesJob = startPeriodic(
    NOTICE_EVERY_MS,
    () => sendDeprecationNotices(ctx),
    (error) => api.log.error({ err: error }, 'deprecation notices failed'),
  );
  const ticketKeys = await store.ticketKeys(systemClock.now());
  const edge = await bound(
    // The edge binds both; the error names the port it could not have.
    (port) => (port === config.httpsPort && port !== config.httpPort ? 'HTTPS_PORT' : 'HTTP_PORT'),
    config.httpPort,
    () =>
      startEdge({
        ctx,
        platformApp: api,
        host: config.host,
        httpPort: config.httpPort,
        tls: {
          port: config.httpsPort,
          certificates,
          defaultCertificate,
          ticketKeys,
        },
        challenges,
        hooks: observed.hooks,
        ...(traffic && { traffic: traffic.edge }),
        onProxyError: observed.onProxyError,
      }),
  );
  const server = edge.http;
  const tlsServer = edge.https as NonNullable<typeof edge.https>;
  const operator =
    config.metricsPort === 'off'
      ? undefined
      : createServer(
          createOperatorHandler({
            registry,
            health,
            ...(platformDb.sqlite && {
              backup: new SqliteBackups({
                databases: [
                  { name: 'kennel', database: platformDb },
                  { name: 'petstore', database: petstoreDb },
                ],
                dir: join(resolve(config.dataDir), 'backups'),
                clock: systemClock,
              }),
            }),
            onError: (error) => api.log.error({ err: error }, 'collecting metrics failed'),
          }),
        );

  /**
   * Graceful shutdown: readiness turns 503 at once, the public listeners stop accepting, requests
   * in flight finish (bounded by SHUTDOWN_TIMEOUT), then jobs, connections and databases close.
   * A second signal cuts the remaining connections at once.
   */
  let stopping: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    if (stopping) {
      api.log.warn({ signal }, 'second signal: cutting the connections still open');
      server.closeAllConnections();
      tlsServer.closeAllConnections();
      return;
    }
    stopping = (async () => {
      api.log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining connections');
      health.startDraining();
      const jobs = Promise.all([
        checker.stop(),
        certificateJob.stop(),
        webhooks.stop(),
        trafficJob.stop(),
        noticesJob.stop(),
      ]);
      const { forced } = await drainServers([server, tlsServer], { timeoutMs: config.shutdownTimeoutMs });
      if (forced) api.log.warn({ timeoutMs: config.shutdownTimeoutMs }, 'drain timed out: connections cut');
      await jobs;
      // Forwards cut by a forced drain may still wait on their origin: do not wait for them long.
      await Promise.race([edge.close(), new Promise((done) => setTimeout(done, 1_000).unref())]);
      // Every request has ended: the last counts and log entries are written before the database closes.
      await traffic?.stop();
      await relay?.close();
      await api.close();
      await petstore.close();
      if (operator) await drainServers([operator], { timeoutMs: 1_000 });
      await platformDb.close();
      await petstoreDb.close();
      api.log.info({ signal }, 'stopped');
    })().then(
      () => process.exit(0),
      (error: unknown) => {
        api.log.fatal({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  const { metricsPort } = config;
  if (operator && metricsPort !== 'off')
    await bound(
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
    );
  // Listening everywhere: now the first start may create the admin, the first project and key.
  const first = await bootstrapPlatform(ctx, {
    slug: 'petstore',
    name: 'Petstore API',
    originUrl: petstoreUrl,
    document: JSON.stringify(petstoreDocument(deprecation, petstoreSettings.limits)),
  });
  const petstoreKey = await ensureAdminKey(
    { database: petstoreDb, db: petstoreDb.db, dialect: petstoreDb.dialect, clock: systemClock },
    petstoreConfig.adminKey,
  );
  const { port } = server.address() as AddressInfo;
  const address = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  const dashboard = `http://${config.platformDomain}${port === 80 ? '' : `:${port}`}/`;
  if (first) {
    // Shown once, on the terminal, never in the logs.
    const lines = [
      '',
      '  Kennel is set up. Sign in with:',
      `    email     ${first.email}`,
      first.generatedPassword
        ? `    password  ${first.generatedPassword}   (shown this once; not stored in clear)`
        : '    password  (from KENNEL_ADMIN_PASSWORD)',
      `  The ${first.project} project is deployed (origin ${petstoreUrl}).`,
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  process.stdout.write(
    `\n  Open the dashboard in a browser: ${dashboard}\n  Install the CLI anywhere: ${cliInstallLine(dashboard.replace(/\/$/, ''))}\n\n`,
  );
  if (petstoreKey) {
    // Shown once, on the terminal, never in the logs.
    process.stdout.write(
      `\n  The Petstore's first admin API key (every scope; shown this once, stored only as a hash):\n    ${petstoreKey.secret}\n  Send it as Authorization: Bearer <key>; create narrower keys with kennel keys create.\n\n`,
    );
  }
  // Created and printed: from now on the first 200 (/readyz included) means sign-in works.
  health.started();
  api.log.info(
    {
      address,
      https: `https://${config.host}:${(tlsServer.address() as AddressInfo).port}`,
      petstore: petstoreUrl,
      storage: platformDb.dialect,
      root: join(resolve(config.dataDir), 'kennel-root.pem'),
      ...(operator && { metrics: urlOf(config.metricsHost, (operator.address() as AddressInfo).port) }),
    },
    `Kennel listening on ${address}: dashboard and API at http://${config.platformDomain}:${port}, projects at http://<slug>.${config.platformDomain}:${port}`,
  );
}

await main();
