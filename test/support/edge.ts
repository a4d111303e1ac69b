import { createServer, type Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { CertificateCache, createEdgeHandler, createTlsServer, OriginProxy } from '../../src/edge/index.ts';
import { buildManagementApp } from '../../src/platform/api/app.ts';
import {
  type CertificateStore,
  databaseChallenges,
} from '../../src/platform/certificates/certificate-store.ts';
import type { DefaultAddressCertificates } from '../../src/platform/certificates/default-addresses.ts';
import { seededOriginGuard } from './origins.ts';
import type { TestPlatform } from './platform.ts';

export interface TestEdge {
  readonly management: FastifyInstance;
  readonly proxy: OriginProxy;
  readonly certificates: CertificateCache;
  readonly handler: ReturnType<typeof createEdgeHandler>;
  readonly http: Server;
  readonly https: HttpsServer;
  readonly httpPort: number;
  readonly httpsPort: number;
  close(): Promise<void>;
}

export interface StartEdgeOptions {
  /** Where certificates, ticket keys and the internal CA are read from. */
  readonly store: CertificateStore;
  /** Served to hosts without a certificate of their own. */
  readonly defaultCertificate: { certificatePem: string; privateKeyPem: string };
  /** Certificates for projects' default addresses, issued on first use (as npm start wires it). */
  readonly defaultAddresses?: DefaultAddressCertificates;
  /** The origin's time limit for response headers (default 5 s). */
  readonly responseTimeoutMs?: number;
}

const listen = (server: Server | HttpsServer) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const portOf = (server: Server | HttpsServer) => (server.address() as AddressInfo).port;

/**
 * The edge wired as src/main/platform.ts wires it: HTTP and HTTPS listeners on free loopback
 * ports, the management app at the platform domain, certificates by SNI from `store`, http-01
 * answers from the database, HTTP redirected to the HTTPS port for hosts with a certificate.
 */
export async function startTestEdge(p: TestPlatform, options: StartEdgeOptions): Promise<TestEdge> {
  const management = buildManagementApp(p.ctx);
  await management.ready();
  const certificates = new CertificateCache(options.store, options.defaultCertificate, {
    platformDomain: p.ctx.config.platformDomain,
    ...(options.defaultAddresses && { defaultAddresses: options.defaultAddresses }),
  });
  const proxy = new OriginProxy({
    guard: await seededOriginGuard(p.ctx),
    platformDomain: p.ctx.config.platformDomain,
    connectTimeoutMs: 1000,
    responseTimeoutMs: options.responseTimeoutMs ?? 5000,
  });
  const http = createServer();
  await listen(http);
  // The handler needs the HTTPS port (for redirects), known only once the TLS listener listens.
  const https = createTlsServer({
    certificates,
    defaultCertificate: options.defaultCertificate,
    ticketKeys: await options.store.ticketKeys(p.clock.now()),
    handle: () => {},
  });
  await listen(https);
  const handler = createEdgeHandler({
    ctx: p.ctx,
    platformApp: management,
    proxy,
    certificates,
    challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
    httpsPort: portOf(https),
  });
  http.on('request', handler.handle);
  https.removeAllListeners('request');
  https.on('request', handler.handle);
  return {
    management,
    proxy,
    certificates,
    handler,
    http,
    https,
    httpPort: portOf(http),
    httpsPort: portOf(https),
    async close() {
      http.close();
      http.closeAllConnections();
      https.close();
      handler.close();
      await proxy.close();
      await management.close();
    },
  };
}
