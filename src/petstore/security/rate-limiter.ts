import type { Clock } from '../../lib/clock.ts';
import type { RateLimitPolicy } from '../limits.ts';

export type { RateLimitPolicy };

export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests left in this window (0 when refused). */
  readonly remaining: number;
  /** Whole seconds until the window resets, at least 1. */
  readonly resetSeconds: number;
}

/**
 * Counts one request of a caller (a key id or a client address) against one policy. The answer
 * is synchronous when the process can decide alone (the usual case) and a promise when it must
 * ask a shared count first, so the hot path allocates no promise.
 */
export interface RateLimiter {
  readonly policy: RateLimitPolicy;
  take(caller: string | number): RateLimitDecision | Promise<RateLimitDecision>;
}

/** Whole seconds from `now` to the end of `window` (windows of `windowMs`), at least 1. */
export function secondsToReset(window: number, windowMs: number, now: number): number {
  return Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
}

/**
 * A fixed-window counter in this process's memory: windows start at multiples of the window
 * length on the injected clock, every caller's count restarts at each window. Fixed windows are
 * what the IETF `RateLimit` fields describe exactly (`r` left, `t` seconds to the reset), cost
 * one Map lookup per request, and forgetting every count at the window change keeps memory
 * bounded by the callers of one window. The price is a possible burst of 2×quota across a
 * window boundary, accepted (docs/decisions/petstore-access.md).
 */
export class FixedWindowLimiter implements RateLimiter {
  readonly policy: RateLimitPolicy;
  readonly #clock: Clock;
  readonly #windowMs: number;
  #window = -1;
  #counts = new Map<string | number, number>();

  constructor(policy: RateLimitPolicy, clock: Clock) {
    this.policy = policy;
    this.#clock = clock;
    this.#windowMs = policy.windowSeconds * 1000;
  }

  /** Counts one request of `caller` (a key id or an address) and says whether it may go ahead. */
  take(caller: string | number): RateLimitDecision {
    const now = this.#clock.now().getTime();
    const window = Math.floor(now / this.#windowMs);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts = new Map();
    }
    const used = (this.#counts.get(caller) ?? 0) + 1;
    const resetSeconds = secondsToReset(window, this.#windowMs, now);
    if (used > this.policy.quota) return { allowed: false, remaining: 0, resetSeconds };
    this.#counts.set(caller, used);
    return { allowed: true, remaining: this.policy.quota - used, resetSeconds };
  }
}
