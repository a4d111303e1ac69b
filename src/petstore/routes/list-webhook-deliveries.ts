import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { listDeliveries } from '../events/index.ts';
import { DEFAULT_PAGE_SIZE, idParam, MAX_PAGE_SIZE, type PetstoreDeps } from './shared.ts';

export const listWebhookDeliveries = defineOperation<
  PetstoreDeps,
  { subscriptionId: number },
  { limit?: number }
>({
  operationId: 'listWebhookDeliveries',
  method: 'GET',
  path: '/webhooks/{subscriptionId}/deliveries',
  tags: ['Admin'],
  summary: 'Delivery log of a subscription',
  description:
    'The messages sent (or being sent) to a subscription, newest first, each with its state and every attempt: time, HTTP status, duration and error.',
  access: 'admin',
  parameters: [
    idParam('subscriptionId', 'webhook subscription'),
    {
      name: 'limit',
      in: 'query',
      description: `How many messages, 1 to ${MAX_PAGE_SIZE}`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
    },
  ],
  responses: {
    200: { description: 'The newest messages', schema: { type: 'array', items: ref('WebhookDelivery') } },
  },
  errors: ['webhook_subscription_not_found'],
  handler: ({ params, query }, _reply, { store }) =>
    listDeliveries(store.context.db, params.subscriptionId, query.limit ?? DEFAULT_PAGE_SIZE),
});
