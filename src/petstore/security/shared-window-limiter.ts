import type { Clock } from '../../lib/clock.ts';
import {
  FixedWindowLimiter,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitPolicy,
  secondsToReset,
} from './rate-limiter.ts';

/**
 * The count every node shares: how many requests of a caller's window have been handed out to
 * nodes. `claim` is atomic across nodes and never takes the count past `quota`; it answers how
 * many of the `want` requests were granted (0 … want) and the count after the grant. It may fail
 * (the database is unreachable); a failed claim may still have been counted, which only ever
 * lowers what the nodes can accept.
 */
export interface SharedWindowCounts {
  claim(
    policy: string,
    caller: string,
    windowStart: number,
    want: number,
    quota: number,
  ): Promise<{ granted: number; claimed: number }>;
  /** Forgets the policy's windows that started before `windowStart`. */
  purgeBefore(policy: string, windowStart: number): Promise<void>;
}

export interface SharedWindowOptions {
  /** Names the policy in the shared count (`key`, `address`). */
  readonly name: string;
  /**
   * The most requests a node takes from the shared count at once (its allowance). The lease is
   * this, or a twentieth of the quota when that is smaller, and at least 1.
   */
  readonly maxLease: number;
  /** A claim not answered in this time counts as an outage (the request is decided locally). */
  readonly claimTimeoutMs: number;
  /** After a failed claim, this node counts alone for this long (on the clock) before asking again. */
  readonly outageMs: number;
  /** Told once when an outage starts (a log line); failures during the outage are not repeated. */
  readonly onOutage?: (error: unknown) => void;
  /** Told when forgetting old windows fails (they are forgotten at the next window instead). */
  readonly onPurgeError?: (error: unknown) => void;
}

/** This node's view of one caller in the current window. */
interface Allowance {
  /** Requests this node may still accept without asking: granted to it, not yet used. */
  tokens: number;
  /** The shared count after this node's last claim (every node's grants). */
  claimed: number;
  /** The shared count reached the quota: nothing more will be granted in this window. */
  exhausted: boolean;
  /** The claim in flight, which the caller's other requests wait for rather than claiming again. */
  pending: Promise<void> | undefined;
}

/** The size of a node's allowance for a quota (see SharedWindowOptions.maxLease). */
export function leaseSize(quota: number, maxLease: number): number {
  return Math.max(1, Math.min(maxLease, Math.floor(quota / 20)));
}

/**
 * A fixed window shared by every node on one database (the cluster policy). Windows are the
 * local policy's: aligned on the clock, `quota` requests each. Each node takes an allowance of
 * `lease` requests at a time from the shared count and accepts from it without asking; the
 * shared count never passes the quota, so all nodes together accept at most `quota` per window
 * while the database answers (tolerance 0). What a node was granted and did not use is lost for
 * the window: a caller that stops sending to some nodes can be refused with up to
 * (N − 1) × (lease + ⌊lease/2⌋) of the quota unused, since a node claims the next allowance once
 * half of the current one is used (so that requests do not wait for the database while tokens
 * last). A node asks the database once per `lease` requests of a caller, plus once per window for
 * a caller past the quota (then it refuses alone).
 *
 * When a claim fails or times out, the node counts alone (the local policy, `fallback`) for
 * `outageMs`, then asks again: during an outage each node accepts up to the quota, so N nodes up
 * to N × quota. The Petstore stays up and limited rather than refusing everything.
 */
export class SharedWindowLimiter implements RateLimiter {
  readonly policy: RateLimitPolicy;
  readonly lease: number;
  /** At or below this many tokens left, the next allowance is claimed ahead (none for a lease of 1). */
  readonly #refillAt: number;
  readonly #counts: SharedWindowCounts;
  readonly #clock: Clock;
  readonly #options: SharedWindowOptions;
  readonly #windowMs: number;
  readonly #fallback: FixedWindowLimiter;
  #window = -1;
  #allowances = new Map<string | number, Allowance>();
  /** Until then (clock ms) the shared count is not asked: this node counts alone. */
  #outageUntil = 0;

  constructor(
    policy: RateLimitPolicy,
    counts: SharedWindowCounts,
    clock: Clock,
    options: SharedWindowOptions,
  ) {
    this.policy = policy;
    this.lease = leaseSize(policy.quota, options.maxLease);
    this.#refillAt = this.lease >= 2 ? Math.floor(this.lease / 2) : -1;
    this.#counts = counts;
    this.#clock = clock;
    this.#options = options;
    this.#windowMs = policy.windowSeconds * 1000;
    this.#fallback = new FixedWindowLimiter(policy, clock);
  }

  take(caller: string | number): RateLimitDecision | Promise<RateLimitDecision> {
    const now = this.#clock.now().getTime();
    const window = Math.floor(now / this.#windowMs);
    if (window !== this.#window) this.#enter(window);
    let allowance = this.#allowances.get(caller);
    if (allowance === undefined) {
      allowance = { tokens: 0, claimed: 0, exhausted: false, pending: undefined };
      this.#allowances.set(caller, allowance);
    }
    const decided = this.#fromAllowance(allowance, window, now);
    if (decided) {
      if (allowance.tokens <= this.#refillAt) this.#claimAhead(caller, allowance, window, now);
      return decided;
    }
    if (now < this.#outageUntil) return this.#fallback.take(caller);
    return this.#claimAndTake(caller, allowance, window);
  }

  /**
   * Half the allowance used: the next one is claimed in the background, so the caller's requests
   * keep being decided synchronously while the database answers instead of all waiting for it.
   */
  #claimAhead(caller: string | number, allowance: Allowance, window: number, now: number): void {
    if (allowance.pending || allowance.exhausted || now < this.#outageUntil) return;
    // A failure has started the outage (#claim); nobody waits on this claim to hear it.
    this.#startClaim(caller, allowance, window).catch(() => {});
  }

  /** The caller's claim in flight, started if none is: every request of the caller shares it. */
  #startClaim(caller: string | number, allowance: Allowance, window: number): Promise<void> {
    allowance.pending ??= this.#claim(caller, allowance, window).finally(() => {
      allowance.pending = undefined;
    });
    return allowance.pending;
  }

  /** A decision from what this node already knows, or undefined when it must ask. */
  #fromAllowance(allowance: Allowance, window: number, now: number): RateLimitDecision | undefined {
    if (allowance.tokens > 0) {
      allowance.tokens--;
      return {
        allowed: true,
        // Not handed out to any node, plus what this node holds: exact with one node.
        remaining: this.policy.quota - allowance.claimed + allowance.tokens,
        resetSeconds: secondsToReset(window, this.#windowMs, now),
      };
    }
    if (allowance.exhausted) {
      return { allowed: false, remaining: 0, resetSeconds: secondsToReset(window, this.#windowMs, now) };
    }
    return undefined;
  }

  async #claimAndTake(
    caller: string | number,
    allowance: Allowance,
    window: number,
  ): Promise<RateLimitDecision> {
    for (;;) {
      try {
        await this.#startClaim(caller, allowance, window);
      } catch {
        return this.#fallback.take(caller);
      }
      const decided = this.#fromAllowance(allowance, window, this.#clock.now().getTime());
      if (decided) return decided;
      // Others waiting on the same claim used the grant up: claim again.
    }
  }

  async #claim(caller: string | number, allowance: Allowance, window: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const { granted, claimed } = await Promise.race([
        this.#counts.claim(
          this.#options.name,
          String(caller),
          window * this.#windowMs,
          this.lease,
          this.policy.quota,
        ),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(`the shared rate-limit count did not answer in ${this.#options.claimTimeoutMs} ms`),
              ),
            this.#options.claimTimeoutMs,
          );
        }),
      ]);
      allowance.tokens += granted;
      allowance.claimed = claimed;
      allowance.exhausted = claimed >= this.policy.quota;
    } catch (error) {
      const now = this.#clock.now().getTime();
      if (now >= this.#outageUntil) this.#options.onOutage?.(error);
      this.#outageUntil = now + this.#options.outageMs;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A new window: every allowance is forgotten; windows before the previous one are purged. */
  #enter(window: number): void {
    this.#window = window;
    this.#allowances = new Map();
    // The previous window is kept: a node whose clock lags a little still counts in it.
    this.#counts
      .purgeBefore(this.#options.name, (window - 1) * this.#windowMs)
      .catch((error: unknown) => this.#options.onPurgeError?.(error));
  }
}
