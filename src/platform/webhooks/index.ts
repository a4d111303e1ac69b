export { startWebhookWorker } from './start-webhook-worker.ts';
export {
  type DeliveryView,
  deliveryView,
  listDeliveries,
  redeliverMessage,
  sendTestEvent,
} from './webhook-deliveries.ts';
export {
  endpointResolver,
  getWebhookEndpoint,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  setWebhookEndpoint,
  targetPolicy,
  type WebhookEndpointView,
} from './webhook-endpoints.ts';
export {
  domainSubject,
  emitEvent,
  endpointKey,
  PLATFORM_EVENT_TYPES,
  type PlatformEventType,
  platformOutbox,
  teamOfDomain,
} from './webhook-events.ts';
