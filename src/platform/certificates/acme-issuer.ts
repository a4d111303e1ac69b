import { createPrivateKey, X509Certificate } from 'node:crypto';
import { getCACertificates } from 'node:tls';
import { type Authorization, crypto as acmeCrypto, Client } from 'acme-client';
import { Agent, type Dispatcher, request } from 'undici';
import { checkCaa, type DnsResolver } from '../dns/dns-check.ts';
import {
  type CertificateRequest,
  type ChallengeStore,
  type IssuedChain,
  type Issuer,
  IssuerError,
  type RenewalWindow,
} from './issuer.ts';
import { renewalCertId } from './renewal.ts';

/**
 * The ACME issuer (RFC 8555) over http-01: Let's Encrypt in production, Pebble in tests.
 *
 * acme-client does the protocol (JWS signing, nonces and badNonce retries, account and order
 * calls, polling); this class drives its explicit flow, not `auto()`, which first checks every
 * challenge itself over the system resolver and ports 80/443 — answers a test CA or a split-horizon
 * setup never sees. The HTTP transport underneath is ours (see `installTransport`).
 */

export interface AcmeIssuerOptions {
  /** The CA's directory, e.g. `https://acme-v02.api.letsencrypt.org/directory`. */
  readonly directoryUrl: string;
  /** The account's contact, where the CA sends expiry and policy mail. */
  readonly email: string;
  /**
   * The account's private key, PEM (PKCS#8 or SEC1; EC P-256 or RSA). Without it a P-256 key is
   * made on first use and handed to `onAccountKey` before any account is registered with it.
   */
  readonly accountKeyPem?: string;
  /** For CAs that only know accounts bound to an account of theirs (ZeroSSL, Google, Sectigo). */
  readonly externalAccountBinding?: { readonly kid: string; readonly hmacKey: string };
  /**
   * A CA to trust for the ACME API's own HTTPS, besides the default ones (Pebble's listener).
   * Only this issuer's connections trust it: nothing global changes.
   */
  readonly caPem?: string;
  /**
   * Receives a generated account key so the caller can keep it (sealed, in the database). The key
   * is only used once this resolves; when it rejects, the next issue() makes a new key.
   */
  readonly onAccountKey?: (pem: string) => Promise<void>;
  /**
   * Polling of an authorization or order the CA is still working on: the delay starts at
   * `minDelayMs` and doubles up to `maxDelayMs`, for `attempts` reads in all. acme-client's own
   * default (5 s, then 10 s, …) adds seconds to an issuance Pebble or Let's Encrypt finishes in
   * well under one. Defaults: 12 reads, 250 ms doubling to 4 s (about 32 s at most).
   */
  readonly polling?: {
    readonly attempts?: number;
    readonly minDelayMs?: number;
    readonly maxDelayMs?: number;
  };
  /** Per HTTP request to the CA (default 30 s). */
  readonly requestTimeoutMs?: number;
  /**
   * The issuer domains this CA is known by in CAA records (RFC 8659), e.g. `letsencrypt.org`:
   * before each order the domain's CAA records must allow one of them (`preCheck`), as Pebble
   * checks no CAA at all and Let's Encrypt's refusal would count against its limits. Empty or left
   * out: nothing is checked.
   */
  readonly caaIdentities?: readonly string[];
}

const DEFAULT_POLLING = { attempts: 12, minDelayMs: 250, maxDelayMs: 4_000 };
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DIRECTORY_CACHE_MS = 3_600_000;
const USER_AGENT = 'kennel-acme-issuer (acme-client)';
const ERROR_PREFIX = 'urn:ietf:params:acme:error:';

/** Errors of the TLS handshake with the CA that only a change of configuration (caPem) can fix. */
const TLS_TRUST_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * ACME problem types (RFC 8555 §6.7) a later attempt can get past without anyone changing anything.
 * Everything else the CA says is a verdict on this request — refused name (`rejectedIdentifier`),
 * CAA forbids the CA (`caa`), a failed validation (`unauthorized`, `dns`, `connection`,
 * `incorrectResponse`, `tls`), account or CSR trouble — and is not retried: repeating it gets the
 * same answer, and failed validations count against the CA's limits (Let's Encrypt: 5 per
 * hostname and account per hour). Those go back to the domain's status for someone to act on (fix
 * DNS, then Re-verify).
 */
const RETRYABLE_PROBLEMS = new Set(['rateLimited', 'serverInternal', 'badNonce', 'orderNotReady']);

export class AcmeIssuer implements Issuer {
  readonly name = 'acme';
  readonly #options: AcmeIssuerOptions;
  readonly #agent: Agent;
  readonly #polling: { attempts: number; minDelayMs: number; maxDelayMs: number };
  #accountKey: Promise<string> | undefined;
  #renewalInfo: { url: string | undefined; at: number } | undefined;

  constructor(options: AcmeIssuerOptions) {
    new URL(options.directoryUrl); // throws on a malformed URL, at boot rather than at the first order
    this.#options = options;
    this.#polling = { ...DEFAULT_POLLING, ...options.polling };
    this.#agent = new Agent(
      options.caPem === undefined
        ? {}
        : { connect: { ca: [...getCACertificates('default'), options.caPem] } },
    );
    if (options.accountKeyPem !== undefined) {
      createPrivateKey(options.accountKeyPem); // throws on a key that is not one
      this.#accountKey = Promise.resolve(options.accountKeyPem);
    }
  }

  /**
   * CAA: the records at the name (or the nearest above it) must allow one of `caaIdentities`.
   * A refusal is `caa_forbids`, not retried (the records must change first); DNS not answering is
   * retried.
   */
  async preCheck(hostname: string, resolver: DnsResolver): Promise<void> {
    const identities = this.#options.caaIdentities ?? [];
    let refusal: { message: string; retryable: boolean } | undefined;
    for (const identity of identities) {
      const outcome = await checkCaa(resolver, hostname, identity);
      if (outcome.ok) return;
      refusal ??= { message: outcome.message, retryable: outcome.retryable };
    }
    if (refusal === undefined) return;
    throw new IssuerError(`${hostname}: ${refusal.message}`, {
      retryable: refusal.retryable,
      ...(refusal.retryable ? {} : { reason: 'caa_forbids' }),
    });
  }

  /**
   * One order for one hostname, finalized with the manager's CSR. Every call registers the account
   * anew: newAccount with a known key just returns the existing account (RFC 8555 §7.3.1), so a CA
   * that lost or never had the account (a restarted Pebble, another directory) needs no special
   * path. Safe to call concurrently: each call has its own acme-client Client.
   */
  async issue(request: CertificateRequest, challenges: ChallengeStore): Promise<IssuedChain> {
    const trace: Trace = { last: undefined };
    try {
      return await this.#issue(request, challenges, trace);
    } catch (error) {
      throw toIssuerError(request.hostname, error, trace.last);
    }
  }

  /**
   * ACME Renewal Information (RFC 9773): the window the CA suggests for renewing `certificatePem`,
   * or undefined when its directory has no `renewalInfo` (Pebble 2.4). An unauthenticated GET of
   * `<renewalInfo>/<certID>`.
   */
  async renewalWindow(certificatePem: string): Promise<RenewalWindow | undefined> {
    const base = await this.#renewalInfoUrl();
    if (base === undefined) return undefined;
    const url = `${base.replace(/\/$/, '')}/${renewalCertId(certificatePem)}`;
    const answer = await this.#get(url);
    const window = isObject(answer.data) ? answer.data.suggestedWindow : undefined;
    const start = isObject(window) && typeof window.start === 'string' ? new Date(window.start) : undefined;
    const end = isObject(window) && typeof window.end === 'string' ? new Date(window.end) : undefined;
    if (
      answer.status !== 200 ||
      start === undefined ||
      end === undefined ||
      Number.isNaN(start.getTime()) ||
      Number.isNaN(end.getTime()) ||
      end.getTime() <= start.getTime()
    ) {
      throw new IssuerError(
        `the ACME CA's renewal information for this certificate was not usable (${answer.status})`,
        {
          retryable: true,
          ...(answer.retryAfterMs !== undefined && { retryAfterMs: answer.retryAfterMs }),
        },
      );
    }
    const explanation = isObject(answer.data) ? answer.data.explanationURL : undefined;
    return {
      start,
      end,
      retryAfterMs: answer.retryAfterMs,
      explanationUrl: typeof explanation === 'string' ? explanation : undefined,
    };
  }

  /** Closes the connections to the CA. */
  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #issue(request: CertificateRequest, challenges: ChallengeStore, trace: Trace): Promise<IssuedChain> {
    const { hostname } = request;
    if (hostname.startsWith('*.')) {
      throw new IssuerError(`${hostname}: a wildcard needs dns-01, and this issuer answers http-01 only`, {
        retryable: false,
      });
    }
    const client = new Client({
      directoryUrl: this.#options.directoryUrl,
      accountKey: await this.#getAccountKey(),
      ...(this.#options.externalAccountBinding && {
        externalAccountBinding: { ...this.#options.externalAccountBinding },
      }),
      backoffAttempts: this.#polling.attempts,
      backoffMin: this.#polling.minDelayMs,
      backoffMax: this.#polling.maxDelayMs,
    });
    installTransport(client, this.#transport(trace));

    await client.createAccount({ termsOfServiceAgreed: true, contact: [`mailto:${this.#options.email}`] });
    const order = await client.createOrder({ identifiers: [{ type: 'dns', value: hostname }] });
    const authorizations = await client.getAuthorizations(order);

    const placed: string[] = [];
    try {
      for (const authorization of authorizations) {
        await this.#authorize(client, authorization, challenges, placed);
      }
    } catch (error) {
      // The validation's failure is the news; an answer left behind is harmless (tokens are
      // random, and the store may expire them).
      await Promise.allSettled(placed.map((token) => challenges.remove(token)));
      throw error;
    }
    // Only now: the CA fetches each answer several times, concurrently, until it decides.
    try {
      await Promise.all(placed.map((token) => challenges.remove(token)));
    } catch (error) {
      // Retrying is cheap: the authorization stays valid and the next order skips validation.
      throw new IssuerError(`${hostname}: could not remove the http-01 answers from the challenge store`, {
        retryable: true,
        cause: error,
      });
    }

    // The manager's CSR (certificate-request.ts): the key stays with the manager.
    const finalized = await client.finalizeOrder(order, request.csrPem);
    const chain = await client.getCertificate(finalized);
    return chainFrom(hostname, chain);
  }

  /** The directory's `renewalInfo`, read at most once an hour (a pass may look at many certificates). */
  async #renewalInfoUrl(): Promise<string | undefined> {
    const cached = this.#renewalInfo;
    if (cached !== undefined && Date.now() - cached.at < DIRECTORY_CACHE_MS) return cached.url;
    const directory = await this.#get(this.#options.directoryUrl);
    if (directory.status !== 200 || !isObject(directory.data)) {
      throw new IssuerError(`the ACME CA's directory answered ${directory.status}`, {
        retryable: true,
        ...(directory.retryAfterMs !== undefined && { retryAfterMs: directory.retryAfterMs }),
      });
    }
    const url = typeof directory.data.renewalInfo === 'string' ? directory.data.renewalInfo : undefined;
    this.#renewalInfo = { url, at: Date.now() };
    return url;
  }

  /** A plain GET to the CA (directory, renewal information): no JWS, this issuer's trust. */
  async #get(url: string): Promise<{ status: number; data: unknown; retryAfterMs: number | undefined }> {
    try {
      const response = await request(url, {
        headers: { 'user-agent': USER_AGENT },
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
      });
      const headers = flattenHeaders(response.headers);
      const text = await response.body.text();
      return {
        status: response.statusCode,
        data: parseBody(headers['content-type'], text),
        retryAfterMs: parseRetryAfter(headers['retry-after']),
      };
    } catch (error) {
      throw unreachable(url, error);
    }
  }

  async #authorize(
    client: Client,
    authorization: Authorization,
    challenges: ChallengeStore,
    placed: string[],
  ): Promise<void> {
    // A valid authorization from an earlier order of this account is reused by the CA (Pebble
    // does it now and then even with PEBBLE_AUTHZREUSE=0).
    if (authorization.status === 'valid') return;
    const name = authorization.identifier.value;
    // By type, never by position: CAs may list challenges in any order (Pebble shuffles them).
    const challenge = authorization.challenges.find((candidate) => candidate.type === 'http-01');
    if (challenge === undefined) {
      throw new IssuerError(`${name}: the CA offers no http-01 challenge`, { retryable: false });
    }
    const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
    try {
      await challenges.put(challenge.token, keyAuthorization, name);
    } catch (error) {
      throw new IssuerError(`${name}: could not store the http-01 answer`, { retryable: true, cause: error });
    }
    placed.push(challenge.token);
    await client.completeChallenge(challenge);
    await client.waitForValidStatus(authorization);
  }

  #getAccountKey(): Promise<string> {
    if (this.#accountKey === undefined) {
      const made = (async () => {
        const pem = (await acmeCrypto.createPrivateEcdsaKey('P-256')).toString();
        try {
          await this.#options.onAccountKey?.(pem);
        } catch (error) {
          throw new IssuerError('could not keep the new ACME account key', { retryable: true, cause: error });
        }
        return pem;
      })();
      this.#accountKey = made;
      // A key the caller could not keep is never registered; the next call makes another.
      made.catch(() => {
        if (this.#accountKey === made) this.#accountKey = undefined;
      });
    }
    return this.#accountKey;
  }

  #transport(trace: Trace): Transport {
    const agent = this.#agent;
    const timeoutMs = this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    return async (url, method, options = {}) => {
      let status: number;
      let headers: Record<string, string>;
      let text: string;
      try {
        const response = await request(url, {
          method: method.toUpperCase() as Dispatcher.HttpMethod,
          // acme-client's own request() sets the JWS content type (RFC 8555 §6.2) on everything.
          headers: { ...options.headers, 'content-type': 'application/jose+json', 'user-agent': USER_AGENT },
          ...(options.data !== undefined && { body: JSON.stringify(options.data) }),
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
        });
        status = response.statusCode;
        headers = flattenHeaders(response.headers);
        text = await response.body.text();
      } catch (error) {
        throw unreachable(url, error);
      }
      const answer: AcmeResponse = { status, headers, data: parseBody(headers['content-type'], text) };
      trace.last = answer;
      return answer;
    };
  }
}

/** What acme-client's HttpClient#request returns (an axios response, as far as it looks). */
interface AcmeResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly data: unknown;
}

type Transport = (
  url: string,
  method: string,
  options?: { data?: unknown; headers?: Record<string, string> },
) => Promise<AcmeResponse>;

/** The last answer from the CA in one issue(): acme-client's errors carry only its detail text. */
interface Trace {
  last: AcmeResponse | undefined;
}

/**
 * acme-client sends every request through one module-wide axios instance: a CA certificate, a
 * timeout or a retry setting can only be set for the whole process (`acme.axios.defaults`), and
 * its response interceptor re-sends failed requests up to 5 times, sleeping 5, 10, … 25 s — and
 * after the last network error throws a TypeError instead of the error. So each Client gets this
 * issuer's transport in place of `HttpClient#request` (the one method all its HTTP goes through):
 * its own trust, a timeout, no hidden sleeps (retries are the certificate job's), and every answer
 * kept so a failure can be classified by its HTTP status, problem type and Retry-After.
 */
function installTransport(client: Client, transport: Transport): void {
  const http = (client as unknown as { http?: { request?: unknown } }).http;
  if (http === undefined || typeof http.request !== 'function') {
    // The platform's fault, not the domain's: retried (with back-off) until an upgrade fixes it.
    throw new IssuerError(
      'acme-client has changed: Client#http.request, which AcmeIssuer replaces, is gone',
      {
        retryable: true,
      },
    );
  }
  http.request = transport;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** JSON (directory, objects, problem documents) parsed; PEM and anything else as text. */
function parseBody(contentType: string | undefined, text: string): unknown {
  if (text === '' || !/json/i.test(contentType ?? '')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function unreachable(url: string, error: unknown): IssuerError {
  const origin = new URL(url).origin;
  const code = errorCode(error);
  if (code !== undefined && TLS_TRUST_ERRORS.has(code)) {
    return new IssuerError(
      `the ACME CA at ${origin} presented a certificate this issuer does not trust (${code}): set its CA (caPem) or fix the directory URL`,
      // The operator's setting, not the domain: retried with back-off, so fixing it and
      // restarting resumes every order without each owner clicking Verify.
      { retryable: true, cause: error },
    );
  }
  // Refused, reset, timed out, DNS failure for the CA's own name: the CA or the way to it is down.
  return new IssuerError(
    `the ACME CA at ${origin} could not be reached (${code ?? (error as Error).message})`,
    {
      retryable: true,
      cause: error,
    },
  );
}

function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const { code, name } = current as Error & { code?: unknown };
    if (typeof code === 'string') return code;
    if (name === 'TimeoutError') return 'timeout';
    current = current.cause;
  }
  return undefined;
}

interface Problem {
  readonly type?: string;
  readonly detail?: string;
  readonly subproblems?: readonly Problem[];
}

/**
 * Turns whatever the flow threw into an IssuerError. acme-client throws plain Errors whose message
 * is the CA's detail text, so the verdict comes from the last answer the CA gave: an HTTP error
 * with its problem document, or a 200 with an `invalid` challenge, authorization or order and the
 * problem inside it.
 */
function toIssuerError(hostname: string, error: unknown, last: AcmeResponse | undefined): IssuerError {
  if (error instanceof IssuerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const failure = last === undefined ? undefined : failureIn(last);
  if (failure === undefined) {
    // No answer says why — polling ran out while the CA was still working, or the CA answered
    // something unexpected: worth another attempt later.
    return new IssuerError(`${hostname}: ACME issuance failed: ${message}`, {
      retryable: true,
      cause: error,
    });
  }
  const { status, what, problem, retryAfterMs } = failure;
  const type = problem.type?.startsWith(ERROR_PREFIX)
    ? problem.type.slice(ERROR_PREFIX.length)
    : problem.type;
  const verdict =
    what === undefined ? `the ACME CA answered ${status}` : `the ACME CA marked the ${what} invalid`;
  const text = `${hostname}: ${verdict}${type === undefined ? '' : ` (${type})`}: ${describe(problem) || message}`;
  // 429 and 5xx: the CA is busy, limiting or broken for now; it says when to come back on 429 and
  // 503 (Retry-After). badNonce reaches here only after acme-client re-sent the request 5 times.
  const retryable = status === 429 || status >= 500 || (type !== undefined && RETRYABLE_PROBLEMS.has(type));
  return new IssuerError(text, {
    retryable,
    ...(retryable && retryAfterMs !== undefined && { retryAfterMs }),
    cause: error,
  });
}

interface Failure {
  readonly status: number;
  /** What the CA marked invalid in a 200 answer; undefined for an HTTP error. */
  readonly what: 'challenge' | 'authorization' | 'order' | undefined;
  readonly problem: Problem;
  readonly retryAfterMs: number | undefined;
}

function failureIn(response: AcmeResponse): Failure | undefined {
  const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
  const data = response.data;
  if (response.status >= 400) {
    const problem = isObject(data)
      ? (data as Problem)
      : { detail: typeof data === 'string' ? data.slice(0, 200) : '' };
    return { status: response.status, what: undefined, problem, retryAfterMs };
  }
  if (!isObject(data) || data.status !== 'invalid') return undefined;
  // An order or a challenge carries `error`; an authorization carries it on the failed challenge.
  const challenges = Array.isArray(data.challenges) ? (data.challenges as Record<string, unknown>[]) : [];
  const error = data.error ?? challenges.find((challenge) => isObject(challenge.error))?.error;
  const what = 'finalize' in data ? 'order' : 'identifier' in data ? 'authorization' : 'challenge';
  return {
    status: response.status,
    what,
    problem: isObject(error) ? (error as Problem) : { detail: 'the CA marked it invalid without saying why' },
    retryAfterMs,
  };
}

function describe(problem: Problem): string {
  const parts = [problem.detail ?? ''];
  for (const sub of problem.subproblems ?? []) parts.push(`${sub.type ?? ''} ${sub.detail ?? ''}`.trim());
  return parts.filter((part) => part !== '').join('; ');
}

/** Retry-After: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The chain as the contract wants it (leaf first, PEM); the manager checks it against its key. */
function chainFrom(hostname: string, chain: string): IssuedChain {
  const pems = chain.match(PEM_CERTIFICATE) ?? [];
  const [leafPem] = pems;
  if (leafPem === undefined) {
    throw new IssuerError(`${hostname}: the CA's certificate download held no certificate`, {
      retryable: true,
    });
  }
  const leaf = new X509Certificate(leafPem);
  return {
    certificatePem: `${pems.join('\n')}\n`,
    notBefore: leaf.validFromDate,
    notAfter: leaf.validToDate,
    issuer: 'acme',
  };
}
