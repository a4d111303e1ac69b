import type { DnsResolver } from '../dns/dns-check.ts';

/**
 * Where certificates come from (CertMagic's Issuer): the ACME issuer (Let's Encrypt, Pebble in
 * tests) or the internal CA (the local default). The manager — the certificate job, the platform
 * domain's certificate — makes the private key and the CSR (certificate-request.ts), keeps the
 * key, locks, retries and stores; an issuer only talks to its CA: it signs.
 */

/** What an issuer is asked to sign: one hostname, in a PKCS#10 request signed by the manager's key. */
export interface CertificateRequest {
  /** The one name the certificate is for (ASCII, normalised): the CSR's only subjectAltName. */
  readonly hostname: string;
  /** The CSR, PEM. */
  readonly csrPem: string;
}

/** What an issuer hands back: the chain, never a private key (it never had one). */
export interface IssuedChain {
  /** The leaf first, then the chain up to (not including) the root, PEM. */
  readonly certificatePem: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The issuer's name for the records (`acme`, `internal`). */
  readonly issuer: string;
}

/** A chain with the manager's private key for it: what is stored and served. */
export interface IssuedCertificate extends IssuedChain {
  /** The leaf's private key, PKCS#8 PEM. Encrypted before it is stored. */
  readonly privateKeyPem: string;
}

/**
 * Where http-01 answers live while a CA validates: in the database, so whichever edge node the CA
 * reaches can answer `/.well-known/acme-challenge/<token>`. Safe to call concurrently.
 */
export interface ChallengeStore {
  put(token: string, keyAuthorization: string, hostname: string): Promise<void>;
  remove(token: string): Promise<void>;
}

/**
 * A failed issuance; `retryAfterMs` when the CA said when (429 + Retry-After).
 *
 * `retryable: false` ("do not retry") means the CA refused this name and would refuse the same
 * order again until something about the domain changes (its DNS, its CAA records, the name):
 * the certificate job then stops, with no next attempt, until the owner's Verify or Re-verify.
 * `retryable: true` is for what passes without the owner: the CA busy, down or rate limiting, or
 * a fault on the platform's side (the CA's address or trust misconfigured) that the operator
 * fixes; those are retried with back-off.
 *
 * `reason`, when set, is the machine-readable reason the job records instead of the message
 * (`caa_forbids`: the domain's status maps it to its remedy).
 */
export class IssuerError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly reason: string | undefined;

  constructor(
    message: string,
    options: { retryable: boolean; retryAfterMs?: number; reason?: string; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.name = 'IssuerError';
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.reason = options.reason;
  }
}

/**
 * A renewal window the CA suggests (ACME Renewal Information, RFC 9773): renew at some time
 * between `start` and `end`; ask again after `retryAfterMs` (the CA's Retry-After), as the window
 * may move (a revocation moves it into the past).
 */
export interface RenewalWindow {
  readonly start: Date;
  readonly end: Date;
  readonly retryAfterMs: number | undefined;
  /** A page explaining an unusual window (an incident), when the CA gives one. */
  readonly explanationUrl: string | undefined;
}

export interface Issuer {
  readonly name: string;
  /**
   * Checked before every order (CertMagic's PreChecker): throws an IssuerError when this CA would
   * refuse the name for a reason the platform can see first — CAA records that do not name the
   * CA's identities. Issuers that care about nothing beforehand (the internal CA) leave it out.
   */
  preCheck?(hostname: string, resolver: DnsResolver): Promise<void>;
  /** Signs one request. Throws IssuerError on failure. */
  issue(request: CertificateRequest, challenges: ChallengeStore): Promise<IssuedChain>;
  /**
   * The CA's suggested renewal window for a certificate it issued (RFC 9773), or undefined when
   * the CA offers none (no `renewalInfo` in its directory): the manager then renews when a third
   * of the lifetime remains. Throws IssuerError when the CA could not be asked.
   */
  renewalWindow?(certificatePem: string): Promise<RenewalWindow | undefined>;
}
