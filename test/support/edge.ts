import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import {
  CertificateCache,
  createEdgeHandler,
  type EdgeOptions,
  type EdgeTlsServer as HttpsServer,
  type OriginGuard,
  OriginProxy,
  type StartedEdge,
  type StartedTraffic,
  startEdge,
  startTraffic,
} from '../../src/edge/index.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import {
  type CertificateStore,
  databaseChallenges,
} from '../../src/platform/certificates/certificate-store.ts';
import type { DefaultAddressCertificates } from '../../src/platform/certificates/default-addresses.ts';
import type { Issuer } from '../../src/platform/certificates/issuer.ts';
import type { PlatformContext } from '../../src/platform/context.ts';
import {
  type EdgeSite,
  type InternalCertificates,
  internalCertificates,
  startEdgeSite,
} from './edge-site.ts';
import { listenOnLoopback } from './http.ts';
import { seededOriginGuard } from './origins.ts';
import { issueDueCertificates, type TestPlatform } from './platform.ts';

export interface TestEdge {
  readonly management: FastifyInstance;
  readonly proxy: OriginProxy;
  readonly certificates: CertificateCache;
  readonly handler: ReturnType<typeof createEdgeHandler>;
  readonly http: Server;
  readonly https: HttpsServer;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** Traffic recording (undefined when TRAFFIC_RECORDING=off). */
  readonly traffic: StartedTraffic | undefined;
  /** Writes the traffic recorded so far (counts, callers, request log) now. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Traffic as a node records it, rows under `nodeId`; a failed flush fails the test's `flush()`
 * (the timers' own failures are thrown away: a test flushes on demand).
 */
function testTraffic(p: TestPlatform, nodeId: string): StartedTraffic | undefined {
  return startTraffic(p.ctx, {
    nodeId,
    keys: p.ctx.webhooks?.keys ?? [],
    onError: () => {},
  });
}

/**
 * Where certificates, ticket keys and the internal CA are read from (`store`), and the certificate
 * served to hosts without one of their own; or, without them, the internal CA's
 * (test/support/edge-site.ts `internalCertificates`) with a default certificate for
 * `certificateFor` (default: the platform domain).
 */
export type StartEdgeOptions = (
  | {
      readonly store: CertificateStore;
      readonly defaultCertificate: { certificatePem: string; privateKeyPem: string };
    }
  | { readonly store?: undefined; readonly certificateFor?: string }
) & {
  /** Certificates for projects' default addresses, issued on first use (as npm start wires it). */
  readonly defaultAddresses?: DefaultAddressCertificates;
  /** The origin's time limit for response headers (default 5 s). */
  readonly responseTimeoutMs?: number;
  /** The node id its traffic rows carry (default `edge-1`). */
  readonly nodeId?: string;
};

/**
 * The edge as src/main/platform.ts starts it (`startEdge`): HTTP and HTTPS listeners on free
 * loopback ports, the management app at the platform domain, certificates by SNI from `store`,
 * http-01 answers from the database, HTTP redirected to the HTTPS port for hosts with a
 * certificate. Origins of the projects seeded before it starts are allowed (test/support/origins.ts).
 */
export async function startTestEdge(p: TestPlatform, options: StartEdgeOptions = {}): Promise<TestEdge> {
  const { store, defaultCertificate } = options.store
    ? { store: options.store, defaultCertificate: options.defaultCertificate }
    : await internalCertificates(p, options.certificateFor);
  const management = buildPlatformApp(p.ctx);
  await management.ready();
  const certificates = new CertificateCache(store, defaultCertificate, {
    platformDomain: p.ctx.config.platformDomain,
    ...(options.defaultAddresses && { defaultAddresses: options.defaultAddresses }),
  });
  const traffic = testTraffic(p, options.nodeId ?? 'edge-1');
  const edge = await startEdge({
    ctx: p.ctx,
    platformApp: management,
    ...(traffic && { traffic: traffic.edge }),
    host: '127.0.0.1',
    httpPort: 0,
    tls: {
      port: 0,
      certificates,
      defaultCertificate,
      ticketKeys: await store.ticketKeys(p.clock.now()),
    },
    challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
    guard: await seededOriginGuard(p.ctx),
    connectTimeoutMs: 1000,
    responseTimeoutMs: options.responseTimeoutMs ?? 5000,
  });
  return {
    management,
    proxy: edge.proxy,
    certificates,
    handler: edge.handler,
    http: edge.http,
    https: edge.https as HttpsServer,
    httpPort: edge.httpPort,
    httpsPort: edge.httpsPort as number,
    traffic,
    flush: async () => traffic?.flush(),
    async close() {
      edge.http.closeAllConnections();
      edge.https?.closeAllConnections();
      await edge.close();
      await traffic?.stop();
      await management.close();
    },
  };
}

export interface PlainEdge {
  /** The loopback port of its plain HTTP listener. */
  readonly port: number;
  /** Traffic recording (undefined when TRAFFIC_RECORDING=off). */
  readonly traffic: StartedTraffic | undefined;
  /** Writes the traffic recorded so far (counts, callers, request log) now. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The edge's request handler alone (published sites and references, the management app at the
 * platform domain) on a plain HTTP listener on a free loopback port: for tests of what a site
 * serves, without TLS or certificates. Origins of the projects seeded before it starts are allowed.
 */
export async function startPlainEdge(
  p: TestPlatform,
  { responseTimeoutMs = 5000, nodeId = 'edge-1' }: { responseTimeoutMs?: number; nodeId?: string } = {},
): Promise<PlainEdge> {
  const management = buildPlatformApp(p.ctx);
  await management.ready();
  const proxy = new OriginProxy({
    guard: await seededOriginGuard(p.ctx),
    connectTimeoutMs: 1000,
    responseTimeoutMs,
  });
  const traffic = testTraffic(p, nodeId);
  const handler = createEdgeHandler({
    ctx: p.ctx,
    platformApp: management,
    proxy,
    ...(traffic && { traffic: traffic.edge }),
  });
  const server = createServer(handler.handle);
  const port = await listenOnLoopback(server);
  return {
    port,
    traffic,
    flush: async () => traffic?.flush(),
    async close() {
      server.close();
      handler.close();
      await proxy.close();
      await traffic?.stop();
      await management.close();
    },
  };
}

export interface HttpEdge {
  readonly edge: StartedEdge;
  /** The management app it serves at the platform domain. */
  readonly management: FastifyInstance;
  /** The loopback port of its HTTP listener. */
  readonly port: number;
  /** Cuts open connections, stops the listeners, then the management app. */
  close(): Promise<void>;
}

/**
 * The edge as `startEdge` builds it, HTTP only, on a free loopback port, with the management app
 * at the platform domain: for tests of the listeners themselves (deadlines, framing, health).
 * `guard` defaults to the origins of the projects seeded before it starts (test/support/origins.ts);
 * `'grants'` leaves the edge its own guard, read from the origin grants as `npm start` does.
 */
export async function startHttpEdge(
  ctx: PlatformContext,
  {
    guard,
    ...options
  }: Omit<EdgeOptions, 'ctx' | 'platformApp' | 'host' | 'httpPort' | 'guard'> & {
    guard?: OriginGuard | 'grants';
  } = {},
): Promise<HttpEdge> {
  const management = buildPlatformApp(ctx);
  await management.ready();
  const edge = await startEdge({
    ...options,
    ctx,
    platformApp: management,
    host: '127.0.0.1',
    httpPort: 0,
    ...(guard !== 'grants' && { guard: guard ?? (await seededOriginGuard(ctx)) }),
  });
  return {
    edge,
    management,
    port: edge.httpPort,
    async close() {
      edge.http.closeAllConnections();
      await edge.close();
      await management.close();
    },
  };
}

/** A platform with its projects (startEdgeSite) served by a TLS edge with the internal CA's certificates. */
export interface TlsEdgeSite extends EdgeSite {
  readonly certificates: InternalCertificates;
  readonly edge: TestEdge;
  /** The certificate job once on this platform (issueDueCertificates), from the internal CA unless `issuer`. */
  obtain(options?: { issuer?: Issuer; nodeId?: string }): Promise<string[]>;
}

/**
 * startEdgeSite, then startTestEdge on it with `internalCertificates` (default certificate for the
 * platform domain): the fixture of the suites about certificates and redirects. Its close stops the
 * edge, then the platform.
 */
export async function startTlsEdgeSite(
  dialect: Parameters<typeof startEdgeSite>[0],
  {
    responseTimeoutMs,
    ...options
  }: NonNullable<Parameters<typeof startEdgeSite>[1]> & { responseTimeoutMs?: number } = {},
): Promise<TlsEdgeSite> {
  const site = await startEdgeSite(dialect, options);
  try {
    const certificates = await internalCertificates(site.p);
    const edge = await startTestEdge(site.p, {
      ...certificates,
      ...(responseTimeoutMs !== undefined && { responseTimeoutMs }),
    });
    return {
      ...site,
      certificates,
      edge,
      obtain: ({ issuer = certificates.issuer, nodeId } = {}) =>
        issueDueCertificates(site.p, { issuer, store: certificates.store, ...(nodeId && { nodeId }) }),
      async close() {
        await edge.close();
        await site.close();
      },
    };
  } catch (error) {
    await site.close();
    throw error;
  }
}
