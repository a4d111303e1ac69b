import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { type ClientHttp2Session, connect as http2Connect } from 'node:http2';
import { connect, type TLSSocket } from 'node:tls';

/**
 * Raw HTTP/2 for tests: frames a client library would never send (malformed headers, floods),
 * written byte for byte on a TLS connection that negotiated h2. Header blocks are HPACK literals
 * without indexing with new names (RFC 7541 §6.2.2), no Huffman: any bytes at all can be sent.
 * Answers are read as frames; a response's status is read when nghttp2 sent it from the static
 * table (200, 204, 206, 304, 400, 404, 500), as it does.
 */
export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
export const FLAG = { END_STREAM: 1, ACK: 1, END_HEADERS: 4 } as const;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const STATIC_STATUS: Record<number, number> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500 };

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

export function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

function hpackInteger(value: number, prefixBits: number, firstByte: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByte | value]);
  const bytes = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackString(text: string | Buffer): Buffer {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  return Buffer.concat([hpackInteger(bytes.length, 7, 0), bytes]);
}

/** A header block of literal fields, in the order given (pseudo-headers wherever they are put). */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    fields.flatMap(([name, value]) => [Buffer.from([0]), hpackString(name), hpackString(value)]),
  );
}

export function settings(values: readonly (readonly [number, number])[] = []): Buffer {
  const payload = Buffer.alloc(values.length * 6);
  values.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
}

export function rstStream(stream: number, code = 8): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code, 0);
  return frame(FRAME.RST_STREAM, 0, stream, payload);
}

export function headersFrame(
  stream: number,
  fields: readonly (readonly [string, string])[],
  { endStream = true, endHeaders = true } = {},
): Buffer {
  return frame(
    FRAME.HEADERS,
    (endStream ? FLAG.END_STREAM : 0) | (endHeaders ? FLAG.END_HEADERS : 0),
    stream,
    headerBlock(fields),
  );
}

export function dataFrame(stream: number, data: string | Buffer, endStream = true): Buffer {
  return frame(FRAME.DATA, endStream ? FLAG.END_STREAM : 0, stream, Buffer.from(data as string, 'latin1'));
}

/**
 * The status of a response HEADERS frame, which nghttp2 sends first: an indexed field from the
 * static table (200, 204, …), or a literal with `:status` as an indexed name and the digits as
 * written (plain or Huffman-coded: digits are the 5- and 6-bit codes of RFC 7541 Appendix B).
 */
export function staticStatus(payload: Buffer): number | undefined {
  const first = payload[0] ?? 0;
  if (first & 0x80) return STATIC_STATUS[first & 0x7f];
  // Literal with incremental indexing (01xxxxxx) or without/never (0000xxxx / 0001xxxx).
  const nameIndex = first & 0x40 ? first & 0x3f : first & 0x0f;
  if (!(nameIndex in STATIC_STATUS)) return undefined;
  const lengthByte = payload[1] ?? 0;
  const value = payload.subarray(2, 2 + (lengthByte & 0x7f));
  if ((lengthByte & 0x80) === 0) return Number(value.toString('latin1'));
  let bits = '';
  for (const byte of value) bits += byte.toString(2).padStart(8, '0');
  let digits = '';
  while (digits.length < 3) {
    const five = Number.parseInt(bits.slice(0, 5), 2);
    if (five < 3) {
      digits += String(five);
      bits = bits.slice(5);
      continue;
    }
    const six = Number.parseInt(bits.slice(0, 6), 2);
    if (six < 0x19 || six > 0x1f) return undefined;
    digits += String(six - 0x19 + 3);
    bits = bits.slice(6);
  }
  return Number(digits);
}

/** A raw h2 connection: what was received, as frames, and ways to wait for them. */
export class RawHttp2 {
  readonly socket: TLSSocket;
  readonly frames: Frame[] = [];
  closed = false;
  #buffer: Buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];

  private constructor(socket: TLSSocket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
  }

  /**
   * Connects with ALPN `h2` (the handshake fails the test if the server does not choose it) and
   * sends the preface and the client's SETTINGS; `ackSettings` answers the server's.
   */
  static async open(
    port: number,
    servername: string,
    {
      initialSettings = [],
      ackSettings = true,
    }: { initialSettings?: [number, number][]; ackSettings?: boolean } = {},
  ): Promise<RawHttp2> {
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const s = connect(
        { host: '127.0.0.1', port, servername, ALPNProtocols: ['h2'], rejectUnauthorized: false },
        () => resolve(s),
      );
      s.once('error', reject);
    });
    if (socket.alpnProtocol !== 'h2') {
      socket.destroy();
      throw new Error(`the server chose ALPN ${String(socket.alpnProtocol)}, not h2`);
    }
    const raw = new RawHttp2(socket);
    socket.write(Buffer.concat([PREFACE, settings(initialSettings)]));
    if (ackSettings) {
      await raw.waitFor((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0);
      socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
    }
    return raw;
  }

  write(...frames: Buffer[]): boolean {
    return this.socket.write(Buffer.concat(frames));
  }

  #read(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 9) {
      const length = this.#buffer.readUIntBE(0, 3);
      if (this.#buffer.length < 9 + length) break;
      this.frames.push({
        type: this.#buffer[3] ?? 0,
        flags: this.#buffer[4] ?? 0,
        stream: this.#buffer.readUInt32BE(5) & 0x7fffffff,
        payload: this.#buffer.subarray(9, 9 + length),
      });
      this.#buffer = this.#buffer.subarray(9 + length);
    }
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** The first frame matching, waiting up to `ms`; undefined if none came (or the connection closed). */
  async waitFor(match: (f: Frame) => boolean, ms = 2_000): Promise<Frame | undefined> {
    const deadline = performance.now() + ms;
    for (;;) {
      const found = this.frames.find(match);
      if (found || this.closed) return found;
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  /** How the server ended a stream: its response status, an RST_STREAM code, or GOAWAY. */
  async outcome(stream: number, ms = 2_000): Promise<{ status?: number; reset?: number; goaway?: number }> {
    const f = await this.waitFor(
      (x) =>
        (x.stream === stream && (x.type === FRAME.HEADERS || x.type === FRAME.RST_STREAM)) ||
        x.type === FRAME.GOAWAY,
      ms,
    );
    if (f === undefined) return {};
    if (f.type === FRAME.HEADERS) return { status: staticStatus(f.payload) ?? -1 };
    if (f.type === FRAME.RST_STREAM) return { reset: f.payload.readUInt32BE(0) };
    return { goaway: f.payload.readUInt32BE(4) };
  }

  close(): void {
    this.socket.destroy();
  }
}

/** One request over a node:http2 session (a well-behaved client): status, headers and body. */
export function http2Request(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let text = '';
    let head: IncomingHttpHeaders = {};
    stream.setEncoding('utf8');
    stream.on('response', (h) => {
      head = h;
    });
    stream.on('data', (chunk: string) => {
      text += chunk;
    });
    stream.on('end', () =>
      resolve({ status: Number(head[':status']), headers: head, text, ms: performance.now() - started }),
    );
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

/** A node:http2 session to the edge's HTTPS port for `servername` (any certificate accepted). */
export function http2Session(port: number, servername: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`https://127.0.0.1:${port}`, { servername, rejectUnauthorized: false });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}
