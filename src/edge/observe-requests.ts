import type { IncomingMessage, ServerResponse } from 'node:http';
import { CHALLENGE_PREFIX, type EdgeExchange, type EdgeHooks, UNKNOWN_LABEL } from './edge-server.ts';
import { edgeErrors } from './errors.ts';
import { type NodeHealth, STARTING_RETRY } from './health.ts';
import { sendError } from './json-answer.ts';
import { type EdgeMetrics, proxyErrorKind, statusClass } from './metrics.ts';

/** The part of a pino logger the edge uses (Fastify's `app.log` is one). */
export interface EdgeLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/**
 * The edge's operations hooks: health answers for any host, `Connection: close` while draining,
 * one metrics observation and one access log line per request, and origin failures logged and
 * counted by kind (give `onProxyError` to the OriginProxy's `onError`).
 *
 * The access log never holds headers (so no cookies or Authorization) nor the query string
 * (tokens travel there too): the path, the host and what the edge measured.
 */
export function observeRequests(options: {
  health: NodeHealth;
  metrics: EdgeMetrics;
  logger: EdgeLogger;
  /** Whether to write the access log: the logger's level lets `info` through (decided once). */
  accessLog: boolean;
}): {
  hooks: EdgeHooks;
  onProxyError(error: unknown, requestId: string, answered: boolean): void;
} {
  const { health, metrics, logger, accessLog } = options;
  const record = (req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): void => {
    const durationMs = performance.now() - exchange.startedAt;
    const finished = res.writableFinished;
    const project = exchange.project ?? UNKNOWN_LABEL;
    metrics.observeRequest(project, statusClass(res.statusCode, finished), durationMs / 1000);
    if (!accessLog) return;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    logger.info(
      {
        reqId: exchange.requestId,
        host: exchange.host,
        project,
        method: req.method,
        path: query === -1 ? url : url.slice(0, query),
        status: finished ? res.statusCode : 0,
        durationMs: round(durationMs),
        bytes: (exchange.socket?.bytesWritten ?? exchange.bytesBefore) - exchange.bytesBefore,
        ...(exchange.upstreamMs !== undefined && { upstreamMs: round(exchange.upstreamMs) }),
        ...(!finished && { aborted: true }),
      },
      'request',
    );
  };
  const hooks: EdgeHooks = {
    intercept(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): boolean {
      // Health checks are answered before routing and left out of metrics and the access log:
      // a load balancer probing every few seconds would drown both.
      if (health.answer(req, res, exchange.requestId)) return true;
      // Until the start is done (a first start: the admin and the first project not created
      // yet), no answer may look like success: sign-in would refuse the printed credentials.
      // http-01 answers come from the database and are right already (another node's order).
      if (health.starting && !(req.url ?? '').startsWith(CHALLENGE_PREFIX)) {
        sendError(
          res,
          edgeErrors.error(
            'node_starting',
            'Kennel is still starting on this node and serves nothing yet. Try again in a second (Retry-After).',
            { headers: STARTING_RETRY },
          ),
          exchange.requestId,
        );
        return true;
      }
      // While draining, every response closes its connection so keep-alive clients reconnect to
      // another node instead of holding this one open.
      if (health.draining) res.setHeader('connection', 'close');
      exchange.socket = req.socket;
      exchange.bytesBefore = req.socket.bytesWritten;
      return false;
    },
    finished(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): void {
      // Runs in a 'close' listener, where a throw would end the process.
      try {
        record(req, res, exchange);
      } catch (error) {
        logger.error({ reqId: exchange.requestId, err: error }, 'recording the request failed');
      }
    },
    failed(exchange: EdgeExchange, error: unknown): void {
      logger.error({ reqId: exchange.requestId, host: exchange.host, err: error }, 'edge failed');
    },
  };
  return {
    hooks,
    onProxyError(error, requestId, answered) {
      const kind = proxyErrorKind(error);
      metrics.proxyError(kind);
      logger.warn(
        {
          reqId: requestId,
          kind,
          code: (error as { code?: unknown } | undefined)?.code,
          err: error instanceof Error ? error.message : String(error),
          ...(answered && { midResponse: true }),
        },
        'origin request failed',
      );
    },
  };
}

const round = (ms: number) => Math.round(ms * 10) / 10;
