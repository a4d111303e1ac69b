/**
 * Top-level names that never reach anyone outside one machine or a test: `localhost` (loopback)
 * and the names RFC 6761 reserves for testing and examples. No public CA certifies them, and no
 * one but the person running Kennel there can open a page at them.
 */
const LOCAL_TOP_LEVEL = ['localhost', 'test', 'example', 'invalid'];

/**
 * Whether the platform's own site (the dashboard and the management API) may answer over plain
 * HTTP: only at `localhost` and the reserved names above. Anywhere else its plain HTTP is sent to
 * HTTPS, whatever certificate the platform domain has: a page of any project under the platform
 * domain can set `kennel_session=…; Domain=<platform domain>` from JavaScript, and over plain
 * HTTP nothing tells that cookie from the dashboard's own (no cookie name is out of a
 * subdomain's reach there); over HTTPS only `__Host-kennel_session` is read, which no subdomain
 * can set (docs/security.md, "The session cookie").
 */
export function platformAllowsPlainHttp(platformDomain: string): boolean {
  const top = platformDomain.slice(platformDomain.lastIndexOf('.') + 1);
  return LOCAL_TOP_LEVEL.includes(top);
}
