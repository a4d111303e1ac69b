import { defineOperation } from '../../lib/http-api/index.ts';
import { deleteSubscription } from '../events/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const deleteWebhookSubscription = defineOperation<PetstoreDeps, { subscriptionId: number }>({
  operationId: 'deleteWebhookSubscription',
  method: 'DELETE',
  path: '/webhooks/{subscriptionId}',
  tags: ['Admin'],
  summary: 'Delete a webhook subscription',
  description:
    'Deletes a subscription: no new events are sent to it, and its messages not yet delivered fail at their next attempt ("the webhook endpoint was removed"). Its delivery log goes with it from the API.',
  access: 'admin',
  parameters: [idParam('subscriptionId', 'webhook subscription')],
  responses: { 204: { description: 'The subscription was deleted' } },
  errors: ['webhook_subscription_not_found'],
  async handler({ params }, reply, { store }) {
    await deleteSubscription(store.context.db, params.subscriptionId);
    return reply.code(204).send();
  },
});
