import { randomUUID } from 'node:crypto';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifySchema,
} from 'fastify';
import { ApiError } from '../api-error.ts';
import type { CommonErrorCode } from './common-errors.ts';
import { type AnyOperation, fastifyPath, type JsonSchema, type ParameterSpec } from './operation.ts';
import { inlineRefs } from './schema-refs.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: bodies are JSON and must have the right types as sent ("5" is not a number);
 * path, query and header values are text and are coerced to the declared types.
 */
export function validatorCompiler(): (route: {
  schema: JsonSchema;
  httpPart?: string;
}) => (data: unknown) => boolean {
  const make = (coerce: boolean) =>
    addFormats(
      new Ajv({
        coerceTypes: coerce ? 'array' : false,
        useDefaults: true,
        removeAdditional: false,
        allErrors: false,
        strict: false,
      }),
    );
  const strictAjv = make(false);
  const coercingAjv = make(true);
  return ({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema);
}

/**
 * A Fastify instance for a JSON API: bodies are JSON only (anything else is 415 rather than a
 * string handed to a handler), request ids follow X-Request-Id, validation uses the two Ajvs.
 */
export function createJsonApi(options: {
  bodyLimit: number;
  logger?: boolean | { level: string };
}): FastifyInstance {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit,
    genReqId: requestIdOf,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(validatorCompiler());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: options.bodyLimit },
    app.getDefaultJsonParser('error', 'error'),
  );
  return app;
}

const REQUEST_ID_PREFIX = randomUUID().slice(0, 8);
let requestCounter = 0;

/** Fastify request ids: the caller's `X-Request-Id` when it looks sane, else a new UUID. */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given)) return given;
  // A random per-process prefix and a counter: unique, and cheaper than a UUID per request.
  requestCounter++;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}

function objectSchema(parameters: readonly ParameterSpec[]): JsonSchema | undefined {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of parameters) {
    properties[p.name] = p.schema;
    if (p.required || p.in === 'path') required.push(p.name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

function fastifySchema<Deps>(op: AnyOperation<Deps>, components: Record<string, JsonSchema>): FastifySchema {
  const inline = (s: unknown) => inlineRefs(s, components) as JsonSchema;
  const params = op.parameters ?? [];
  const schema: FastifySchema = {};
  const path = objectSchema(params.filter((p) => p.in === 'path'));
  const query = objectSchema(params.filter((p) => p.in === 'query'));
  if (path) schema.params = inline(path);
  if (query) schema.querystring = inline(query);
  if (op.requestBody) schema.body = inline(op.requestBody.schema);
  const response: Record<number, JsonSchema> = {};
  for (const [status, spec] of Object.entries(op.responses)) {
    if (spec.schema) response[Number(status)] = inline(spec.schema);
  }
  schema.response = response;
  return schema;
}

/** Registers each operation as a Fastify route with its schemas; handlers get `deps` passed in. */
export function registerOperations<Deps>(
  app: FastifyInstance,
  operations: readonly AnyOperation<Deps>[],
  components: Record<string, JsonSchema>,
  deps: Deps,
  /** Resolves (or refuses, by throwing) the caller before the handler runs. */
  authenticate?: (request: FastifyRequest, operation: AnyOperation<Deps>) => Promise<unknown>,
): void {
  for (const op of operations) {
    const input = (req: FastifyRequest, caller: unknown) => ({
      params: req.params,
      query: req.query,
      body: req.body,
      headers: req.headers,
      id: req.id,
      caller,
    });
    app.route({
      method: op.method,
      url: fastifyPath(op.path),
      schema: fastifySchema(op, components),
      config: { takesBody: op.requestBody !== undefined },
      handler: authenticate
        ? async (req: FastifyRequest, reply: FastifyReply) =>
            op.handler(input(req, await authenticate(req, op)), reply, deps)
        : (req: FastifyRequest, reply: FastifyReply) => op.handler(input(req, undefined), reply, deps),
    });
  }
}

/** A cut connection is replaced at once; a restarting server usually answers within seconds. */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** Any catalog that includes the common codes. */
interface Catalog {
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
    /**
     * Recognises a failure of the database connection (storage's isConnectionLost): answered
     * 503 database_unavailable with Retry-After instead of 500, since the same request may
     * succeed once the database answers again.
     */
    isDatabaseUnavailable: (error: unknown) => boolean;
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
      : toApiError(error, catalog, options.bodyLimit);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
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
  app.setNotFoundHandler((request) => {
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
    throw catalog.error(
      'route_not_found',
      `No operation at ${request.method} ${path}. The API's operations are listed in /openapi.json.`,
    );
  });
}

function toApiError(error: FastifyError, catalog: Catalog, bodyLimit: number): ApiError {
  if (error instanceof ApiError) return error;
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
        `The body is larger than ${bodyLimit} bytes. Send a smaller body; no operation needs more.`,
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

const PART_NAMES: Record<string, string> = {
  body: 'body',
  params: 'path parameter',
  querystring: 'query parameter',
};

function validationMessage(errors: Partial<ErrorObject>[], context: string | undefined): string {
  const first = errors[0];
  const part = PART_NAMES[context ?? 'body'] ?? context ?? 'request';
  if (!first) return `The ${part} is not valid. Fix the request and send it again.`;
  const where = (first.instancePath ?? '').replaceAll('/', '.').replace(/^\./, '');
  const field = where ? (part === 'body' ? `field body.${where}` : `${part} ${where}`) : part;
  const params = (first.params ?? {}) as Record<string, unknown>;
  let problem: string;
  switch (first.keyword) {
    case 'additionalProperties':
      problem = `${field === part ? `the ${part}` : field} has an unknown field "${String(params.additionalProperty)}"; remove it`;
      break;
    case 'required':
      problem = `${field === part ? `the ${part}` : field} is missing the required field "${String(params.missingProperty)}"`;
      break;
    case 'enum':
      problem = `${field} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
      break;
    default:
      problem = `${field} ${first.message ?? 'is not valid'}`;
  }
  return `${problem.charAt(0).toUpperCase()}${problem.slice(1)}. Fix the request and send it again.`;
}
