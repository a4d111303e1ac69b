import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import {
  constants,
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type SecureServerOptions,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { edgeErrors } from './errors.ts';
import { DirectRequest, DirectResponse, ignoreStreamError } from './http2-direct.ts';
import { sendError } from './json-answer.ts';

/**
 * What one HTTP/2 client may hold on the edge. nghttp2 (inside node:http2) enforces the frame
 * rules and most flood limits itself: CONTINUATION frames per header block, queued SETTINGS and
 * PING acknowledgements (ENHANCE_YOUR_CALM, then GOAWAY), streams reset faster than its own rate
 * (CVE-2023-44487), invalid frames; these bound the rest (docs/security.md, "HTTP/2").
 */
export const HTTP2_LIMITS = {
  settings: {
    // Concurrent streams per connection: what one client can make the edge forward at once.
    maxConcurrentStreams: 100,
    // The request head, as HTTP/1.1's 16 KB (node:http's maxHeaderSize).
    maxHeaderListSize: 16 * 1024,
    enablePush: false,
  },
  maxHeaderListPairs: 128,
  // Megabytes of nghttp2 buffers per session before new streams are refused.
  maxSessionMemory: 10,
  // Streams refused (over maxConcurrentStreams, or while over memory) before the session is closed.
  maxSessionRejectedStreams: 100,
  // Frames node:http2 could not use, over the session's life (its default): a bound, not a rate.
  maxSessionInvalidFrames: 1000,
  maxSettings: 32,
  maxOutstandingPings: 10,
  peerMaxConcurrentStreams: 100,
  // A TLS connection that negotiated neither h2 nor http/1.1 is closed after this long.
  unknownProtocolTimeout: 10_000,
} as const satisfies SecureServerOptions;

/**
 * Streams a client may reset before their answer ended, as a token bucket per session: up to
 * RESET_BURST at once, then RESET_PER_SECOND. Past it the session gets GOAWAY (ENHANCE_YOUR_CALM).
 * nghttp2's own limit (a burst of 1000, then 33 a second) comes later: each stream the edge
 * accepted already had its handler run and its origin request begun, so ours is tighter.
 */
export const RESET_BURST = 100;
export const RESET_PER_SECOND = 50;

/** An HTTPS listener speaking h2 and HTTP/1.1, drained and cut like node:http's servers. */
export type EdgeTlsServer = Http2SecureServer & {
  /** node:http's deadlines, for the HTTP/1.1 connections (set up by node:http2 with allowHTTP1). */
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
  /** Cuts every connection at once (HTTP/1.1 sockets and HTTP/2 sessions). */
  closeAllConnections(): void;
  /** HTTP/2 sessions get GOAWAY and close once their streams end; idle HTTP/1.1 sockets close. */
  closeIdleConnections(): void;
};

export interface Http2ServerOptions {
  readonly tls: SecureServerOptions;
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** The deadline for an HTTP/2 request's body (RECEIVE_TIMEOUT, as node:http's requestTimeout). */
  readonly receiveTimeoutMs?: () => number;
  /**
   * Whether a bodiless HTTP/2 request under /api may skip node:http2's compatibility objects
   * (http2-direct.ts): false for the platform's own host, whose Fastify app needs them. Without
   * it every request gets them.
   */
  readonly direct?: (req: IncomingMessage) => boolean;
}

/** A path under a site's API (`/api`, `/api/…`, `/api?…`): the requests the edge proxies. */
function underApi(path: string | undefined): boolean {
  if (path === undefined || !path.startsWith('/api')) return false;
  const next = path.charCodeAt(4);
  return Number.isNaN(next) || next === 47 /* / */ || next === 63 /* ? */;
}

/**
 * node:http2's server with HTTP/1.1 fallback (ALPN offers `h2` then `http/1.1`): HTTP/1.1 clients
 * reach node:http's own parser and deadlines, HTTP/2 streams reach the same handler through
 * node:http2's compatibility objects, adapted once here (`:authority` as Host, a body deadline),
 * or, for bodiless API requests when `direct` allows, through http2-direct.ts (serveDirectly).
 */
export function createHttp2Server(options: Http2ServerOptions): EdgeTlsServer {
  const sockets = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  /** HTTP/1.1 sockets with a request in flight (the rest are idle). */
  const busy = new Map<Socket, number>();
  const server = createSecureServer(
    { ...options.tls, ...HTTP2_LIMITS, allowHTTP1: true },
    (req: Http2ServerRequest | IncomingMessage, res: Http2ServerResponse | ServerResponse) => {
      if (req.httpVersionMajor === 2) {
        const request = req as Http2ServerRequest;
        // Served on the next turn, once the rest of what arrived with it has been read: a stream
        // reset in the same read (rapid reset) is then dropped here for the cost of nghttp2's
        // bookkeeping, instead of being routed and sent to its origin first.
        setImmediate(() => {
          if (request.stream.destroyed) return;
          adaptStream(request, res as Http2ServerResponse, options.receiveTimeoutMs?.());
          options.handle(req as IncomingMessage, res as ServerResponse);
        });
        return;
      } else {
        const socket = req.socket;
        busy.set(socket, (busy.get(socket) ?? 0) + 1);
        res.once('close', () => {
          const left = (busy.get(socket) ?? 1) - 1;
          if (left === 0) busy.delete(socket);
          else busy.set(socket, left);
        });
      }
      options.handle(req as IncomingMessage, res as ServerResponse);
    },
  ) as EdgeTlsServer;
  if (options.direct) serveDirectly(server, options.direct, options.handle);
  server.on('secureConnection', (socket: TLSSocket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    limitResets(session);
    session.on('stream', releaseOnClose);
  });
  server.closeAllConnections = () => {
    for (const session of sessions) session.destroy();
    for (const socket of sockets) socket.destroy();
  };
  server.closeIdleConnections = () => {
    for (const session of sessions) if (!session.closed) session.close();
    for (const socket of sockets) {
      if (!busy.has(socket) && (socket as TLSSocket).alpnProtocol !== 'h2') socket.destroy();
    }
  };
  return server;
}

/**
 * Bodiless requests under /api — nearly every proxied API call — are served on node:http2's stream
 * API through http2-direct.ts, about 11 µs of CPU less per request than through the
 * compatibility objects (docs/benchmarks.md); the rest go on to node:http2's own 'stream' listener, which makes
 * those objects and emits 'request'. That listener is node:http2's (added with the request
 * handler); it is taken off and called from here, so each stream gets exactly one of the two.
 */
function serveDirectly(
  server: Http2SecureServer,
  direct: (req: IncomingMessage) => boolean,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  const compatibility = server
    .listeners('stream')
    .find((listener) => listener.name === 'bound onServerStream') as
    | ((stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]) => void)
    | undefined;
  // Fails at start, not per request, should node:http2 ever wire its compatibility layer otherwise.
  if (!compatibility) throw new Error("node:http2's compatibility 'stream' listener was not found");
  server.removeListener('stream', compatibility);
  server.on(
    'stream',
    (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, raw: string[]) => {
      const socket = stream.session?.socket as Socket | undefined;
      if (
        !stream.endAfterHeaders ||
        socket === undefined ||
        headers.expect !== undefined ||
        !underApi(headers[':path'] as string | undefined)
      ) {
        compatibility.call(server, stream, headers, flags, raw);
        return;
      }
      const authority = headers[':authority'] as string | undefined;
      if (headers.host === undefined && authority !== undefined) headers.host = authority;
      const req = new DirectRequest(stream, headers, raw, socket) as unknown as IncomingMessage;
      if (!direct(req)) {
        compatibility.call(server, stream, headers, flags, raw);
        return;
      }
      const res = new DirectResponse(stream) as unknown as ServerResponse;
      // The next turn, as for the compatibility objects (the rapid-reset defence, above).
      setImmediate(() => {
        if (!stream.destroyed) handle(req, res);
      });
    },
  );
}

/**
 * An HTTP/2 request as the handler reads HTTP/1.1 ones: `:authority` stands for Host (a Host
 * beside it that names another site is refused by request-framing.ts), and a body has the
 * listener's receive deadline, which node:http2 does not keep: past it the client gets 408
 * `receive_timeout` and the stream is reset.
 */
function adaptStream(req: Http2ServerRequest, res: Http2ServerResponse, receiveTimeoutMs?: number): void {
  const { headers } = req;
  const authority = headers[':authority'];
  if (headers.host === undefined && authority !== undefined) headers.host = authority;
  const stream = req.stream;
  if (receiveTimeoutMs === undefined || stream.endAfterHeaders) return;
  const timer = setTimeout(() => {
    if (req.complete || stream.destroyed) return;
    if (!res.headersSent) {
      sendError(
        res as unknown as ServerResponse,
        edgeErrors.error(
          'receive_timeout',
          `The request body did not arrive within ${receiveTimeoutMs} ms. Send it again, without pauses.`,
        ),
        String(res.getHeader('x-request-id') ?? randomUUID()),
      );
    }
    // Its body is no longer read: the stream ends here whatever the answer did.
    setImmediate(() => stream.close(constants.NGHTTP2_CANCEL));
  }, receiveTimeoutMs);
  timer.unref();
  stream.once('close', () => clearTimeout(timer));
  req.once('end', () => clearTimeout(timer));
}

/**
 * A closed stream lets go of its listeners, and with them of the request's objects they reach (the
 * edge's `close` hooks hold the exchange, the proxy's handler, the headers). With them attached,
 * about 3 KB per h2 request outlived the young generation's collections and was promoted, so each
 * of those took 13–15 ms instead of about 1 and full collections came every few seconds: the h2
 * p99 was twice HTTP/1.1's (docs/decisions/http2.md, "A closed stream lets go of its listeners").
 * Nothing is emitted on a stream after `close`; `error` keeps a no-op listener all the same.
 */
function releaseOnClose(stream: ServerHttp2Stream): void {
  stream.once('close', release);
}

function release(this: ServerHttp2Stream): void {
  // emit() calls the listeners it copied before this one ran: the other `close` listeners still run.
  this.removeAllListeners();
  this.on('error', ignoreStreamError);
}

/** Rapid reset (CVE-2023-44487): a session resetting streams faster than the bucket refills is closed. */
function limitResets(session: ServerHttp2Session): void {
  let tokens = RESET_BURST;
  let refilledAt = performance.now();
  session.on('stream', (stream) => {
    stream.once('aborted', () => {
      const now = performance.now();
      tokens = Math.min(RESET_BURST, tokens + ((now - refilledAt) / 1000) * RESET_PER_SECOND);
      refilledAt = now;
      tokens -= 1;
      if (tokens < 0 && !session.destroyed) {
        // GOAWAY with this code is the last frame the session sends (the error goes to 'sessionError').
        session.destroy(new Error('too many streams reset'), constants.NGHTTP2_ENHANCE_YOUR_CALM);
      }
    });
  });
}
