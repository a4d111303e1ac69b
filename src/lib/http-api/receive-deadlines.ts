import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiError } from '../api-error.ts';
import type { Catalog } from './error-handling.ts';
import { requestIdOf } from './request-id.ts';

/**
 * Requests node:http could not read (a deadline passed, headers too large, broken framing): the
 * deadlines, and the Error answer written on the socket before the connection closes.
 */

/** How long a client may take to send a request before it is answered 408 (node:http's deadlines). */
export interface ReceiveTimeouts {
  /** From the connection (or the end of the previous answer) until the headers are in. */
  readonly headersMs: number;
  /** From the start of the request until its whole body is in. */
  readonly requestMs: number;
}

/** Default deadlines, when a service is built without its settings (tests, benchmarks). */
export const DEFAULT_RECEIVE_TIMEOUTS: ReceiveTimeouts = { headersMs: 10_000, requestMs: 30_000 };

export type ClientError = Error & { code?: string; reason?: string };

/**
 * node:http's `clientError`: the request could not be read (broken framing, headers over its
 * limit, a deadline passed). The answer is written on the socket itself, as node does, then the
 * connection closes: what follows on it cannot be trusted to start a request.
 */
export function answerClientError(
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
