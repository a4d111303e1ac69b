import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import { type Dispatcher, Pool } from 'undici';
import { guardedLookup, type OriginPolicy, originAllowed } from '../lib/address-policy.ts';
import type { ApiError } from '../lib/api-error.ts';
import { SlotList } from '../lib/slot-list.ts';
import { edgeErrors } from './errors.ts';
import { type AnswerFacts, type RequestFacts, requestHeaders, responseHeaders } from './header-rules.ts';
import { sendError } from './json-answer.ts';
import { requestFraming } from './request-framing.ts';
import type { LinkRewriter } from './rewrite-links.ts';

/**
 * The origin guard for an address policy: an address literal is judged before connecting (no DNS
 * lookup happens for it), a name at every lookup, so a name that later resolves to a private
 * address (DNS rebinding) is refused at connect time too. A function as `policy` is asked every
 * time (the origins granted change while the edge runs); judgements are kept until it answers
 * with another policy.
 */
export function originGuard(policy: OriginPolicy | (() => OriginPolicy)): OriginGuard {
  const current = typeof policy === 'function' ? policy : () => policy;
  let judgedUnder: OriginPolicy | undefined;
  const judged = new Map<string, boolean>();
  return {
    allows(origin) {
      const now = current();
      if (now !== judgedUnder) {
        judged.clear();
        judgedUnder = now;
      }
      let allowed = judged.get(origin.href);
      if (allowed === undefined) {
        allowed = originAllowed(origin, now);
        judged.set(origin.href, allowed);
      }
      return allowed;
    },
    lookup: guardedLookup(current),
  };
}

/** Where a project's origin may be reached: checked before connecting and at every DNS answer. */
export interface OriginGuard {
  /** False for an origin whose host is an address literal the policy refuses (asked per request). */
  allows(origin: URL): boolean;
  /** Resolves origin hostnames, failing for any address the policy refuses (DNS rebinding). */
  readonly lookup: LookupFunction;
}

export interface ProxyOptions {
  /** Connecting to the origin. */
  readonly connectTimeoutMs: number;
  /**
   * A deadline for the origin's answer to begin (its final head, however slowly it trickles or how
   * many 1xx it sends first), the longest silence between its body's pieces, and the longest a
   * client may leave the answer unread before it is cut.
   */
  readonly responseTimeoutMs: number;
  /** Told of every failed forward (metrics and logs); `answered` when headers had gone out. */
  readonly onError?: (error: unknown, requestId: string, answered: boolean) => void;
  /** The address policy for origins (SSRF): see `originGuard`. */
  readonly guard: OriginGuard;
  /**
   * The platform's own domain: an origin's Set-Cookie whose Domain covers it is dropped, so a
   * project's site cannot plant cookies on the dashboard (cookie tossing).
   */
  readonly platformDomain?: string;
}

/** What the proxy is told about one request: the facts its header rules use (header-rules.ts), and when to report. */
export interface ForwardedFor extends RequestFacts, AnswerFacts {
  /**
   * Called the moment the origin's part is over (its answer relayed, or failed), before the
   * client's response ends, so a log line written when the response closes can read the time.
   */
  readonly upstreamDone?: () => void;
}

/** Bodies up to this size are sent as one string with the head (see ForwardHandler.onResponseData). */
const WHOLE_AS_STRING_MAX = 16 * 1024;

/** Request bodies up to this size are read whole before they go to the origin (see forward). */
const WHOLE_BODY_MAX = 1024 * 1024;

/** Reads a body of a known length; `gone` instead of `done` when the client goes away first. */
function readWhole(
  req: IncomingMessage,
  length: number,
  done: (body: Buffer) => void,
  gone: () => void,
): void {
  const body = Buffer.allocUnsafe(length);
  let at = 0;
  let ended = false;
  req.on('data', (chunk: Buffer) => {
    chunk.copy(body, at);
    at += chunk.length;
  });
  req.on('end', () => {
    ended = true;
    if (at === length) done(body);
    else gone();
  });
  req.on('close', () => {
    if (!ended) gone();
  });
}

/** An origin's pool and the parts of its URL every request needs, parsed once. */
interface Upstream extends LinkRewriter {
  readonly pool: Pool;
  /** The origin URL's path without its trailing slash, prefixed to every forwarded path. */
  readonly basePath: string;
  /** The origin's URL, judged by the guard before every request. */
  readonly url: URL;
}

/** An Error with the code the metrics and the answer are chosen by. */
function failure(code: string, message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

/**
 * undici's error codes, in the edge's words (src/edge/metrics.ts counts these kinds). Errors of
 * the socket itself (ECONNREFUSED, ECONNRESET, TLS) keep their own codes.
 */
const UNDICI_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'ORIGIN_CONNECT_TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ORIGIN_HEADERS_TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'ORIGIN_BODY_TIMEOUT',
  UND_ERR_SOCKET: 'ORIGIN_CLOSED',
  UND_ERR_CLOSED: 'ORIGIN_CLOSED',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'ORIGIN_BAD_RESPONSE',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'ORIGIN_BAD_RESPONSE',
  UND_ERR_INFO: 'ORIGIN_BAD_RESPONSE',
};

function originFailure(error: Error): Error {
  const code = String((error as { code?: unknown }).code ?? '');
  if (code.startsWith('ORIGIN_')) return error;
  // llhttp's refusals (HPE_INVALID_CHUNK_SIZE, HPE_UNEXPECTED_CONTENT_LENGTH, …): a malformed answer.
  const ours =
    UNDICI_CODES[code] ??
    (code.startsWith('HPE_') || error.name === 'HTTPParserError' ? 'ORIGIN_BAD_RESPONSE' : undefined);
  return ours === undefined ? error : failure(ours, error.message, error);
}

/**
 * Forwards requests to project origins through undici (one Pool of kept-alive connections per
 * origin), its request and answer headers by the rules of header-rules.ts. The edge decides
 * every forwarded request's framing itself (src/edge/request-framing.ts); a request it cannot
 * frame unambiguously is refused with 400 before anything reaches the origin.
 *
 * Failures: a refused connection is 502 `origin_unreachable`, a slow origin 504 `origin_timeout`,
 * a malformed answer 502 — each with the Error body while nothing of the answer has gone out.
 * A client that leaves, or stops reading for longer than the response timeout, has its origin
 * request aborted, and the origin's connection is discarded rather than left paused in the pool.
 */
export class OriginProxy {
  readonly #upstreams = new Map<string, Upstream>();
  readonly #options: ProxyOptions;
  /** Exchanges waiting for an origin's head or a client's drain, checked by one timer. */
  readonly #watched = new SlotList<ForwardHandler>();
  readonly #sweep: NodeJS.Timeout;

  constructor(options: ProxyOptions) {
    this.#options = options;
    const every = Math.max(10, Math.min(1_000, Math.floor(options.responseTimeoutMs / 8)));
    this.#sweep = setInterval(() => this.#expire(), every);
    this.#sweep.unref();
  }

  #expire(): void {
    if (this.#watched.size === 0) return;
    const now = performance.now();
    this.#watched.forEach((exchange) => {
      exchange.expire(now);
    });
  }

  #upstream(originUrl: string): Upstream {
    let upstream = this.#upstreams.get(originUrl);
    if (!upstream) {
      const origin = new URL(originUrl);
      const { guard } = this.#options;
      upstream = {
        pool: new Pool(origin.origin, {
          connections: 128,
          pipelining: 1,
          keepAliveTimeout: 30_000,
          // The head's deadline is the edge's own (a 1xx resets undici's timer); this is a backstop.
          // Both timeouts are equal on purpose: undici then refreshes one timer from the head to
          // the body instead of making a new one per request, objects that outlived a young-
          // generation collection and cost the edge a third of its throughput in old-space GC.
          headersTimeout: this.#options.responseTimeoutMs,
          bodyTimeout: this.#options.responseTimeoutMs,
          connect: {
            timeout: this.#options.connectTimeoutMs,
            lookup: guard.lookup,
          },
        }),
        origin: origin.origin,
        basePath: origin.pathname.replace(/\/$/, ''),
        url: origin,
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
    const framing = requestFraming(req);
    if (framing.kind === 'refused') {
      // Answered without reading on: the connection ends with this answer.
      res.shouldKeepAlive = false;
      sendError(res, edgeErrors.error('bad_request_framing', framing.reason), forwarded.requestId);
      forwarded.upstreamDone?.();
      return;
    }
    const upstream = this.#upstream(originUrl);
    const handler = new ForwardHandler(this, res, forwarded, this.#options, upstream);
    if (!this.#options.guard.allows(upstream.url)) {
      handler.onResponseError(
        undefined,
        failure('ORIGIN_ADDRESS_FORBIDDEN', `the origin ${originUrl} is an address the edge may not reach`),
      );
      return;
    }
    const headers = requestHeaders(
      req.headers,
      forwarded,
      framing.kind === 'length' ? framing.length : undefined,
    );
    handler.watch();
    const dispatch = (body: Buffer | IncomingMessage | null) => {
      try {
        upstream.pool.dispatch(
          {
            method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
            path: `${upstream.basePath}${path}`,
            headers,
            body,
          },
          handler,
        );
      } catch (error) {
        // undici refuses some requests outright (a header it will not send): the client hears 502.
        handler.onResponseError(undefined, error as Error);
      }
    };
    if (framing.kind === 'none' || (framing.kind === 'length' && framing.length === 0)) dispatch(null);
    else if (framing.kind === 'length' && framing.length <= WHOLE_BODY_MAX) {
      // Sent whole, in one write with the head: an origin that refuses it early (413, 401) and
      // closes is then heard, where a body still streaming would meet EPIPE and lose the answer.
      readWhole(req, framing.length, dispatch, () => handler.abandon());
    } else dispatch(req);
  }

  /** Exchanges waiting for an origin's head or a client's drain (operations and tests). */
  get waiting(): number {
    return this.#watched.size;
  }

  /** Puts an exchange under the timer; returns its slot, for unwatch. */
  watch(handler: ForwardHandler): number {
    return this.#watched.add(handler);
  }

  /** The exchange no longer needs the timer (its head arrived, or it ended). */
  unwatch(slot: number): void {
    this.#watched.release(slot);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await Promise.all([...this.#upstreams.values()].map(({ pool }) => pool.close()));
  }
}

/**
 * One exchange: copies the origin's answer to the client's response as it arrives, with
 * backpressure bounded in time. The head is written with the first piece of the body (or its
 * end), so an answer whose body turns out malformed before any of it arrived still gets a 502.
 */
class ForwardHandler implements Dispatcher.DispatchHandler {
  readonly #proxy: OriginProxy;
  /**
   * The client's response; let go once the exchange is over, as undici keeps each connection's
   * last requests (and so their handlers) queued for a while.
   */
  #res: ServerResponse | undefined;
  readonly #requestId: string;
  #upstreamDone: (() => void) | undefined;
  readonly #options: ProxyOptions;
  #forwarded: ForwardedFor | undefined;
  readonly #upstream: LinkRewriter;
  #controller: Dispatcher.DispatchController | undefined;
  /** performance.now() by which the origin's head must have come. */
  readonly #headDeadline: number;
  /** performance.now() when the client stopped reading (a write returned false), or -1. */
  #stalledSince = -1;
  #status = 0;
  #headers: IncomingHttpHeaders | undefined;
  /** The Content-Length the origin announced, or -1. */
  #length = -1;
  /** A chunk that is the whole announced body, sent with `end()` in the same write as the head. */
  #whole: Buffer | undefined;
  #done = false;
  /** Whether a 'close' listener watches for the client leaving (see #clientGone). */
  #listening = false;
  /** The slot under the proxy's timer, or -1. */
  #watchSlot = -1;

  constructor(
    proxy: OriginProxy,
    res: ServerResponse,
    forwarded: ForwardedFor,
    options: ProxyOptions,
    upstream: LinkRewriter,
  ) {
    this.#proxy = proxy;
    this.#forwarded = forwarded;
    this.#upstream = upstream;
    this.#res = res;
    this.#requestId = forwarded.requestId;
    this.#upstreamDone = forwarded.upstreamDone;
    this.#options = options;
    this.#headDeadline = performance.now() + options.responseTimeoutMs;
    if ((res as { stream?: unknown }).stream !== undefined) {
      // HTTP/2: a reset stream (a client's cancel, or rapid reset) ends its origin request at once,
      // not at the origin's head; the stream is cheap to open, the origin's work is not.
      this.#listening = true;
      res.once('close', () => this.#clientGone());
    }
  }

  /** Under the proxy's timer (waiting for the origin's head, or for the client to drain). */
  watch(): void {
    if (this.#watchSlot < 0) this.#watchSlot = this.#proxy.watch(this);
  }

  #unwatch(): void {
    if (this.#watchSlot < 0) return;
    this.#proxy.unwatch(this.#watchSlot);
    this.#watchSlot = -1;
  }

  /**
   * The client left: the origin request is aborted, and undici discards that connection instead
   * of leaving it in the pool. Noticed at the next piece of the answer, or, while the answer waits
   * for the client to read (when no piece comes), by a listener added only then.
   */
  #clientGone(): void {
    if (!this.#done) this.#controller?.abort(failure('CLIENT_GONE', 'the client closed the connection'));
  }

  /** Called by the proxy's timer: cuts an origin that is too slow or a client that stopped reading. */
  expire(now: number): void {
    if (this.#done) return;
    // Still reading the client's body when its deadline came (node:http cuts that client too).
    if (this.#controller === undefined && now >= this.#headDeadline) {
      this.abandon();
      return;
    }
    if (this.#headers === undefined && now >= this.#headDeadline) {
      this.#controller?.abort(
        failure(
          'ORIGIN_HEADERS_TIMEOUT',
          `no answer from the origin within ${this.#options.responseTimeoutMs} ms`,
        ),
      );
    } else if (this.#stalledSince >= 0 && now - this.#stalledSince >= this.#options.responseTimeoutMs) {
      this.#controller?.abort(failure('CLIENT_STALLED', 'the client stopped reading the answer'));
      this.#res?.destroy();
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (responseGone(this.#res)) controller.abort(failure('CLIENT_GONE', 'the client closed the connection'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // Interim answers (1xx) come here too: the final head is still due by the deadline.
    if (statusCode < 200) return;
    if (responseGone(this.#res)) {
      this.#clientGone();
      return;
    }
    this.#status = statusCode;
    this.#headers = headers;
    const length = headers['content-length'];
    this.#length = typeof length === 'string' ? Number(length) : -1;
    this.#unwatch();
  }

  #writeHead(res: ServerResponse): void {
    res.writeHead(
      this.#status,
      responseHeaders(
        this.#headers as IncomingHttpHeaders,
        this.#forwarded as ForwardedFor,
        this.#upstream,
        this.#options.platformDomain,
      ),
    );
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const res = this.#res;
    if (res === undefined || responseGone(res)) {
      this.#clientGone();
      return;
    }
    if (this.#headers !== undefined && !res.headersSent && this.#whole === undefined) {
      if (chunk.length === this.#length) {
        // The whole body in one piece (the usual small API answer): the end follows at once, and
        // `end(chunk)` sends head and body in one write without a separate write() pass.
        this.#whole = chunk;
        return;
      }
      this.#writeHead(res);
    } else if (this.#whole !== undefined) {
      // Announced whole, yet more came: undici refuses that answer; kept in order meanwhile.
      this.#writeHead(res);
      res.write(this.#whole);
      this.#whole = undefined;
    }
    if (!res.write(chunk)) {
      controller.pause();
      this.#stalledSince = performance.now();
      this.watch();
      if (!this.#listening) {
        this.#listening = true;
        res.once('close', () => this.#clientGone());
      }
      res.once('drain', () => {
        this.#stalledSince = -1;
        this.#unwatch();
        controller.resume();
      });
    }
  }

  onResponseEnd(): void {
    const res = this.#res;
    const whole = this.#whole;
    this.#finish();
    if (res === undefined) return;
    if (!res.headersSent) this.#writeHead(res);
    this.#release();
    if (whole === undefined) res.end();
    // As a latin1 string (byte for byte, whatever the body is) node:http joins it to the head
    // and sends both with one write() instead of a writev() of two buffers.
    else if (whole.length <= WHOLE_AS_STRING_MAX) res.end(whole.toString('latin1'), 'latin1');
    else res.end(whole);
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.#done) return;
    this.#finish();
    const res = this.#res;
    this.#release();
    if (res === undefined) return;
    const code = (error as { code?: unknown }).code;
    // The client went away (or stalled and was cut): nothing to answer, not the origin's fault.
    if (code === 'CLIENT_GONE') return;
    const cause = originFailure(error);
    this.#options.onError?.(cause, this.#requestId, res.headersSent);
    if (res.headersSent) res.destroy(cause);
    else if (!responseGone(res)) sendError(res, originError(cause), this.#requestId);
  }

  #finish(): void {
    this.#done = true;
    this.#unwatch();
    this.#upstreamDone?.();
  }

  /** The client went away before its request could be sent on: nothing to answer, nothing to keep. */
  abandon(): void {
    if (this.#done) return;
    this.#finish();
    this.#release();
  }

  /** Lets go of the exchange's objects (see #res). */
  #release(): void {
    this.#res = undefined;
    this.#forwarded = undefined;
    this.#upstreamDone = undefined;
    this.#headers = undefined;
    this.#whole = undefined;
  }
}

/**
 * Whether the client's side of an exchange is gone: its connection (HTTP/1.1), or its stream
 * (HTTP/2: reset by the client, or its session closed), where node:http2's compatibility
 * response has no `destroyed` of its own.
 */
function responseGone(res: ServerResponse | undefined): boolean {
  if (res === undefined) return true;
  if (res.destroyed !== undefined) return res.destroyed;
  return (res as { stream?: { destroyed: boolean } }).stream?.destroyed !== false;
}

/**
 * The answer for a project whose origin the edge may not reach: refused by the guard, or by the
 * project's team having no origin grant for it (the routing table's `originRefused`).
 */
export function originForbidden(): ApiError {
  return edgeErrors.error(
    'origin_forbidden',
    "The project's origin is an address the platform does not connect to (loopback, private or metadata) without an origin grant. The project's owner should point it at a public address, or ask a platform admin to grant the team that origin.",
  );
}

function originError(error: unknown): ApiError {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'ORIGIN_HEADERS_TIMEOUT' || code === 'ORIGIN_BODY_TIMEOUT') {
    return edgeErrors.error(
      'origin_timeout',
      "The project's API did not answer in time. Try again; if it persists, the project's owner should check its origin.",
    );
  }
  if (code === 'ORIGIN_ADDRESS_FORBIDDEN') return originForbidden();
  if (code === 'ORIGIN_BAD_RESPONSE') {
    return edgeErrors.error(
      'origin_bad_response',
      "The project's API sent a malformed answer. Try again; if it persists, the project's owner should check its origin.",
      { cause: error },
    );
  }
  return edgeErrors.error(
    'origin_unreachable',
    "The project's API could not be reached. Try again shortly; if it persists, the project's owner should check that its origin is running.",
    { cause: error },
  );
}
