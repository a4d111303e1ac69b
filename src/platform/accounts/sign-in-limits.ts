import { isIPv6 } from 'node:net';

/**
 * How many sign-in attempts are allowed: per account from one client address, per account from
 * all addresses (a slower budget, which addresses the account signed in from before skip), and per
 * client address.
 */
export interface SignInLimits {
  /** Failed sign-ins per account (email) from one address in `accountWindowMs`; then 429 there. */
  readonly accountFailures: number;
  readonly accountWindowMs: number;
  /**
   * Failed sign-ins per account from every address together in `accountBudgetWindowMs`: past it, a
   * guess spread over many addresses is refused, except from an address the account signed in
   * from within `knownAddressMs` (so the lockout cannot be used to keep the owner out).
   */
  readonly accountBudget: number;
  readonly accountBudgetWindowMs: number;
  readonly knownAddressMs: number;
  /** Sign-in attempts (failed or not) per client address (IPv6: per /64) in `addressWindowMs`. */
  readonly addressAttempts: number;
  readonly addressWindowMs: number;
  /** Keys tracked at once (each map); beyond, the oldest windows are forgotten. */
  readonly maxTracked: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  accountFailures: 5,
  accountWindowMs: 15 * 60_000,
  accountBudget: 100,
  accountBudgetWindowMs: 24 * 3_600_000,
  knownAddressMs: 30 * 24 * 3_600_000,
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

  /** Takes back one event counted in the current window; a window left empty is forgotten. */
  subtract(key: string, now: number): void {
    const window = this.#windows.get(key);
    if (!window || now >= window.start + this.windowMs || window.count === 0) return;
    if (--window.count === 0) this.#windows.delete(key);
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

/**
 * Which limit refused an attempt: the account's failures from this address, the account's budget
 * over all addresses, or this address's attempts.
 */
export type SignInLimit = 'account-address' | 'account' | 'address';

/** What a sign-in attempt may do: go on, or wait `retryAfterSeconds` (and why). */
export type SignInDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly limit: SignInLimit; readonly retryAfterSeconds: number };

/**
 * Sign-in attempt limits, in this process's memory (each node counts its own attempts). Keys:
 * the normalised email with the client address (an IPv6 address by its /64, which one client
 * usually holds whole), the email alone, and the address alone. Failing five times from one
 * address shuts that address out of the account, not the owner elsewhere; the budget over all
 * addresses stops a guess spread over many, and an address the account signed in from before
 * still gets in while it is spent (docs/security.md, "Attempt limits").
 */
export class SignInLimiter {
  readonly limits: SignInLimits;
  readonly #pairs: WindowCounter;
  readonly #accounts: WindowCounter;
  readonly #known: WindowCounter;
  readonly #addresses: WindowCounter;

  constructor(limits: Partial<SignInLimits> = {}) {
    this.limits = { ...DEFAULT_SIGN_IN_LIMITS, ...limits };
    this.#pairs = new WindowCounter(this.limits.accountWindowMs, this.limits.maxTracked);
    this.#accounts = new WindowCounter(this.limits.accountBudgetWindowMs, this.limits.maxTracked);
    this.#known = new WindowCounter(this.limits.knownAddressMs, this.limits.maxTracked);
    this.#addresses = new WindowCounter(this.limits.addressWindowMs, this.limits.maxTracked);
  }

  /** Keys tracked now: (account, address) pairs, accounts, known pairs, addresses. */
  get tracked(): { pairs: number; accounts: number; known: number; addresses: number } {
    return {
      pairs: this.#pairs.size,
      accounts: this.#accounts.size,
      known: this.#known.size,
      addresses: this.#addresses.size,
    };
  }

  /**
   * Counts an attempt from `address` for `email`, and says whether it may be checked. An allowed
   * attempt counts as a failure at once (of the pair and of the account's budget), so concurrent
   * guesses cannot all pass the check before the first failure is recorded; `succeeded` clears
   * it, `notChecked` takes it back.
   */
  attempt(email: string, address: string, now: Date): SignInDecision {
    const at = now.getTime();
    const from = addressKey(address);
    const pair = pairKey(email, from);
    const refuse = (limit: SignInLimit, counter: WindowCounter, key: string): SignInDecision => ({
      allowed: false,
      limit,
      retryAfterSeconds: counter.retryAfterSeconds(key, at),
    });
    if (this.#addresses.add(from, at) > this.limits.addressAttempts) {
      return refuse('address', this.#addresses, from);
    }
    if (this.#pairs.count(pair, at) >= this.limits.accountFailures) {
      return refuse('account-address', this.#pairs, pair);
    }
    const known = this.#known.count(pair, at) > 0;
    if (!known && this.#accounts.count(email, at) >= this.limits.accountBudget) {
      return refuse('account', this.#accounts, email);
    }
    this.#pairs.add(pair, at);
    this.#accounts.add(email, at);
    return { allowed: true };
  }

  /**
   * A successful sign-in: the attempt was no failure, the pair's failures are forgotten, and the
   * address becomes known to the account. The account's budget keeps the other failures: the
   * owner signing in does not give a distributed guess a fresh budget.
   */
  succeeded(email: string, address: string, now: Date): void {
    const at = now.getTime();
    const pair = pairKey(email, addressKey(address));
    this.#accounts.subtract(email, at);
    this.#pairs.delete(pair);
    // Known for knownAddressMs from the latest success.
    this.#known.delete(pair);
    this.#known.add(pair, at);
  }

  /** An allowed attempt whose password was not checked after all (the hasher was busy, an error). */
  notChecked(email: string, address: string, now: Date): void {
    const at = now.getTime();
    this.#pairs.subtract(pairKey(email, addressKey(address)), at);
    this.#accounts.subtract(email, at);
  }
}

/** An (account, address) key: the email cannot hold a newline, so the two cannot run together. */
const pairKey = (email: string, addressKeyed: string) => `${email}\n${addressKeyed}`;

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
