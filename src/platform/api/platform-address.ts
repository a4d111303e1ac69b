import type { FastifyRequest } from 'fastify';
import { cameOverHttps } from './auth.ts';

/**
 * The platform's public address as the caller reached it (`http://localhost:8080`,
 * `https://kennel.example.com`): the links the API hands out (invitations, password resets) open
 * the dashboard there. The edge sends the management app only requests whose Host is the
 * platform domain, so the Host header is kept when it names PLATFORM_DOMAIN (its port is the one
 * the client used, which a port mapping may change); any other Host (a direct call to the app)
 * is replaced by PLATFORM_DOMAIN and the port the request came in on, so a forged Host never
 * lands in a link.
 */
export function platformAddress(request: FastifyRequest, platformDomain: string): string {
  const https = cameOverHttps(request);
  const scheme = https ? 'https' : 'http';
  const host = (request.headers.host ?? '').toLowerCase();
  const match = /^([^:[\]]+)(?::(\d{1,5}))?$/.exec(host);
  if (match?.[1] === platformDomain) return `${scheme}://${host}`;
  const port = request.raw.socket?.localPort;
  const defaultPort = https ? 443 : 80;
  return `${scheme}://${platformDomain}${port && port !== defaultPort ? `:${port}` : ''}`;
}
