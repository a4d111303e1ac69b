import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import {
  type ClientError,
  unreadableRequestError,
  writeOnSocket,
} from '../lib/http-api/receive-deadlines.ts';
import type { PlatformContext } from '../platform/context.ts';
import type { CertificateCache } from './certificate-cache.ts';
import { createEdgeHandler, type EdgeHooks, hostOf } from './edge-server.ts';
import { edgeErrors } from './errors.ts';
import type { EdgeTlsServer } from './http2-server.ts';
import { type OriginGuard, OriginProxy, originGuard, type ProxyOptions } from './proxy.ts';
import type { RoutingTable } from './routing-table.ts';
import { createTlsServer } from './tls-server.ts';
import type { EdgeTraffic } from './traffic/edge-traffic.ts';

export interface EdgeOptions {
  readonly ctx: PlatformContext;
  /** The control plane's app, served at the platform domain. */
  readonly platformApp: FastifyInstance;
  readonly host: string;
  readonly httpPort: number;
  /** HTTPS with certificates by SNI; none: HTTP only. */
  readonly tls?: {
    readonly port: number;
    readonly certificates: CertificateCache;
    readonly defaultCertificate: { certificatePem: string; privateKeyPem: string };
    readonly ticketKeys: Buffer;
  };
  /** http-01 answers, for any host. */
  readonly challenges?: { answer(token: string): Promise<string | undefined> };
  readonly hooks?: EdgeHooks;
  /** Traffic recording (src/edge/traffic/index.ts `startTraffic`); none: off. */
  readonly traffic?: EdgeTraffic;
  readonly onProxyError?: ProxyOptions['onError'];
  /**
   * Which origins may be reached; by default public addresses and every origin a team was granted
   * (KENNEL_ORIGIN_ALLOWLIST included), read with the routing table, whose routes refuse a
   * project whose own team has no grant for its private origin.
   */
  readonly guard?: OriginGuard;
  readonly connectTimeoutMs?: number;
  readonly responseTimeoutMs?: number;
}

export interface StartedEdge {
  readonly handler: ReturnType<typeof createEdgeHandler>;
  readonly proxy: OriginProxy;
  readonly http: Server;
  /** HTTP/2 and HTTP/1.1 by ALPN (http2-server.ts). */
  readonly https: EdgeTlsServer | undefined;
  readonly httpPort: number;
  readonly httpsPort: number | undefined;
  /** Stops listening (connections open are not cut: drain them first), then the proxy. */
  close(): Promise<void>;
}

/**
 * The one way an edge node is put together, for `npm start`, the tests and the benchmarks: the
 * origin proxy under the operator's address policy, the request handler, and the HTTP and HTTPS
 * listeners with the configured receive deadlines and an Error body for requests node:http could
 * not read. The HTTPS listener is bound first: the handler redirects to its real port.
 */
export async function startEdge(options: EdgeOptions): Promise<StartedEdge> {
  const { ctx, tls } = options;
  // The handler's routing table is made below; until it has read the grants, the allowlist alone.
  let table: RoutingTable | undefined;
  const granted = { allowlist: ctx.config.originAllowlist };
  const proxy = new OriginProxy({
    guard: options.guard ?? originGuard(() => table?.grantedOrigins ?? granted),
    platformDomain: ctx.config.platformDomain,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    responseTimeoutMs: options.responseTimeoutMs ?? 30_000,
    ...(options.onProxyError && { onError: options.onProxyError }),
  });
  // node:http looks for requests past their deadlines this often (30 s by default, which would
  // stretch a 10 s headers deadline to 40 s).
  const connectionsCheckingInterval = Math.max(
    50,
    Math.min(1_000, Math.floor(ctx.config.headersTimeoutMs / 4)),
  );
  const http = createServer({ connectionsCheckingInterval });
  // The HTTPS listener is bound before the handler exists (it needs the real port); its requests
  // go through http2-server.ts's adapter to whichever handler is set here.
  let handleTls: (req: IncomingMessage, res: ServerResponse) => void = () => {};
  const https = tls
    ? createTlsServer({
        certificates: tls.certificates,
        defaultCertificate: tls.defaultCertificate,
        ticketKeys: tls.ticketKeys,
        handle: (req, res) => handleTls(req, res),
        connectionsCheckingInterval,
        receiveTimeoutMs: ctx.config.receiveTimeoutMs,
        // Bodiless h2 API requests skip node:http2's compatibility objects, but not the control
        // plane's: its Fastify app needs them (http2-server.ts).
        direct: (req) => hostOf(req) !== ctx.config.platformDomain,
      })
    : undefined;
  for (const listener of https ? [http, https] : [http]) {
    listener.headersTimeout = Math.min(ctx.config.headersTimeoutMs, ctx.config.receiveTimeoutMs);
    listener.requestTimeout = ctx.config.receiveTimeoutMs;
    listener.on('clientError', answerUnreadable(ctx));
  }
  if (https && tls) await listen(https, tls.port, options.host);
  const httpsPort = https ? (https.address() as AddressInfo).port : undefined;
  const handler = createEdgeHandler({
    ctx,
    platformApp: options.platformApp,
    proxy,
    ...(tls && { certificates: tls.certificates }),
    ...(options.challenges && { challenges: options.challenges }),
    ...(httpsPort !== undefined && { httpsPort }),
    ...(options.hooks && { hooks: options.hooks }),
    ...(options.traffic && { traffic: options.traffic }),
  });
  table = handler.table;
  handleTls = handler.handle;
  http.on('request', handler.handle);
  await listen(http, options.httpPort, options.host);
  return {
    handler,
    proxy,
    http,
    https,
    httpPort: (http.address() as AddressInfo).port,
    httpsPort,
    async close() {
      http.close();
      https?.close();
      handler.close();
      await proxy.close();
    },
  };
}

function listen(server: Server | EdgeTlsServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** node:http's `clientError` on an edge listener: the Error body, as the apps behind it answer. */
function answerUnreadable(ctx: PlatformContext) {
  const timeouts = { headersMs: ctx.config.headersTimeoutMs, requestMs: ctx.config.receiveTimeoutMs };
  return (error: ClientError, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // A request whose body was under way has its response object on the socket (node:http's own
    // bookkeeping); its answer may already have begun, and then only cutting is left.
    const current = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    if (current?.headersSent) {
      socket.destroy();
      return;
    }
    const underway = (current as { req?: IncomingMessage } | undefined)?.req?.complete === false;
    writeOnSocket(socket, unreadableRequestError(error, edgeErrors, timeouts, underway), randomUUID());
  };
}
