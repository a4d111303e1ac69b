export {
  createDeliverer,
  type Deliverer,
  type DeliveryRequest,
  type DeliveryResult,
} from './deliver-webhook.ts';
export { createEnvelope, EVENT_TYPE_PATTERN, newMessageId, type WebhookEnvelope } from './envelope.ts';
export { RETRY_SCHEDULE, retryDelay, retrySpanMs } from './retry-schedule.ts';
export { generateSigningSecret, isSigningSecret, signWebhook, type WebhookHeaders } from './sign-webhook.ts';
export {
  checkWebhookUrl,
  ForbiddenTargetError,
  guardedLookup,
  isLoopbackHost,
  isPublicAddress,
  type TargetPolicy,
  type UrlCheck,
} from './target-policy.ts';
