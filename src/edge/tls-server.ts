import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { CertificateCache } from './certificate-cache.ts';

/**
 * What every TLS context of the edge offers (the listener's own and each SNI certificate's): TLS
 * 1.2 and 1.3 only, and on TLS 1.2 only forward-secret key exchange (ECDHE) with AEAD ciphers
 * (Mozilla's "intermediate" list without DHE). No CBC suite (LUCKY13, the padding oracles) and no
 * RSA key exchange (no forward secrecy, ROBOT). The server's order wins, so a client offering CBC
 * first still gets GCM. Both ECDSA (the internal CA, Let's Encrypt's ECDSA chains) and RSA
 * certificates are covered.
 */
export const TLS_SETTINGS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const;

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
