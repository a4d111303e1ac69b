/**
 * An incremental HTTP/1.1 response parser (RFC 9112) for the edge's origin client: the status
 * line and headers, then the body framed by Content-Length, chunked transfer coding, or the
 * connection's close. It hands the body on as slices of the bytes it is given (no copies) and
 * keeps only what a split head or chunk-size line needs between calls.
 *
 * Why our own and not undici's: see docs/decisions.md ("The edge's origin client"). It parses
 * what an origin answers a proxy, strictly: anything it does not understand is a `ResponseError`
 * (the edge's 502), never a guess.
 */

/**
 * Response headers as a flat list, `[name, value, name, value, …]` (names lowercase), in the
 * order received, a repeated header once per line: the shape `res.writeHead` takes as is, with
 * no object of dynamic keys built on the way (docs/decisions.md, "The edge's origin client").
 */
export type ResponseHeaders = string[];

/** Every value of the header `name` (lowercase) in a flat list, in order. */
export function headerValues(headers: ResponseHeaders, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) values.push(headers[i + 1] as string);
  return values;
}

export interface ResponseEvents {
  /**
   * The final (non-1xx) status and headers; interim 1xx answers are skipped. `bodyLength` is the
   * body's Content-Length when that frames it, else -1 (chunked, until the close, or no body).
   */
  onHead(status: number, headers: ResponseHeaders, bodyLength: number): void;
  /** A piece of the body (decoded from chunks when chunked); a view into the given bytes. */
  onBody(chunk: Buffer): void;
  /** The response is whole. */
  onComplete(): void;
}

/** The origin's answer is not HTTP/1.1 as the edge accepts it. */
export class ResponseError extends Error {
  readonly code = 'ORIGIN_BAD_RESPONSE';
  constructor(message: string) {
    super(`malformed response from the origin: ${message}`);
    this.name = 'ResponseError';
  }
}

/** A head (status line and headers) larger than this is refused, as node:http refuses requests. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line, or one trailer line, longer than this is refused. */
const MAX_LINE_BYTES = 8 * 1024;
/** Trailers are read and dropped; at most this much of them. */
const MAX_TRAILER_BYTES = 64 * 1024;

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Field values: visible ASCII, space, tab and obs-text; never NUL, CR, LF or other controls. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** Every line after the status line: `\r\n` name `:` value, as TOKEN and BAD_VALUE allow. */
const FIELD_LINES = /^(?:\r\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*)*$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,13})[\t ]*(?:;.*)?$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: .*)?$/;

/**
 * Where the parser is. `head` waits for the status line and headers; the body states follow the
 * framing the head chose (RFC 9112 §6.3); `done` until `reset` starts the next response.
 */
type State =
  | 'head'
  | 'length'
  | 'chunk-size'
  | 'chunk-data'
  | 'chunk-data-end'
  | 'trailers'
  | 'until-close'
  | 'done';

/** A value without the optional whitespace (space, tab) around it (RFC 9110 §5.5). */
function withoutOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** Throws the ResponseError that says which field line FIELD_LINES refused. */
function explainBadField(fields: string): never {
  for (const line of fields.split('\r\n')) {
    const colon = line.indexOf(':');
    // No name (or obs-fold, a line starting with whitespace): refused, as RFC 9112 §5.2 allows.
    if (colon <= 0) throw new ResponseError('a header line without a name');
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new ResponseError('a bad header name');
    if (BAD_VALUE.test(line.slice(colon + 1))) throw new ResponseError(`a bad value for ${name}`);
  }
  throw new ResponseError('a bad header line');
}

export class ResponseParser {
  readonly #events: ResponseEvents;
  #state: State = 'head';
  /** The request was HEAD: whatever the headers say, there is no body. */
  #noBody = false;
  /** Bytes of a head, or of a line, split across calls. */
  #pending: Buffer | undefined;
  #remaining = 0;
  #trailerBytes = 0;
  #keepAlive = true;
  #keepAliveMs: number | undefined;
  #received = false;

  constructor(events: ResponseEvents) {
    this.#events = events;
  }

  /** Ready for the response to a new request (`noBody` for HEAD). */
  reset(noBody: boolean): void {
    this.#state = 'head';
    this.#noBody = noBody;
    this.#pending = undefined;
    this.#remaining = 0;
    this.#trailerBytes = 0;
    this.#keepAlive = true;
    this.#keepAliveMs = undefined;
    this.#received = false;
  }

  /** Whether any byte of this response has arrived (a request that got none may be retried). */
  get received(): boolean {
    return this.#received;
  }

  get complete(): boolean {
    return this.#state === 'done';
  }

  /** Whether the connection may carry another request once this response is complete. */
  get keepAlive(): boolean {
    return this.#keepAlive;
  }

  /** The origin's `Keep-Alive: timeout=N` hint, in milliseconds, if it gave one. */
  get keepAliveMs(): number | undefined {
    return this.#keepAliveMs;
  }

  /**
   * Parses the next bytes of the connection. Bytes after a complete response (an origin that
   * answers more than it was asked) end the connection's reuse: they are dropped.
   * Throws ResponseError.
   */
  execute(data: Buffer): void {
    this.#received = true;
    let at = 0;
    if (this.#pending !== undefined) {
      data = Buffer.concat([this.#pending, data]);
      this.#pending = undefined;
    }
    while (at < data.length) {
      switch (this.#state) {
        case 'head': {
          const end = data.indexOf(HEAD_END, at);
          if (end === -1) {
            if (data.length - at > MAX_HEAD_BYTES) throw new ResponseError('the head is too large');
            this.#pending = data.subarray(at);
            return;
          }
          if (end - at > MAX_HEAD_BYTES) throw new ResponseError('the head is too large');
          const head = data.toString('latin1', at, end);
          at = end + 4;
          this.#parseHead(head);
          break;
        }
        case 'length': {
          const n = Math.min(this.#remaining, data.length - at);
          this.#remaining -= n;
          const piece = data.subarray(at, at + n);
          at += n;
          this.#events.onBody(piece);
          if (this.#remaining === 0) this.#finish();
          break;
        }
        case 'until-close': {
          this.#events.onBody(at === 0 ? data : data.subarray(at));
          return;
        }
        case 'chunk-size': {
          const line = this.#line(data, at);
          if (line === undefined) return;
          at = line.next;
          const match = CHUNK_SIZE.exec(line.text);
          if (!match) throw new ResponseError('a bad chunk size');
          this.#remaining = Number.parseInt(match[1] as string, 16);
          this.#state = this.#remaining === 0 ? 'trailers' : 'chunk-data';
          break;
        }
        case 'chunk-data': {
          const n = Math.min(this.#remaining, data.length - at);
          this.#remaining -= n;
          const piece = data.subarray(at, at + n);
          at += n;
          this.#events.onBody(piece);
          if (this.#remaining === 0) this.#state = 'chunk-data-end';
          break;
        }
        case 'chunk-data-end': {
          const line = this.#line(data, at);
          if (line === undefined) return;
          at = line.next;
          if (line.text !== '') throw new ResponseError('a chunk longer than its size');
          this.#state = 'chunk-size';
          break;
        }
        case 'trailers': {
          const line = this.#line(data, at);
          if (line === undefined) return;
          this.#trailerBytes += line.next - at;
          at = line.next;
          if (this.#trailerBytes > MAX_TRAILER_BYTES) throw new ResponseError('the trailers are too large');
          if (line.text === '') this.#finish();
          break;
        }
        case 'done':
          // Nothing was asked for: the connection cannot be trusted with another request.
          this.#keepAlive = false;
          return;
      }
    }
  }

  /**
   * The origin closed the connection. Returns true when that ends the response (a body framed by
   * the close); false when the response was cut short.
   */
  close(): boolean {
    if (this.#state === 'until-close') {
      this.#finish();
      return true;
    }
    return this.#state === 'done';
  }

  /** One CRLF-terminated line from `at`, or undefined (kept) when it has not all arrived. */
  #line(data: Buffer, at: number): { text: string; next: number } | undefined {
    const lf = data.indexOf(10, at);
    if (lf === -1) {
      if (data.length - at > MAX_LINE_BYTES) throw new ResponseError('a line is too long');
      this.#pending = data.subarray(at);
      return undefined;
    }
    if (lf - at > MAX_LINE_BYTES) throw new ResponseError('a line is too long');
    if (lf === at || data[lf - 1] !== 13) throw new ResponseError('a line not ended by CRLF');
    return { text: data.toString('latin1', at, lf - 1), next: lf + 1 };
  }

  #parseHead(head: string): void {
    const firstEnd = head.indexOf('\r\n');
    const statusLine = firstEnd === -1 ? head : head.slice(0, firstEnd);
    const status = STATUS_LINE.exec(statusLine);
    if (!status) throw new ResponseError(`a bad status line (${JSON.stringify(statusLine.slice(0, 40))})`);
    const code = Number(status[2]);
    const headers: ResponseHeaders = [];
    let contentLength: string | undefined;
    let chunked = false;
    let transferEncoding = false;
    let connection: string | undefined;
    // Every field line checked in one pass (the usual case); a failure is then located for its message.
    if (firstEnd !== -1 && !FIELD_LINES.test(head.slice(firstEnd))) explainBadField(head.slice(firstEnd + 2));
    for (let at = firstEnd + 2; at > 1; ) {
      const colon = head.indexOf(':', at);
      let end = head.indexOf('\r\n', colon);
      const next = end === -1 ? -1 : end + 2;
      if (end === -1) end = head.length;
      const key = head.slice(at, colon).toLowerCase();
      const value = withoutOws(head.slice(colon + 1, end));
      at = next;
      switch (key) {
        case 'content-length':
          if (!/^\d{1,15}$/.test(value)) throw new ResponseError('a bad Content-Length');
          if (contentLength !== undefined) {
            if (contentLength !== value) throw new ResponseError('conflicting Content-Length headers');
            continue;
          }
          contentLength = value;
          break;
        case 'transfer-encoding': {
          transferEncoding = true;
          const codings = value.toLowerCase().split(',');
          chunked = (codings[codings.length - 1] as string).trim() === 'chunked';
          break;
        }
        case 'connection':
          connection =
            connection === undefined ? value.toLowerCase() : `${connection},${value.toLowerCase()}`;
          break;
        case 'keep-alive': {
          const timeout = /(?:^|[,\s])timeout=(\d+)/i.exec(value);
          if (timeout) this.#keepAliveMs = Number(timeout[1]) * 1000;
          break;
        }
      }
      headers.push(key, value);
    }
    const http11 = status[1] === '1';
    if (connection === undefined || connection === 'keep-alive')
      this.#keepAlive = http11 || connection !== undefined;
    else {
      const tokens = connection.split(',').map((token) => token.trim());
      this.#keepAlive = !tokens.includes('close') && (http11 || tokens.includes('keep-alive'));
    }
    if (code < 200) {
      // 101 would switch protocols, which the edge never asks for (Upgrade is not forwarded).
      if (code === 101) throw new ResponseError('101 Switching Protocols was not asked for');
      // 100 Continue, 103 Early Hints…: interim, the final answer follows on the same connection.
      return;
    }
    const noBody = this.#noBody || code === 204 || code === 304;
    let bodyLength = -1;
    if (noBody) {
      // Framing is moot: nothing follows the head.
    } else if (transferEncoding) {
      // Chunked last: chunks. Otherwise the close ends the body (RFC 9112 §6.3, point 4).
      if (chunked) this.#state = 'chunk-size';
      else {
        this.#state = 'until-close';
        this.#keepAlive = false;
      }
      // A Content-Length beside Transfer-Encoding is void, and not passed on.
      if (contentLength !== undefined) headers.splice(headers.indexOf('content-length'), 2);
    } else if (contentLength !== undefined) {
      bodyLength = Number(contentLength);
      this.#remaining = bodyLength;
      this.#state = 'length';
    } else {
      this.#state = 'until-close';
      this.#keepAlive = false;
    }
    this.#events.onHead(code, headers, bodyLength);
    if (noBody || bodyLength === 0) this.#finish();
  }

  #finish(): void {
    this.#state = 'done';
    this.#events.onComplete();
  }
}
