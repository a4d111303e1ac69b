import type { OutboxAttempt, OutboxMessage, WebhookOutbox } from './webhook-outbox.ts';

/**
 * One message and its delivery log, as the API shows it: the message's own fields (not where it
 * goes, nor what it is about, which are the service's), its body parsed, and its attempts.
 */
export type DeliveryView = Omit<OutboxMessage, 'endpointKey' | 'subject' | 'body'> & {
  payload: Record<string, unknown>;
  log: Omit<OutboxAttempt, 'messageId'>[];
};

/** A message with its attempts (from `WebhookOutbox.attempts`), for a service's delivery-log API. */
export function deliveryView(message: OutboxMessage, attempts: readonly OutboxAttempt[]): DeliveryView {
  const { endpointKey: _endpointKey, subject: _subject, body, ...shown } = message;
  return {
    ...shown,
    payload: JSON.parse(body) as Record<string, unknown>,
    log: attempts.filter((a) => a.messageId === message.id).map(({ messageId: _id, ...attempt }) => attempt),
  };
}

/** An endpoint's delivery log, newest message first, each message with its attempts. */
export async function deliveryLog(
  outbox: WebhookOutbox,
  endpointKey: string,
  limit: number,
): Promise<DeliveryView[]> {
  const messages = await outbox.list({ endpointKey, limit });
  const attempts = await outbox.attemptsOf(messages.map((m) => m.id));
  return messages.map((m) => deliveryView(m, attempts));
}
