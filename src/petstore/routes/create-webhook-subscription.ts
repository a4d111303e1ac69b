import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { createSubscription, type NewSubscription } from '../events/index.ts';
import { locationHeader, type PetstoreDeps } from './shared.ts';
import { webhookSettings } from './webhook-shared.ts';

export const createWebhookSubscription = defineOperation<PetstoreDeps, unknown, unknown, NewSubscription>({
  operationId: 'createWebhookSubscription',
  method: 'POST',
  path: '/webhooks',
  tags: ['Admin'],
  summary: 'Subscribe to events',
  description:
    "Creates a webhook subscription: every later change of the selected kinds is POSTed to `url`, signed per the Standard Webhooks specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the `whsec_` secret in this answer — shown this once. Delivery is at least once, retried with back-off for 27 h 35 min, then the message is marked failed (see `GET /webhooks/{subscriptionId}/deliveries`). The events and their bodies are described in this operation's `callbacks`.",
  access: 'admin',
  requestBody: { description: 'The subscription', schema: ref('NewWebhookSubscription') },
  responses: {
    201: {
      description: 'The subscription was created',
      schema: ref('CreatedWebhookSubscription'),
      headers: locationHeader,
    },
  },
  errors: ['invalid_webhook_url', 'webhooks_unavailable'],
  async handler({ body }, reply, deps) {
    const created = await createSubscription(
      deps.store.context.db,
      webhookSettings(deps),
      body,
      deps.clock.now(),
    );
    reply.code(201).header('location', `/webhooks/${created.id}`).header('cache-control', 'no-store');
    return created;
  },
});
