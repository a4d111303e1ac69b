import { open, type SealingKey, seal } from '../../lib/sealed-box.ts';
import { checkWebhookUrl, generateSigningSecret, type TargetPolicy } from '../../lib/webhooks/index.ts';
import { petstoreErrors } from '../errors.ts';
import type { PetstoreDb } from '../store/context.ts';
import { subscriptionOfKey } from './emit-event.ts';

/** What the subscriptions API and the worker need: sealing keys and where webhooks may go. */
export interface WebhookSettings {
  /** The first seals new secrets; every one opens (rotation). */
  readonly keys: readonly SealingKey[];
  readonly targets: 'public' | 'private';
}

export interface NewSubscription {
  url: string;
  eventTypes: string[];
  description?: string;
}

/** A subscription as the API shows it: never the secret. */
export interface SubscriptionView {
  id: number;
  url: string;
  eventTypes: string[];
  description?: string;
  createdAt: string;
}

export const policyOf = (settings: WebhookSettings): TargetPolicy => ({
  allowPrivate: settings.targets === 'private',
});

type Row = {
  id: number;
  url: string;
  event_types: string;
  description: string | null;
  created_at: string;
};

function view(row: Row): SubscriptionView {
  const v: SubscriptionView = {
    id: Number(row.id),
    url: row.url,
    eventTypes: row.event_types.split(' '),
    createdAt: row.created_at,
  };
  if (row.description !== null) v.description = row.description;
  return v;
}

export const subscriptionNotFound = (id: number) =>
  petstoreErrors.error(
    'webhook_subscription_not_found',
    `No webhook subscription has id ${id}. List them with GET /webhooks.`,
  );

const COLUMNS = ['id', 'url', 'event_types', 'description', 'created_at'] as const;

/** Creates a subscription; its `whsec_` signing secret is returned this once. */
export async function createSubscription(
  db: PetstoreDb,
  settings: WebhookSettings,
  input: NewSubscription,
  at: Date,
): Promise<SubscriptionView & { secret: string }> {
  const check = checkWebhookUrl(input.url, policyOf(settings));
  if (!check.ok) {
    throw petstoreErrors.error(
      'invalid_webhook_url',
      `The webhook URL ${check.problem}.${settings.targets === 'public' ? ' This Petstore delivers only to public https:// URLs (PETSTORE_WEBHOOK_TARGETS=public).' : ''}`,
    );
  }
  const secret = generateSigningSecret();
  const row = await db
    .insertInto('petstore_webhook_subscriptions')
    .values({
      url: check.url,
      secret_sealed: seal(secret, settings.keys[0] as SealingKey),
      event_types: [...new Set(input.eventTypes)].join(' '),
      description: input.description ?? null,
      created_at: at.toISOString(),
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return { ...view(row), secret };
}

export async function listSubscriptions(db: PetstoreDb): Promise<SubscriptionView[]> {
  const rows = await db.selectFrom('petstore_webhook_subscriptions').select(COLUMNS).orderBy('id').execute();
  return rows.map(view);
}

export async function readSubscription(db: PetstoreDb, id: number): Promise<SubscriptionView> {
  const row = await db
    .selectFrom('petstore_webhook_subscriptions')
    .select(COLUMNS)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw subscriptionNotFound(id);
  return view(row);
}

/** Deletes a subscription: no new messages; those not yet delivered fail at their next attempt. */
export async function deleteSubscription(db: PetstoreDb, id: number): Promise<void> {
  const result = await db
    .deleteFrom('petstore_webhook_subscriptions')
    .where('id', '=', id)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) throw subscriptionNotFound(id);
}

/** For the worker: where `subscription:<id>` sends now, with its secret opened. */
export function subscriptionResolver(db: PetstoreDb, settings: WebhookSettings) {
  return async (key: string): Promise<{ url: string; secret: string } | null> => {
    const id = subscriptionOfKey(key);
    if (id === null) return null;
    const row = await db
      .selectFrom('petstore_webhook_subscriptions')
      .select(['url', 'secret_sealed'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? { url: row.url, secret: open(row.secret_sealed, settings.keys) } : null;
  };
}
