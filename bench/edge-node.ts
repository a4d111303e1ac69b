import { createServer } from 'node:http';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { loadPlatformConfig } from '../src/config/index.ts';
import {
  CertificateCache,
  EdgeMetrics,
  NodeHealth,
  observeRequests,
  startEdge,
  startTraffic,
} from '../src/edge/index.ts';
import { systemClock } from '../src/lib/clock.ts';
import { parseSealingKey } from '../src/lib/sealed-box.ts';
import { buildPlatformApp } from '../src/main/platform-app.ts';
import { CertificateStore, databaseChallenges } from '../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../src/platform/certificates/internal-issuer.ts';
import { ChangeFeed } from '../src/platform/changes.ts';
import type { PlatformContext } from '../src/platform/context.ts';
import type { PlatformTables } from '../src/platform/db-schema.ts';
import { createDnsResolver } from '../src/platform/domains/dns-check.ts';
import { openDatabase } from '../src/storage/index.ts';
import { seededOriginGuard } from '../test/support/origins.ts';

/**
 * One Kennel edge node for the `edge` and `tls` suites, run as its own pinned process:
 *
 *   PORT=… HTTPS_PORT=… STATS_PORT=… EDGE_DATABASE=<sqlite file | postgres URL> EDGE_CERT_KEY=<sealing key>
 *     node --expose-gc bench/edge-node.ts
 *
 * It is wired like src/main/platform.ts wires the edge (the same handler and operations hooks, proxy,
 * routing table, certificate cache and TLS listener over the same database), without the jobs, the Petstore and
 * the management API's listener: the database is prepared by the suite before the node starts.
 * STATS_PORT answers `GET /memory` with process.memoryUsage() after a full GC, for the memory
 * figures, and `GET /traffic` with the traffic recorder's held series and callers; it is the
 * benchmark's, not the edge's. EDGE_TRAFFIC=on records traffic as npm start does (TRAFFIC_*
 * settings from the environment); off (the default) records nothing.
 */
const env = process.env;
const required = (name: string): string => {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const databaseUrl = required('EDGE_DATABASE');
const database = openDatabase<PlatformTables>(
  /^postgres(ql)?:\/\//.test(databaseUrl)
    ? { kind: 'postgres', url: databaseUrl }
    : { kind: 'sqlite', file: databaseUrl },
);
const config = loadPlatformConfig({
  PLATFORM_DOMAIN: env.PLATFORM_DOMAIN ?? 'platform.test',
  LOG_LEVEL: 'silent',
  TRAFFIC_RECORDING: env.EDGE_TRAFFIC === 'on' ? 'on' : 'off',
  ...(env.TRAFFIC_FLUSH_SECONDS && { TRAFFIC_FLUSH_SECONDS: env.TRAFFIC_FLUSH_SECONDS }),
  ...(env.TRAFFIC_MAX_CALLERS && { TRAFFIC_MAX_CALLERS: env.TRAFFIC_MAX_CALLERS }),
});
const ctx: PlatformContext = {
  db: database.db,
  dialect: database.dialect,
  clock: systemClock,
  config,
  changes: new ChangeFeed(),
  resolver: createDnsResolver({ servers: config.dnsServers, timeoutMs: 2000, tries: 2 }),
};
const sealingKey = parseSealingKey(required('EDGE_CERT_KEY'));
const store = new CertificateStore(ctx.db, [sealingKey]);
const ca = await store.internalCa(systemClock.now());
const defaultCertificate = await new InternalIssuer(ca).issue(config.platformDomain);
const certificates = new CertificateCache(store, defaultCertificate);
// The `signin` suite floods sign-ins: SIGN_IN_LIMITS=off lifts the attempt limits so every
// attempt is checked (hashed), and SIGN_IN_THREADS / SIGN_IN_NICE set the hashing threads.
const numberOf = (name: string) => (env[name] ? Number(env[name]) : undefined);
const api = buildPlatformApp(ctx, {
  logger: false,
  signIn: {
    ...(env.SIGN_IN_LIMITS === 'off' && {
      limits: { accountFailures: Number.MAX_SAFE_INTEGER, addressAttempts: Number.MAX_SAFE_INTEGER },
    }),
    hasher: { threads: numberOf('SIGN_IN_THREADS'), nice: numberOf('SIGN_IN_NICE') },
  },
});
await api.ready();
// The operations hooks as in production (metrics per request, health); the access log follows
// LOG_LEVEL, silent here as nginx's access_log is off in the same suite.
const observed = observeRequests({
  health: new NodeHealth({ pingDatabase: () => sql`select 1`.execute(ctx.db), timeoutMs: 2_000 }),
  metrics: new EdgeMetrics(new Registry()),
  logger: api.log,
  accessLog: false,
});
const traffic = startTraffic(ctx, {
  nodeId: 'bench',
  keys: [sealingKey],
  onError: (error) => api.log.error({ err: error }, 'writing traffic failed'),
});
// The HTTP listener last (startEdge binds HTTPS first): the suite waits for it to answer.
const edge = await startEdge({
  ctx,
  platformApp: api,
  host: '127.0.0.1',
  httpPort: Number(required('PORT')),
  tls: {
    port: Number(required('HTTPS_PORT')),
    certificates,
    defaultCertificate,
    ticketKeys: await store.ticketKeys(systemClock.now()),
  },
  challenges: databaseChallenges(ctx.db, () => systemClock.now()),
  hooks: observed.hooks,
  ...(traffic && { traffic: traffic.edge }),
  onProxyError: observed.onProxyError,
  // The bench's origin runs on loopback: allowed as the operator lists its own origins.
  guard: await seededOriginGuard(ctx),
});
const stats = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  if (req.url === '/traffic') {
    const recorder = traffic?.recorder;
    res.end(JSON.stringify({ series: recorder?.seriesCount ?? 0, callers: recorder?.callerEntries ?? 0 }));
    return;
  }
  (globalThis as { gc?: () => void }).gc?.();
  res.end(JSON.stringify(process.memoryUsage()));
});
await new Promise<void>((resolve) => stats.listen(Number(required('STATS_PORT')), '127.0.0.1', resolve));

const stop = () => {
  stats.close();
  void edge
    .close()
    .then(() => traffic?.stop())
    .then(() => api.close())
    .then(() => database.close())
    .finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
