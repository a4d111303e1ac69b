import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Where a document says its callers put their credential: an `apiKey` scheme (header, query or
 * cookie, by name), or the `Authorization` header of an `http` bearer or basic scheme. Read from
 * `components.securitySchemes` (OpenAPI 3) or `securityDefinitions` (Swagger 2) by the lifecycle
 * worker (src/edge/lifecycle.ts), in the document's order.
 */
export type CredentialSource =
  | { readonly in: 'header' | 'query' | 'cookie'; readonly name: string }
  | { readonly in: 'bearer' }
  | { readonly in: 'basic' };

/** Who called, as stored: a keyed hash, a label safe to show, and its kind. */
export interface Caller {
  /** HMAC-SHA256 (traffic key) of the project and the credential or truncated address, 32 hex. */
  readonly caller: string;
  /** `key:sk_li…`, `bearer:eyJhb…`, `basic:alice…` (at most 6 characters), or `203.0.113.0/24`. */
  readonly label: string;
  readonly kind: 'key' | 'address';
}

/** The credential sources a document declares, from its scheme objects; unknown ones skipped. */
export function credentialSources(document: Record<string, unknown>): CredentialSource[] {
  const components = document.components as { securitySchemes?: unknown } | undefined;
  const schemes = [
    components !== null && typeof components === 'object' ? components.securitySchemes : undefined,
    document.securityDefinitions,
  ].flatMap((found) => (found !== null && typeof found === 'object' ? Object.values(found) : []));
  const sources: CredentialSource[] = [];
  for (const scheme of schemes) {
    if (scheme === null || typeof scheme !== 'object') continue;
    const { type, in: where, name, scheme: httpScheme } = scheme as Record<string, unknown>;
    if (type === 'apiKey' && typeof name === 'string' && name !== '') {
      if (where === 'header' || where === 'query' || where === 'cookie') {
        sources.push({ in: where, name: where === 'header' ? name.toLowerCase() : name });
      }
    } else if (type === 'http' && typeof httpScheme === 'string') {
      const lower = httpScheme.toLowerCase();
      if (lower === 'bearer' || lower === 'basic') sources.push({ in: lower });
    } else if (type === 'basic') {
      sources.push({ in: 'basic' });
    }
  }
  return sources;
}

/**
 * The label's share of a credential: at most 6 characters, and never more than a third of it,
 * then `…`. Only visible ASCII is kept (labels are shown in terminals and pages).
 */
export function credentialPrefix(credential: string): string {
  const shown = [...credential].slice(0, Math.min(6, Math.floor(credential.length / 3))).join('');
  return `${shown.replace(/[^\x21-\x7e]/g, '')}…`;
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

function queryValue(url: string, name: string): string | undefined {
  const at = url.indexOf('?');
  if (at === -1) return undefined;
  const value = new URLSearchParams(url.slice(at + 1)).get(name);
  return value === null || value === '' ? undefined : value;
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) {
      const value = pair.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/** `Authorization: <scheme> <credentials>` when its scheme is the one asked for. */
function authorization(req: IncomingMessage, scheme: 'bearer' | 'basic'): string | undefined {
  const value = headerValue(req, 'authorization');
  if (value === undefined) return undefined;
  const space = value.indexOf(' ');
  if (space === -1 || value.slice(0, space).toLowerCase() !== scheme) return undefined;
  const credentials = value.slice(space + 1).trim();
  return credentials === '' ? undefined : credentials;
}

/** The credential a request sends for one source (as sent); undefined when it sends none. */
function credentialOf(req: IncomingMessage, url: string, source: CredentialSource): string | undefined {
  switch (source.in) {
    case 'header':
      return headerValue(req, source.name);
    case 'query':
      return queryValue(url, source.name);
    case 'cookie':
      return cookieValue(req, source.name);
    case 'bearer':
    case 'basic':
      return authorization(req, source.in);
  }
}

/** What is hashed of a credential, and its label. */
function describeCredential(source: CredentialSource, secret: string): { hashed: string; label: string } {
  if (source.in === 'bearer') return { hashed: secret, label: `bearer:${credentialPrefix(secret)}` };
  if (source.in === 'basic') {
    // The whole `user:password` is hashed; the label shows part of the user name only.
    const decoded = Buffer.from(secret, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return {
      hashed: `basic ${secret}`,
      label: `basic:${credentialPrefix(colon === -1 ? '' : decoded.slice(0, colon))}`,
    };
  }
  return { hashed: secret, label: `key:${credentialPrefix(secret)}` };
}

/**
 * The network a client address is in, for privacy: IPv4 to its /24 (`203.0.113.0/24`), IPv6 to
 * its /48 (`2001:db8:1::/48`); IPv4-mapped IPv6 as IPv4. Anything else: `unknown`.
 */
export function truncateAddress(address: string): string {
  const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(v4)) {
    const [a, b, c] = v4.split('.');
    return `${a}.${b}.${c}.0/24`;
  }
  if (isIPv6(address)) {
    const groups = expandIPv6(address)
      .slice(0, 3)
      .map((g) => g.replace(/^0+(?=.)/, ''));
    // Trailing zero groups fold into `::` as the canonical form would write them.
    while (groups.length > 0 && groups[groups.length - 1] === '0') groups.pop();
    return `${groups.join(':')}::/48`;
  }
  return 'unknown';
}

/** The eight groups of an IPv6 address (an embedded IPv4 tail counts as two). */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase().split('%')[0] as string;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = (tail[1] as string).split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -(tail[1] as string).length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  if (rest === undefined) return left;
  const right = rest === '' ? [] : rest.split(':');
  return [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
}

/** Callers remembered per node before the memory is cleared (a flood of new keys costs a hash each). */
const REMEMBERED_CALLERS = 10_000;

/** Where a remembered caller came from: a credential's place, or the client's address. */
type CallerPlace = CredentialSource['in'] | 'address';

/**
 * Identifies callers with one keyed hash: the same credential (or network) of the same project
 * hashes alike on every node given the same key, and the hash tells nothing without the key. The
 * project's id is hashed in, so one key used for two projects is two callers.
 *
 * An HMAC costs as much as the rest of a proxied request's bookkeeping together, so the callers
 * seen last are remembered in memory (up to REMEMBERED_CALLERS, then forgotten all at once):
 * a returning caller costs three map lookups (project, place, the credential as sent), with no
 * key string built per request. Memory only; nothing of it is ever written.
 */
export class CallerIdentity {
  readonly #key: KeyObject;
  #remembered = new Map<number, Map<CallerPlace, Map<string, Caller>>>();
  #count = 0;

  constructor(key: Buffer) {
    this.#key = createSecretKey(key);
  }

  identify(
    projectId: number,
    req: IncomingMessage,
    url: string,
    sources: readonly CredentialSource[],
  ): Caller {
    for (const source of sources) {
      const secret = credentialOf(req, url, source);
      if (secret === undefined) continue;
      const known = this.#recall(projectId, source.in, secret);
      if (known !== undefined) return known;
      const { hashed, label } = describeCredential(source, secret);
      return this.#remember(projectId, source.in, secret, {
        caller: this.hash(projectId, hashed),
        label,
        kind: 'key',
      });
    }
    const address = req.socket.remoteAddress ?? '';
    const known = this.#recall(projectId, 'address', address);
    if (known !== undefined) return known;
    const network = truncateAddress(address);
    return this.#remember(projectId, 'address', address, {
      caller: this.hash(projectId, `address ${network}`),
      label: network,
      kind: 'address',
    });
  }

  #recall(projectId: number, place: CallerPlace, value: string): Caller | undefined {
    return this.#remembered.get(projectId)?.get(place)?.get(value);
  }

  #remember(projectId: number, place: CallerPlace, value: string, caller: Caller): Caller {
    if (this.#count >= REMEMBERED_CALLERS) {
      this.#remembered = new Map();
      this.#count = 0;
    }
    let places = this.#remembered.get(projectId);
    if (places === undefined) {
      places = new Map();
      this.#remembered.set(projectId, places);
    }
    let values = places.get(place);
    if (values === undefined) {
      values = new Map();
      places.set(place, values);
    }
    values.set(value, caller);
    this.#count += 1;
    return caller;
  }

  hash(projectId: number, text: string): string {
    return createHmac('sha256', this.#key).update(`${projectId}\n${text}`).digest('hex').slice(0, 32);
  }
}
