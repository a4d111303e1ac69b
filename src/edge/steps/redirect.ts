import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EdgeExchange, hostOf } from '../edge-exchange.ts';
import { type EdgeParts, isEncrypted, portSuffix, redirectTo } from './parts.ts';

/** Where a redirect goes: a redirect-from domain's target, or a default address's live primary. */
export interface RedirectRule {
  readonly to: string;
  readonly status: number;
  /** Caps how long clients keep it (the primary may change); none: the status's default. */
  readonly maxAgeSeconds?: number;
}

/**
 * Step 4, redirect: only the hostname changes; path and query are kept, and so are scheme and
 * port — except from HTTP to a target with a certificate, which goes straight to its HTTPS
 * address (one hop, not two). From HTTP to a target without one, the host's own upgrade to HTTPS
 * comes first.
 */
export async function redirect(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
  rule: RedirectRule,
): Promise<void> {
  const { requestId } = exchange;
  const url = req.url ?? '/';
  const samePort = portSuffix(req);
  const { to, status, maxAgeSeconds } = rule;
  if (isEncrypted(req)) {
    redirectTo(res, requestId, status, `https://${to}${samePort}${url}`, maxAgeSeconds);
  } else if (await hasCertificate(edge, to)) {
    redirectTo(res, requestId, status, `https://${to}${edge.httpsSuffix}${url}`, maxAgeSeconds);
  } else if (await hasCertificate(edge, hostOf(req))) {
    upgrade(edge, req, res, exchange);
  } else {
    redirectTo(res, requestId, status, `http://${to}${samePort}${url}`, maxAgeSeconds);
  }
}

/** A plain HTTP request for a host with a certificate: 308 to the same URL over HTTPS. */
export function upgrade(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
): void {
  redirectTo(res, exchange.requestId, 308, `https://${hostOf(req)}${edge.httpsSuffix}${req.url ?? '/'}`);
}

async function hasCertificate(edge: EdgeParts, host: string): Promise<boolean> {
  return (await edge.deps.certificates?.has(host)) === true;
}
