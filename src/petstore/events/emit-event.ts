import type { CompiledQuery } from 'kysely';
import {
  compileOnce,
  type NewMessage,
  rowsOf,
  runStepsIn,
  type Steps,
  WebhookOutbox,
} from '../../storage/index.ts';
import { PETSTORE_OUTBOX } from '../db-schema.ts';
import type { PetstoreDb, PetstoreTrx, StoreContext } from '../store/context.ts';
import { type PetstoreEventType, selects } from './event-types.ts';

const outboxes = new WeakMap<PetstoreDb, WebhookOutbox>();

/** The Petstore's outbox on a database (one per database: it keeps its compiled statements). */
export function petstoreOutbox(db: PetstoreDb): WebhookOutbox {
  let outbox = outboxes.get(db);
  if (!outbox) {
    outbox = new WebhookOutbox(db, { tables: PETSTORE_OUTBOX, leaseMs: 120_000 });
    outboxes.set(db, outbox);
  }
  return outbox;
}

const subscriptionQueries = new WeakMap<
  PetstoreDb,
  () => CompiledQuery<{ id: number; event_types: string }>
>();

function subscriptionsQuery(db: PetstoreDb) {
  let query = subscriptionQueries.get(db);
  if (!query) {
    query = compileOnce(
      () => db.selectFrom('petstore_webhook_subscriptions').select(['id', 'event_types']).orderBy('id'),
      [],
    );
    subscriptionQueries.set(db, query);
  }
  return query();
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
 * Enqueues the events as steps of the change's transaction (see storage/steps.ts), one message
 * per subscription that selects each, so the messages commit or roll back with the change.
 * Subscriptions are read in the same transaction: one created after the change commits receives
 * later changes only.
 */
export function* emitEventSteps(ctx: StoreContext, events: readonly PetstoreEvent[]): Steps<void> {
  if (events.length === 0) return;
  const subscriptions = yield* rowsOf(subscriptionsQuery(ctx.db));
  if (subscriptions.length === 0) return;
  const messages: NewMessage[] = [];
  for (const event of events) {
    for (const sub of subscriptions) {
      if (selects(filtersOf(sub.event_types), event.type))
        messages.push({ endpointKey: subscriptionKey(Number(sub.id)), ...event });
    }
  }
  yield* petstoreOutbox(ctx.db).enqueueSteps(messages, ctx.clock.now());
  if (ctx.events) ctx.events.enqueued += messages.length;
}

/** The same inside `trx`, for changes written as Kysely transactions. */
export function emitEvents(
  ctx: StoreContext,
  trx: PetstoreTrx,
  events: readonly PetstoreEvent[],
): Promise<void> {
  return runStepsIn(trx, emitEventSteps(ctx, events));
}
