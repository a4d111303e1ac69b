import { type ClientRequest, type IncomingMessage, request, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type AddressInfo, connect } from 'node:net';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A plain HTTP request to a loopback port with the Host header the test chooses (Node's fetch
 * sets Host from the URL, and its resolver does not know `*.localhost` or the test domains).
 */
export function requestAs(port: number, host: string, path: string, init: AsRequest = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: { host, ...init.headers } },
      (res) => collect(res, resolve, reject),
    );
    send(req, path, init, reject);
  });
}

/** What a test sends with requestAs and secureRequestAs. */
export interface AsRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Rejects when no answer has come by then (a hang), instead of waiting for ever. */
  hangMs?: number;
}

/** Sends the request's body, failing it on an error or when it hangs past `init.hangMs`. */
function send(req: ClientRequest, path: string, init: AsRequest, reject: (error: Error) => void) {
  if (init.hangMs !== undefined)
    req.setTimeout(init.hangMs, () => req.destroy(new Error(`${init.method ?? 'GET'} ${path} hung`)));
  req.on('error', reject);
  req.end(init.body);
}

/** Reads a response to its end as text. */
function collect(res: IncomingMessage, resolve: (reply: Reply) => void, reject: (error: Error) => void) {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    text += chunk;
  });
  res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
  res.on('error', reject);
}

/**
 * An HTTPS request to a loopback port for `host` (SNI and Host header), on a connection of its
 * own. The certificate is not checked unless `ca` is given (tests of the certificate pass it).
 */
export function secureRequestAs(
  port: number,
  host: string,
  path: string,
  init: AsRequest & {
    /** Trust only this CA (and check the name). */
    ca?: string;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method: init.method ?? 'GET',
        servername: host,
        headers: { host, ...init.headers },
        ...(init.ca === undefined ? { rejectUnauthorized: false } : { ca: init.ca }),
        agent: false,
      },
      (res) => collect(res, resolve, reject),
    );
    send(req, path, init, reject);
  });
}

/**
 * A flat header list (`[name, value, …]`, as the edge's origin client gives it) as an object for
 * assertions: a repeated header's values in an array, in order.
 */
export function headerObject(flat: readonly string[]): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i] as string;
    const value = flat[i + 1] as string;
    const prior = object[name];
    object[name] =
      prior === undefined ? value : typeof prior === 'string' ? [prior, value] : [...prior, value];
  }
  return object;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** Every header line's name, lowercase, in order (to count repeated headers). */
  names: string[];
  body: string;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
  /** Milliseconds from the first byte sent to the answer's arrival. */
  ms: number;
}

/**
 * Bytes written as they are on a fresh TCP connection, for requests node:http's parser must see
 * (inject bypasses it): broken framing, oversized headers, a body that stalls. `end: true`
 * half-closes after writing. Resolves once one answer has arrived and the connection closed, or
 * `waitMs` after the answer if it stays open.
 */
export function rawRequest(
  port: number,
  bytes: string | Buffer,
  options: { end?: boolean; timeoutMs?: number; waitMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const started = performance.now();
    let data = Buffer.alloc(0);
    let answeredAt: number | undefined;
    let waiting: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${options.timeoutMs ?? 5000} ms: ${data.toString()}`));
    }, options.timeoutMs ?? 5000);
    const finish = (closed: boolean) => {
      clearTimeout(deadline);
      clearTimeout(waiting);
      const text = data.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      const names: string[] = [];
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).toLowerCase();
        names.push(name);
        headers[name] = line.slice(colon + 1).trim();
      }
      socket.destroy();
      resolve({
        status: Number(lines[0]?.split(' ')[1]),
        headers,
        names,
        body: Buffer.from(text.slice(split + 4), 'latin1').toString('utf8'),
        closed,
        ms: (answeredAt ?? performance.now()) - started,
      });
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1 || answeredAt !== undefined) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))?.[1];
      if (
        length !== undefined &&
        data.length >= Buffer.byteLength(text.slice(0, split + 4), 'latin1') + Number(length)
      ) {
        answeredAt = performance.now();
        waiting = setTimeout(() => finish(false), options.waitMs ?? 1000);
      }
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => {});
    socket.write(bytes, () => {
      if (options.end) socket.end();
    });
  });
}

/** Listens on a free loopback port; answers the port. */
export function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}
