import { type DeliveryView, deliveryView, type OutboxMessage, transact } from '../../storage/index.ts';
import { teamFor } from '../accounts/teams.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { emitEvent, endpointKey, platformOutbox } from './webhook-events.ts';

async function requireEndpoint(ctx: PlatformContext, teamId: number): Promise<void> {
  const row = await ctx.db
    .selectFrom('webhook_endpoints')
    .select('team_id')
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  if (!row) {
    throw platformErrors.error(
      'webhook_not_found',
      `Team ${teamId} has no webhook endpoint: set its URL first.`,
    );
  }
}

/** The team's delivery log, newest message first (team owners). */
export async function listDeliveries(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  limit = 50,
): Promise<DeliveryView[]> {
  await teamFor(ctx, actor, teamId, 'owner');
  const outbox = platformOutbox(ctx.db);
  const messages = await outbox.list({ endpointKey: endpointKey(teamId), limit });
  const attempts = await outbox.attemptsOf(messages.map((m) => m.id));
  return messages.map((m) => deliveryView(m, attempts));
}

/** Manual redelivery: the message goes out again now, with a fresh retry schedule. */
export async function redeliverMessage(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  messageId: string,
): Promise<DeliveryView> {
  await teamFor(ctx, actor, teamId, 'owner');
  const outbox = platformOutbox(ctx.db);
  const message = await outbox.get(messageId);
  if (!message || message.endpointKey !== endpointKey(teamId)) {
    throw platformErrors.error(
      'delivery_not_found',
      `Team ${teamId} has no webhook message ${messageId}: check the id against the team's delivery log.`,
    );
  }
  await requireEndpoint(ctx, teamId);
  const again = (await outbox.redeliver(messageId, ctx.clock.now())) as OutboxMessage;
  ctx.webhooks?.wake();
  return deliveryView(again, await outbox.attemptsOf([messageId]));
}

/** "Send test event": a `webhook.test` message to the team's endpoint, delivered like any other. */
export async function sendTestEvent(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
): Promise<DeliveryView> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  await requireEndpoint(ctx, teamId);
  const now = ctx.clock.now();
  const id = await transact(ctx.db, (trx) =>
    emitEvent(trx, now, {
      teamId,
      type: 'webhook.test',
      subject: null,
      data: { team: { id: team.id, name: team.name }, requestedBy: actor.email },
    }),
  );
  ctx.webhooks?.wake();
  const message = await platformOutbox(ctx.db).get(id as string);
  return deliveryView(message as OutboxMessage, []);
}
