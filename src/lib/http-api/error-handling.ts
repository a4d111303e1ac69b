import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../api-error.ts';
import type { CommonErrorCode } from './common-errors.ts';
import type { AnyOperation } from './operation.ts';
import { NUL_KEYWORD, nulMessage, validationMessage } from './validation.ts';

/** A route's own body limit and the setting an operator raises for larger bodies. */
export interface RouteBodyLimit {
  readonly bytes: number;
  readonly setting: string;
}

/** A cut connection is replaced at once; a restarting server usually answers within seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Any catalog that includes the common codes. */
export interface Catalog {
  error(
    code: CommonErrorCode,
    message: string,
    options?: { headers?: Record<string, string>; cause?: unknown },
  ): ApiError;
}

/**
 * One error handler: whatever goes wrong becomes the catalog's `{ code, message, status }`, with a
 * message that says what to do. Unknown paths get 404, known paths with another method 405.
 */
export function installErrorHandling<Deps>(
  app: FastifyInstance,
  operations: readonly AnyOperation<Deps>[],
  catalog: Catalog,
  options: {
    bodyLimit: number;
    /** The setting an operator raises for larger bodies, named in the 413 (none: a fixed limit). */
    bodyLimitSetting?: string;
    /**
     * Recognises a failure of the database connection (storage's isConnectionLost): answered
     * 503 database_unavailable with Retry-After instead of 500, since the same request may
     * succeed once the database answers again.
     */
    isDatabaseUnavailable: (error: unknown) => boolean;
    /** Where the API's OpenAPI document is served, named by route_not_found (default /openapi.json). */
    documentPath?: string;
    /**
     * Answers an unknown path in another way than the Error body (the dashboard's HTML page for a
     * browser): returns the reply it sent, or undefined to leave the request to route_not_found.
     */
    notFoundPage?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
  },
): void {
  // A request whose route takes no body (or that matched no route) is answered without reading
  // one: a stray body must not turn a 204 into a 415 or a 404 into a 400. Node discards the
  // unread bytes when the response ends, so keep-alive stays in sync.
  app.addHook('onRequest', (request, _reply, done) => {
    const headers = request.headers;
    if (
      headers['content-type'] === undefined &&
      headers['transfer-encoding'] === undefined &&
      headers['content-length'] === undefined
    ) {
      return done();
    }
    if (request.is404 || (request.routeOptions.config as { takesBody?: boolean }).takesBody === false) {
      delete request.headers['content-type'];
      delete request.headers['transfer-encoding'];
      request.headers['content-length'] = '0';
    }
    done();
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = options.isDatabaseUnavailable(error)
      ? catalog.error(
          'database_unavailable',
          `The database is unavailable. Try again in ${DATABASE_RETRY_AFTER_SECONDS} seconds; if this was a change, read it back first: it may or may not have been saved.`,
          { headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }, cause: error },
        )
      : toApiError(
          error,
          catalog,
          routeBodyLimit(request)?.bytes ?? options.bodyLimit,
          routeBodyLimit(request)?.setting ?? options.bodyLimitSetting,
        );
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    // Fastify closes the connection after any body it could not parse, in case more of the body
    // follows. A malformed JSON body that arrived whole leaves the connection in step: the client
    // keeps it, and a flood of bad bodies does not turn into a flood of new connections.
    if (apiError.code === 'malformed_json' && request.raw.complete) reply.removeHeader('connection');
    return reply
      .code(apiError.status)
      .headers({ ...apiError.headers, 'x-request-id': request.id })
      .type('application/json; charset=utf-8')
      .send(apiError.toBody());
  });

  const routes = operations.map((op) => ({
    pattern: new RegExp(`^${op.path.replaceAll(/\{[^}]+\}/g, '[^/]+')}$`),
    method: op.method,
  }));
  const documentPath = options.documentPath ?? '/openapi.json';
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes.filter((r) => r.pattern.test(path)).map((r) => r.method);
    if (allowed.length > 0) {
      const allow = [...new Set(allowed.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))].join(', ');
      throw catalog.error(
        'method_not_allowed',
        `${request.method} is not allowed on ${path}; use one of: ${allow}.`,
        { headers: { allow } },
      );
    }
    const page = options.notFoundPage?.(request, reply);
    if (page) return page;
    throw catalog.error(
      'route_not_found',
      `No operation at ${request.method} ${path}. The API's operations are listed in ${documentPath}.`,
    );
  });
}

const routeBodyLimit = (request: FastifyRequest) =>
  (request.routeOptions.config as { bodyLimit?: RouteBodyLimit } | undefined)?.bodyLimit;

function toApiError(
  error: FastifyError,
  catalog: Catalog,
  bodyLimit: number,
  bodyLimitSetting: string | undefined,
): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation?.[0]?.keyword === NUL_KEYWORD) {
    return catalog.error('invalid_character', nulMessage(error.validation[0], error.validationContext));
  }
  if (error.validation) {
    return catalog.error('validation_failed', validationMessage(error.validation, error.validationContext));
  }
  if (/forbidden prototype property/.test(error.message)) {
    return catalog.error(
      'malformed_json',
      'The body contains a "__proto__" or "constructor.prototype" key, which is refused. Remove it.',
    );
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return catalog.error(
        'malformed_json',
        'The body is not valid JSON. Check its quotes, commas and braces, and send a JSON object.',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return catalog.error(
        'malformed_json',
        'The body is empty but Content-Type is application/json. Send a JSON object, or drop the Content-Type header.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return catalog.error(
        'body_too_large',
        bodyLimitSetting === undefined
          ? `The body is larger than ${bodyLimit} bytes. Send a smaller body; no operation needs more.`
          : `The body is larger than ${bodyLimit} bytes (the limit set by ${bodyLimitSetting}). Send a smaller body, or ask the platform's operator to raise ${bodyLimitSetting}.`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return catalog.error(
        'unsupported_media_type',
        'The body must be sent with Content-Type: application/json.',
      );
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return catalog.error(
      'malformed_json',
      `The body is not valid JSON (${error.message}). Send a JSON object.`,
    );
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return catalog.error(
      'bad_request',
      `The request could not be read: ${error.message}. Fix it and send it again.`,
    );
  }
  return catalog.error(
    'internal_error',
    'Something went wrong on our side. Try again; if it keeps failing, report the X-Request-Id header.',
    { cause: error },
  );
}

/** The Error body of what the router refuses before any route runs. */
export function frameworkError(error: FastifyError, catalog: Catalog): ApiError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return catalog.error(
        'malformed_url',
        'The URL holds a percent-escape that is not valid UTF-8 (such as %E0%A4%A). Escape each byte as % and two hex digits, the way encodeURIComponent does.',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return catalog.error(
        'path_too_long',
        'A path parameter is longer than 100 characters, longer than any identifier this API uses. Check the URL.',
      );
    default:
      return catalog.error('internal_error', 'Something went wrong on our side. Try again.', {
        cause: error,
      });
  }
}
