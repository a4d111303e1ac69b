import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where the platform may connect on a tenant's behalf. A project's origin and a webhook URL are
 * chosen by tenants, but the platform connects to them from inside the operator's network, so
 * only public addresses are allowed: otherwise a URL could reach the operator listener
 * (`/metrics`, `POST /backup`), the database, a cloud metadata service or a neighbour.
 *
 * - `isPublicAddress(ip)` is the one judgement of an address. Not public: unspecified, loopback,
 *   private (RFC 1918, ULA), link-local, carrier-grade NAT, "this network" (0/8), IETF protocol
 *   assignments (192.0.0/24), benchmarking (198.18/15), multicast, reserved (240/4, broadcast),
 *   site-local, discard-only (100::/64); every IPv6 spelling of an IPv4 address is judged as that
 *   IPv4 address (IPv4-mapped `::ffff:a.b.c.d` however written, NAT64 `64:ff9b::/96`, 6to4
 *   `2002::/16`), and the prefixes whose embedding is not a plain copy are refused whole
 *   (IPv4-compatible and the rest of `::/8`, local-use NAT64 `64:ff9b:1::/48`, Teredo `2001::/32`).
 * - An `OriginPolicy` is a list of allowed origins (`scheme://host:port`, compared as
 *   `URL.origin`, so case, default ports and IP spellings do not matter). An allowlisted origin is
 *   reached whatever its address; its host on another scheme or port is refused, because a name
 *   lookup cannot tell ports apart (see `guardedLookup`).
 * - `checkOriginUrl(url, policy)` judges what can be judged without DNS (save time, and before
 *   each connection): the allowlist, IP literals (however WHATWG URL parsing spells them:
 *   `http://2130706433/` is 127.0.0.1) and `localhost` names. Other names pass here.
 * - `guardedLookup(policy)` is a `dns.lookup` for `net.connect`/undici's `connect.lookup`: names
 *   are judged on every address they resolve to, at connect time, so a name that changes its answer
 *   after it was saved (DNS rebinding) gains nothing. Node does not call `lookup` for IP literals:
 *   the caller checks those with `originAllowed(url, policy)` first.
 */

const nonPublicV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", and 0.0.0.0 which connects to the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (100.100.100.200 is a cloud metadata service)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, 169.254.169.254 the usual metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments (192.0.0.192 a metadata service)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255
] as const) {
  nonPublicV4.addSubnet(net, prefix, 'ipv4');
}

const nonPublicV6 = new BlockList();
for (const [net, prefix] of [
  ['::', 8], // unspecified, loopback, IPv4-compatible, IPv4-translated (mapped is judged before)
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): private by definition
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: the client's IPv4 address is obfuscated, refuse the prefix
  ['fc00::', 7], // unique local (fd00:ec2::254 is a metadata service)
  ['fe80::', 10],
  ['fec0::', 10], // site-local, deprecated but still routed inside some networks
  ['ff00::', 8],
] as const) {
  nonPublicV6.addSubnet(net, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (any spelling, zone id ignored), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) !== 6) return undefined;
  let text = bare.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const v4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address stands for when connecting to it reaches that IPv4 address:
 * IPv4-mapped (`::ffff:0:0/96`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`).
 */
function embeddedIPv4(g: readonly number[]): string | undefined {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6] as number, g[7] as number);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6] as number, g[7] as number);
  if (g[0] === 0x2002) return v4(g[1] as number, g[2] as number);
  return undefined;
}

/** True for an address anyone on the internet could also reach (any textual form, brackets allowed). */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare.replace(/%.*$/, ''));
  if (family === 4) return !nonPublicV4.check(bare, 'ipv4');
  const groups = family === 6 ? ipv6Groups(bare) : undefined;
  if (groups?.length !== 8) return false;
  const embedded = embeddedIPv4(groups);
  if (embedded !== undefined) return isPublicAddress(embedded);
  return !nonPublicV6.check(groups.map((x) => x.toString(16)).join(':'), 'ipv6');
}

const LOCALHOST_NAME = /^(?:.+\.)?localhost\.?$/i;

/** `localhost` and its subdomains, which resolvers answer with loopback addresses (RFC 6761). */
export function isLocalhostName(host: string): boolean {
  return LOCALHOST_NAME.test(host);
}

/**
 * Loopback by name or address (`localhost`, `127.0.0.0/8`, `[::1]`): where plain http is fine,
 * because nothing leaves the host (webhook targets, the CLI's scheme-less server address).
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (isLocalhostName(bare)) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/** Origins reached whatever their address (the platform's: what operator and admins allowed). */
export interface OriginPolicy {
  /** Origins such as `http://127.0.0.1:4010`, normalised by `normaliseOrigin`. */
  readonly allowlist: readonly string[];
}

/**
 * `scheme://host[:port]` as `URL.origin` writes it (lowercase, default port dropped, IP literals in
 * their canonical form); throws with what is expected when `raw` is more or less than an origin.
 */
export function normaliseOrigin(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {}
  if (
    !url ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    /[/?#]./.test(raw.replace(/^[a-z]+:\/\//i, ''))
  ) {
    throw new Error(`"${raw}" is not an origin: write scheme://host:port, e.g. http://127.0.0.1:4010`);
  }
  return url.origin;
}

const originOf = (entry: string) => {
  try {
    return new URL(entry).origin;
  } catch {
    return undefined;
  }
};

/** Host names (not IP literals) of the allowlisted origins: a lookup of one of them is not judged. */
function allowlistedNames(policy: OriginPolicy): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const entry of policy.allowlist) {
    const origin = originOf(entry);
    if (origin === undefined) continue;
    const host = new URL(origin).hostname;
    if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) continue;
    names.set(host, [...(names.get(host) ?? []), origin]);
  }
  return names;
}

/**
 * Why the platform may not connect to `url` for a tenant, or undefined when it may (as far as can
 * be told without DNS). The reason completes a sentence starting with the URL, e.g. "points at a
 * loopback, private or reserved address (127.0.0.1)".
 */
export function checkOriginUrl(url: string | URL, policy: OriginPolicy): string | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return 'is not an absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'is not an http:// or https:// URL';
  if (policy.allowlist.some((entry) => originOf(entry) === parsed.origin)) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    return isPublicAddress(host) ? undefined : `points at a loopback, private or reserved address (${host})`;
  }
  if (isLocalhostName(host)) return `points at ${host}, a loopback address`;
  const allowedAs = allowlistedNames(policy).get(parsed.hostname);
  if (allowedAs) return `uses ${parsed.hostname}, which is allowed only as ${allowedAs.join(', ')}`;
  return undefined;
}

/** `checkOriginUrl(url, policy) === undefined`: the check to make before connecting. */
export function originAllowed(url: URL, policy: OriginPolicy): boolean {
  return checkOriginUrl(url, policy) === undefined;
}

/** What `guardedLookup` fails with when a name resolves to an address that is not public. */
export class OriginAddressForbiddenError extends Error {
  readonly code = 'ORIGIN_ADDRESS_FORBIDDEN';
  readonly hostname: string;
  readonly address: string;

  constructor(hostname: string, address: string) {
    super(`${hostname} resolves to ${address}, which is not a public address`);
    this.name = 'OriginAddressForbiddenError';
    this.hostname = hostname;
    this.address = address;
  }
}

/**
 * A `net.LookupFunction` (honours `options.all`, as Node's happy-eyeballs connect asks) that
 * resolves with the system resolver (`dns.lookup`) and fails with `OriginAddressForbiddenError`
 * (`code` `'ORIGIN_ADDRESS_FORBIDDEN'`) when any address of the answer is not public: one private
 * address in the answer is enough to refuse, since the connector may try any of them. Names of
 * allowlisted origins are not judged (the lookup does not see the port: `originAllowed` refuses
 * such a name on any other scheme or port before connecting). A function as `policy` is asked at
 * every lookup, so a policy that changes (origin grants) applies from the next connection on.
 */
export function guardedLookup(policy: OriginPolicy | (() => OriginPolicy)): LookupFunction {
  const current = typeof policy === 'function' ? policy : () => policy;
  // The names exempt under the policy in force, worked out again only when it is replaced.
  let judged: OriginPolicy | undefined;
  let exempt = new Map<string, string[]>();
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, options.all ? [] : '');
      const now = current();
      if (now !== judged) {
        exempt = allowlistedNames(now);
        judged = now;
      }
      if (!exempt.has(hostname.toLowerCase())) {
        const forbidden = addresses.find((a) => !isPublicAddress(a.address));
        if (forbidden) return callback(new OriginAddressForbiddenError(hostname, forbidden.address), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
