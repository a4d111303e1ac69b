import type { OutboxAttempt, OutboxMessage, WebhookOutbox } from './webhook-outbox.ts';

/** One message and its delivery log, as the API shows it. */
export interface DeliveryView {
  id: string;
  type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  payload: Record<string, unknown>;
  log: {
    attempt: number;
    at: string;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
    ok: boolean;
  }[];
}

/** A message with its attempts (from `WebhookOutbox.attempts`), for a service's delivery-log API. */
export function deliveryView(message: OutboxMessage, attempts: readonly OutboxAttempt[]): DeliveryView {
  return {
    id: message.id,
    type: message.type,
    state: message.state,
    attempts: message.attempts,
    nextAttemptAt: message.nextAttemptAt,
    lastStatus: message.lastStatus,
    lastError: message.lastError,
    createdAt: message.createdAt,
    deliveredAt: message.deliveredAt,
    payload: JSON.parse(message.body) as Record<string, unknown>,
    log: attempts
      .filter((a) => a.messageId === message.id)
      .map(({ attempt, at, statusCode, durationMs, error, ok }) => ({
        attempt,
        at,
        statusCode,
        durationMs,
        error,
        ok,
      })),
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
