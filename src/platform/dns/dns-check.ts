import type { CaaRecord } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { displayHostname, normalizeHostname, ownershipRecordName } from '../../lib/hostname.ts';

/**
 * The DNS side of verifying a custom domain (DESIGN.md, "Domains"): does the name point at the
 * platform, does the apex prove ownership, may the CA issue. Every query goes through the resolver
 * passed in, so production asks the configured resolvers and tests ask NSD; nothing is cached here
 * (node's Resolver keeps no cache either), so a re-check sees what DNS says now.
 *
 * Below both domains/ (which verifies names) and certificates/ (whose ACME issuer checks CAA before
 * each order): it imports neither.
 */

/**
 * Every outcome of a check, with the remedy the user sees (from the seed's troubleshooting table)
 * and whether the platform re-checks on its own (`retryable`: the same check may pass later
 * without anyone changing anything, as a record propagates or a resolver recovers). Outcomes that
 * need the user to change a record are not retryable; a Verify click starts the next check.
 */
export const DNS_CHECK_REASONS = {
  verified: {
    ok: true,
    retryable: false,
    remedy: 'Nothing to do: the SSL certificate is issued automatically, usually within a couple of minutes.',
  },
  permitted: {
    ok: true,
    retryable: false,
    remedy: 'Nothing to do: the CAA records allow the certificate authority to issue for this domain.',
  },
  not_found_yet: {
    ok: false,
    retryable: true,
    remedy:
      'Create the DNS record listed for this domain. If you already have, wait: DNS changes can take up to 48 hours to propagate (most resolve within minutes), and verification is retried automatically.',
  },
  cname_mismatch: {
    ok: false,
    retryable: false,
    remedy: 'Change the CNAME value to exactly the one listed for this domain, then verify again.',
  },
  conflicting_record: {
    ok: false,
    retryable: false,
    remedy:
      'Remove the conflicting A/AAAA record and create the CNAME listed for this domain, then verify again.',
  },
  address_mismatch: {
    ok: false,
    retryable: false,
    remedy:
      'Point the ALIAS/ANAME record at the value listed for this domain and remove A/AAAA records that point elsewhere, then verify again.',
  },
  ownership_token_missing: {
    ok: false,
    retryable: false,
    remedy: 'Add the TXT record listed for this domain (name and ownership token), then verify again.',
  },
  caa_forbids: {
    ok: false,
    retryable: false,
    remedy:
      "Fix the CAA records: add one allowing the platform's certificate authority (or remove those that exclude it), then verify again: it retries the certificate at once.",
  },
  dns_error: {
    ok: false,
    retryable: true,
    remedy:
      "The domain's DNS servers did not give an answer; this is usually temporary and is retried automatically. If it persists, check the nameservers set at your registrar.",
  },
} as const satisfies Record<string, { ok: boolean; retryable: boolean; remedy: string }>;

export type DnsCheckReason = keyof typeof DNS_CHECK_REASONS;

export interface CaaProperty {
  readonly flags: number;
  readonly tag: string;
  readonly value: string;
}

/**
 * What DNS showed; only the fields a check looked at are set. Names are in ASCII form. A type, not
 * an interface, so it is a `Record<string, unknown>` as the API's `found` is.
 */
export type DnsFound = {
  /** The name the records below were found at (for CAA: the first name up the tree that had any). */
  readonly name?: string;
  /** For CAA: the CNAME target followed from `name` to find the records (RFC 8659 §3 follows aliases). */
  readonly via?: string;
  readonly cname?: readonly string[];
  readonly a?: readonly string[];
  readonly aaaa?: readonly string[];
  readonly txt?: readonly string[];
  readonly caa?: readonly CaaProperty[];
  /** The resolver's error code (ESERVFAIL, ETIMEOUT...) and the query that failed. */
  readonly error?: string;
};

export interface DnsCheckOutcome {
  readonly ok: boolean;
  readonly reason: DnsCheckReason;
  /** What DNS shows, in words. */
  readonly message: string;
  readonly remedy: string;
  readonly retryable: boolean;
  readonly found: DnsFound;
}

/** The queries the checks make; node's `Resolver` from `node:dns/promises` satisfies it. */
export type DnsResolver = Pick<
  Resolver,
  'resolveCname' | 'resolve4' | 'resolve6' | 'resolveTxt' | 'resolveCaa'
>;

export interface DnsResolverConfig {
  /** `ip` or `ip:port` (`[ip]:port` for IPv6); empty means the system's resolvers. */
  readonly servers: readonly string[];
  /** Per attempt; c-ares doubles it on each retry. */
  readonly timeoutMs: number;
  readonly tries: number;
}

export function createDnsResolver(config: DnsResolverConfig): Resolver {
  const resolver = new Resolver({ timeout: config.timeoutMs, tries: config.tries });
  if (config.servers.length > 0) resolver.setServers([...config.servers]);
  return resolver;
}

export interface PlatformAddresses {
  readonly v4: readonly string[];
  readonly v6: readonly string[];
}

/**
 * A subdomain is set up with `CNAME <label> <expectedTarget>`. An A/AAAA record at the name instead
 * is `conflicting_record`: it is what blocks the CNAME (a name holds a CNAME or other data, never
 * both).
 */
export async function checkSubdomain(
  resolver: DnsResolver,
  hostname: string,
  expectedTarget: string,
): Promise<DnsCheckOutcome> {
  const expected = normalizeHostname(expectedTarget);
  return checkName(hostname, async (name, shown) => {
    // resolveCname gives the first hop only: the record at this name, the one the user wrote.
    const cname = await query(name, 'CNAME', () => resolver.resolveCname(name));
    if (cname.length > 0) {
      const targets = cname.map(normalizeHostname);
      if (targets.includes(expected)) {
        return outcome('verified', `${shown} has the CNAME ${expected}.`, { name, cname: targets });
      }
      return outcome(
        'cname_mismatch',
        `${shown} has the CNAME ${targets.join(', ')} instead of ${expected}.`,
        {
          name,
          cname: targets,
        },
      );
    }
    const { a, aaaa } = await addresses(resolver, name);
    if (a.length + aaaa.length > 0) {
      return outcome(
        'conflicting_record',
        `${shown} has ${describeAddresses(a, aaaa)} where the CNAME ${expected} belongs.`,
        { name, a, aaaa },
      );
    }
    return outcome('not_found_yet', `${shown} has no CNAME record yet.`, { name });
  });
}

/**
 * An apex cannot hold a CNAME, so providers flatten an ALIAS/ANAME into A/AAAA records: every
 * address must be one of the platform's and at least one must be there. Those addresses are the
 * same for every project, so ownership is proven by the TXT record at `ownershipRecordName`, which
 * must contain the token.
 *
 * Addresses pointing elsewhere are `address_mismatch`, not `conflicting_record`: the record type is
 * the expected one and only its value is wrong, as with `cname_mismatch`. (`conflicting_record`
 * means a record of the wrong type blocks the expected one.)
 */
export async function checkApex(
  resolver: DnsResolver,
  hostname: string,
  platformAddresses: PlatformAddresses,
  ownershipToken: string,
): Promise<DnsCheckOutcome> {
  const ours = new Set([...platformAddresses.v4, ...platformAddresses.v6].map(canonicalAddress));
  return checkName(hostname, async (name, shown) => {
    const { a, aaaa } = await addresses(resolver, name);
    if (a.length + aaaa.length === 0) {
      return outcome('not_found_yet', `${shown} has no A or AAAA records yet.`, { name, a, aaaa });
    }
    const foreign = [...a, ...aaaa].filter((address) => !ours.has(canonicalAddress(address)));
    if (foreign.length > 0) {
      return outcome(
        'address_mismatch',
        `${shown} points at ${foreign.join(', ')}, which ${foreign.length === 1 ? 'is not a platform address' : 'are not platform addresses'} (expected only ${[...ours].join(', ')}).`,
        { name, a, aaaa },
      );
    }
    const txtName = ownershipRecordName(name);
    // A TXT record is a list of strings; providers split long values at will, so join them back.
    const txt = (await query(txtName, 'TXT', () => resolver.resolveTxt(txtName))).map((parts) =>
      parts.join(''),
    );
    if (!txt.some((text) => text.includes(ownershipToken))) {
      const what =
        txt.length === 0
          ? 'no TXT record with the ownership token'
          : 'TXT records, but none with the ownership token';
      return outcome(
        'ownership_token_missing',
        `${shown} points at the platform, but ${display(txtName)} has ${what}.`,
        { name, a, aaaa, txt },
      );
    }
    return outcome(
      'verified',
      `${shown} points at the platform and ${display(txtName)} has the ownership token.`,
      {
        name,
        a,
        aaaa,
        txt,
      },
    );
  });
}

/** Known CAA tags (RFC 8659 §4, RFC 9495); an unknown tag marked critical forbids issuance. */
const KNOWN_CAA_TAGS = new Set([
  'issue',
  'issuewild',
  'iodef',
  'issuemail',
  'issuevmc',
  'contactemail',
  'contactphone',
]);
const CAA_CRITICAL = 128;
const MAX_CNAME_HOPS = 8;

/**
 * May `caIdentifier` (the CA's CAA domain, `letsencrypt.org`) issue for `hostname`? RFC 8659 §3:
 * the relevant record set is the first found climbing from the name towards the TLD, each name's
 * aliases followed. node's resolveCaa does not climb, and gives [] for a CNAME whose target is not
 * answered alongside, so both are done here. A `*.` prefix asks about a wildcard certificate, to
 * which `issuewild` applies; otherwise `issuewild` is ignored.
 *
 * Only the issuer domain of a property is compared; its parameters (accounturi, validationmethods)
 * are left to the CA.
 */
export async function checkCaa(
  resolver: DnsResolver,
  hostname: string,
  caIdentifier: string,
): Promise<DnsCheckOutcome> {
  const requested = normalizeHostname(hostname);
  const wildcard = requested.startsWith('*.');
  const name = wildcard ? requested.slice(2) : requested;
  const ca = caIdentifier.trim().toLowerCase();
  const labels = name.split('.');
  try {
    for (let i = 0; i < labels.length; i++) {
      const at = labels.slice(i).join('.');
      const { records, via } = await caaAt(resolver, at);
      if (records.length === 0) continue;
      const found: DnsFound = { name: at, ...(via === undefined ? {} : { via }), caa: records };
      const where = `${display(at)}${via === undefined ? '' : ` (through its CNAME ${via})`}`;
      const listed = records.map(formatCaa).join('; ');
      const refusal = caaRefusal(records, ca, wildcard);
      if (refusal === undefined) {
        return outcome('permitted', `The CAA records at ${where} allow ${ca}: ${listed}.`, found);
      }
      return outcome('caa_forbids', `The CAA records at ${where} ${refusal}: ${listed}.`, found);
    }
    return outcome(
      'permitted',
      `No CAA records from ${display(name)} up to the top-level domain: any CA may issue.`,
      {
        name,
        caa: [],
      },
    );
  } catch (error) {
    return dnsError(error, name);
  }
}

/** The CAA set of one name, following its CNAME chain (RFC 8659 §3, "CAA(X)"). */
async function caaAt(
  resolver: DnsResolver,
  start: string,
): Promise<{ records: CaaProperty[]; via?: string }> {
  let name = start;
  let via: string | undefined;
  for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
    const current = name;
    const [caa, cname] = await Promise.all([
      query(current, 'CAA', () => resolver.resolveCaa(current)),
      query(current, 'CNAME', () => resolver.resolveCname(current)),
    ]);
    const records = caa.map(toCaaProperty);
    const target = cname[0];
    if (target !== undefined) via = normalizeHostname(target);
    if (records.length > 0) return { records, ...(via === undefined ? {} : { via }) };
    if (target === undefined) return { records: [] };
    name = normalizeHostname(target);
  }
  return { records: [] };
}

/** Why the records refuse the CA, or undefined when they allow it. */
function caaRefusal(records: readonly CaaProperty[], ca: string, wildcard: boolean): string | undefined {
  const critical = records.find((r) => r.flags & CAA_CRITICAL && !KNOWN_CAA_TAGS.has(r.tag));
  if (critical !== undefined)
    return `hold the unknown critical property "${critical.tag}", which forbids every CA`;
  const issuewild = records.filter((r) => r.tag === 'issuewild');
  const relevant = wildcard && issuewild.length > 0 ? issuewild : records.filter((r) => r.tag === 'issue');
  // No issue property for this kind of name: the set restricts nobody (RFC 8659 §4.2, §4.3).
  if (relevant.length === 0) return undefined;
  const issuers = relevant.map((r) => (r.value.split(';')[0] ?? '').trim().toLowerCase());
  if (issuers.includes(ca)) return undefined;
  // `issue ";"` names no issuer at all: nobody may issue.
  if (issuers.every((issuer) => issuer === '')) return `allow no certificate authority at all, so not ${ca}`;
  return `do not allow ${ca}`;
}

function toCaaProperty(record: CaaRecord): CaaProperty {
  // node gives each property as { critical, <tag>: value } (plus `type` from resolveAny).
  const entry = Object.entries(record).find(([key]) => key !== 'critical' && key !== 'type');
  return { flags: record.critical, tag: (entry?.[0] ?? '').toLowerCase(), value: String(entry?.[1] ?? '') };
}

function formatCaa(property: CaaProperty): string {
  return `${property.flags} ${property.tag} ${JSON.stringify(property.value)}`;
}

async function addresses(resolver: DnsResolver, name: string): Promise<{ a: string[]; aaaa: string[] }> {
  const [a, aaaa] = await Promise.all([
    query(name, 'A', () => resolver.resolve4(name)),
    query(name, 'AAAA', () => resolver.resolve6(name)),
  ]);
  return { a, aaaa };
}

function describeAddresses(a: readonly string[], aaaa: readonly string[]): string {
  const parts = [
    ...(a.length > 0 ? [`${a.length === 1 ? 'an A record' : 'A records'} ${a.join(', ')}`] : []),
    ...(aaaa.length > 0
      ? [`${aaaa.length === 1 ? 'an AAAA record' : 'AAAA records'} ${aaaa.join(', ')}`]
      : []),
  ];
  return parts.join(' and ');
}

/** IPv6 addresses have many spellings (2001:DB8::1, 2001:db8:0:0::1); compare the canonical one. */
function canonicalAddress(address: string): string {
  const trimmed = address.trim();
  if (isIP(trimmed) !== 6) return trimmed;
  return new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
}

/** NXDOMAIN and NODATA are answers ("nothing here"); anything else means DNS did not answer. */
const EMPTY_ANSWER = new Set(['ENOTFOUND', 'ENODATA']);

class DnsQueryFailed extends Error {
  readonly code: string;
  constructor(name: string, type: string, code: string, cause: unknown) {
    super(`${type} query for ${name} failed: ${code}`, { cause });
    this.name = 'DnsQueryFailed';
    this.code = code;
  }
}

async function query<T>(name: string, type: string, run: () => Promise<T[]>): Promise<T[]> {
  try {
    return await run();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EUNKNOWN';
    if (EMPTY_ANSWER.has(code)) return [];
    throw new DnsQueryFailed(name, type, code, error);
  }
}

/**
 * The frame of a check of a name: `check` gets it normalised and as the messages show it, and a
 * query DNS did not answer is the `dns_error` outcome.
 */
async function checkName(
  hostname: string,
  check: (name: string, shown: string) => Promise<DnsCheckOutcome>,
): Promise<DnsCheckOutcome> {
  const name = normalizeHostname(hostname);
  try {
    return await check(name, display(name));
  } catch (error) {
    return dnsError(error, name);
  }
}

function dnsError(error: unknown, name: string): DnsCheckOutcome {
  if (!(error instanceof DnsQueryFailed)) throw error;
  return outcome('dns_error', `DNS gave no answer for ${display(name)}: ${error.message}.`, {
    name,
    error: error.message,
  });
}

function outcome(reason: DnsCheckReason, message: string, found: DnsFound): DnsCheckOutcome {
  const { ok, retryable, remedy } = DNS_CHECK_REASONS[reason];
  return { ok, reason, message, remedy, retryable, found };
}

/** `bücher.example.test (xn--bcher-kva.example.test)` for IDNs, the name alone otherwise. */
function display(name: string): string {
  const unicode = displayHostname(name);
  return unicode === name ? name : `${unicode} (${name})`;
}
