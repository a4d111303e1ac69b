import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
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

/** The ajv keyword of a string holding U+0000, which the error handler answers 422. */
export const NUL_KEYWORD = 'nulCharacter';

/**
 * Two validators: bodies are JSON and must have the right types as sent ("5" is not a number);
 * path, query and header values are text and are coerced to the declared types, but only from
 * plain decimals (Number() would read `0x3`, `3e0`, `+1`, `1.0` and `` as numbers). Any string
 * holding U+0000 is refused: PostgreSQL cannot store it in text while SQLite can, and the two
 * databases must answer alike.
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
  return ({ schema, httpPart }) => {
    const text = httpPart !== 'body';
    const validate = (text ? coercingAjv : strictAjv).compile(schema);
    const numeric = text ? numericFields(schema) : [];
    // U+0000 is looked for once the value is otherwise valid, so a wrong type or an unknown
    // field is still the 400 it would be without it.
    const checked = (data: unknown): boolean => {
      const refused = numeric.length > 0 ? notDecimal(data, numeric) : undefined;
      const valid = refused === undefined && validate(data);
      const nul = valid ? nulIn(data, '') : undefined;
      checked.errors = refused ? [refused] : nul ? [nul] : validate.errors;
      return valid && nul === undefined;
    };
    checked.errors = null as Partial<ErrorObject>[] | null | undefined;
    return checked;
  };
}

/** Properties of a text part (path, query, headers) declared integer or number, or arrays of them. */
function numericFields(schema: JsonSchema): [string, 'integer' | 'number'][] {
  const fields: [string, 'integer' | 'number'][] = [];
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    const type = property.type === 'array' ? (property.items as JsonSchema | undefined)?.type : property.type;
    if (type === 'integer' || type === 'number') fields.push([name, type]);
  }
  return fields;
}

const DECIMAL = { integer: /^(0|-?[1-9][0-9]*)$/, number: /^(0|-?[1-9][0-9]*)(\.[0-9]+)?$/ };

/** The first value sent for a numeric field that is not a plain decimal, as an ajv error. */
function notDecimal(
  data: unknown,
  fields: [string, 'integer' | 'number'][],
): Partial<ErrorObject> | undefined {
  const values = data as Record<string, unknown>;
  for (const [name, type] of fields) {
    const value = values[name];
    for (const raw of Array.isArray(value) ? value : [value]) {
      if (typeof raw !== 'string') continue;
      if (!DECIMAL[type].test(raw)) {
        return {
          keyword: 'type',
          instancePath: `/${name}`,
          message: `must be ${type}, written in plain decimal digits such as 42 (not ${JSON.stringify(raw.slice(0, 40))})`,
          params: {},
        };
      }
      if (type === 'integer' && !Number.isSafeInteger(Number(raw))) {
        return {
          keyword: 'maximum',
          instancePath: `/${name}`,
          message: `must be <= ${Number.MAX_SAFE_INTEGER}`,
          params: {},
        };
      }
    }
  }
  return undefined;
}

/** Where the first string holding U+0000 is (keys included), as an ajv error. */
function nulIn(value: unknown, path: string): Partial<ErrorObject> | undefined {
  if (typeof value === 'string') {
    return value.includes('\u0000') ? { keyword: NUL_KEYWORD, instancePath: path, params: {} } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulIn(value[i], `${path}/${i}`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return { keyword: NUL_KEYWORD, instancePath: path, params: {} };
    const found = nulIn(item, `${path}/${key}`);
    if (found) return found;
  }
  return undefined;
}

/** How long a client may take to send a request before it is answered 408 (node:http's deadlines). */
export interface ReceiveTimeouts {
  /** From the connection (or the end of the previous answer) until the headers are in. */
  readonly headersMs: number;
  /** From the start of the request until its whole body is in. */
  readonly requestMs: number;
}

/** Default deadlines, when a service is built without its settings (tests, benchmarks). */
export const DEFAULT_RECEIVE_TIMEOUTS: ReceiveTimeouts = { headersMs: 10_000, requestMs: 30_000 };

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
  timeouts?: ReceiveTimeouts;
}): FastifyInstance {
  const { catalog } = options;
  const timeouts = options.timeouts ?? DEFAULT_RECEIVE_TIMEOUTS;
  const reading = new WeakMap<Socket, FastifyReply>();
  const app = Fastify({
    logger: options.logger ?? false,
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

/** The Error body of what the router refuses before any route runs. */
function frameworkError(error: FastifyError, catalog: Catalog): ApiError {
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

export type ClientError = Error & { code?: string; reason?: string };

/**
 * node:http's `clientError`: the request could not be read (broken framing, headers over its
 * limit, a deadline passed). The answer is written on the socket itself, as node does, then the
 * connection closes: what follows on it cannot be trusted to start a request.
 */
function answerClientError(
  app: FastifyInstance,
  catalog: Catalog,
  timeouts: ReceiveTimeouts,
  error: ClientError,
  socket: Socket,
  current: FastifyReply | undefined,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A request on this connection whose body is still being read (else a new one had begun).
  const inFlight = current !== undefined && !current.request.raw.complete ? current : undefined;
  const requestId = inFlight?.request.id ?? requestIdOf({ headers: {} });
  const apiError = unreadableRequestError(error, catalog, timeouts, inFlight !== undefined);
  app.log.info({ reqId: requestId, err: error, code: apiError.code }, 'request refused before it was read');
  if (inFlight?.raw.headersSent) {
    socket.destroy();
    return;
  }
  writeOnSocket(socket, apiError, requestId);
}

/**
 * Writes an Error answer straight on a connection whose request could not be read, then closes
 * it, as node:http does for its own refusals (nothing after it can be trusted to start a request).
 */
export function writeOnSocket(socket: Socket, apiError: ApiError, requestId: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(apiError.toBody());
  socket.end(
    `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  );
  // Unread bytes from the client would keep a half-closed socket open: give the answer a
  // moment to leave, then let go.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

/** The catalog codes of requests node:http could not read. */
type UnreadableCode = 'receive_timeout' | 'headers_too_large' | 'malformed_request';

/** What node:http's `clientError` means, as the Error answer; `body`: a request's body was under way. */
export function unreadableRequestError(
  error: ClientError,
  catalog: { error(code: UnreadableCode, message: string): ApiError },
  timeouts: ReceiveTimeouts,
  body: boolean,
): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return catalog.error(
        'receive_timeout',
        body
          ? `The request body did not arrive within ${seconds(timeouts.requestMs)} of the request's start (it stalled, or is shorter than its Content-Length). Send the whole body at once; the connection is closed.`
          : `The request headers did not arrive within ${seconds(Math.min(timeouts.headersMs, timeouts.requestMs))}. Send the whole request at once; the connection is closed.`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return catalog.error(
        'headers_too_large',
        'The request line and headers are larger than 16 KB together. Send a shorter URL, fewer or smaller headers (cookies included).',
      );
    case 'HPE_INVALID_EOF_STATE':
      return catalog.error(
        'malformed_request',
        'The connection ended before the whole request arrived: the body is shorter than its Content-Length, or its chunked encoding has no last chunk.',
      );
    default:
      return catalog.error(
        'malformed_request',
        `The request is not valid HTTP/1.1 (${error.reason ?? error.code ?? 'unreadable'}): check its framing, such as Content-Length, Transfer-Encoding: chunked and the chunk sizes. The connection is closed.`,
      );
  }
}

const seconds = (ms: number) => `${ms / 1000} s`;

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
  // Declared headers (If-Match…) are held to their documented schemas; the others pass.
  const headers = params.filter((p) => p.in === 'header');
  if (headers.length > 0) {
    schema.headers = inline({
      type: 'object',
      properties: Object.fromEntries(headers.map((p) => [p.name.toLowerCase(), p.schema])),
      required: headers.filter((p) => p.required).map((p) => p.name.toLowerCase()),
    });
  }
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
  /** Body limits of their own, by operationId, and the setting each comes from (named in the 413). */
  bodyLimits: Readonly<Record<string, RouteBodyLimit>> = {},
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
      config: { takesBody: op.requestBody !== undefined, bodyLimit: bodyLimits[op.operationId] },
      ...(bodyLimits[op.operationId] && { bodyLimit: bodyLimits[op.operationId]?.bytes }),
      handler: authenticate
        ? async (req: FastifyRequest, reply: FastifyReply) =>
            op.handler(input(req, await authenticate(req, op)), reply, deps)
        : (req: FastifyRequest, reply: FastifyReply) => op.handler(input(req, undefined), reply, deps),
    });
  }
}

/** A route's own body limit and the setting an operator raises for larger bodies. */
export interface RouteBodyLimit {
  readonly bytes: number;
  readonly setting: string;
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
    /** The setting an operator raises for larger bodies, named in the 413 (none: a fixed limit). */
    bodyLimitSetting?: string;
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
    const where = error.validation[0].instancePath?.replaceAll('/', '.').replace(/^\./, '');
    const part = PART_NAMES[error.validationContext ?? 'body'] ?? 'request';
    return catalog.error(
      'invalid_character',
      `The ${where ? (part === 'body' ? `field body.${where}` : `${part} ${where}`) : part} contains the character U+0000 (NUL), which no text field can hold. Remove it.`,
    );
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

const PART_NAMES: Record<string, string> = {
  body: 'body',
  params: 'path parameter',
  querystring: 'query parameter',
  headers: 'header',
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
