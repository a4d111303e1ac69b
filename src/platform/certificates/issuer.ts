/**
 * Where certificates come from (CertMagic's Issuer): the ACME issuer (Let's Encrypt, Pebble in
 * tests) or the internal CA (the local default). The certificate job does the rest — locking,
 * retries, storage — so an issuer only talks to its CA.
 */
export interface IssuedCertificate {
  /** The leaf first, then the chain up to (not including) the root, PEM. */
  readonly certificatePem: string;
  /** The leaf's private key, PKCS#8 PEM. Encrypted before it is stored. */
  readonly privateKeyPem: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The issuer's name for the records (`acme`, `internal`). */
  readonly issuer: string;
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
 */
export class IssuerError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: { retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'IssuerError';
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export interface Issuer {
  readonly name: string;
  /** Obtains a certificate for one verified hostname. Throws IssuerError on failure. */
  issue(hostname: string, challenges: ChallengeStore): Promise<IssuedCertificate>;
}
