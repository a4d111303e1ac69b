import type { IncomingHttpHeaders } from 'node:http';
import { withoutEdgeCookies } from './edge-cookies.ts';
import type { LifecycleHeaders } from './lifecycle.ts';
import { type LinkRewriter, rewriteLinkHeader, rewriteTarget } from './rewrite-links.ts';

/**
 * The proxy's header rules, as two pure functions: what a client's request carries to the origin
 * (`requestHeaders`) and what the origin's answer carries back (`responseHeaders`). Both return
 * node:http's and undici's flat `[name, value, …]` list, repeated names kept in order; the table
 * in test/edge/header-rules.test.ts states every rule row by row.
 */

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
  // h2c's upgrade settings belong to the client's connection too (RFC 7540 §3.2.1).
  'http2-settings',
]);

/**
 * Request headers a client never passes on as sent. The edge decides the framing (Content-Length
 * or chunked, from what node:http parsed), answers `Expect` itself, and sets the forwarding
 * headers and the request id; a client's own would let it pose as another address.
 */
const DECIDED_BY_EDGE = new Set([
  'host',
  'content-length',
  'expect',
  'forwarded',
  'x-real-ip',
  'x-request-id',
  'x-client-ip',
  'true-client-ip',
]);

/** Response headers whose targets are rewritten from the origin to the site (rewrite-links.ts). */
const LINKING = new Set(['location', 'content-location', 'link']);
/** Response headers responseHeaders looks into rather than copies: LINKING and Set-Cookie. */
const SPECIAL_IN_ANSWER = new Set([...LINKING, 'set-cookie']);

/** Response headers the edge replaces: one request id per answer, the edge's. */
const REPLACED_IN_ANSWER = new Set(['x-request-id']);

/** What the edge itself states to the origin about a request. */
export interface RequestFacts {
  readonly clientAddress: string;
  readonly host: string;
  readonly proto: 'http' | 'https';
  readonly requestId: string;
}

/** What the edge adds to, or changes in, an origin's answer. */
export interface AnswerFacts {
  readonly host: string;
  /**
   * The site's address (`host[:port]`), built by the edge from the name the site was matched by
   * and the port the connection came to, never the raw Host: links are rewritten to it.
   */
  readonly authority?: string;
  /** The deprecation lifecycle of the operation, when its document declares one (lifecycle.ts). */
  readonly lifecycle?: LifecycleHeaders;
  /** The project's CORS headers (cors.ts): they replace whatever CORS headers the origin sent. */
  readonly cors?: Readonly<Record<string, string>>;
  readonly proto: 'http' | 'https';
  readonly requestId: string;
}

/**
 * The headers sent to the origin: the client's, less hop-by-hop ones (and those its Connection
 * names), those the edge decides, any `X-Forwarded-*`, HTTP/2 pseudo-headers, names with `_`
 * and the edge's own cookies; then the framing's Content-Length (`contentLength`, when the body
 * has one), X-Forwarded-For/Host/Proto, Forwarded (RFC 7239) and the edge's request id.
 */
export function requestHeaders(
  incoming: IncomingHttpHeaders,
  facts: RequestFacts,
  contentLength: number | undefined,
): string[] {
  const listed = connectionListed(incoming.connection);
  const headers: string[] = [];
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || DECIDED_BY_EDGE.has(name)) continue;
    // HTTP/2's pseudo-headers (`:path`, `:authority`, …) became the request line the edge sends.
    if (name.startsWith('x-forwarded-') || name.startsWith(':') || listed?.has(name)) continue;
    // Origins behind CGI or WSGI read `_` as `-`: `X_Forwarded_For` would pass for the real
    // header. Dropped, as nginx does by default (underscores_in_headers off).
    if (name.includes('_')) continue;
    if (name === 'cookie') {
      // The edge's own cookies (a preview's access) stay at the edge.
      const kept = withoutEdgeCookies(typeof value === 'string' ? value : value.join('; '));
      if (kept !== undefined) headers.push(name, kept);
      continue;
    }
    if (typeof value === 'string') headers.push(name, value);
    else for (const one of value) headers.push(name, one);
  }
  if (contentLength !== undefined) headers.push('content-length', String(contentLength));
  const { clientAddress, host, proto } = facts;
  const node = clientAddress.includes(':') ? `"[${clientAddress}]"` : clientAddress;
  headers.push(
    'x-forwarded-for',
    clientAddress,
    'x-forwarded-host',
    host,
    'x-forwarded-proto',
    proto,
    'forwarded',
    `for=${node};host=${host};proto=${proto}`,
    'x-request-id',
    facts.requestId,
  );
  return headers;
}

/**
 * The headers sent back to the client: the origin's, less hop-by-hop ones (and those its
 * Connection names) and its X-Request-Id; its CORS headers when the project has a policy (the
 * policy's replace them); its Set-Cookie lines whose Domain covers `platformDomain` (cookie
 * tossing); Location, Content-Location and Link moved from `upstream` to the site. Then the
 * operation's lifecycle where the origin did not state it, the policy's CORS headers and the
 * edge's request id.
 */
export function responseHeaders(
  origin: IncomingHttpHeaders,
  facts: AnswerFacts,
  upstream: LinkRewriter,
  platformDomain: string | undefined,
): string[] {
  const listed = origin.connection === undefined ? undefined : connectionListed(origin.connection);
  const out: string[] = [];
  const { cors } = facts;
  for (const name in origin) {
    const value = origin[name];
    if (value === undefined || HOP_BY_HOP.has(name) || REPLACED_IN_ANSWER.has(name) || listed?.has(name))
      continue;
    if (cors && name.startsWith('access-control-')) continue;
    if (typeof value === 'string') {
      if (!SPECIAL_IN_ANSWER.has(name)) out.push(name, value);
      else pushSpecial(out, name, value, facts, upstream, platformDomain);
    } else for (const one of value) pushSpecial(out, name, one, facts, upstream, platformDomain);
  }
  const { lifecycle } = facts;
  if (lifecycle) {
    // The document's lifecycle, where the origin did not state it itself.
    if (origin.deprecation === undefined) out.push('deprecation', lifecycle.deprecation);
    if (origin.sunset === undefined) out.push('sunset', lifecycle.sunset);
    if (lifecycle.link && !/rel="?successor-version/i.test(String(origin.link ?? '')))
      out.push('link', lifecycle.link);
  }
  // A second Vary line adds to the origin's (Vary is a list).
  if (cors) for (const name in cors) out.push(name, cors[name] as string);
  out.push('x-request-id', facts.requestId);
  return out;
}

/** A header looked into: cookies for the platform's domain dropped, links moved to the site. */
function pushSpecial(
  out: string[],
  name: string,
  value: string,
  facts: AnswerFacts,
  upstream: LinkRewriter,
  platformDomain: string | undefined,
): void {
  if (name === 'set-cookie') {
    if (!platformDomain || !cookieCovers(value, platformDomain)) out.push(name, value);
  } else if (!LINKING.has(name)) out.push(name, value);
  else {
    const site = `${facts.proto}://${facts.authority ?? facts.host}`;
    out.push(
      name,
      name === 'link' ? rewriteLinkHeader(value, upstream, site) : rewriteTarget(value, upstream, site),
    );
  }
}

/**
 * Names listed in a Connection header are hop-by-hop too (RFC 9110 §7.6.1); `undefined` when it
 * lists none besides the usual close/keep-alive (the common case, checked without splitting).
 * Listing a header the edge decides itself changes nothing: those are never copied anyway.
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

/** Whether a Set-Cookie value's Domain attribute covers `domain` (the platform's own). */
function cookieCovers(setCookie: string, domain: string): boolean {
  const lower = setCookie.toLowerCase();
  if (!lower.includes('domain')) return false;
  for (const part of lower.split(';').slice(1)) {
    const [name, value = ''] = part.split('=', 2);
    if (name?.trim() !== 'domain') continue;
    const cookieDomain = value.trim().replace(/^\./, '').replace(/\.$/, '');
    if (cookieDomain === '' || domain === cookieDomain || domain.endsWith(`.${cookieDomain}`)) return true;
  }
  return false;
}
