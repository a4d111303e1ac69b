import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EdgeExchange, PLATFORM_LABEL } from '../edge-exchange.ts';
import { platformAllowsPlainHttp } from '../platform-https.ts';
import { type EdgeParts, isEncrypted, redirectTo } from './parts.ts';

/**
 * Step 2, platform: the control plane, at the platform domain itself. Plain HTTP is sent to HTTPS
 * (308, path and query kept) unless the platform domain is `localhost` or a name reserved for
 * tests (platform-https.ts: over HTTP a project's page could plant the session cookie), and always
 * once it has a stored (ACME) certificate — the internal default is never stored, so local HTTP
 * keeps working (docs/decisions/edge-and-certificates.md); then HTTPS answers carry HSTS for a
 * year — not includeSubDomains: the projects' default addresses under the platform domain have no
 * such certificate.
 */
export function platform(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
): void | Promise<void> {
  exchange.project = PLATFORM_LABEL;
  const secured = edge.deps.certificates?.has(exchange.host) ?? false;
  if (secured instanceof Promise) return secured.then((yes) => servePlatform(edge, req, res, exchange, yes));
  servePlatform(edge, req, res, exchange, secured);
}

function servePlatform(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
  secured: boolean,
): void {
  const { host, requestId } = exchange;
  const httpsOnly = secured || (edge.deps.httpsPort !== undefined && !platformAllowsPlainHttp(host));
  if (httpsOnly && !isEncrypted(req)) {
    redirectTo(res, requestId, 308, `https://${host}${edge.httpsSuffix}${req.url ?? '/'}`);
    return;
  }
  if (secured) res.setHeader('strict-transport-security', 'max-age=31536000');
  // The control plane logs and answers with the edge's request id.
  req.headers['x-request-id'] = requestId;
  res.setHeader('x-request-id', requestId);
  edge.deps.platformApp.routing(req, res);
}
