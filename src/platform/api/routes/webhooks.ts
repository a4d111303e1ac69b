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
import { operations } from '../operation.ts';
import { answering, inTeam, passing, thenNoContent } from './answers.ts';
import { accepted, created, jsonBody, noContent, ok } from './contract.ts';

const base = '/api/v1/teams/{teamId}/webhook';

export const webhookRoutes = operations('Webhooks', {
  getWebhookEndpoint: {
    route: `GET ${base}`,
    summary: "Read the team's webhook endpoint",
    description: 'The URL and a hint of the signing secret (never the secret). Team owners only.',
    responses: ok('The endpoint', 'WebhookEndpoint'),
    errors: ['forbidden', 'webhook_not_found'],
    handler: inTeam(getWebhookEndpoint),
  },
  listWebhookEndpoints: {
    route: 'GET /api/v1/teams/{teamId}/webhook-endpoints',
    summary: "List the team's webhook endpoints",
    description:
      'The endpoint as a list: empty when none is set, else the one endpoint (a team has at most one), so that asking is never a 404. Team owners only.',
    responses: ok('None or one', ['WebhookEndpoint']),
    errors: ['forbidden'],
    handler: inTeam(listWebhookEndpoints),
  },
  setWebhookEndpoint: {
    route: `PUT ${base}`,
    summary: "Set the team's webhook endpoint",
    description:
      'Creates the endpoint (201, with its signing secret shown this once) or changes its URL (200, the secret is kept). Domain and certificate events of every project of the team are sent to it. Team owners only.',
    requestBody: jsonBody('The URL', 'WebhookEndpointChange'),
    responses: {
      ...ok('The URL changed', 'WebhookEndpointSet'),
      ...created('Created, with the secret', 'WebhookEndpointSet'),
    },
    errors: ['forbidden', 'invalid_webhook_url'],
    async handler({ caller, params, body }, reply, ctx) {
      const result = await setWebhookEndpoint(ctx, actorOf(caller), params.teamId, body.url);
      reply.code(result.created ? 201 : 200);
      return { endpoint: result.endpoint, secret: result.secret };
    },
  },
  removeWebhookEndpoint: {
    route: `DELETE ${base}`,
    summary: "Remove the team's webhook endpoint",
    description: 'Events stop; messages not yet delivered fail at their next attempt. Team owners only.',
    responses: noContent('Removed'),
    errors: ['forbidden', 'webhook_not_found'],
    handler: thenNoContent(inTeam(removeWebhookEndpoint)),
  },
  rotateWebhookSecret: {
    route: `POST ${base}/secret`,
    summary: 'Rotate the signing secret',
    description:
      'A new signing secret, shown this once; the old one stops signing at once. Team owners only.',
    responses: ok('The endpoint and its new secret', 'WebhookEndpointSet'),
    errors: ['forbidden', 'webhook_not_found'],
    handler: inTeam(rotateWebhookSecret),
  },
  sendWebhookTestEvent: {
    route: `POST ${base}/test`,
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` event for the endpoint, delivered (and retried) like any other; follow it in the delivery log. Team owners only.',
    responses: accepted('The queued message', 'WebhookDelivery'),
    errors: ['forbidden', 'webhook_not_found'],
    handler: answering(202, inTeam(sendTestEvent)),
  },
  listWebhookDeliveries: {
    route: `GET ${base}/deliveries`,
    summary: 'The delivery log',
    description:
      "The team's webhook messages, newest first, each with every attempt (time, status code, duration, error). Team owners only.",
    parameters: [
      {
        name: 'limit',
        in: 'query',
        description: 'At most this many messages (default 50)',
        schema: { type: 'integer', minimum: 1, maximum: 200 },
      },
    ],
    responses: ok('Messages', ['WebhookDelivery']),
    errors: ['forbidden'],
    handler: ({ caller, params, query }, _reply, ctx) =>
      listDeliveries(ctx, actorOf(caller), params.teamId, query.limit ?? 50),
  },
  redeliverWebhook: {
    route: `POST ${base}/deliveries/{messageId}/redeliver`,
    summary: 'Redeliver a message',
    description:
      'Sends a message again now, with a fresh retry schedule (same webhook-id, so receivers can deduplicate). Team owners only.',
    responses: accepted('The message, pending again', 'WebhookDelivery'),
    errors: ['forbidden', 'webhook_not_found'],
    handler: answering(202, passing('teamId', 'messageId')(redeliverMessage)),
  },
});
