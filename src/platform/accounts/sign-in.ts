import { ApiError } from '../../lib/api-error.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import {
  type DeriveKey,
  HasherBusyError,
  PasswordHasher,
  type PasswordHasherOptions,
} from './password-hasher.ts';
import { PasswordResetRequests, type ResetRequestLimits } from './request-password-reset.ts';
import { type SignInLimit, SignInLimiter, type SignInLimits } from './sign-in-limits.ts';
import { authenticate, normaliseEmail } from './users.ts';

export interface SignInOptions {
  /** Attempt limits (docs/security.md); each left out keeps its default. */
  readonly limits?: Partial<SignInLimits>;
  /** The hashing threads (ignored when `derive` is given). */
  readonly hasher?: PasswordHasherOptions;
  /** Runs scrypt instead of the hasher's threads (tests count its calls). */
  readonly derive?: DeriveKey;
  /** "Forgot password?" request limits (docs/security.md); each left out keeps its default. */
  readonly resetRequests?: Partial<ResetRequestLimits>;
}

/** Seconds a sign-in refused for a full hashing queue is asked to wait. */
const BUSY_RETRY_SECONDS = 2;

/** What each attempt limit tells the client, given the seconds to wait. */
const LIMIT_MESSAGES: Record<SignInLimit, (wait: number) => string> = {
  'account-address': (wait) =>
    `Too many failed sign-ins for this email from your address. Try again in ${wait} s; sessions and API tokens already issued keep working.`,
  account: (wait) =>
    `Too many failed sign-ins for this email from many addresses. Try again in ${wait} s, or from an address this account signed in from before; sessions and API tokens already issued keep working.`,
  address: (wait) => `Too many sign-in attempts from your address. Try again in ${wait} s.`,
};

/**
 * Sign-in as the management app does it, one per app (hence per process): attempt limits per
 * account and address, per account, and per client address, then the password check on the
 * bounded hashing threads.
 */
export class SignInGuard {
  readonly limiter: SignInLimiter;
  /** "Forgot password?" requests: their limits and the mails under way. */
  readonly resetRequests: PasswordResetRequests;
  readonly #hasher: PasswordHasher | undefined;
  readonly #derive: DeriveKey;

  constructor(options: SignInOptions = {}) {
    this.limiter = new SignInLimiter(options.limits);
    this.resetRequests = new PasswordResetRequests(options.resetRequests);
    this.#hasher = options.derive ? undefined : new PasswordHasher(options.hasher);
    this.#derive = options.derive ?? (this.#hasher as PasswordHasher).derive;
  }

  /** The account, or an ApiError: invalid_credentials, too_many_sign_in_attempts, sign_in_busy. */
  async signIn(ctx: PlatformContext, email: string, password: string, address: string): Promise<Actor> {
    const account = normaliseEmail(email);
    const decision = this.limiter.attempt(account, address, ctx.clock.now());
    if (!decision.allowed) {
      const wait = decision.retryAfterSeconds;
      throw platformErrors.error('too_many_sign_in_attempts', LIMIT_MESSAGES[decision.limit](wait), {
        headers: { 'retry-after': String(wait) },
      });
    }
    try {
      const actor = await authenticate(ctx, account, password, this.#derive);
      this.limiter.succeeded(account, address, ctx.clock.now());
      return actor;
    } catch (error) {
      // A wrong password stays counted (unknown emails too: the limit says nothing about which
      // exist); an attempt that was not checked is taken back.
      if (!(error instanceof ApiError && error.code === 'invalid_credentials')) {
        this.limiter.notChecked(account, address, ctx.clock.now());
      }
      if (error instanceof HasherBusyError) {
        throw platformErrors.error(
          'sign_in_busy',
          `The platform is checking too many passwords at once. Try again in ${BUSY_RETRY_SECONDS} s.`,
          { headers: { 'retry-after': String(BUSY_RETRY_SECONDS) }, cause: error },
        );
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.resetRequests.settled();
    await this.#hasher?.close();
  }
}
