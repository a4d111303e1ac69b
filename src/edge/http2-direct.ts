import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

/**
 * Response header names HTTP/2 forbids (RFC 9113 §8.2.2): node:http2 throws on them. The proxy
 * drops them from an origin's answer already; the edge's own `connection: close` while draining
 * (observe-requests.ts) means nothing on a stream and is dropped here.
 */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** Stream events a response's listeners are given (the ones the edge listens to). */
const STREAM_EVENTS = new Set(['close', 'drain', 'finish']);

/**
 * Errors on a direct stream are not the handler's (as with node:http2's compatibility objects,
 * which swallow them too): a stream destroyed with an error, or reset, only ends the exchange.
 */
export const ignoreStreamError = () => {};

/**
 * A bodiless HTTP/2 request as the edge's handler reads an IncomingMessage, over node:http2's
 * stream API instead of its compatibility objects (docs/decisions/http2.md, "Bodiless API requests
 * over h2 skip the compatibility objects"). Only what the handler, the proxy and the operations hooks read is
 * here; a request with a body, or for the platform's own app, gets the compatibility objects.
 */
export class DirectRequest {
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  readonly httpVersion = '2.0';
  /** Its HEADERS ended the stream: there is no body to wait for. */
  readonly complete = true;
  readonly method: string;
  readonly url: string;
  readonly stream: ServerHttp2Stream;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly socket: Socket;

  constructor(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[], socket: Socket) {
    this.stream = stream;
    this.headers = headers;
    this.rawHeaders = rawHeaders;
    this.socket = socket;
    this.method = headers[':method'] as string;
    this.url = headers[':path'] as string;
  }

  on(event: string, listener: (...args: unknown[]) => void): this {
    if (event === 'close') this.stream.on('close', listener);
    // 'end' of a body that never comes: once, at once, as node:http does for a bodiless request.
    else if (event === 'end') queueMicrotask(listener);
    return this;
  }

  once(event: string, listener: (...args: unknown[]) => void): this {
    if (event === 'close') this.stream.once('close', listener);
    else if (event === 'end') queueMicrotask(listener);
    return this;
  }
}

/**
 * The response to a DirectRequest with the ServerResponse calls the edge makes: headers go out in
 * one `respond()` at writeHead (or the first write or end), without the compatibility layer's
 * per-header checks, its header object proxy, and the empty trailers it sends after every answer.
 */
export class DirectResponse {
  statusCode = 200;
  /** HTTP/1.1's; a stream has no connection of its own to keep or close. */
  shouldKeepAlive = true;
  readonly stream: ServerHttp2Stream;
  #headers: OutgoingHttpHeaders = Object.create(null);

  constructor(stream: ServerHttp2Stream) {
    this.stream = stream;
    stream.on('error', ignoreStreamError);
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get writableEnded(): boolean {
    return this.stream.writableEnded;
  }

  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }

  setHeader(name: string, value: number | string | readonly string[]): this {
    this.#headers[name.toLowerCase()] = typeof value === 'object' ? [...value] : value;
    return this;
  }

  getHeader(name: string): number | string | string[] | undefined {
    return this.#headers[name.toLowerCase()];
  }

  hasHeader(name: string): boolean {
    return this.#headers[name.toLowerCase()] !== undefined;
  }

  removeHeader(name: string): void {
    delete this.#headers[name.toLowerCase()];
  }

  /** Headers as an object or node:http's flat [name, value, …] list (repeated names kept). */
  writeHead(
    statusCode: number,
    headers?: OutgoingHttpHeaders | readonly (string | number)[] | string,
    more?: OutgoingHttpHeaders | readonly (string | number)[],
  ): this {
    const given = typeof headers === 'string' ? more : headers;
    this.statusCode = statusCode;
    if (Array.isArray(given)) {
      // As node:http does: a name in the list replaces what setHeader gave it (the CORS headers
      // set before an origin's answer), and repeats within the list are all kept.
      const listed = new Set<string>();
      for (let i = 0; i < given.length; i += 2) {
        const name = String(given[i]).toLowerCase();
        if (!listed.has(name)) {
          listed.add(name);
          delete this.#headers[name];
        }
        this.#append(name, String(given[i + 1]));
      }
    } else if (given) {
      for (const name in given as OutgoingHttpHeaders) {
        const value = (given as OutgoingHttpHeaders)[name];
        if (value !== undefined) this.#headers[name.toLowerCase()] = value;
      }
    }
    this.#respond();
    return this;
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding): boolean {
    if (!this.#respond() || this.stream.writableEnded) return false;
    return encoding === undefined ? this.stream.write(chunk) : this.stream.write(chunk, encoding);
  }

  end(chunk?: string | Uint8Array, encoding?: BufferEncoding): this {
    const stream = this.stream;
    if (!this.#respond() || stream.writableEnded) return this;
    if (chunk === undefined || chunk.length === 0) stream.end();
    else if (encoding === undefined) stream.end(chunk);
    else stream.end(chunk, encoding);
    return this;
  }

  destroy(error?: Error): void {
    this.stream.destroy(error);
  }

  on(event: string, listener: (...args: unknown[]) => void): this {
    if (STREAM_EVENTS.has(event)) this.stream.on(event, listener);
    return this;
  }

  once(event: string, listener: (...args: unknown[]) => void): this {
    if (STREAM_EVENTS.has(event)) this.stream.once(event, listener);
    return this;
  }

  #append(name: string, value: string): void {
    const had = this.#headers[name];
    if (had === undefined) this.#headers[name] = value;
    else this.#headers[name] = Array.isArray(had) ? [...had, value] : [String(had), value];
  }

  /** Sends the head once; false when the stream is gone (nothing more can be sent). */
  #respond(): boolean {
    const stream = this.stream;
    if (stream.headersSent) return true;
    if (stream.destroyed || stream.closed) return false;
    const head: OutgoingHttpHeaders = { ':status': this.statusCode };
    for (const name in this.#headers) if (!CONNECTION_SPECIFIC.has(name)) head[name] = this.#headers[name];
    stream.respond(head);
    return true;
  }
}
