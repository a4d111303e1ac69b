import type { IncomingMessage, ServerResponse } from 'node:http';
import { normalizeRequestPath } from '../../lib/uri-path.ts';
import { TRAFFIC_UNMATCHED } from '../../platform/traffic/index.ts';
import { responseHeaders as corsHeaders } from '../cors.ts';
import type { EdgeExchange } from '../edge-exchange.ts';
import { edgeErrors } from '../errors.ts';
import { sendError } from '../json-answer.ts';
import type { LifecycleRules } from '../lifecycle.ts';
import type { ProjectRoute } from '../routing-table.ts';
import { authorityOf, type EdgeParts, isEncrypted } from './parts.ts';

/**
 * The site step's API part: a request under /api/ forwarded to the project's origin, after the
 * deprecation lifecycle its document declares: past an operation's sunset the edge answers 410
 * itself; before it, the answer gets the lifecycle's headers where the origin did not set them.
 */
export function forwardApi(
  edge: EdgeParts,
  req: IncomingMessage,
  res: ServerResponse,
  exchange: EdgeExchange,
  route: ProjectRoute,
  path: string,
  rules: LifecycleRules,
): void {
  const { host, requestId } = exchange;
  const { deps } = edge;
  const url = req.url ?? '/';
  // One normal form for the lifecycle and the origin: the origin gets the path that was matched.
  const apiPath = normalizeRequestPath(path.slice(4) || '/');
  if (apiPath === undefined) {
    tagTraffic(edge, req, exchange, route, TRAFFIC_UNMATCHED, path, rules);
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
  const found = rules.empty ? undefined : rules.lifecycleOf(operation, deps.ctx.clock.now().getTime());
  tagTraffic(
    edge,
    req,
    exchange,
    route,
    operation?.operation.key ?? TRAFFIC_UNMATCHED,
    `/api${apiPath}`,
    rules,
  );
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
  const cors = corsHeaders(route.cors, req.headers.origin);
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
export function tagTraffic(
  edge: EdgeParts,
  req: IncomingMessage,
  exchange: EdgeExchange,
  route: ProjectRoute,
  operation: string,
  path: string,
  rules: LifecycleRules | undefined,
): void {
  if (edge.deps.traffic === undefined) return;
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
