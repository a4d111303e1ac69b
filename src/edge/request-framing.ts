import type { IncomingMessage } from 'node:http';

/**
 * How the edge frames a request it forwards, decided from what node:http parsed and never from
 * what a client names in `Connection`. node:http (llhttp, strict) already refuses the classic
 * smuggling shapes: Content-Length beside Transfer-Encoding, differing or list-valued lengths,
 * a Transfer-Encoding that does not end in chunked, obs-fold, bare CR or LF, bad chunk sizes.
 * What it lets through and the edge still refuses: a Transfer-Encoding other than plain
 * `chunked` (e.g. `identity, chunked`, which some origins read differently) and a second Host.
 *
 * HTTP/2 requests (RFC 9113 §8.2) are checked by nghttp2 before node:http2 hands them over: a
 * connection-specific header (Transfer-Encoding, Connection, Keep-Alive, Upgrade, …), a TE other
 * than `trailers`, an uppercase name, a misplaced, repeated or unknown pseudo-header, a `:path`
 * not starting with `/`, a Content-Length that disagrees with the DATA sent — each resets the
 * stream before the edge sees it (test/edge/http2-downgrade.test.ts). A field with CR, LF or NUL
 * is dropped by node (its invalid-header callback ignores it) and the request arrives without it:
 * nothing of it reaches the origin, but it is not refused (docs/security.md).
 * What reaches the edge is framed from its Content-Length, or sent chunked when the client did not
 * say its length; a Host beside `:authority` that names another site is refused here.
 */
export type RequestFraming =
  | { readonly kind: 'none' }
  | { readonly kind: 'length'; readonly length: number }
  | { readonly kind: 'chunked' }
  | { readonly kind: 'refused'; readonly reason: string };

const NONE: RequestFraming = { kind: 'none' };
const CHUNKED: RequestFraming = { kind: 'chunked' };

/** Why a request's head is ambiguous, for any request the edge serves; undefined when it is not. */
export function ambiguousHead(req: IncomingMessage): string | undefined {
  if (req.httpVersionMajor === 2) return ambiguousHttp2Head(req);
  const hosts = req.headersDistinct.host;
  if (hosts !== undefined && hosts.length > 1)
    return 'The request has more than one Host header. Send exactly one.';
  return undefined;
}

/**
 * HTTP/2: node:http2 keeps the first of repeated Host fields, so they are counted in the raw
 * list; a Host that differs from `:authority` (RFC 9113 §8.3.1) could route by one and reach the
 * origin by the other. Host is set from `:authority` by http2-server.ts when the client sent none.
 */
function ambiguousHttp2Head(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let hosts = 0;
  let host: string | undefined;
  let authority: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name === 'host') {
      hosts++;
      host = raw[i + 1];
    } else if (name === ':authority') authority = raw[i + 1];
  }
  if (hosts > 1)
    return 'The request has more than one Host header. Send exactly one, or none beside :authority.';
  if (host !== undefined && authority !== undefined && host.toLowerCase() !== authority.toLowerCase())
    return `The request's Host "${host.slice(0, 64)}" differs from its :authority "${authority.slice(0, 64)}". Send one name, in :authority.`;
  return undefined;
}

export function requestFraming(req: IncomingMessage): RequestFraming {
  const { headers } = req;
  const encoding = headers['transfer-encoding'];
  const length = headers['content-length'];
  if (encoding !== undefined) {
    if (length !== undefined)
      return {
        kind: 'refused',
        reason: 'The request has both Content-Length and Transfer-Encoding. Send one.',
      };
    if (encoding.trim().toLowerCase() !== 'chunked')
      return {
        kind: 'refused',
        reason: `Transfer-Encoding "${encoding.slice(0, 64)}" is not accepted: send the body with Content-Length or Transfer-Encoding: chunked alone.`,
      };
    return CHUNKED;
  }
  if (length === undefined) return req.httpVersionMajor === 2 ? http2Framing(req) : NONE;
  // node:http accepts only digits here; anything else means a parser this code no longer knows.
  if (!/^\d{1,15}$/.test(length))
    return { kind: 'refused', reason: 'The request has an invalid Content-Length. Send one decimal length.' };
  return { kind: 'length', length: Number(length) };
}

/** An HTTP/2 request without Content-Length: no body when its HEADERS ended the stream, else chunked. */
function http2Framing(req: IncomingMessage): RequestFraming {
  const stream = (req as { stream?: { endAfterHeaders: boolean } }).stream;
  return stream?.endAfterHeaders === false ? CHUNKED : NONE;
}
