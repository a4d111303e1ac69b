import { randomBytes } from 'node:crypto';

/**
 * The body of every webhook, in the shape the Standard Webhooks specification recommends: a
 * dotted event type, when it happened, and the event's data. The message id travels in the
 * `webhook-id` header and stays the same across retries, so receivers can deduplicate.
 */
export interface WebhookEnvelope<Data = Record<string, unknown>> {
  readonly type: string;
  readonly timestamp: string;
  readonly data: Data;
}

/** Dotted lowercase names: `domain.verified`, `certificate.issued`, `webhook.test`. */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

export function createEnvelope<Data extends Record<string, unknown>>(
  type: string,
  at: Date,
  data: Data,
): WebhookEnvelope<Data> {
  if (!EVENT_TYPE_PATTERN.test(type)) throw new Error(`"${type}" is not a dotted event type`);
  return { type, timestamp: at.toISOString(), data };
}

/** `msg_` and 24 random bytes, base64url: unique without coordination between nodes. */
export function newMessageId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}
