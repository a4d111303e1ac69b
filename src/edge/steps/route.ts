import type { IncomingMessage, ServerResponse } from 'node:http';
import { previewDeployIdOf } from '../../platform/previews/index.ts';
import { type EdgeExchange, REDIRECT_LABEL } from '../edge-exchange.ts';
import { edgeErrors } from '../errors.ts';
import type { Route } from '../routing-table.ts';
import { type EdgeParts, isEncrypted, pathOf, refuse } from './parts.ts';
import { redirect, upgrade } from './redirect.ts';
import { site } from './site.ts';

/**
 * Step 3, route: the routing table's answer for the host. An unknown or removed host gets 404 and
 * never another project's content; a redirect-from domain, and a default address's pages while it
 * has a live primary, go to the redirect step; a plain HTTP request for a host with a certificate
 * is sent to HTTPS; everything else is the site's.
 */
export function route(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
): void | Promise<void> {
  const found = edge.table.lookup(exchange.host);
  return found instanceof Promise
    ? found.then((route) => serveRoute(edge, req, res, exchange, route))
    : serveRoute(edge, req, res, exchange, found);
}

function serveRoute(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
  route: Route | undefined,
): void | Promise<void> {
  if (!route) return hostNotFound(edge, req, res, exchange);
  if (route.kind === 'redirect') {
    exchange.project = REDIRECT_LABEL;
    return redirect(edge, req, res, exchange, route);
  }
  exchange.project = route.slug;
  const path = pathOf(req.url ?? '/');
  const api = path === '/api' || path.startsWith('/api/');
  if (route.primaryHost !== undefined && !api) {
    // The default address → its live primary; caching capped, the owner may change the primary.
    return redirect(edge, req, res, exchange, { to: route.primaryHost, status: 308, maxAgeSeconds: 3600 });
  }
  if (isEncrypted(req)) return site(edge, req, res, exchange, route, path, api);
  const certified = edge.deps.certificates?.has(exchange.host) ?? false;
  if (certified instanceof Promise) {
    return certified.then((yes) =>
      yes ? upgrade(edge, req, res, exchange) : site(edge, req, res, exchange, route, path, api),
    );
  }
  if (certified) return upgrade(edge, req, res, exchange);
  return site(edge, req, res, exchange, route, path, api);
}

/** 404 `host_not_found`; a preview-shaped host without a preview answers as a preview one may not see. */
function hostNotFound(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
): void | Promise<void> {
  const { host, requestId } = exchange;
  const notFound = () =>
    refuse(
      req,
      res,
      edgeErrors.error(
        'host_not_found',
        `No project is published at ${host}. Check the address; a custom domain is served once it is verified.`,
      ),
      host,
      requestId,
    );
  const previewId = previewDeployIdOf(host, edge.platformDomain);
  if (previewId === undefined) return notFound();
  return edge.previews
    .admit(req, res, host, previewId, requestId)
    .then((yes) => (yes ? notFound() : undefined));
}
