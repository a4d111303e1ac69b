import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CertificateCache } from './certificate-cache.ts';
import { createHttp2Server, type EdgeTlsServer } from './http2-server.ts';
import { TLS_SETTINGS } from './tls-settings.ts';

/**
 * The HTTPS listener: HTTP/2 and HTTP/1.1 by ALPN (http2-server.ts). The certificate comes from
 * SNI through the cache; session tickets use keys shared by every edge node, so a session resumes
 * on whichever node the client reaches next. A handshake without SNI gets the cache's fallback
 * certificate (the platform domain's), and so does one for a name the edge has no certificate for
 * (docs/decisions/edge-and-certificates.md, "TLS without SNI").
 */
export function createTlsServer(options: {
  certificates: CertificateCache;
  defaultCertificate: { certificatePem: string; privateKeyPem: string };
  ticketKeys: Buffer;
  /**
   * Every request, HTTP/2 ones adapted first (http2-server.ts): replacing the server's 'request'
   * listeners instead would skip that.
   */
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** How often node:http checks its receive deadlines (its default is 30 s). */
  connectionsCheckingInterval?: number;
  /** The deadline for an HTTP/2 request's body; HTTP/1.1 has the listener's requestTimeout. */
  receiveTimeoutMs?: number;
  /** Which bodiless HTTP/2 API requests skip node:http2's compatibility objects (http2-server.ts). */
  direct?: (req: IncomingMessage) => boolean;
}): EdgeTlsServer {
  const server: EdgeTlsServer = createHttp2Server({
    tls: {
      ...TLS_SETTINGS,
      cert: options.defaultCertificate.certificatePem,
      key: options.defaultCertificate.privateKeyPem,
      SNICallback: options.certificates.sniCallback,
    },
    handle: options.handle,
    receiveTimeoutMs: () => options.receiveTimeoutMs ?? (server.requestTimeout || 300_000),
    ...(options.direct && { direct: options.direct }),
  });
  if (options.connectionsCheckingInterval !== undefined)
    server.connectionsCheckingInterval = options.connectionsCheckingInterval;
  server.setTicketKeys(options.ticketKeys);
  // Without SNI no callback runs: the listener's own context is served, so it follows the cache's
  // fallback (the platform domain's ACME certificate once there is one).
  options.certificates.onFallback((certificate) => {
    server.setSecureContext({
      ...TLS_SETTINGS,
      cert: certificate.certificatePem,
      key: certificate.privateKeyPem,
      ticketKeys: options.ticketKeys,
    });
  });
  return server;
}
