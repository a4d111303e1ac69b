export type { DeliveryView } from '../../storage/index.ts';
export { startWebhookWorker } from './start-webhook-worker.ts';
export {
  listDeliveries,
  redeliverMessage,
  sendTestEvent,
} from './webhook-deliveries.ts';
export {
  endpointResolver,
  getWebhookEndpoint,
  listWebhookEndpoints,
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
