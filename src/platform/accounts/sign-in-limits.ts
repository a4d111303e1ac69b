import { isIPv6 } from 'node:net';

/** How many sign-in attempts are allowed, per account and per client address. */
export interface SignInLimits {
  /** Failed sign-ins per account (email) in `accountWindowMs`; then 429 until the window ends. */
  readonly accountFailures: number;
  readonly accountWindowMs: number;
  /** Sign-in attempts (failed or not) per client address (IPv6: per /64) in `addressWindowMs`. */
  readonly addressAttempts: number;
  readonly addressWindowMs: number;
  /** Accounts and addresses tracked at once (each map); beyond, the oldest windows are forgotten. */
  readonly maxTracked: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  accountFailures: 5,
  accountWindowMs: 15 * 60_000,
  addressAttempts: 20,
  addressWindowMs: 60_000,
  maxTracked: 50_000,
};

interface Window {
  readonly start: number;
  count: number;
}

/**
 * Fixed windows per key, starting at the key's first event, in a Map kept in order of window
 * start (a reset window is moved to the end). The map never holds more than `maxKeys`: a new key
 * first drops expired windows from the front, then the oldest live one. So an attacker spraying
 * addresses or emails cannot grow memory, only make the oldest windows be forgotten early.
 */
export class WindowCounter {
  readonly #windows = new Map<string, Window>();
  readonly windowMs: number;
  readonly maxKeys: number;

  constructor(windowMs: number, maxKeys: number) {
    this.windowMs = windowMs;
    this.maxKeys = maxKeys;
  }

  get size(): number {
    return this.#windows.size;
  }

  /** The count in the key's current window (0 when none). */
  count(key: string, now: number): number {
    const window = this.#windows.get(key);
    return window && now < window.start + this.windowMs ? window.count : 0;
  }

  /** Whole seconds until the key's current window ends (at least 1). */
  retryAfterSeconds(key: string, now: number): number {
    const window = this.#windows.get(key);
    const left = window ? window.start + this.windowMs - now : this.windowMs;
    return Math.max(1, Math.ceil(left / 1000));
  }

  /** Counts one event; returns the count in the window, this event included. */
  add(key: string, now: number): number {
    const window = this.#windows.get(key);
    if (window && now < window.start + this.windowMs) return ++window.count;
    if (window) this.#windows.delete(key);
    else this.#makeRoom(now);
    this.#windows.set(key, { start: now, count: 1 });
    return 1;
  }

  /** Takes back one event counted in the current window. */
  subtract(key: string, now: number): void {
    const window = this.#windows.get(key);
    if (window && now < window.start + this.windowMs && window.count > 0) window.count--;
  }

  delete(key: string): void {
    this.#windows.delete(key);
  }

  #makeRoom(now: number): void {
    for (const [key, window] of this.#windows) {
      if (this.#windows.size < this.maxKeys && now < window.start + this.windowMs) return;
      this.#windows.delete(key);
    }
  }
}

/** What a sign-in attempt may do: go on, or wait `retryAfterSeconds` (and why). */
export type SignInDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly limit: 'account' | 'address'; readonly retryAfterSeconds: number };

/**
 * Sign-in attempt limits, in this process's memory (each node counts its own attempts). Keys:
 * the normalised email, and the client address (an IPv6 address by its /64, which one client
 * usually holds whole).
 */
export class SignInLimiter {
  readonly limits: SignInLimits;
  readonly #accounts: WindowCounter;
  readonly #addresses: WindowCounter;

  constructor(limits: Partial<SignInLimits> = {}) {
    this.limits = { ...DEFAULT_SIGN_IN_LIMITS, ...limits };
    this.#accounts = new WindowCounter(this.limits.accountWindowMs, this.limits.maxTracked);
    this.#addresses = new WindowCounter(this.limits.addressWindowMs, this.limits.maxTracked);
  }

  /** Accounts and addresses tracked now. */
  get tracked(): { accounts: number; addresses: number } {
    return { accounts: this.#accounts.size, addresses: this.#addresses.size };
  }

  /**
   * Counts an attempt from `address` for `email`, and says whether it may be checked. An allowed
   * attempt counts as a failure of the email at once, so concurrent guesses cannot all pass the
   * check before the first failure is recorded; `succeeded` clears it, `notChecked` takes it back.
   */
  attempt(email: string, address: string, now: Date): SignInDecision {
    const at = now.getTime();
    const from = addressKey(address);
    if (this.#addresses.add(from, at) > this.limits.addressAttempts) {
      return {
        allowed: false,
        limit: 'address',
        retryAfterSeconds: this.#addresses.retryAfterSeconds(from, at),
      };
    }
    if (this.#accounts.count(email, at) >= this.limits.accountFailures) {
      return {
        allowed: false,
        limit: 'account',
        retryAfterSeconds: this.#accounts.retryAfterSeconds(email, at),
      };
    }
    this.#accounts.add(email, at);
    return { allowed: true };
  }

  /** A successful sign-in forgets the account's failures. */
  succeeded(email: string): void {
    this.#accounts.delete(email);
  }

  /** An allowed attempt whose password was not checked after all (the hasher was busy, an error). */
  notChecked(email: string, now: Date): void {
    this.#accounts.subtract(email, now.getTime());
  }
}

/** The key an address is counted under: IPv4 as is, IPv6 by its first 64 bits. */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
