import type { PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { type MailMessage, type SmtpServer, sendMail } from '../mail/smtp.ts';
import { RESET_PREFIX, resetLink } from './password-resets.ts';
import { newSecret } from './secrets.ts';
import { addressKey, WindowCounter } from './sign-in-limits.ts';
import { normaliseEmail } from './users.ts';

/** How long a mailed "Forgot password?" link works. */
export const MAILED_RESET_LIFETIME_MS = 3_600_000;

/** How many reset requests are taken, per email and per client address (IPv6: per /64). */
export interface ResetRequestLimits {
  readonly perEmail: number;
  readonly perAddress: number;
  readonly windowMs: number;
  /** Keys tracked at once (each counter); beyond, the oldest windows are forgotten. */
  readonly maxTracked: number;
}

export const DEFAULT_RESET_REQUEST_LIMITS: ResetRequestLimits = {
  perEmail: 3,
  perAddress: 10,
  windowMs: 3_600_000,
  maxTracked: 50_000,
};

/** What every request answers, whether or not the email has an account. */
export const RESET_REQUEST_ANSWER =
  'If an account with a proved email uses this address, a password reset link is on its way to it; it works once, for 1 hour. No mail? Check the address and your spam folder, or ask a team owner for a reset link.';

/**
 * "Forgot password?": mails a one-time reset link to an account's own, proved email. The answer
 * is the same whether or not the email has an account (so it tells nobody which emails do): the
 * token is made and the account looked up either way, and the mail leaves off the response path.
 * Requests are counted per email and per client address in this process's memory, like sign-ins.
 */
export class PasswordResetRequests {
  readonly limits: ResetRequestLimits;
  readonly #emails: WindowCounter;
  readonly #addresses: WindowCounter;
  readonly #sending = new Set<Promise<void>>();
  readonly #send: (server: SmtpServer, message: MailMessage) => Promise<void>;

  constructor(limits: Partial<ResetRequestLimits> = {}, send = sendMail) {
    this.limits = { ...DEFAULT_RESET_REQUEST_LIMITS, ...limits };
    this.#emails = new WindowCounter(this.limits.windowMs, this.limits.maxTracked);
    this.#addresses = new WindowCounter(this.limits.windowMs, this.limits.maxTracked);
    this.#send = send;
  }

  /**
   * Takes a request for `email` from `address`; the link is built on `platformUrl` (the platform's
   * address as the requester reached it). Errors: mail_not_configured, too_many_reset_requests.
   */
  async request(ctx: PlatformContext, email: string, address: string, platformUrl: string): Promise<void> {
    const smtpUrl = ctx.config.smtpUrl;
    if (!smtpUrl) {
      throw platformErrors.error(
        'mail_not_configured',
        'This Kennel sends no mail (its operator has not set SMTP_URL), so it cannot mail you a reset link. Ask an owner of your team for a password reset link, or the operator to run npm run reset-password -- <your email>.',
      );
    }
    const account = normaliseEmail(email);
    const at = ctx.clock.now().getTime();
    const from = addressKey(address);
    const refuse = (counter: WindowCounter, key: string, what: string) => {
      const wait = counter.retryAfterSeconds(key, at);
      return platformErrors.error(
        'too_many_reset_requests',
        `Too many password reset requests ${what}. Try again in ${wait} s; a link already mailed keeps working for its hour.`,
        { headers: { 'retry-after': String(wait) } },
      );
    };
    if (this.#addresses.add(from, at) > this.limits.perAddress) {
      throw refuse(this.#addresses, from, 'from your address');
    }
    if (this.#emails.add(account, at) > this.limits.perEmail) {
      throw refuse(this.#emails, account, 'for this email');
    }
    const { secret, hash } = newSecret(RESET_PREFIX);
    const user = await ctx.db
      .selectFrom('users')
      .select(['id', 'email', 'email_proved_at'])
      .where('email', '=', account)
      .executeTakeFirst();
    // An unproved email may not be its holder's: nothing is mailed to it.
    if (!user || user.email_proved_at === null) return;
    const now = ctx.clock.now();
    const expiresAt = new Date(now.getTime() + MAILED_RESET_LIFETIME_MS).toISOString();
    await ctx.db
      .insertInto('password_resets')
      .values({
        user_id: user.id,
        token_hash: hash,
        created_by: user.id,
        created_at: now.toISOString(),
        expires_at: expiresAt,
        used_at: null,
        mailed_to: user.email,
      })
      .execute();
    const url = resetLink(platformUrl, secret);
    const sending = this.#send(
      { url: smtpUrl },
      {
        from: ctx.config.smtpFrom || `kennel@${ctx.config.platformDomain}`,
        to: user.email,
        subject: 'Reset your Kennel password',
        text: [
          `Someone (you, we hope) asked to reset the password of ${user.email} on Kennel (${platformUrl}).`,
          '',
          `Open this link to set a new password (it works once, until ${expiresAt}):`,
          '',
          `  ${url}`,
          '',
          'Setting it signs out every session of the account and revokes its API tokens.',
          'If you did not ask for this, ignore this mail: your password stays as it is.',
        ].join('\n'),
      },
    )
      // A mail the server refused is dropped: the answer was the same either way, and the person
      // can ask again (the link in the database expires unused).
      .catch(() => undefined)
      .finally(() => this.#sending.delete(sending));
    this.#sending.add(sending);
  }

  /** Resolves once every mail under way has been handed to the SMTP server (or refused). */
  async settled(): Promise<void> {
    await Promise.all([...this.#sending]);
  }
}
