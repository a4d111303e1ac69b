import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listPublications, readPublishedProject } from '../platform/publishing/index.ts';
import { isConnectionLost } from '../storage/index.ts';
import { referenceAssets } from '../web/reference/index.ts';
import { ChangelogCache } from './changelog.ts';
import { type EdgeDeps, type EdgeExchange, hostOf } from './edge-exchange.ts';
import { edgeErrors } from './errors.ts';
import { sendError } from './json-answer.ts';
import { LifecycleCache } from './lifecycle.ts';
import { PreviewGate } from './preview-access.ts';
import { PreviewPages } from './preview-banner.ts';
import { DocumentCache } from './published-site.ts';
import { ambiguousHead } from './request-framing.ts';
import { RoutingTable } from './routing-table.ts';
import { challenge, isChallenge } from './steps/challenge.ts';
import type { EdgeParts } from './steps/parts.ts';
import { platform } from './steps/platform.ts';
import { route } from './steps/route.ts';

export {
  ACME_LABEL,
  CHALLENGE_PREFIX,
  type EdgeDeps,
  type EdgeExchange,
  type EdgeHooks,
  hostOf,
  PLATFORM_LABEL,
  REDIRECT_LABEL,
  UNKNOWN_LABEL,
} from './edge-exchange.ts';

/**
 * The edge's request handler, a list of named steps (src/edge/steps/): challenge (ACME http-01
 * over plain HTTP, for any host), platform (the control plane at the platform domain), route (the
 * routing table's answer for the host), then redirect (redirect-from domains, a default address
 * to its primary, HTTP to HTTPS) or site (a project's published site and its API, proxied).
 * An unknown or removed host gets 404 and never another project's content.
 */
export function createEdgeHandler(deps: EdgeDeps): {
  handle(req: IncomingMessage, res: ServerResponse): void;
  table: RoutingTable;
  close(): void;
} {
  const edge = buildParts(deps);
  const { table, documents, lifecycle, changelogs } = edge;
  const { ctx } = deps;
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
          const host = `${project.slug}.${edge.platformDomain}`;
          return { host, apiUrl: `https://${host}${edge.httpsSuffix}/api` };
        },
      );
    }
  });

  /**
   * The steps in order. Synchronous while everything they need is cached (the routing table and
   * the certificate cache, as on nearly every request): a proxied request then reaches the origin
   * without a promise round trip. A promise comes back only when a step had to wait.
   */
  function serve(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): void | Promise<void> {
    if (isChallenge(edge, req)) return challenge(edge, req, res, exchange);
    if (exchange.host === edge.platformDomain) return platform(edge, req, res, exchange);
    return route(edge, req, res, exchange);
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

/** The caches and gates the steps share, built once per handler. */
function buildParts(deps: EdgeDeps): EdgeParts {
  const { ctx } = deps;
  const { platformDomain } = ctx.config;
  const table = new RoutingTable(ctx.db, platformDomain, ctx.clock, ctx.config.originAllowlist);
  const reference = referenceAssets();
  return {
    deps,
    platformDomain,
    table,
    reference,
    documents: new DocumentCache(ctx.db, reference),
    lifecycle: new LifecycleCache(ctx.db),
    previewPages: new PreviewPages(ctx.db),
    previews: new PreviewGate({
      db: ctx.db,
      clock: ctx.clock,
      platformDomain,
      ...(deps.httpsPort !== undefined && { httpsPort: deps.httpsPort }),
    }),
    changelogs: new ChangelogCache({
      db: ctx.db,
      assets: reference,
      platformDomain,
      changes: ctx.changes,
      readPublications: listPublications,
    }),
    httpsSuffix: deps.httpsPort === undefined || deps.httpsPort === 443 ? '' : `:${deps.httpsPort}`,
  };
}
