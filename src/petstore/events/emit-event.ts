import type { StatementSync } from 'node:sqlite';
import { WebhookOutbox } from '../../storage/index.ts';
import { PETSTORE_OUTBOX } from '../db-schema.ts';
import type { PetstoreDb, PetstoreTrx, StoreContext } from '../store/context.ts';
import { type PetstoreEventType, selects } from './event-types.ts';

export function petstoreOutbox(db: PetstoreDb): WebhookOutbox {
  return new WebhookOutbox(db, { tables: PETSTORE_OUTBOX, leaseMs: 120_000 });
}

export const subscriptionKey = (id: number) => `subscription:${id}`;

export function subscriptionOfKey(key: string): number | null {
  const match = /^subscription:(\d+)$/.exec(key);
  return match ? Number(match[1]) : null;
}

export interface PetstoreEvent {
  readonly type: PetstoreEventType;
  /** What it is about (`pet:12`, `order:3`…), for the outbox's own views. */
  readonly subject: string;
  readonly data: Record<string, unknown>;
}

const filtersOf = (eventTypes: string) => eventTypes.split(' ');

/**
 * Enqueues the events inside `trx`, one message per subscription that selects each, so the
 * messages commit or roll back with the change. Subscriptions are read in the same transaction:
 * one created after the change commits receives later changes only.
 */
export async function emitEvents(
  ctx: StoreContext,
  trx: PetstoreTrx,
  events: readonly PetstoreEvent[],
): Promise<void> {
  const subscriptions = await trx
    .selectFrom('petstore_webhook_subscriptions')
    .select(['id', 'event_types'])
    .orderBy('id')
    .execute();
  if (subscriptions.length === 0) return;
  const outbox = petstoreOutbox(ctx.db);
  const at = ctx.clock.now();
  for (const event of events) {
    for (const sub of subscriptions) {
      if (!selects(filtersOf(sub.event_types), event.type)) continue;
      await outbox.enqueue(trx, { endpointKey: subscriptionKey(sub.id), ...event }, at);
      if (ctx.events) ctx.events.enqueued++;
    }
  }
}

/** The same inside a synchronous SQLite transaction (group-committed order placement). */
export function emitEventsSync(
  ctx: StoreContext,
  statement: (sql: string) => StatementSync,
  events: readonly PetstoreEvent[],
): void {
  const subscriptions = statement(
    'SELECT id, event_types FROM petstore_webhook_subscriptions ORDER BY id',
  ).all() as { id: number; event_types: string }[];
  if (subscriptions.length === 0) return;
  const outbox = petstoreOutbox(ctx.db);
  const at = ctx.clock.now();
  for (const event of events) {
    for (const sub of subscriptions) {
      if (!selects(filtersOf(sub.event_types), event.type)) continue;
      outbox.enqueueSync(statement, { endpointKey: subscriptionKey(Number(sub.id)), ...event }, at);
      if (ctx.events) ctx.events.enqueued++;
    }
  }
}
