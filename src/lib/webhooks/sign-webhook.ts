import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** The three headers the Standard Webhooks specification defines, ready to send. */
export interface WebhookHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/;

/** A new signing secret: `whsec_` and 32 random bytes in base64, as the specification suggests. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function isSigningSecret(value: string): boolean {
  return SECRET_PATTERN.test(value);
}

/**
 * Signs one attempt. The timestamp is the attempt's, not the event's: receivers reject stale
 * timestamps to stop replays, and a retry a day later must still be accepted.
 */
export function signWebhook(secret: string, messageId: string, at: Date, body: string): WebhookHeaders {
  const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': new Webhook(secret).sign(messageId, timestamp, body),
  };
}
