import type { WebhookDelivery, WebhookEndpoint, WebhookEndpointSet } from '../../platform/api-types.ts';
import { path } from '../api-client.ts';
import { type Call, type GroupSpec, teamCommand } from '../command.ts';

function showSecret(call: Call, secret: string): void {
  call.out.line('');
  call.out.line(`Signing secret (shown this once; store it with your receiver): ${secret}`);
  call.out.line('Verify each request with a Standard Webhooks library (docs/webhooks.md).');
}

function outcome(d: WebhookDelivery): string {
  if (d.state === 'delivered') return `delivered ${d.deliveredAt ?? ''}`.trim();
  const last = d.lastError ?? (d.lastStatus ? `HTTP ${d.lastStatus}` : '');
  if (d.state === 'failed') return `failed: ${last}`;
  return d.attempts === 0 ? 'pending' : `retry at ${d.nextAttemptAt ?? '?'} (${last})`;
}

export const webhooksGroup: GroupSpec = {
  name: 'webhooks',
  summary: "A team's webhook: domain and certificate events, signed (team owners)",
  description:
    'Events (domain.verified, domain.not_pointing, certificate.issued, certificate.renewed, certificate.failed) of every project of a team are POSTed to its endpoint, signed per the Standard Webhooks specification, and retried for more than 24 hours. See docs/webhooks.md.',
  commands: [
    teamCommand({
      name: 'webhooks show',
      summary: "Show a team's webhook endpoint (never its secret)",
      examples: ['kennel webhooks show 3'],
      async run(call, id) {
        const endpoint = await call.api().get<WebhookEndpoint>(path`/api/v1/teams/${id}/webhook`);
        call.out.result(endpoint, () => {
          call.out.line(`URL:     ${endpoint.url}`);
          call.out.line(`Secret:  ${endpoint.secretHint} (rotate with kennel webhooks rotate-secret)`);
          call.out.line(`Updated: ${endpoint.updatedAt}`);
        });
      },
    }),
    teamCommand({
      name: 'webhooks set',
      summary: "Set a team's webhook URL; the first time, prints the signing secret once",
      args: ['URL'],
      description:
        'The URL must be https:// (http:// only to a loopback host), without credentials; private addresses only where the platform allows them (WEBHOOK_TARGETS=private).',
      examples: ['kennel webhooks set 3 https://hooks.example.com/kennel'],
      async run(call, id) {
        const set = await call.api().put<WebhookEndpointSet>(path`/api/v1/teams/${id}/webhook`, {
          url: call.args.URL,
        });
        call.out.result(set, () => {
          call.out.line(`Team ${set.endpoint.teamId}'s webhook now posts to ${set.endpoint.url}.`);
          if (set.secret) showSecret(call, set.secret);
          else call.out.line(`The signing secret is unchanged (${set.endpoint.secretHint}).`);
        });
      },
    }),
    teamCommand({
      name: 'webhooks rotate-secret',
      summary: 'Replace the signing secret; prints the new one once',
      examples: ['kennel webhooks rotate-secret 3'],
      async run(call, id) {
        const set = await call.api().post<WebhookEndpointSet>(path`/api/v1/teams/${id}/webhook/secret`);
        call.out.result(set, () => {
          call.out.line('The old secret no longer signs.');
          if (set.secret) showSecret(call, set.secret);
        });
      },
    }),
    teamCommand({
      name: 'webhooks remove',
      summary: "Remove a team's webhook endpoint",
      examples: ['kennel webhooks remove 3'],
      async run(call, id) {
        await call.api().delete(path`/api/v1/teams/${id}/webhook`);
        call.out.resultLine({ removed: true, teamId: id }, `Team ${id} has no webhook any more.`);
      },
    }),
    teamCommand({
      name: 'webhooks test',
      summary: 'Send a webhook.test event to the endpoint',
      examples: ['kennel webhooks test 3', 'kennel webhooks deliveries 3'],
      async run(call, id) {
        const sent = await call.api().post<WebhookDelivery>(path`/api/v1/teams/${id}/webhook/test`);
        call.out.resultLine(
          sent,
          `Queued ${sent.type} as ${sent.id}. Follow it with kennel webhooks deliveries ${id}.`,
        );
      },
    }),
    teamCommand({
      name: 'webhooks deliveries',
      summary: 'The delivery log: each message, its state and attempts, newest first',
      options: {
        limit: { type: 'string', value: 'N', description: 'At most N messages (1–200, default 50)' },
      },
      examples: ['kennel webhooks deliveries 3', 'kennel webhooks deliveries 3 --limit 5 --json'],
      async run(call, id) {
        const limit = call.string('limit');
        if (limit !== undefined && !(/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= 200)) {
          throw call.usage(`--limit must be a whole number from 1 to 200 (got "${limit}").`);
        }
        const list = await call
          .api()
          .get<WebhookDelivery[]>(
            `${path`/api/v1/teams/${id}/webhook/deliveries`}${limit ? `?limit=${limit}` : ''}`,
          );
        call.out.list(list, {
          headers: ['Message', 'Event', 'Created', 'Attempts', 'Outcome'],
          row: (d) => [d.id, d.type, d.createdAt, d.attempts, outcome(d)],
          empty: 'No webhook messages yet.',
        });
      },
    }),
    teamCommand({
      name: 'webhooks redeliver',
      summary: 'Send a message again now, with a fresh retry schedule',
      args: ['MESSAGE_ID'],
      examples: ['kennel webhooks redeliver 3 msg_2b7…'],
      async run(call, id) {
        const message = call.args.MESSAGE_ID ?? '';
        if (!/^msg_[A-Za-z0-9_-]{1,64}$/.test(message)) {
          throw call.usage(
            `MESSAGE_ID must look like msg_… (got "${message}"); see kennel webhooks deliveries ${id}.`,
          );
        }
        const again = await call
          .api()
          .post<WebhookDelivery>(path`/api/v1/teams/${id}/webhook/deliveries/${message}/redeliver`);
        call.out.resultLine(again, `${again.id} (${again.type}) is queued again.`);
      },
    }),
  ],
};
