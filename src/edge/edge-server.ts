import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ApiError } from '../lib/api-error.ts';
import { escapeHtml } from '../lib/html.ts';
import { normalizeRequestPath } from '../lib/uri-path.ts';
import type { PlatformContext } from '../platform/context.ts';
import { previewDeployIdOf } from '../platform/previews/index.ts';
import { listPublications, readPublishedProject } from '../platform/publishing/index.ts';
import { TRAFFIC_UNMATCHED } from '../platform/traffic/index.ts';
import { isConnectionLost } from '../storage/index.ts';
import { REFERENCE_PREFIX, referenceAssets } from '../web/reference/index.ts';
import { CHANGELOG_FEED_PATH, CHANGELOG_PATH, ChangelogCache } from './changelog.ts';
import {
  DOCUMENT_CORS_HEADERS,
  documentPreflight,
  isPreflight,
  preflight,
  responseHeaders,
  sendPreflight,
} from './cors.ts';
import { edgeErrors } from './errors.ts';
import { LifecycleCache, type LifecycleRules } from './lifecycle.ts';
import { platformAllowsPlainHttp } from './platform-https.ts';
import { PreviewGate } from './preview-access.ts';
import { PreviewPages } from './preview-banner.ts';
import { type OriginProxy, originForbidden, sendError } from './proxy.ts';
import { DocumentCache, sendReferencePage } from './published-site.ts';
import { ambiguousHead } from './request-framing.ts';
import { type ProjectRoute, type Route, RoutingTable } from './routing-table.ts';
import type { EdgeTraffic, TrafficTag } from './traffic/edge-traffic.ts';

export interface EdgeDeps {
  readonly ctx: PlatformContext;
  /** The control plane's app, served at the platform domain itself. */
  readonly platformApp: FastifyInstance;
  readonly proxy: OriginProxy;
  /** Which hosts have a certificate (those are redirected from HTTP to HTTPS). */
  readonly certificates?: { has(host: string): boolean | Promise<boolean>; clear(): void };
  /** http-01 answers, for any host. */
  readonly challenges?: { answer(token: string): Promise<string | undefined> };
  /** The HTTPS port to redirect to (omitted from URLs when 443). */
  readonly httpsPort?: number;
  /** Operations: health answers, metrics, access logs (src/edge/observe-requests.ts). */
  readonly hooks?: EdgeHooks;
  /** Traffic recording (src/edge/traffic/): API requests by operation and caller; none: off. */
  readonly traffic?: EdgeTraffic;
}

/** One request as the operations hooks see it; `serve` fills in what routing learns. */
export interface EdgeExchange {
  readonly requestId: string;
  readonly host: string;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  /** The project's slug once routing found one (else a reserved label, see observe-requests.ts). */
  project: string | undefined;
  /** Milliseconds spent forwarding to the origin and streaming its answer back, when proxied. */
  upstreamMs: number | undefined;
  /**
   * The connection and its bytes written before this response, so the hooks can count the
   * response's own (Node detaches the socket from the request before 'close').
   */
  socket: { readonly bytesWritten: number } | undefined;
  bytesBefore: number;
  /** Set for an API request when traffic is recorded: its project, operation and caller's place. */
  traffic: TrafficTag | undefined;
}

/**
 * What operations hang on the edge. Kept to three calls so the request path pays for one small
 * object and two clock reads when no hooks are given. `finished` runs in a 'close' listener:
 * it must not throw.
 */
export interface EdgeHooks {
  /** Before routing: answers operator paths (health checks) itself and returns true. */
  intercept(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): boolean;
  /** Once per routed request, when its response has ended or the connection dropped. */
  finished(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): void;
  /** The edge failed to serve the request (a bug or a database error), with the request id. */
  failed(exchange: EdgeExchange, error: unknown): void;
}

export const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
/** Project labels for requests that are not for a project (metrics and logs). */
export const PLATFORM_LABEL = '_platform';
export const ACME_LABEL = '_acme';
export const REDIRECT_LABEL = '_redirect';
export const UNKNOWN_LABEL = '_unknown';

/**
 * The hostname a request is for: Host without port, lowercase, no trailing dot. A Host with
 * anything but a port after the name (`shop.test:@attacker.test`) is no site's: '' (host_not_found).
 */
export function hostOf(req: IncomingMessage): string {
  const raw = req.headers.host ?? '';
  const end = raw.startsWith('[') ? raw.indexOf(']') + 1 : raw.indexOf(':');
  if (end !== -1 && end !== raw.length && !PORT.test(raw.slice(end))) return '';
  const host = (end === -1 ? raw : raw.slice(0, end)).toLowerCase();
  return host.endsWith('.') ? host.slice(0, -1) : host;
}
const PORT = /^:\d{0,5}$/;

/**
 * The site's own address for the links the edge writes: the name its route was matched by and
 * the port the connection came to (left out when it is the scheme's), never the raw Host header.
 */
function authorityOf(req: IncomingMessage, host: string): string {
  return `${host}${portSuffix(req)}`;
}

/** `:port` of the listener the request came to, or '' for the scheme's default port. */
function portSuffix(req: IncomingMessage): string {
  const port = req.socket.localPort;
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  return port === undefined || port === (encrypted ? 443 : 80) ? '' : `:${port}`;
}

function wantsHtml(req: IncomingMessage): boolean {
  return (req.headers.accept ?? '').includes('text/html');
}

function notFoundPage(error: ApiError, host: string): string {
  const safe = host.replace(/[^a-z0-9.:[\]-]/g, '');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Not found</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1d2433}</style></head>
<body><h1>Nothing here</h1><p>${escapeHtml(error.message)}</p><p><small>${safe}</small></p></body></html>`;
}

function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  error: ApiError,
  host: string,
  requestId: string,
): void {
  if (!wantsHtml(req)) {
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

function redirectTo(
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

/**
 * The edge's request handler: routes by Host to the control plane (the platform domain), a
 * project's published site (its default address and verified custom domains), or a redirect.
 * An unknown or removed host gets 404 and never another project's content.
 */
export function createEdgeHandler(deps: EdgeDeps): {
  handle(req: IncomingMessage, res: ServerResponse): void;
  table: RoutingTable;
  close(): void;
} {
  const { ctx } = deps;
  const table = new RoutingTable(ctx.db, ctx.config.platformDomain, ctx.clock, ctx.config.originAllowlist);
  const reference = referenceAssets();
  const documents = new DocumentCache(ctx.db, reference);
  const lifecycle = new LifecycleCache(ctx.db);
  const previewPages = new PreviewPages(ctx.db);
  const previews = new PreviewGate({
    db: ctx.db,
    clock: ctx.clock,
    platformDomain: ctx.config.platformDomain,
    ...(deps.httpsPort !== undefined && { httpsPort: deps.httpsPort }),
  });
  const changelogs = new ChangelogCache({
    db: ctx.db,
    assets: reference,
    platformDomain: ctx.config.platformDomain,
    changes: ctx.changes,
    readPublications: listPublications,
  });
  const unsubscribe = ctx.changes.subscribe((change) => {
    table.invalidate();
    deps.certificates?.clear();
    if (change.kind === 'deploys' || change.kind === 'everything') {
      // The old deploy's site goes and the new one is rendered before its first request.
      lifecycle.deployed(change.projectId);
      documents.deployed(
        change.projectId,
        async (host) => {
          const route = await table.lookup(host);
          // A default address whose pages redirect to the primary domain serves no page.
          return route?.kind === 'project' && route.primaryHost === undefined ? route : undefined;
        },
        async (projectId) => {
          const project = await readPublishedProject(ctx.db, projectId);
          if (!project) return undefined;
          const host = `${project.slug}.${ctx.config.platformDomain}`;
          return { host, apiUrl: `https://${host}${httpsSuffix}/api` };
        },
      );
    }
  });

  const httpsSuffix = deps.httpsPort === undefined || deps.httpsPort === 443 ? '' : `:${deps.httpsPort}`;
  const hasCertificate = async (host: string) => (await deps.certificates?.has(host)) === true;
  const isEncrypted = (req: IncomingMessage) => (req.socket as { encrypted?: boolean }).encrypted === true;

  /**
   * Only the hostname changes; path and query are kept, and so are scheme and port — except from
   * HTTP to a target with a certificate, which goes straight to its HTTPS address (one hop, not
   * two). From HTTP to a target without one, the host's own upgrade to HTTPS comes first.
   */
  async function answerRedirect(
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    redirect: { to: string; status: number; maxAgeSeconds?: number },
  ): Promise<void> {
    const url = req.url ?? '/';
    const samePort = portSuffix(req);
    const { to, status, maxAgeSeconds } = redirect;
    if (isEncrypted(req)) {
      redirectTo(res, requestId, status, `https://${to}${samePort}${url}`, maxAgeSeconds);
    } else if (await hasCertificate(to)) {
      redirectTo(res, requestId, status, `https://${to}${httpsSuffix}${url}`, maxAgeSeconds);
    } else if (await hasCertificate(hostOf(req))) {
      redirectTo(res, requestId, 308, `https://${hostOf(req)}${httpsSuffix}${url}`);
    } else {
      redirectTo(res, requestId, status, `http://${to}${samePort}${url}`, maxAgeSeconds);
    }
  }

  /**
   * Routes one request. Synchronous while everything it needs is cached (the routing table and
   * the certificate cache, as on nearly every request): a proxied request then reaches the
   * origin without a promise round trip. It returns a promise only when it had to wait.
   */
  function serve(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): void | Promise<void> {
    const { host, requestId } = exchange;
    const url = req.url ?? '/';
    if (url.startsWith(CHALLENGE_PREFIX) && deps.challenges && !isEncrypted(req)) {
      exchange.project = ACME_LABEL;
      return answerChallenge(res, url.slice(CHALLENGE_PREFIX.length).split('?')[0] ?? '', requestId);
    }
    if (host === ctx.config.platformDomain) {
      exchange.project = PLATFORM_LABEL;
      // HTTPS for the platform's own site once it has a stored (ACME) certificate; the internal
      // default is never stored, so local HTTP keeps working (docs/decisions.md).
      const secured = deps.certificates?.has(host) ?? false;
      if (secured instanceof Promise) return secured.then((yes) => servePlatform(req, res, exchange, yes));
      servePlatform(req, res, exchange, secured);
      return;
    }
    const route = table.lookup(host);
    return route instanceof Promise
      ? route.then((found) => serveRoute(req, res, exchange, found))
      : serveRoute(req, res, exchange, route);
  }

  /**
   * The control plane. Plain HTTP is sent to HTTPS (308, path and query kept) unless the platform
   * domain is `localhost` or a name reserved for tests (platform-https.ts: over HTTP a project's
   * page could plant the session cookie), and always once it has a publicly trusted certificate;
   * then HTTPS answers carry HSTS for a year — not includeSubDomains: the projects' default
   * addresses under the platform domain have no such certificate.
   */
  function servePlatform(
    req: IncomingMessage,
    res: ServerResponse,
    exchange: EdgeExchange,
    secured: boolean,
  ) {
    const { host, requestId } = exchange;
    const httpsOnly = secured || (deps.httpsPort !== undefined && !platformAllowsPlainHttp(host));
    if (httpsOnly && !isEncrypted(req)) {
      redirectTo(res, requestId, 308, `https://${host}${httpsSuffix}${req.url ?? '/'}`);
      return;
    }
    if (secured) res.setHeader('strict-transport-security', 'max-age=31536000');
    // The control plane logs and answers with the edge's request id.
    req.headers['x-request-id'] = requestId;
    res.setHeader('x-request-id', requestId);
    deps.platformApp.routing(req, res);
  }

  async function answerChallenge(res: ServerResponse, token: string, requestId: string): Promise<void> {
    const answer = await deps.challenges?.answer(token);
    res.writeHead(answer === undefined ? 404 : 200, {
      'content-type': 'text/plain',
      'x-request-id': requestId,
    });
    res.end(answer ?? 'no such challenge');
  }

  function serveRoute(
    req: IncomingMessage,
    res: ServerResponse,
    exchange: EdgeExchange,
    route: Route | undefined,
  ): void | Promise<void> {
    const { host, requestId } = exchange;
    if (!route) {
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
      // A preview-shaped host without a preview answers as a preview one may not see.
      const previewId = previewDeployIdOf(host, ctx.config.platformDomain);
      if (previewId === undefined) return notFound();
      return previews
        .admit(req, res, host, previewId, requestId)
        .then((yes) => (yes ? notFound() : undefined));
    }
    exchange.project = route.kind === 'project' ? route.slug : REDIRECT_LABEL;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const api = path === '/api' || path.startsWith('/api/');
    if (route.kind === 'redirect' || (route.primaryHost !== undefined && !api)) {
      return answerRedirect(
        req,
        res,
        requestId,
        route.kind === 'redirect'
          ? { to: route.to, status: route.status }
          : // The default address → its live primary; caching capped, the owner may change the primary.
            { to: route.primaryHost as string, status: 308, maxAgeSeconds: 3600 },
      );
    }
    if (isEncrypted(req)) return serveSite(req, res, exchange, route, path, api);
    // Over HTTP, a host with a certificate is sent to HTTPS.
    const certified = deps.certificates?.has(host) ?? false;
    if (certified instanceof Promise) {
      return certified.then((yes) =>
        yes
          ? redirectTo(res, requestId, 308, `https://${host}${httpsSuffix}${url}`)
          : serveSite(req, res, exchange, route, path, api),
      );
    }
    if (certified) {
      redirectTo(res, requestId, 308, `https://${host}${httpsSuffix}${url}`);
      return;
    }
    return serveSite(req, res, exchange, route, path, api);
  }

  /**
   * Forwards a request under /api/ to the project's origin, after the deprecation lifecycle its
   * document declares: past an operation's sunset the edge answers 410 itself; before it, the
   * answer gets the lifecycle's headers where the origin did not set them.
   */
  function forwardApi(
    req: IncomingMessage,
    res: ServerResponse,
    exchange: EdgeExchange,
    route: ProjectRoute,
    path: string,
    rules: LifecycleRules,
  ): void {
    const { host, requestId } = exchange;
    const url = req.url ?? '/';
    // One normal form for the lifecycle and the origin: the origin gets the path that was matched.
    const apiPath = normalizeRequestPath(path.slice(4) || '/');
    if (apiPath === undefined) {
      tagTraffic(req, exchange, route, TRAFFIC_UNMATCHED, path, rules);
      sendError(
        res,
        edgeErrors.error(
          'bad_request_path',
          'The request path has a `.` or `..` segment (raw or percent-encoded); the API is served only below /api/. Resolve the path before sending it.',
        ),
        requestId,
      );
      return;
    }
    // One match serves the lifecycle and traffic attribution.
    const operation =
      deps.traffic === undefined && rules.empty ? undefined : rules.find(req.method ?? 'GET', apiPath);
    const found = rules.empty ? undefined : rules.lifecycleOf(operation, ctx.clock.now().getTime());
    tagTraffic(req, exchange, route, operation?.operation.key ?? TRAFFIC_UNMATCHED, `/api${apiPath}`, rules);
    if (found?.gone) {
      sendError(
        res,
        edgeErrors.error(
          'operation_sunset',
          `${req.method} ${apiPath} was retired on ${found.sunset}. ${found.link ? 'Use its successor, named in the Link header.' : "See the API's reference for what replaces it."}`,
          {
            headers: {
              sunset: found.sunset,
              deprecation: found.deprecation,
              ...(found.link && { link: found.link }),
            },
          },
        ),
        requestId,
      );
      return;
    }
    const cors = responseHeaders(route.cors, req.headers.origin);
    // Set here too so the edge's own answers (errors) carry them; the proxy replaces the origin's.
    for (const [name, value] of Object.entries(cors ?? {})) res.setHeader(name, value);
    const upstreamStart = performance.now();
    deps.proxy.forward(
      req,
      res,
      route.originUrl,
      // The query as sent: it is the origin's to read.
      url.length === path.length ? apiPath : `${apiPath}${url.slice(path.length)}`,
      {
        clientAddress: req.socket.remoteAddress ?? '',
        host,
        authority: authorityOf(req, host),
        proto: isEncrypted(req) ? 'https' : 'http',
        requestId,
        ...(found && { lifecycle: found }),
        ...(cors && { cors }),
        upstreamDone: () => {
          exchange.upstreamMs = performance.now() - upstreamStart;
        },
      },
    );
  }

  /** Marks an API request for traffic recording (when on); it is recorded when it ends. */
  function tagTraffic(
    req: IncomingMessage,
    exchange: EdgeExchange,
    route: ProjectRoute,
    operation: string,
    path: string,
    rules: LifecycleRules | undefined,
  ): void {
    if (deps.traffic === undefined) return;
    exchange.traffic = {
      projectId: route.projectId,
      operation,
      path,
      credentials: rules?.credentials ?? [],
    };
    if (exchange.socket === undefined) {
      exchange.socket = req.socket;
      exchange.bytesBefore = req.socket.bytesWritten;
    }
  }

  /** A project's published site: its API under /api/, its reference and its document. */
  function serveSite(
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
      return previews
        .admit(req, res, host, route.deployId, requestId)
        .then((yes) => (yes ? serveSite(req, res, exchange, route, path, api, true) : undefined));
    }
    if (api && route.originRefused) {
      // Its team has no grant for the private origin (revoked, or never given): not forwarded.
      tagTraffic(req, exchange, route, TRAFFIC_UNMATCHED, path, undefined);
      sendError(res, originForbidden(), requestId);
      return;
    }
    if (api) {
      // With a CORS policy on, the edge answers preflights itself (cors.ts); off, they go on as before.
      const answer = preflight(route.cors, req.method, req.headers);
      if (answer) return sendPreflight(res, answer, requestId);
      const rules = lifecycle.get(route);
      return rules instanceof Promise
        ? rules.then((found) => forwardApi(req, res, exchange, route, path, found))
        : forwardApi(req, res, exchange, route, path, rules);
    }
    // The reference's own files: a reserved path outside /api, never proxied (see web/reference).
    if (path.startsWith(REFERENCE_PREFIX)) {
      if (reference.serve(req, res, path, { 'x-request-id': requestId })) return;
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
    return servePublished(req, res, route, path, exchange);
  }

  async function servePublished(
    req: IncomingMessage,
    res: ServerResponse,
    route: ProjectRoute,
    path: string,
    exchange: EdgeExchange,
  ): Promise<void> {
    const { host, requestId } = exchange;
    if (path === CHANGELOG_PATH || path === CHANGELOG_FEED_PATH) {
      const origin = `${isEncrypted(req) ? 'https' : 'http'}://${authorityOf(req, host)}`;
      if (await changelogs.send(req, res, route, path, origin, { 'x-request-id': requestId })) return;
    }
    const published = await documents.get(route, host, `https://${host}${httpsSuffix}/api`);
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
      if (route.preview) return previewPages.send(req, res, published, route.deployId, requestId);
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

  return {
    table,
    handle(req, res) {
      const exchange: EdgeExchange = {
        // Always the edge's own: a client's X-Request-Id would let it forge ids in others' logs.
        requestId: randomUUID(),
        host: hostOf(req),
        startedAt: performance.now(),
        project: undefined,
        upstreamMs: undefined,
        socket: undefined,
        bytesBefore: 0,
        traffic: undefined,
      };
      const { hooks, traffic } = deps;
      if (hooks?.intercept(req, res, exchange)) return;
      if (hooks || traffic) {
        // 'close' is emitted once per response; `on` spares the wrapper `once` adds.
        res.on('close', () => {
          hooks?.finished(req, res, exchange);
          if (exchange.traffic) traffic?.finished(req, res, exchange.traffic, exchange);
        });
      }
      const fail = (error: unknown) => {
        hooks?.failed(exchange, error);
        if (res.headersSent) {
          res.destroy(error as Error);
          return;
        }
        sendError(
          res,
          isConnectionLost(error)
            ? edgeErrors.error(
                'database_unavailable',
                'The platform lost its database for a moment. Try again in a few seconds.',
                { cause: error, headers: { 'retry-after': '2' } },
              )
            : edgeErrors.error('edge_error', 'The edge failed to serve this request. Try again.', {
                cause: error,
              }),
          exchange.requestId,
        );
      };
      const ambiguous = ambiguousHead(req);
      if (ambiguous !== undefined) {
        res.shouldKeepAlive = false;
        sendError(res, edgeErrors.error('bad_request_framing', ambiguous), exchange.requestId);
        return;
      }
      try {
        serve(req, res, exchange)?.catch(fail);
      } catch (error) {
        fail(error);
      }
    },
    close() {
      unsubscribe();
      changelogs.close();
    },
  };
}
