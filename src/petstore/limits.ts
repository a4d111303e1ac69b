/** `quota` requests per `windowSeconds`, the two numbers `RateLimit-Policy` announces. */
export interface RateLimitPolicy {
  readonly quota: number;
  readonly windowSeconds: number;
}

/** The Petstore's configurable limits; the document's description states the values in force. */
export interface PetstoreLimits {
  /** Requests per window for each API key. */
  readonly perKey: RateLimitPolicy;
  /** Requests per window for each client address sending no (known) key. */
  readonly perAddress: RateLimitPolicy;
  /**
   * Cluster policy: the most requests a process takes from a caller's shared count at once (a
   * twentieth of the quota when that is smaller). Larger asks the database less often and leaves
   * more unused when a caller stops sending to a process.
   */
  readonly rateLimitLease: number;
  /** How long a request may run before it is answered 503 `request_timeout`. */
  readonly requestTimeoutMs: number;
  /** How long a client may take to send the request headers before it is answered 408. */
  readonly headersTimeoutMs: number;
  /** How long a client may take to send the whole request, body included, before it is answered 408. */
  readonly receiveTimeoutMs: number;
  /** How long an Idempotency-Key is remembered. */
  readonly idempotencyTtlMs: number;
  /** How long a process trusts a key it has looked up before asking the database again. */
  readonly keyCacheMs: number;
}

export const DEFAULT_LIMITS: PetstoreLimits = {
  perKey: { quota: 600, windowSeconds: 60 },
  perAddress: { quota: 60, windowSeconds: 60 },
  rateLimitLease: 100,
  requestTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  receiveTimeoutMs: 30_000,
  idempotencyTtlMs: 24 * 60 * 60 * 1000,
  keyCacheMs: 10_000,
};
