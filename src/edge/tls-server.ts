import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { CertificateCache } from './certificate-cache.ts';
import { TLS_SETTINGS } from './tls-settings.ts';

/**
 * The HTTPS listener: the certificate comes from SNI through the cache; session tickets use keys
 * shared by every edge node, so a session resumes on whichever node the client reaches next.
 * A handshake without SNI gets the cache's fallback certificate (the platform domain's), and so
 * does one for a name the edge has no certificate for (docs/decisions.md, "TLS without SNI").
 */
export function createTlsServer(options: {
  certificates: CertificateCache;
  defaultCertificate: { certificatePem: string; privateKeyPem: string };
  ticketKeys: Buffer;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** How often node:http checks its receive deadlines (its default is 30 s). */
  connectionsCheckingInterval?: number;
}): Server {
  const server = createServer(
    {
      ...TLS_SETTINGS,
      ...(options.connectionsCheckingInterval !== undefined && {
        connectionsCheckingInterval: options.connectionsCheckingInterval,
      }),
      cert: options.defaultCertificate.certificatePem,
      key: options.defaultCertificate.privateKeyPem,
      SNICallback: options.certificates.sniCallback,
    },
    options.handle,
  );
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
