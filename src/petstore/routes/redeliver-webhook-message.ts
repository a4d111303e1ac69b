import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { redeliver } from '../events/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';
import { messageIdParam } from './webhook-shared.ts';

export const redeliverWebhookMessage = defineOperation<
  PetstoreDeps,
  { subscriptionId: number; messageId: string }
>({
  operationId: 'redeliverWebhookMessage',
  method: 'POST',
  path: '/webhooks/{subscriptionId}/deliveries/{messageId}/redeliver',
  tags: ['Admin'],
  summary: 'Redeliver a message',
  description:
    'Sends a message again now (delivered, failed or pending alike), with the same `webhook-id` and body and a fresh retry schedule. Earlier attempts stay in the log.',
  access: 'admin',
  parameters: [idParam('subscriptionId', 'webhook subscription'), messageIdParam],
  responses: { 202: { description: 'The message is due now', schema: ref('WebhookDelivery') } },
  errors: ['webhook_subscription_not_found', 'delivery_not_found'],
  async handler({ params }, reply, deps) {
    const view = await redeliver(
      deps.store.context.db,
      params.subscriptionId,
      params.messageId,
      deps.clock.now(),
    );
    deps.wakeWebhooks();
    reply.code(202);
    return view;
  },
});
