import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { parse } from 'tldts';

/**
 * Hostnames are normalised once, here, and every other module stores and compares the result: the
 * ASCII (punycode) form, lowercase, without the trailing dot. Pure functions, no DNS.
 */

/** Why a hostname cannot be attached to a project; stable codes for the API, the CLI and the dashboard. */
export type HostnameRefusalReason = 'invalid_hostname' | 'ip_address' | 'wildcard' | 'platform_domain';

export interface HostnameRefusal {
  readonly ok: false;
  readonly reason: HostnameRefusalReason;
  /** Says what is wrong, for the person who typed it. */
  readonly message: string;
}

/**
 * Attachable, but worth a second look. `mixed_scripts`: a label mixes writing systems (Latin and
 * Cyrillic, say), the shape of a homograph that imitates another domain.
 */
export interface HostnameWarning {
  readonly code: 'mixed_scripts';
  /** The label in its Unicode form. */
  readonly label: string;
  readonly scripts: readonly string[];
  readonly message: string;
}

export interface ParsedHostname {
  readonly ok: true;
  /** The normalised ASCII form: what is stored, compared and looked up in DNS. */
  readonly hostname: string;
  /** The Unicode form, for display. Equal to `hostname` for ASCII names. */
  readonly unicode: string;
  /**
   * `apex` is a registrable domain (`example.co.uk`): it cannot hold a CNAME, so it needs ALIAS/ANAME
   * plus the TXT ownership record. `subdomain` is anything under one, set up with a CNAME.
   */
  readonly kind: 'apex' | 'subdomain';
  /** The registrable domain, ASCII form. */
  readonly apex: string;
  /** The part left of the apex (`shop`, `a.b`), the Name of the CNAME; null for an apex. */
  readonly subdomain: string | null;
  readonly warnings: readonly HostnameWarning[];
}

export interface ParseHostnameOptions {
  /**
   * Domains the platform serves projects under (the default subdomains); they and every name
   * under them are refused as custom domains.
   */
  readonly platformDomains?: readonly string[];
}

const MAX_HOSTNAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** Validates, normalises and classifies a hostname a user wants to attach to a project. */
export function parseHostname(
  input: string,
  options: ParseHostnameOptions = {},
): ParsedHostname | HostnameRefusal {
  const shown = JSON.stringify(input);
  const invalid = (why: string): HostnameRefusal => ({
    ok: false,
    reason: 'invalid_hostname',
    message: `${shown} is not a valid hostname: ${why}.`,
  });
  const ipAddress: HostnameRefusal = {
    ok: false,
    reason: 'ip_address',
    message: `${shown} is an IP address; a custom domain must be a hostname such as shop.example.com.`,
  };

  const raw = input.trim();
  if (raw === '') return invalid('it is empty');
  const bracketed = /^\[(.*)\]$/.exec(raw);
  if (bracketed !== null && isIP(bracketed[1] ?? '') === 6) return ipAddress;
  if (raw.includes('/')) return invalid('enter the hostname alone, without https:// or a path');

  const lowered = stripTrailingDot(raw.toLowerCase());
  if (isIP(lowered) !== 0) return ipAddress;
  if (lowered.includes(':')) return invalid('enter the hostname alone, without a port');
  if (lowered.includes('*')) {
    return {
      ok: false,
      reason: 'wildcard',
      message: `${shown} is a wildcard; add each hostname (shop.example.com, www.example.com) on its own.`,
    };
  }
  // Checked before domainToASCII, which would quietly percent-decode or drop some of these.
  const stray = /[^a-z0-9.\-\P{ASCII}]/u.exec(lowered);
  if (stray !== null) {
    return invalid(`it contains ${JSON.stringify(stray[0])}; use only letters, digits, hyphens and dots`);
  }

  // IDNA (UTS #46) mapping and punycode: BÜCHER.example → xn--bcher-kva.example. Pure ASCII input
  // skips it, because the WHATWG host parser also rewrites numeric names (0x7f.1 → 127.0.0.1).
  const ascii = isAscii(lowered) ? lowered : domainToASCII(lowered);
  if (ascii === '') return invalid('it is not a valid internationalised domain name');
  if (isIP(ascii) !== 0) return ipAddress;

  const syntaxError = checkSyntax(ascii);
  if (syntaxError !== undefined) return invalid(syntaxError);

  for (const platformDomain of options.platformDomains ?? []) {
    const domain = normalizeHostname(platformDomain);
    if (ascii === domain || ascii.endsWith(`.${domain}`)) {
      return {
        ok: false,
        reason: 'platform_domain',
        message: `${shown} is ${ascii === domain ? '' : 'under '}the platform's own domain ${domain}; every project already has its address there.`,
      };
    }
  }

  // Private suffixes count (foo.github.io and foo.eu.org are registrable apexes). A suffix the list
  // does not know (.test, .internal) falls under the list's implicit "*" rule, which tldts applies:
  // the registrable domain is then the last two labels, so example.test is an apex and
  // shop.example.test a subdomain. No registrable domain means the name is a suffix itself.
  const apex = parse(ascii, { allowPrivateDomains: true }).domain;
  if (apex === null) {
    return invalid(`it is a public suffix (${ascii}); domains are registered under it, not at it`);
  }
  const unicode = domainToUnicode(ascii) || ascii;
  return {
    ok: true,
    hostname: ascii,
    unicode,
    kind: ascii === apex ? 'apex' : 'subdomain',
    apex,
    subdomain: ascii === apex ? null : ascii.slice(0, -(apex.length + 1)),
    warnings: mixedScriptWarnings(unicode),
  };
}

/**
 * The canonical form of any DNS name, for comparing (a CNAME target with the value the dashboard
 * showed, a configured platform domain): lowercase, one trailing dot removed, IDN labels in
 * punycode. No validation: names with underscores or other oddities come back lowercased.
 */
export function normalizeHostname(name: string): string {
  const lowered = stripTrailingDot(name.trim().toLowerCase());
  if (isAscii(lowered)) return lowered;
  return domainToASCII(lowered) || lowered;
}

/** The Unicode form of a normalised hostname, for messages and display. */
export function displayHostname(hostname: string): string {
  return domainToUnicode(hostname) || hostname;
}

/**
 * Where the ownership TXT record lives: `_kennel-challenge.<hostname>`. A name of its own rather
 * than a TXT on the hostname itself, because an apex usually already carries TXT records (SPF,
 * other verifications) and some providers allow only one; the underscore label (RFC 8552) can never
 * be a real host, so it clashes with nothing, and the same name works for apex and subdomain.
 * Expects the normalised (ASCII) hostname.
 */
export function ownershipRecordName(hostname: string): string {
  return `_kennel-challenge.${hostname}`;
}

/** Where the ACME dns-01 challenge is answered (RFC 8555 §8.4). Expects the normalised hostname. */
export function acmeChallengeName(hostname: string): string {
  return `_acme-challenge.${hostname}`;
}

function stripTrailingDot(name: string): string {
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

function isAscii(text: string): boolean {
  return /^\p{ASCII}*$/u.test(text);
}

/** RFC 1035/1123 host syntax on the ASCII form; returns what is wrong, or undefined. */
function checkSyntax(ascii: string): string | undefined {
  if (ascii.length > MAX_HOSTNAME_LENGTH) {
    return `it is ${ascii.length} characters long (at most ${MAX_HOSTNAME_LENGTH})`;
  }
  const labels = ascii.split('.');
  if (labels.length < 2) return 'it needs at least two labels, such as example.com';
  for (const label of labels) {
    if (label === '') return 'it has an empty label (two dots in a row, or a leading dot)';
    if (label.length > MAX_LABEL_LENGTH) {
      return `the label "${label}" is ${label.length} characters long (at most ${MAX_LABEL_LENGTH})`;
    }
    if (label.startsWith('-') || label.endsWith('-'))
      return `the label "${label}" starts or ends with a hyphen`;
    if (!LABEL.test(label))
      return `the label "${label}" has characters other than letters, digits and hyphens`;
    // A label that claims to be punycode must decode, or two spellings could name one domain.
    if (label.startsWith('xn--') && domainToUnicode(label).startsWith('xn--')) {
      return `the label "${label}" is not valid punycode`;
    }
  }
  if (/^[0-9]+$/.test(labels.at(-1) ?? '')) return 'the top-level label is all digits';
  return undefined;
}

/**
 * Scripts a label is checked against. Characters of the Common and Inherited scripts (digits, the
 * hyphen, combining marks) belong to every script and are not counted.
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Georgian',
  'Hangul',
  'Ethiopic',
  'Cherokee',
  'Khmer',
  'Mongolian',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Han',
] as const;
const SCRIPT_PATTERNS = SCRIPTS.map((name) => ({ name, pattern: new RegExp(`\\p{Script=${name}}`, 'u') }));
const NEUTRAL = /[\p{Script=Common}\p{Script=Inherited}]/u;

/**
 * Mixes that are how a language is written, not a disguise: the "highly restrictive" profile of
 * Unicode TS #39 §5.2 (Japanese, Chinese and Korean with Latin). Any other mix is flagged.
 */
const ALLOWED_MIXES: readonly ReadonlySet<string>[] = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

function mixedScriptWarnings(unicode: string): HostnameWarning[] {
  const warnings: HostnameWarning[] = [];
  for (const label of unicode.split('.')) {
    if (isAscii(label)) continue;
    const scripts = new Set<string>();
    for (const char of label) {
      if (NEUTRAL.test(char)) continue;
      scripts.add(SCRIPT_PATTERNS.find(({ pattern }) => pattern.test(char))?.name ?? 'Other');
    }
    if (scripts.size < 2) continue;
    if (ALLOWED_MIXES.some((allowed) => [...scripts].every((script) => allowed.has(script)))) continue;
    const names = [...scripts];
    warnings.push({
      code: 'mixed_scripts',
      label,
      scripts: names,
      message: `The label "${label}" mixes ${names.join(' and ')} letters, which can imitate another domain; check that it is the domain you mean.`,
    });
  }
  return warnings;
}
