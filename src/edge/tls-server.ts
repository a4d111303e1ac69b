import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { CertificateCache } from './certificate-cache.ts';

/**
 * The HTTPS listener: the certificate comes from SNI through the cache; session tickets use keys
 * shared by every edge node, so a session resumes on whichever node the client reaches next.
 */
export function createTlsServer(options: {
  certificates: CertificateCache;
  defaultCertificate: { certificatePem: string; privateKeyPem: string };
  ticketKeys: Buffer;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
}): Server {
  const server = createServer(
    {
      cert: options.defaultCertificate.certificatePem,
      key: options.defaultCertificate.privateKeyPem,
      SNICallback: options.certificates.sniCallback,
      minVersion: 'TLSv1.2',
    },
    options.handle,
  );
  server.setTicketKeys(options.ticketKeys);
  return server;
}
