import { ref } from '../../../lib/http-api/index.ts';
import {
  getWebhookEndpoint,
  listDeliveries,
  listWebhookEndpoints,
  redeliverMessage,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhookEndpoint,
} from '../../webhooks/index.ts';
import { actorOf } from '../auth.ts';
import { managementOperation } from '../operation.ts';
import { inTeam, noContent, ok, thenNoContent } from './answers.ts';
import { teamIdParam, teamOwnerErrors } from './parameters.ts';

const TAG = ['Webhooks'];
const base = '/api/v1/teams/{teamId}/webhook';

export const webhookRoutes = [
  managementOperation({
    operationId: 'getWebhookEndpoint',
    method: 'GET',
    path: base,
    tags: TAG,
    summary: "Read the team's webhook endpoint",
    description: 'The URL and a hint of the signing secret (never the secret). Team owners only.',
    parameters: [teamIdParam],
    responses: ok('The endpoint', 'WebhookEndpoint'),
    errors: [...teamOwnerErrors, 'webhook_not_found'],
    handler: inTeam(getWebhookEndpoint),
  }),
  managementOperation({
    operationId: 'listWebhookEndpoints',
    method: 'GET',
    path: '/api/v1/teams/{teamId}/webhook-endpoints',
    tags: TAG,
    summary: "List the team's webhook endpoints",
    description:
      'The endpoint as a list: empty when none is set, else the one endpoint (a team has at most one), so that asking is never a 404. Team owners only.',
    parameters: [teamIdParam],
    responses: ok('None or one', ['WebhookEndpoint']),
    errors: teamOwnerErrors,
    handler: inTeam(listWebhookEndpoints),
  }),
  managementOperation({
    operationId: 'setWebhookEndpoint',
    method: 'PUT',
    path: base,
    tags: TAG,
    summary: "Set the team's webhook endpoint",
    description:
      'Creates the endpoint (201, with its signing secret shown this once) or changes its URL (200, the secret is kept). Domain and certificate events of every project of the team are sent to it. Team owners only.',
    parameters: [teamIdParam],
    requestBody: { description: 'The URL', schema: ref('WebhookEndpointChange') },
    responses: {
      200: { description: 'The URL changed', schema: ref('WebhookEndpointSet') },
      201: { description: 'Created, with the secret', schema: ref('WebhookEndpointSet') },
    },
    errors: [...teamOwnerErrors, 'csrf_failed', 'invalid_webhook_url'],
    async handler({ caller, params, body }, reply, ctx) {
      const result = await setWebhookEndpoint(ctx, actorOf(caller), params.teamId, body.url);
      reply.code(result.created ? 201 : 200);
      return { endpoint: result.endpoint, secret: result.secret };
    },
  }),
  managementOperation({
    operationId: 'removeWebhookEndpoint',
    method: 'DELETE',
    path: base,
    tags: TAG,
    summary: "Remove the team's webhook endpoint",
    description: 'Events stop; messages not yet delivered fail at their next attempt. Team owners only.',
    parameters: [teamIdParam],
    responses: noContent('Removed'),
    errors: [...teamOwnerErrors, 'csrf_failed', 'webhook_not_found'],
    handler: thenNoContent(({ caller, params }, ctx) =>
      removeWebhookEndpoint(ctx, actorOf(caller), params.teamId),
    ),
  }),
  managementOperation({
    operationId: 'rotateWebhookSecret',
    method: 'POST',
    path: `${base}/secret`,
    tags: TAG,
    summary: 'Rotate the signing secret',
    description:
      'A new signing secret, shown this once; the old one stops signing at once. Team owners only.',
    parameters: [teamIdParam],
    responses: ok('The endpoint and its new secret', 'WebhookEndpointSet'),
    errors: [...teamOwnerErrors, 'csrf_failed', 'webhook_not_found'],
    handler: inTeam(rotateWebhookSecret),
  }),
  managementOperation({
    operationId: 'sendWebhookTestEvent',
    method: 'POST',
    path: `${base}/test`,
    tags: TAG,
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` event for the endpoint, delivered (and retried) like any other; follow it in the delivery log. Team owners only.',
    parameters: [teamIdParam],
    responses: { 202: { description: 'The queued message', schema: ref('WebhookDelivery') } },
    errors: [...teamOwnerErrors, 'csrf_failed', 'webhook_not_found'],
    async handler({ caller, params }, reply, ctx) {
      reply.code(202);
      return sendTestEvent(ctx, actorOf(caller), params.teamId);
    },
  }),
  managementOperation({
    operationId: 'listWebhookDeliveries',
    method: 'GET',
    path: `${base}/deliveries`,
    tags: TAG,
    summary: 'The delivery log',
    description:
      "The team's webhook messages, newest first, each with every attempt (time, status code, duration, error). Team owners only.",
    parameters: [
      teamIdParam,
      {
        name: 'limit',
        in: 'query',
        description: 'At most this many messages (default 50)',
        schema: { type: 'integer', minimum: 1, maximum: 200 },
      },
    ],
    responses: ok('Messages', ['WebhookDelivery']),
    errors: teamOwnerErrors,
    handler: ({ caller, params, query }, _reply, ctx) =>
      listDeliveries(ctx, actorOf(caller), params.teamId, query.limit ?? 50),
  }),
  managementOperation({
    operationId: 'redeliverWebhook',
    method: 'POST',
    path: `${base}/deliveries/{messageId}/redeliver`,
    tags: TAG,
    summary: 'Redeliver a message',
    description:
      'Sends a message again now, with a fresh retry schedule (same webhook-id, so receivers can deduplicate). Team owners only.',
    parameters: [
      teamIdParam,
      {
        name: 'messageId',
        in: 'path',
        description: 'Message id (msg_…)',
        schema: { type: 'string', pattern: '^msg_[A-Za-z0-9_-]{1,64}$' },
      },
    ],
    responses: { 202: { description: 'The message, pending again', schema: ref('WebhookDelivery') } },
    errors: [...teamOwnerErrors, 'csrf_failed', 'delivery_not_found', 'webhook_not_found'],
    async handler({ caller, params }, reply, ctx) {
      reply.code(202);
      return redeliverMessage(ctx, actorOf(caller), params.teamId, params.messageId);
    },
  }),
];
