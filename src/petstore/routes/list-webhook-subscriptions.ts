import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { listSubscriptions } from '../events/index.ts';
import type { PetstoreDeps } from './shared.ts';

export const listWebhookSubscriptions = defineOperation<PetstoreDeps>({
  operationId: 'listWebhookSubscriptions',
  method: 'GET',
  path: '/webhooks',
  tags: ['Admin'],
  summary: 'List webhook subscriptions',
  description: 'Lists every subscription, without their secrets.',
  access: 'admin',
  responses: {
    200: { description: 'Every subscription', schema: { type: 'array', items: ref('WebhookSubscription') } },
  },
  errors: [],
  handler: (_request, _reply, { store }) => listSubscriptions(store.context.db),
});
