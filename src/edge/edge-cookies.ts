/**
 * Cookies the edge sets for itself on a site (a preview's access, src/edge/preview-access.ts).
 * They are the edge's, not the project's: never forwarded to the origin, where they would let
 * the origin (or whoever reads its logs) open the preview as the reviewer.
 */
export const PREVIEW_COOKIE = '__Host-kennel_preview';
export const PLAIN_HTTP_PREVIEW_COOKIE = 'kennel_preview';

const EDGE_COOKIES = new Set([PREVIEW_COOKIE, PLAIN_HTTP_PREVIEW_COOKIE]);

/**
 * A request's `Cookie` header without the edge's own cookies; undefined when nothing is left.
 * Pairs are kept byte for byte (RFC 6265 §5.4: `; `-separated `name=value`).
 */
export function withoutEdgeCookies(header: string): string | undefined {
  if (!header.includes('kennel_preview')) return header; // the common case: nothing to take out
  const kept = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '' && !EDGE_COOKIES.has(pair.slice(0, Math.max(0, pair.indexOf('='))).trim()));
  return kept.length === 0 ? undefined : kept.join('; ');
}
