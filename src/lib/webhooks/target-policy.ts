import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { isLoopbackHost, isPublicAddress } from '../address-policy.ts';

export { isLoopbackHost, isPublicAddress };

/**
 * Which addresses a webhook may reach. A webhook URL is chosen by a tenant, and the platform
 * sends to it from inside the operator's network, so by default only public addresses are
 * allowed (otherwise a URL could reach the database, a metadata service or the platform itself).
 * Operators who deliver to their own private services opt in (see docs/webhooks.md).
 */
export interface TargetPolicy {
  /** Loopback, private (RFC 1918, ULA), link-local and carrier-grade NAT addresses allowed. */
  readonly allowPrivate: boolean;
}

export type UrlCheck = { ok: true; url: string } | { ok: false; problem: string };

/**
 * A webhook URL as stored: absolute, https (or http to a loopback host, for local receivers),
 * no credentials in it, no fragment, at most 2000 characters, and no literal address the
 * policy forbids. Names are resolved at delivery time, where each connected address is checked.
 */
export function checkWebhookUrl(raw: string, policy: TargetPolicy): UrlCheck {
  if (raw.length > 2000) return { ok: false, problem: 'is longer than 2000 characters' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'is not an absolute URL' };
  }
  if (url.username || url.password) return { ok: false, problem: 'must not carry a user name or password' };
  if (url.hash) return { ok: false, problem: 'must not have a #fragment' };
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return { ok: false, problem: 'must use https:// (plain http:// only to a loopback host)' };
  }
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && (loopback || (isIP(literal) !== 0 && !isPublicAddress(literal)))) {
    return {
      ok: false,
      problem: 'points at a loopback or private address, which this platform does not deliver to',
    };
  }
  return { ok: true, url: url.toString() };
}

/** The refusal a delivery records when a name resolves to an address the policy forbids. */
export class ForbiddenTargetError extends Error {
  readonly code = 'EWEBHOOKTARGET';
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `dns.lookup` for undici's connector that refuses non-public addresses: checked on the
 * address actually connected to, so a name that changes its answer between checks (DNS
 * rebinding) gains nothing.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const allowed = policy.allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (allowed.length === 0) {
        return callback(new ForbiddenTargetError(`${hostname} resolves only to non-public addresses`), []);
      }
      if ((options as { all?: boolean }).all) return callback(null, allowed);
      const first = allowed[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
