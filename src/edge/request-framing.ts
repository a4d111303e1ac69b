import type { IncomingMessage } from 'node:http';

/**
 * How the edge frames a request it forwards, decided from what node:http parsed and never from
 * what a client names in `Connection`. node:http (llhttp, strict) already refuses the classic
 * smuggling shapes: Content-Length beside Transfer-Encoding, differing or list-valued lengths,
 * a Transfer-Encoding that does not end in chunked, obs-fold, bare CR or LF, bad chunk sizes.
 * What it lets through and the edge still refuses: a Transfer-Encoding other than plain
 * `chunked` (e.g. `identity, chunked`, which some origins read differently) and a second Host.
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
  const hosts = req.headersDistinct.host;
  if (hosts !== undefined && hosts.length > 1)
    return 'The request has more than one Host header. Send exactly one.';
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
  if (length === undefined) return NONE;
  // node:http accepts only digits here; anything else means a parser this code no longer knows.
  if (!/^\d{1,15}$/.test(length))
    return { kind: 'refused', reason: 'The request has an invalid Content-Length. Send one decimal length.' };
  return { kind: 'length', length: Number(length) };
}
