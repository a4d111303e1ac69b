import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { readSubscription } from '../events/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const getWebhookSubscription = defineOperation<PetstoreDeps, { subscriptionId: number }>({
  operationId: 'getWebhookSubscription',
  method: 'GET',
  path: '/webhooks/{subscriptionId}',
  tags: ['Admin'],
  summary: 'Get a webhook subscription',
  description: 'One subscription, without its secret.',
  access: 'admin',
  parameters: [idParam('subscriptionId', 'webhook subscription')],
  responses: { 200: { description: 'The subscription', schema: ref('WebhookSubscription') } },
  errors: ['webhook_subscription_not_found'],
  handler: ({ params }, _reply, { store }) => readSubscription(store.context.db, params.subscriptionId),
});
