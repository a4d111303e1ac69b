export type { DeliveryView } from '../../storage/index.ts';
export { listDeliveries, redeliver } from './deliveries.ts';
export { petstoreOutbox } from './emit-event.ts';
export { EVENT_FILTERS, PETSTORE_EVENT_TYPES, type PetstoreEventType } from './event-types.ts';
export { type PetstoreWebhooks, petstoreWebhookWorker } from './start-webhook-worker.ts';
export {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
  type NewSubscription,
  readSubscription,
  type SubscriptionView,
  type WebhookSettings,
} from './subscriptions.ts';
