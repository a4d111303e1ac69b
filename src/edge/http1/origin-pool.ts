import { connect as connectTcp, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { connect as connectTls } from 'node:tls';
import {
  ResponseError,
  type ResponseEvents,
  type ResponseHeaders,
  ResponseParser,
} from './response-parser.ts';

/**
 * Kept-alive HTTP/1.1 connections to one origin, one request at a time on each (no pipelining),
 * for the edge's proxy. The edge's own client, not undici's: see docs/decisions.md ("The edge's
 * origin client"), and src/edge/http1/response-parser.ts for the parsing.
 *
 * What it promises:
 * - every request ends in exactly one of `onEnd` or `onError` (or in the caller's `abort()`);
 * - a connection is reused only after a whole response with keep-alive, its request body all
 *   sent, and no byte more than was asked for; never past the origin's `Keep-Alive: timeout`
 *   hint (less a margin) or `idleTimeoutMs`;
 * - a request without a body, of an idempotent method, that a reused connection drops before any
 *   byte of an answer is sent again once on a new connection (RFC 9112 §9.3.1): the origin
 *   closing an idle connection just as a request goes out is not the caller's failure;
 * - timeouts are checked by one timer per pool, every quarter of the shortest timeout (at most
 *   a second), so a request pays for a clock read, not for a timer of its own.
 */

export interface OriginPoolOptions {
  /** At most this many connections; more requests wait for one to be free. */
  readonly maxConnections: number;
  readonly connectTimeoutMs: number;
  /** From the request written to the response's head. */
  readonly headersTimeoutMs: number;
  /** Between two pieces of the response's body (not while the caller has paused it). */
  readonly bodyTimeoutMs: number;
  /** An idle connection is closed after this long. */
  readonly idleTimeoutMs: number;
  /** Roots trusted for an https: origin (PEM); the system's when not given. */
  readonly ca?: string;
}

export interface OriginRequest {
  readonly method: string;
  /** Path and query, as sent on the request line. */
  readonly path: string;
  /**
   * Header lines, each `name: value\r\n`, without Host (the pool adds the origin's) and without
   * framing: with a `body`, Content-Length is among them when known, else `chunked` is set.
   */
  readonly headerLines: string;
  readonly body: Readable | null;
  /** The body is sent with chunked transfer coding (its length is not known). */
  readonly chunked: boolean;
}

/** What the caller can do with a request under way (given to its handler). */
export interface ExchangeControl {
  /** Stop reading the response (backpressure); `resume` reads on. */
  pause(): void;
  resume(): void;
  /** Give up on the response (the client left): the connection is closed, no callback follows. */
  abort(): void;
}

export interface ExchangeHandler {
  /** `bodyLength`: the answer's Content-Length when that frames its body, else -1. */
  onHead(status: number, headers: ResponseHeaders, bodyLength: number, control: ExchangeControl): void;
  onBody(chunk: Buffer, control: ExchangeControl): void;
  onEnd(): void;
  onError(error: Error): void;
}

/** Why a request to the origin failed, besides the socket's own errors (ECONNREFUSED…). */
export type OriginErrorCode =
  | 'ORIGIN_CONNECT_TIMEOUT'
  | 'ORIGIN_HEADERS_TIMEOUT'
  | 'ORIGIN_BODY_TIMEOUT'
  | 'ORIGIN_CLOSED'
  | 'ORIGIN_POOL_CLOSED';

export class OriginError extends Error {
  readonly code: OriginErrorCode;
  constructor(code: OriginErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OriginError';
    this.code = code;
  }
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/** An origin's keep-alive hint is trusted less this much, so we never send as it closes. */
const KEEP_ALIVE_MARGIN_MS = 1_000;

/** One request from dispatch to its end. */
class Exchange implements ExchangeControl {
  readonly request: OriginRequest;
  readonly handler: ExchangeHandler;
  connection: Connection | undefined;
  /** Sent once more after a reused connection dropped it (at most once). */
  retried = false;
  /** `performance.now()` of the last progress: written, head, or a piece of body. */
  lastActivity = 0;
  headReceived = false;
  paused = false;
  /** The request body has been sent whole. */
  requestSent = false;
  settled = false;

  constructor(request: OriginRequest, handler: ExchangeHandler) {
    this.request = request;
    this.handler = handler;
  }

  pause(): void {
    if (this.settled || this.paused) return;
    this.paused = true;
    this.connection?.socket.pause();
  }

  resume(): void {
    if (this.settled || !this.paused) return;
    this.paused = false;
    this.lastActivity = performance.now();
    this.connection?.socket.resume();
  }

  abort(): void {
    if (this.settled) return;
    this.settled = true;
    this.connection?.destroy();
  }
}

/** One connection to the origin and the exchange it carries, if any. */
class Connection implements ResponseEvents {
  readonly socket: Socket;
  readonly #pool: OriginPool;
  readonly #parser = new ResponseParser(this);
  exchange: Exchange | undefined;
  connected = false;
  readonly createdAt = performance.now();
  /** Responses completed on this connection (0: it has never been reused). */
  served = 0;
  /** When it went idle, and until when it may be reused. */
  idleUntil = 0;
  #dead = false;
  #error: Error | undefined;

  constructor(pool: OriginPool, socket: Socket) {
    this.#pool = pool;
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => this.#markDead());
    socket.on('error', (error: Error) => {
      this.#error ??= error;
    });
    socket.on('close', () => this.#onClose());
  }

  get dead(): boolean {
    return this.#dead || this.socket.destroyed;
  }

  /** Sends the exchange's request. */
  start(exchange: Exchange, hostHeader: string): void {
    this.exchange = exchange;
    exchange.connection = this;
    exchange.lastActivity = performance.now();
    const { request } = exchange;
    this.#parser.reset(request.method === 'HEAD');
    const head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${hostHeader}\r\n${request.headerLines}${request.chunked ? 'transfer-encoding: chunked\r\n' : ''}\r\n`;
    if (request.body === null) {
      exchange.requestSent = true;
      this.socket.write(head, 'latin1');
      return;
    }
    this.socket.write(head, 'latin1');
    this.#sendBody(exchange, request.body, request.chunked);
  }

  #sendBody(exchange: Exchange, body: Readable, chunked: boolean): void {
    const socket = this.socket;
    const onData = (chunk: Buffer) => {
      if (exchange.settled || this.exchange !== exchange) return;
      let more: boolean;
      if (chunked) {
        if (chunk.length === 0) return;
        socket.cork();
        socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
        socket.write(chunk);
        more = socket.write('\r\n', 'latin1');
        socket.uncork();
      } else {
        more = socket.write(chunk);
      }
      if (!more) {
        body.pause();
        socket.once('drain', () => body.resume());
      }
    };
    const onEnd = () => {
      if (exchange.settled || this.exchange !== exchange) return;
      if (chunked) socket.write('0\r\n\r\n', 'latin1');
      exchange.requestSent = true;
    };
    const onClose = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      // The client went away before its body was all sent: the origin cannot be left waiting.
      if (!exchange.requestSent && !exchange.settled && this.exchange === exchange) {
        this.#fail(
          new OriginError('ORIGIN_CLOSED', 'the client closed the request before its body was sent'),
        );
      }
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('close', onClose);
  }

  #onData(chunk: Buffer): void {
    const exchange = this.exchange;
    if (exchange === undefined || exchange.settled) {
      // Bytes nobody asked for: this connection's framing cannot be trusted any more.
      this.destroy();
      return;
    }
    exchange.lastActivity = performance.now();
    try {
      this.#parser.execute(chunk);
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    if (this.#parser.complete && !exchange.settled) this.#complete(exchange);
  }

  onHead(status: number, headers: ResponseHeaders, bodyLength: number): void {
    const exchange = this.exchange as Exchange;
    if (exchange.settled) return;
    exchange.headReceived = true;
    exchange.handler.onHead(status, headers, bodyLength, exchange);
  }

  onBody(chunk: Buffer): void {
    const exchange = this.exchange as Exchange;
    if (exchange.settled || chunk.length === 0) return;
    exchange.handler.onBody(chunk, exchange);
  }

  onComplete(): void {
    // Handled once `execute` has returned (see #onData), so bytes after the response are seen.
  }

  #complete(exchange: Exchange): void {
    exchange.settled = true;
    this.exchange = undefined;
    this.served += 1;
    const reusable = this.#parser.keepAlive && exchange.requestSent && !this.dead;
    if (reusable) {
      // Paused for the last response's reader: the next response must flow.
      if (exchange.paused) this.socket.resume();
      const hint = this.#parser.keepAliveMs;
      this.#pool.release(this, hint === undefined ? undefined : hint - KEEP_ALIVE_MARGIN_MS);
    } else {
      this.destroy();
    }
    exchange.handler.onEnd();
  }

  /** Fails the current exchange (or sends it again, see OriginPool) and closes the connection. */
  #fail(error: Error): void {
    const exchange = this.exchange;
    this.exchange = undefined;
    this.destroy();
    if (exchange !== undefined && !exchange.settled) this.#pool.failed(exchange, error, this);
  }

  /** Called by the pool's timer. */
  timeOut(error: OriginError): void {
    this.#fail(error);
  }

  #markDead(): void {
    this.#dead = true;
    this.#pool.forget(this);
  }

  #onClose(): void {
    this.#markDead();
    const exchange = this.exchange;
    if (exchange === undefined || exchange.settled) return;
    if (this.#error === undefined && this.#parser.close()) {
      this.#complete(exchange);
      return;
    }
    this.#fail(
      this.#error ??
        new OriginError(
          'ORIGIN_CLOSED',
          this.#parser.received
            ? 'the origin closed the connection before its answer was complete'
            : 'the origin closed the connection without answering',
        ),
    );
  }

  /** Whether the exchange it carries may be sent again on another connection. */
  retryable(exchange: Exchange): boolean {
    return (
      this.served > 0 &&
      !exchange.retried &&
      !this.#parser.received &&
      exchange.request.body === null &&
      IDEMPOTENT.has(exchange.request.method)
    );
  }

  destroy(): void {
    this.#dead = true;
    this.socket.destroy();
    this.#pool.forget(this);
  }
}

export class OriginPool {
  readonly #options: OriginPoolOptions;
  readonly #host: string;
  readonly #port: number;
  readonly #tls: boolean;
  readonly #hostHeader: string;
  /** Every open connection; idle ones also on the stack below (the most recent on top). */
  readonly #connections = new Set<Connection>();
  readonly #idle: Connection[] = [];
  /** Requests waiting for a connection (at `maxConnections`), oldest first from `#queueHead`. */
  #queue: Exchange[] = [];
  #queueHead = 0;
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(origin: URL, options: OriginPoolOptions) {
    if (origin.protocol !== 'http:' && origin.protocol !== 'https:') {
      throw new Error(`origin URLs are http: or https:, not ${origin.protocol}`);
    }
    this.#options = options;
    this.#tls = origin.protocol === 'https:';
    this.#host = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    this.#port = Number(origin.port || (this.#tls ? 443 : 80));
    this.#hostHeader = origin.host;
    const shortest = Math.min(options.connectTimeoutMs, options.headersTimeoutMs, options.bodyTimeoutMs);
    this.#timer = setInterval(() => this.#sweep(), Math.max(10, Math.min(1_000, shortest / 4)));
    this.#timer.unref();
  }

  /** Sends a request; the handler hears of its answer. */
  request(request: OriginRequest, handler: ExchangeHandler): void {
    const exchange = new Exchange(request, handler);
    if (this.#closed) {
      exchange.settled = true;
      handler.onError(new OriginError('ORIGIN_POOL_CLOSED', 'the edge is shutting down'));
      return;
    }
    this.#dispatch(exchange, false);
  }

  /** How many connections are open, and how many of those are idle (for tests and metrics). */
  get size(): { open: number; idle: number } {
    return { open: this.#connections.size, idle: this.#idle.length };
  }

  #dispatch(exchange: Exchange, fresh: boolean): void {
    if (!fresh) {
      const now = performance.now();
      for (let connection = this.#idle.pop(); connection; connection = this.#idle.pop()) {
        if (connection.dead) continue;
        if (connection.idleUntil <= now) {
          connection.destroy();
          continue;
        }
        connection.start(exchange, this.#hostHeader);
        return;
      }
    }
    if (this.#connections.size >= this.#options.maxConnections) {
      this.#queue.push(exchange);
      return;
    }
    this.#open().start(exchange, this.#hostHeader);
  }

  #open(): Connection {
    const socket = this.#tls
      ? connectTls({
          host: this.#host,
          port: this.#port,
          servername: /^[\d.]+$|:/.test(this.#host) ? undefined : this.#host,
          ALPNProtocols: ['http/1.1'],
          ...(this.#options.ca !== undefined && { ca: this.#options.ca }),
        })
      : connectTcp({ host: this.#host, port: this.#port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    const connection = new Connection(this, socket);
    socket.once(this.#tls ? 'secureConnect' : 'connect', () => {
      connection.connected = true;
    });
    this.#connections.add(connection);
    return connection;
  }

  /** A connection finished its exchange and may be reused (`hintMs`: the origin's own limit). */
  release(connection: Connection, hintMs: number | undefined): void {
    if (this.#closed) {
      connection.destroy();
      return;
    }
    const next = this.#nextQueued();
    if (next !== undefined) {
      connection.start(next, this.#hostHeader);
      return;
    }
    const idleMs =
      hintMs === undefined ? this.#options.idleTimeoutMs : Math.min(hintMs, this.#options.idleTimeoutMs);
    if (idleMs <= 0) {
      connection.destroy();
      return;
    }
    connection.idleUntil = performance.now() + idleMs;
    this.#idle.push(connection);
  }

  /** A connection closed: it leaves the pool, and a waiting request may take its place. */
  forget(connection: Connection): void {
    if (!this.#connections.delete(connection)) return;
    const at = this.#idle.indexOf(connection);
    if (at !== -1) this.#idle.splice(at, 1);
    if (this.#closed) return;
    const next = this.#nextQueued();
    if (next !== undefined) this.#dispatch(next, true);
  }

  /** The exchange's connection failed: sent again (see the class comment) or failed. */
  failed(exchange: Exchange, error: Error, connection: Connection): void {
    if (!this.#closed && connection.retryable(exchange)) {
      exchange.retried = true;
      exchange.connection = undefined;
      exchange.headReceived = false;
      this.#dispatch(exchange, true);
      return;
    }
    exchange.settled = true;
    exchange.handler.onError(error);
  }

  #nextQueued(): Exchange | undefined {
    while (this.#queueHead < this.#queue.length) {
      const next = this.#queue[this.#queueHead] as Exchange;
      this.#queueHead += 1;
      if (this.#queueHead > 1024 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#queueHead);
        this.#queueHead = 0;
      }
      if (!next.settled) return next;
    }
    return undefined;
  }

  /** The pool's one timer: timeouts of requests under way, and idle connections past their time. */
  #sweep(): void {
    const now = performance.now();
    const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs } = this.#options;
    for (const connection of [...this.#connections]) {
      const exchange = connection.exchange;
      if (exchange === undefined || exchange.settled) {
        if (connection.idleUntil !== 0 && connection.idleUntil <= now) connection.destroy();
        continue;
      }
      if (!connection.connected) {
        if (now - connection.createdAt >= connectTimeoutMs) {
          connection.timeOut(
            new OriginError(
              'ORIGIN_CONNECT_TIMEOUT',
              `no connection to the origin within ${connectTimeoutMs} ms`,
            ),
          );
        }
      } else if (!exchange.headReceived) {
        if (now - exchange.lastActivity >= headersTimeoutMs) {
          connection.timeOut(
            new OriginError(
              'ORIGIN_HEADERS_TIMEOUT',
              `the origin did not answer within ${headersTimeoutMs} ms`,
            ),
          );
        }
      } else if (!exchange.paused && now - exchange.lastActivity >= bodyTimeoutMs) {
        connection.timeOut(
          new OriginError('ORIGIN_BODY_TIMEOUT', `the origin sent nothing more for ${bodyTimeoutMs} ms`),
        );
      }
    }
    // Requests still waiting for a connection count their head timeout from when they were asked.
    for (let i = this.#queueHead; i < this.#queue.length; i++) {
      const waiting = this.#queue[i] as Exchange;
      if (waiting.lastActivity === 0) waiting.lastActivity = now;
      else if (!waiting.settled && now - waiting.lastActivity >= headersTimeoutMs) {
        waiting.settled = true;
        waiting.handler.onError(
          new OriginError(
            'ORIGIN_HEADERS_TIMEOUT',
            `no connection to the origin was free within ${headersTimeoutMs} ms`,
          ),
        );
      }
    }
  }

  /** Closes idle connections at once; requests under way may finish. Resolves when all are closed. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#idle.splice(0)) connection.destroy();
    for (let next = this.#nextQueued(); next !== undefined; next = this.#nextQueued()) {
      next.settled = true;
      next.handler.onError(new OriginError('ORIGIN_POOL_CLOSED', 'the edge is shutting down'));
    }
    const open = [...this.#connections];
    await Promise.all(
      open.map(
        (connection) =>
          new Promise<void>((resolve) => {
            if (connection.socket.closed) resolve();
            else connection.socket.once('close', () => resolve());
          }),
      ),
    );
    // Only now: the requests that were under way kept their timeouts until they ended.
    clearInterval(this.#timer);
  }
}

export { headerValues, type ResponseHeaders } from './response-parser.ts';
export { ResponseError };
