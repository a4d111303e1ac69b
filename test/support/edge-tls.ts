import { X509Certificate } from 'node:crypto';
import { type Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Reply } from './http.ts';

/** An answer over TLS with what the handshake presented. */
export interface TlsReply extends Reply {
  /** The leaf certificate the edge presented. */
  readonly peer: X509Certificate;
  /** How many certificates the edge sent (leaf and intermediates, up to the root). */
  readonly chain: number;
  /** The connection it came on (read at once: a keep-alive agent takes it back at the end). */
  readonly socket: TLSSocket;
}

/**
 * A GET to the edge's HTTPS port for `host` (SNI `servername`, default `host`; Host `host`),
 * trusting only `ca`, on a connection of its own unless `agent` is given. `anyName` skips the
 * name check, for tests that read the answer rather than the identity.
 */
export function tlsGet(
  port: number,
  host: string,
  path: string,
  {
    ca,
    servername = host,
    agent,
    headers = {},
    anyName = false,
  }: {
    ca: string;
    servername?: string;
    agent?: Agent;
    headers?: Record<string, string>;
    anyName?: boolean;
  },
): Promise<TlsReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        servername,
        headers: { host, ...headers },
        ca,
        agent: agent ?? false,
        ...(anyName && { checkServerIdentity: () => undefined }),
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const leaf = socket.getPeerCertificate(true);
        const peer = new X509Certificate(leaf.raw);
        let chain = 0;
        const counted = new Set<string>();
        for (let cert = leaf; cert && !counted.has(cert.fingerprint256); cert = cert.issuerCertificate) {
          counted.add(cert.fingerprint256);
          chain++;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, peer, chain, socket }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
