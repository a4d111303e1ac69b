import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiError } from '../lib/api-error.ts';
import { edgeErrors } from './errors.ts';
import {
  type ExchangeControl,
  type ExchangeHandler,
  headerValues,
  OriginPool,
  type ResponseHeaders,
} from './http1/origin-pool.ts';

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

/** Request headers the edge sets itself (the client's are replaced, or appended to for X-Forwarded-For). */
const SET_BY_EDGE = new Set([
  'host',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'forwarded',
  'x-request-id',
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
  readonly pool: OriginPool;
  /** The origin URL's path without its trailing slash, prefixed to every forwarded path. */
  readonly basePath: string;
}

/**
 * Names listed in a Connection header are hop-by-hop too (RFC 9110 §7.6.1); `undefined` when it
 * lists none besides the usual close/keep-alive (the common case, checked without splitting).
 */
function connectionListed(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined || value.length === 0) return undefined;
  const text = (Array.isArray(value) ? value.join(',') : value).toLowerCase();
  if (text === 'keep-alive' || text === 'close') return undefined;
  const names = new Set(text.split(',').map((name) => name.trim()));
  names.delete('keep-alive');
  names.delete('close');
  return names.size === 0 ? undefined : names;
}

/**
 * Forwards requests to project origins over kept-alive connections (one OriginPool per origin),
 * adding X-Forwarded-* and Forwarded (RFC 7239) and the request id. A refused connection is 502
 * `origin_unreachable`, a slow origin 504 `origin_timeout`, both with the Error body.
 *
 * The answer's head and pieces go straight from the origin's socket to the client's response
 * through callbacks: no Readable, async iterator or promise per request (docs/benchmarks.md, "Edge").
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
        pool: new OriginPool(origin, {
          maxConnections: 128,
          idleTimeoutMs: 30_000,
          connectTimeoutMs: this.#options.connectTimeoutMs,
          headersTimeoutMs: this.#options.responseTimeoutMs,
          bodyTimeoutMs: this.#options.responseTimeoutMs,
        }),
        basePath: origin.pathname.replace(/\/$/, ''),
      };
      this.#upstreams.set(originUrl, upstream);
    }
    return upstream;
  }

  /**
   * Sends the request on and the answer back. Returns at once: the answer (or the error answer)
   * follows on `res`, and `forwarded.upstreamDone` tells when the origin's part is over.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    originUrl: string,
    path: string,
    forwarded: ForwardedFor,
  ): void {
    const upstream = this.#upstream(originUrl);
    const incoming = req.headers;
    const listed = connectionListed(incoming.connection);
    const method = req.method ?? 'GET';
    const hasBody =
      method !== 'GET' &&
      method !== 'HEAD' &&
      (incoming['content-length'] !== undefined || incoming['transfer-encoding'] !== undefined);
    // A chunked body is sent on chunked (its length unknown); a Content-Length beside it is void.
    const chunked = hasBody && incoming['transfer-encoding'] !== undefined;
    let lines = '';
    for (const name in incoming) {
      const value = incoming[name];
      if (value === undefined || SET_BY_EDGE.has(name) || HOP_BY_HOP.has(name)) continue;
      if (listed?.has(name) || (name === 'content-length' && (chunked || !hasBody))) continue;
      if (typeof value === 'string') lines += `${name}: ${value}\r\n`;
      else for (const one of value) lines += `${name}: ${one}\r\n`;
    }
    const priorFor = incoming['x-forwarded-for'];
    const node = forwarded.clientAddress.includes(':')
      ? `"[${forwarded.clientAddress}]"`
      : forwarded.clientAddress;
    lines +=
      `x-forwarded-for: ${priorFor ? `${priorFor}, ${forwarded.clientAddress}` : forwarded.clientAddress}\r\n` +
      `x-forwarded-host: ${forwarded.host}\r\nx-forwarded-proto: ${forwarded.proto}\r\n` +
      `forwarded: for=${node};host=${forwarded.host};proto=${forwarded.proto}\r\n` +
      `x-request-id: ${forwarded.requestId}\r\n`;
    upstream.pool.request(
      {
        method,
        path: `${upstream.basePath}${path}`,
        headerLines: lines,
        body: hasBody ? req : null,
        chunked,
      },
      new ForwardHandler(res, forwarded, this.#options.onError),
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.#upstreams.values()].map(({ pool }) => pool.close()));
  }
}

/** Copies one origin answer to the client's response as it arrives, with backpressure. */
class ForwardHandler implements ExchangeHandler {
  readonly #res: ServerResponse;
  readonly #requestId: string;
  readonly #upstreamDone: (() => void) | undefined;
  readonly #onError: ProxyOptions['onError'];
  /** The Content-Length the origin announced, or -1. */
  #length = -1;
  /** A chunk that is the whole announced body, sent with `end()` in the same write as the head. */
  #whole: Buffer | undefined;

  constructor(res: ServerResponse, forwarded: ForwardedFor, onError: ProxyOptions['onError'] = undefined) {
    this.#res = res;
    this.#requestId = forwarded.requestId;
    this.#upstreamDone = forwarded.upstreamDone;
    this.#onError = onError;
  }

  onHead(statusCode: number, headers: ResponseHeaders, bodyLength: number): void {
    const listed = headers.includes('connection')
      ? connectionListed(headerValues(headers, 'connection'))
      : undefined;
    // A flat list, as the parser gives it: node:http writes it without an object of dynamic keys.
    const out: string[] = [];
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i] as string;
      if (HOP_BY_HOP.has(name) || listed?.has(name)) continue;
      out.push(name, headers[i + 1] as string);
    }
    out.push('x-request-id', this.#requestId);
    this.#length = bodyLength;
    this.#res.writeHead(statusCode, out);
  }

  onBody(chunk: Buffer, control: ExchangeControl): void {
    const res = this.#res;
    if (res.destroyed) {
      // The client went away: stop reading the origin's answer (not an origin failure).
      control.abort();
      this.#upstreamDone?.();
      return;
    }
    if (this.#whole === undefined && chunk.length === this.#length) {
      // The whole body in one piece (the usual small API answer): the end follows at once, and
      // `end(chunk)` sends head and body in one write without a separate write() pass.
      this.#whole = chunk;
      return;
    }
    if (this.#whole !== undefined) {
      // Announced whole, yet more came: never the case with a well-framed answer, kept in order.
      res.write(this.#whole);
      this.#whole = undefined;
    }
    if (!res.write(chunk)) {
      control.pause();
      res.once('drain', () => control.resume());
    }
  }

  onEnd(): void {
    this.#upstreamDone?.();
    const whole = this.#whole;
    if (whole === undefined) this.#res.end();
    // As a latin1 string (byte for byte, whatever the body is) node:http joins it to the head
    // and sends both with one write() instead of a writev() of two buffers.
    else if (whole.length <= WHOLE_AS_STRING_MAX) this.#res.end(whole.toString('latin1'), 'latin1');
    else this.#res.end(whole);
  }

  onError(error: Error): void {
    const res = this.#res;
    this.#upstreamDone?.();
    this.#onError?.(error, this.#requestId, res.headersSent);
    if (res.headersSent) res.destroy(error);
    else if (!res.destroyed) sendError(res, originError(error), this.#requestId);
  }
}

function originError(error: unknown): ApiError {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'ORIGIN_HEADERS_TIMEOUT' || code === 'ORIGIN_BODY_TIMEOUT') {
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
