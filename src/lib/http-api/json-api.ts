import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import { type Catalog, frameworkError } from './error-handling.ts';
import {
  answerClientError,
  type ClientError,
  DEFAULT_RECEIVE_TIMEOUTS,
  type ReceiveTimeouts,
} from './receive-deadlines.ts';
import { requestIdOf } from './request-id.ts';
import { validatorCompiler } from './validation.ts';

/**
 * A Fastify instance for a JSON API: bodies are JSON only (anything else is 415 rather than a
 * string handed to a handler), request ids follow X-Request-Id, validation uses the two Ajvs.
 * Failures Fastify and node:http answer themselves (a bad URL escape, a path parameter over 100
 * characters, headers over 16 KB, broken framing, a request that stalls) get the catalog's Error
 * body too.
 */
export function createJsonApi(options: {
  bodyLimit: number;
  catalog: Catalog;
  logger?: boolean | { level: string };
  /**
   * Fastify's two log lines per request ("incoming request", "request completed"); false where
   * another layer writes the access log (the platform's edge: one line per request).
   */
  requestLogging?: boolean;
  timeouts?: ReceiveTimeouts;
}): FastifyInstance {
  const { catalog } = options;
  const timeouts = options.timeouts ?? DEFAULT_RECEIVE_TIMEOUTS;
  const reading = new WeakMap<Socket, FastifyReply>();
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new LogController({ disableRequestLogging: options.requestLogging === false }),
    bodyLimit: options.bodyLimit,
    genReqId: requestIdOf,
    // Answered in an onRequest hook below, with the Error body.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    requestTimeout: timeouts.requestMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      requestTimeout: timeouts.requestMs,
      // node:http looks for expired requests this often (30 s by default, which would double
      // the deadlines).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersMs / 4))),
    },
    frameworkErrors: (error, request, raw) => {
      const apiError = frameworkError(error, catalog);
      (raw as FastifyReply)
        .code(apiError.status)
        .headers({ 'x-request-id': request.id })
        .type('application/json; charset=utf-8')
        .send(apiError.toBody());
    },
    clientErrorHandler(error: ClientError, socket: Socket) {
      answerClientError(
        this as unknown as FastifyInstance,
        catalog,
        timeouts,
        error,
        socket,
        reading.get(socket),
      );
    },
  });
  app.setValidatorCompiler(validatorCompiler());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: options.bodyLimit },
    app.getDefaultJsonParser('error', 'error'),
  );
  // The entry goes when the answer has gone. A socket that kept its last reply would hold that
  // request's whole graph (reply, request, parsed body) for as long as node keeps the closed
  // socket reachable: under a stream of short connections (`Connection: close`, or requests
  // refused with a close) every scavenge then promoted megabytes and took 40–90 ms
  // (docs/benchmarks.md, "Short connections").
  app.addHook('onResponse', (request, reply, done) => {
    const socket = request.raw.socket;
    if (reading.get(socket) === reply) reading.delete(socket);
    done();
  });
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    // Every answer names its request (docs/errors.md); behind the edge this is the edge's id.
    reply.header('x-request-id', request.id);
    // The request being read on this connection: a client error names its id and does not
    // write over an answer already under way.
    reading.set(request.raw.socket, reply);
    if (!closing) return done();
    reply.header('connection', 'close');
    done(
      catalog.error(
        'shutting_down',
        'This server is shutting down and takes no new requests. Send the request again: another server, or this one restarted, will answer.',
        { headers: { 'retry-after': '1' } },
      ),
    );
  });
  return app;
}
