import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRAFFIC_UNMATCHED } from '../../platform/traffic/index.ts';
import { REFERENCE_PREFIX } from '../../web/reference/index.ts';
import { CHANGELOG_FEED_PATH, CHANGELOG_PATH } from '../changelog.ts';
import { DOCUMENT_CORS_HEADERS, documentPreflight, isPreflight, preflight, sendPreflight } from '../cors.ts';
import type { EdgeExchange } from '../edge-exchange.ts';
import { edgeErrors } from '../errors.ts';
import { sendError } from '../json-answer.ts';
import { originForbidden } from '../proxy.ts';
import { sendReferencePage } from '../published-site.ts';
import type { ProjectRoute } from '../routing-table.ts';
import { forwardApi, tagTraffic } from './api.ts';
import { authorityOf, type EdgeParts, isEncrypted, refuse } from './parts.ts';

/**
 * Step 5, site: a project's published site — its API under /api/ (forwarded to the origin, see
 * api.ts), its reference's files, its changelog, its document and its reference page. A preview's
 * address first asks the preview gate whether the visitor may see it.
 */
export function site(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
  route: ProjectRoute,
  path: string,
  api: boolean,
  admitted = false,
): void | Promise<void> {
  const { host, requestId } = exchange;
  if (route.preview && !admitted) {
    return edge.previews
      .admit(req, res, host, route.deployId, requestId)
      .then((yes) => (yes ? site(edge, req, res, exchange, route, path, api, true) : undefined));
  }
  if (api && route.originRefused) {
    // Its team has no grant for the private origin (revoked, or never given): not forwarded.
    tagTraffic(edge, req, exchange, route, TRAFFIC_UNMATCHED, path, undefined);
    sendError(res, originForbidden(), requestId);
    return;
  }
  if (api) {
    // With a CORS policy on, the edge answers preflights itself (cors.ts); off, they go on as before.
    const answer = preflight(route.cors, req.method, req.headers);
    if (answer) return sendPreflight(res, answer, requestId);
    const rules = edge.lifecycle.get(route);
    return rules instanceof Promise
      ? rules.then((found) => forwardApi(edge, req, res, exchange, route, path, found))
      : forwardApi(edge, req, res, exchange, route, path, rules);
  }
  // The reference's own files: a reserved path outside /api, never proxied (see web/reference).
  if (path.startsWith(REFERENCE_PREFIX)) {
    if (edge.reference.serve(req, res, path, { 'x-request-id': requestId })) return;
    refuse(
      req,
      res,
      edgeErrors.error(
        'page_not_found',
        'No such file: the reference may have been updated; reload the page.',
      ),
      host,
      requestId,
    );
    return;
  }
  return servePublished(edge, req, res, exchange, route, path);
}

/** The changelog, the OpenAPI document (JSON and YAML) and the reference page at `/`. */
async function servePublished(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
  route: ProjectRoute,
  path: string,
): Promise<void> {
  const { host, requestId } = exchange;
  if (path === CHANGELOG_PATH || path === CHANGELOG_FEED_PATH) {
    const origin = `${isEncrypted(req) ? 'https' : 'http'}://${authorityOf(req, host)}`;
    if (await edge.changelogs.send(req, res, route, path, origin, { 'x-request-id': requestId })) return;
  }
  const published = await edge.documents.get(route, host, `https://${host}${edge.httpsSuffix}/api`);
  if (published && (path === '/openapi.json' || path === '/openapi.yaml')) {
    // Any page may load the document (cors.ts); its preflight is answered here.
    if (isPreflight(req.method, req.headers)) {
      res.writeHead(204, { ...documentPreflight(req.headers), 'x-request-id': requestId });
      res.end();
      return;
    }
    // Revalidated like the page: a new deploy changes the document and its ETag.
    (path.endsWith('.json') ? published.json : published.yaml).send(req, res, {
      ...DOCUMENT_CORS_HEADERS,
      'cache-control': 'no-cache',
      'x-request-id': requestId,
    });
    return;
  }
  if (published && path === '/') {
    if (route.preview) return edge.previewPages.send(req, res, published, route.deployId, requestId);
    sendReferencePage(req, res, published, requestId);
    return;
  }
  refuse(
    req,
    res,
    edgeErrors.error(
      'page_not_found',
      `There is no page at ${path}. The API is under /api/, its reference at /.`,
    ),
    host,
    requestId,
  );
}
