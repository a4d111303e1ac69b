/**
 * An origin's links, as the site serves them. The edge publishes a project's API under `/api/`
 * on the site's host, so `Location: /pets/3` from the origin would send a client to the site's
 * pages; rewritten, it is `/api/pets/3`. As reverse proxies do (nginx `proxy_redirect`), the
 * targets of `Location`, `Content-Location` and `Link` are rewritten when they are
 * origin-relative (`/…`) or absolute on the origin itself; any other target is left alone.
 */
export interface LinkRewriter {
  /** The origin, as `URL.origin` writes it. */
  readonly origin: string;
  /** The origin URL's path without its trailing slash ('' at its root). */
  readonly basePath: string;
}

/** The API's prefix on every published site. */
export const API_PREFIX = '/api';

/** One target: rewritten to the site, or returned as it came. `site` is `https://host[:port]`. */
export function rewriteTarget(target: string, upstream: LinkRewriter, site: string): string {
  if (target.startsWith('/') && !target.startsWith('//')) {
    const path = underBase(target, upstream.basePath);
    return path === undefined ? target : `${API_PREFIX}${path}`;
  }
  if (!target.startsWith(upstream.origin)) return target;
  const rest = target.slice(upstream.origin.length);
  if (rest !== '' && !/^[/?#]/.test(rest)) return target; // another port or host that shares a prefix
  const path = underBase(rest === '' || !rest.startsWith('/') ? `/${rest}` : rest, upstream.basePath);
  return path === undefined ? target : `${site}${API_PREFIX}${path}`;
}

/** A `Link` header's value with each `<target>` rewritten (RFC 8288). */
export function rewriteLinkHeader(value: string, upstream: LinkRewriter, site: string): string {
  return value.replace(/<([^>]*)>/g, (_, target: string) => `<${rewriteTarget(target, upstream, site)}>`);
}

/** `path` with the origin's base path taken off, or undefined when it lies outside it. */
function underBase(path: string, basePath: string): string | undefined {
  if (basePath === '') return path;
  if (path === basePath) return '/';
  return /^[/?#]/.test(path.slice(basePath.length)) && path.startsWith(basePath)
    ? path.slice(basePath.length)
    : undefined;
}
