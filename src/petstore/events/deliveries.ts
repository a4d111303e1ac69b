import { type DeliveryView, deliveryLog, deliveryView, type OutboxMessage } from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import type { PetstoreDb } from '../store/context.ts';
import { petstoreOutbox, subscriptionKey } from './emit-event.ts';
import { readSubscription } from './subscriptions.ts';

/** A subscription's delivery log, newest message first. */
export async function listDeliveries(db: PetstoreDb, subscriptionId: number, limit: number) {
  await readSubscription(db, subscriptionId);
  return deliveryLog(petstoreOutbox(db), subscriptionKey(subscriptionId), limit);
}

/** Manual redelivery: the message goes out again now, with a fresh retry schedule. */
export async function redeliver(
  db: PetstoreDb,
  subscriptionId: number,
  messageId: string,
  at: Date,
): Promise<DeliveryView> {
  await readSubscription(db, subscriptionId);
  const outbox = petstoreOutbox(db);
  const message = await outbox.get(messageId);
  if (!message || message.endpointKey !== subscriptionKey(subscriptionId)) {
    throw petstoreErrors.error(
      'delivery_not_found',
      `Webhook subscription ${subscriptionId} has no message ${messageId}. List them with GET /webhooks/${subscriptionId}/deliveries.`,
    );
  }
  const again = (await outbox.redeliver(messageId, at)) as OutboxMessage;
  return deliveryView(again, await outbox.attemptsOf([messageId]));
}
