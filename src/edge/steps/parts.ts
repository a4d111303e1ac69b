import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '../../lib/api-error.ts';
import { escapeHtml } from '../../lib/html.ts';
import type { ReferenceAssets } from '../../web/reference/index.ts';
import type { ChangelogCache } from '../changelog.ts';
import type { EdgeDeps } from '../edge-exchange.ts';
import { sendError } from '../json-answer.ts';
import type { LifecycleCache } from '../lifecycle.ts';
import type { PreviewGate } from '../preview-access.ts';
import type { PreviewPages } from '../preview-banner.ts';
import type { DocumentCache } from '../published-site.ts';
import type { RoutingTable } from '../routing-table.ts';

/**
 * What the edge's steps share: the handler's dependencies and the caches createEdgeHandler builds
 * once. A step is a function of these, the request, its response and its exchange; it answers,
 * or hands the request to the next step. Steps stay synchronous while what they read is cached,
 * and return a promise only when they had to wait.
 */
export interface EdgeParts {
  readonly deps: EdgeDeps;
  readonly platformDomain: string;
  readonly table: RoutingTable;
  readonly reference: ReferenceAssets;
  readonly documents: DocumentCache;
  readonly lifecycle: LifecycleCache;
  readonly previewPages: PreviewPages;
  readonly previews: PreviewGate;
  readonly changelogs: ChangelogCache;
  /** `:port` of the HTTPS URLs the edge writes, '' when it is 443. */
  readonly httpsSuffix: string;
}

export function isEncrypted(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true;
}

/** `:port` of the listener the request came to, or '' for the scheme's default port. */
export function portSuffix(req: IncomingMessage): string {
  const port = req.socket.localPort;
  return port === undefined || port === (isEncrypted(req) ? 443 : 80) ? '' : `:${port}`;
}

/**
 * The site's own address for the links the edge writes: the name its route was matched by and
 * the port the connection came to (left out when it is the scheme's), never the raw Host header.
 */
export function authorityOf(req: IncomingMessage, host: string): string {
  return `${host}${portSuffix(req)}`;
}

/** The request's path, without its query. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** An Error answer: a small HTML page for browsers, the JSON Error body otherwise. */
export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  error: ApiError,
  host: string,
  requestId: string,
): void {
  if (!(req.headers.accept ?? '').includes('text/html')) {
    sendError(res, error, requestId);
    return;
  }
  const html = notFoundPage(error, host);
  res.writeHead(error.status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'x-request-id': requestId,
  });
  res.end(html);
}

function notFoundPage(error: ApiError, host: string): string {
  const safe = host.replace(/[^a-z0-9.:[\]-]/g, '');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1d2433}</style></head>
<body><h1>Nothing here</h1><p>${escapeHtml(error.message)}</p><p><small>${safe}</small></p></body></html>`;
}

export function redirectTo(
  res: ServerResponse,
  requestId: string,
  status: number,
  location: string,
  maxAgeSeconds?: number,
): void {
  res.writeHead(status, {
    location,
    'content-length': 0,
    'x-request-id': requestId,
    ...(maxAgeSeconds !== undefined && { 'cache-control': `max-age=${maxAgeSeconds}` }),
  });
  res.end();
}
