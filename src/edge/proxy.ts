import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type Dispatcher, Pool } from 'undici';
import type { ApiError } from '../lib/api-error.ts';
import { edgeErrors } from './errors.ts';

/** Headers that describe one connection, not the message: never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface ProxyOptions {
  /** Connecting to the origin. */
  readonly connectTimeoutMs: number;
  /** Waiting for the origin's response headers, then between body chunks. */
  readonly responseTimeoutMs: number;
  /** Told of every failed forward (metrics and logs); `answered` when headers had gone out. */
  readonly onError?: (error: unknown, requestId: string, answered: boolean) => void;
}

export interface ForwardedFor {
  readonly clientAddress: string;
  readonly host: string;
  readonly proto: 'http' | 'https';
  readonly requestId: string;
  /**
   * Called the moment the origin's part is over (its answer relayed, or failed), before the
   * client's response ends, so a log line written when the response closes can read the time.
   */
  readonly upstreamDone?: () => void;
}

/** Bodies up to this size are sent as one string with the head (see ForwardHandler). */
const WHOLE_AS_STRING_MAX = 16 * 1024;

/** An origin's pool and the parts of its URL every request needs, parsed once. */
interface Upstream {
  readonly pool: Pool;
  /** The origin URL's path without its trailing slash, prefixed to every forwarded path. */
  readonly basePath: string;
}

/**
 * Forwards requests to project origins over kept-alive connections (one undici Pool per origin),
 * adding X-Forwarded-* and Forwarded (RFC 7239) and the request id. A refused connection is 502
 * `origin_unreachable`, a slow origin 504 `origin_timeout`, both with the Error body.
 *
 * It uses undici's `dispatch` with a handler of callbacks rather than `request`: the answer's
 * chunks go straight to the client's response, without a Readable, an async iterator and the
 * promises around them per request, which cost as much as the rest of the proxying together
 * (docs/benchmarks.md, "Edge").
 */
export class OriginProxy {
  readonly #upstreams = new Map<string, Upstream>();
  readonly #options: ProxyOptions;

  constructor(options: ProxyOptions) {
    this.#options = options;
  }

  #upstream(originUrl: string): Upstream {
    let upstream = this.#upstreams.get(originUrl);
    if (!upstream) {
      const origin = new URL(originUrl);
      upstream = {
        pool: new Pool(origin.origin, {
          connections: 128,
          pipelining: 1,
          keepAliveTimeout: 30_000,
          connectTimeout: this.#options.connectTimeoutMs,
          headersTimeout: this.#options.responseTimeoutMs,
          bodyTimeout: this.#options.responseTimeoutMs,
        }),
        basePath: origin.pathname.replace(/\/$/, ''),
      };
      this.#upstreams.set(originUrl, upstream);
    }
    return upstream;
  }

  /** Resolves once the answer (or the error answer) is sent, or the response is given up. */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    originUrl: string,
    path: string,
    forwarded: ForwardedFor,
  ): Promise<void> {
    const upstream = this.#upstream(originUrl);
    const incoming = req.headers;
    const headers: Record<string, string | string[]> = {};
    for (const name in incoming) {
      const value = incoming[name];
      if (value === undefined || name === 'host' || HOP_BY_HOP.has(name)) continue;
      headers[name] = value;
    }
    const priorFor = incoming['x-forwarded-for'];
    headers['x-forwarded-for'] = priorFor
      ? `${priorFor}, ${forwarded.clientAddress}`
      : forwarded.clientAddress;
    headers['x-forwarded-host'] = forwarded.host;
    headers['x-forwarded-proto'] = forwarded.proto;
    const node = forwarded.clientAddress.includes(':')
      ? `"[${forwarded.clientAddress}]"`
      : forwarded.clientAddress;
    headers.forwarded = `for=${node};host=${forwarded.host};proto=${forwarded.proto}`;
    headers['x-request-id'] = forwarded.requestId;
    const method = req.method ?? 'GET';
    const hasBody =
      method !== 'GET' &&
      method !== 'HEAD' &&
      (incoming['content-length'] !== undefined || incoming['transfer-encoding'] !== undefined);
    return new Promise<void>((resolve) => {
      upstream.pool.dispatch(
        { method: method as 'GET', path: `${upstream.basePath}${path}`, headers, body: hasBody ? req : null },
        new ForwardHandler(res, forwarded, resolve, this.#options.onError),
      );
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.#upstreams.values()].map(({ pool }) => pool.close()));
  }
}

/** Copies one origin answer to the client's response as it arrives, with backpressure. */
class ForwardHandler implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #requestId: string;
  readonly #upstreamDone: (() => void) | undefined;
  #clientGone = false;
  readonly #done: () => void;
  readonly #onError: ProxyOptions['onError'];
  /** The Content-Length the origin announced, or -1. */
  #length = -1;
  /** A chunk that is the whole announced body, sent with `end()` in the same write as the head. */
  #whole: Buffer | undefined;

  constructor(
    res: ServerResponse,
    forwarded: ForwardedFor,
    done: () => void,
    onError: ProxyOptions['onError'] = undefined,
  ) {
    this.#res = res;
    this.#requestId = forwarded.requestId;
    this.#upstreamDone = forwarded.upstreamDone;
    this.#done = done;
    this.#onError = onError;
  }

  onRequestStart(): void {}

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    const out: Record<string, string | string[]> = {};
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      out[name] = value;
    }
    out['x-request-id'] = this.#requestId;
    const length = headers['content-length'];
    if (typeof length === 'string') this.#length = Number(length);
    this.#res.writeHead(statusCode, out);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const res = this.#res;
    if (res.destroyed) {
      // The client went away: stop reading the origin's answer (not an origin failure).
      this.#clientGone = true;
      controller.abort(new Error('the client closed the connection'));
      return;
    }
    if (this.#whole === undefined && chunk.length === this.#length) {
      // The whole body in one chunk (the usual small API answer): the end follows at once, and
      // `end(chunk)` sends head and body in one write without a separate write() pass.
      this.#whole = chunk;
      return;
    }
    if (!res.write(chunk)) {
      controller.pause();
      res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    this.#upstreamDone?.();
    const whole = this.#whole;
    if (whole === undefined) this.#res.end();
    // As a latin1 string (byte for byte, whatever the body is) node:http joins it to the head
    // and sends both with one write() instead of a writev() of two buffers.
    else if (whole.length <= WHOLE_AS_STRING_MAX) this.#res.end(whole.toString('latin1'), 'latin1');
    else this.#res.end(whole);
    this.#done();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const res = this.#res;
    this.#upstreamDone?.();
    if (!this.#clientGone) this.#onError?.(error, this.#requestId, res.headersSent);
    if (res.headersSent) res.destroy(error);
    else if (!res.destroyed) sendError(res, originError(error), this.#requestId);
    this.#done();
  }
}

function originError(error: unknown): ApiError {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return edgeErrors.error(
      'origin_timeout',
      "The project's API did not answer in time. Try again; if it persists, the project's owner should check its origin.",
    );
  }
  return edgeErrors.error(
    'origin_unreachable',
    "The project's API could not be reached. Try again shortly; if it persists, the project's owner should check that its origin is running.",
    { cause: error },
  );
}

export function sendError(res: ServerResponse, error: ApiError, requestId: string): void {
  const body = JSON.stringify(error.toBody());
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    ...error.headers,
  });
  res.end(body);
}
