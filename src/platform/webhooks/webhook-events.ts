import type { Transaction } from 'kysely';
import { WebhookOutbox } from '../../storage/index.ts';
import type { PlatformDb } from '../context.ts';
import { PLATFORM_OUTBOX, type PlatformTables } from '../db-schema.ts';

/**
 * The events a team's webhook receives (docs/webhooks.md lists them with their data). Each is
 * emitted in the transaction that makes the change and writes the domain's history entry.
 */
export const PLATFORM_EVENT_TYPES = {
  'domain.verified':
    'A custom domain passed its DNS check and is served (also when a flagged domain recovers).',
  'domain.not_pointing':
    'A re-check found DNS no longer pointing a verified domain here; it is flagged misconfigured.',
  'certificate.issued': 'The first certificate of a domain was issued.',
  'certificate.renewed': 'A domain’s certificate was replaced by a newer one before expiry.',
  'certificate.failed': 'A certificate order started failing (sent once; retries continue with back-off).',
  'deploy.published':
    'A project’s live deploy changed (a deploy went live, or an earlier one was promoted), with its changes against the one before.',
  'deprecation.still_called':
    'Once a day while a deprecated operation’s sunset is less than 14 days away and callers called it in the last 7 days.',
  'webhook.test': 'Sent on request (“send test event”) to check the endpoint.',
} as const;

export type PlatformEventType = keyof typeof PLATFORM_EVENT_TYPES;

export function endpointKey(teamId: number): string {
  return `team:${teamId}`;
}

export function teamOfEndpointKey(key: string): number | null {
  const match = /^team:(\d+)$/.exec(key);
  return match ? Number(match[1]) : null;
}

export function domainSubject(domainId: number): string {
  return `domain:${domainId}`;
}

export function platformOutbox(db: PlatformDb): WebhookOutbox {
  return new WebhookOutbox(db, { tables: PLATFORM_OUTBOX, leaseMs: 120_000 });
}

/**
 * Enqueues an event for the team's endpoint inside `trx`, or does nothing when the team has none
 * (events are not kept for endpoints set later). Returns the message id, which the domain's
 * history entry records so the history shows whether it was delivered.
 */
export async function emitEvent(
  trx: Transaction<PlatformTables>,
  at: Date,
  event: { teamId: number; type: PlatformEventType; subject: string | null; data: Record<string, unknown> },
): Promise<string | null> {
  const endpoint = await trx
    .selectFrom('webhook_endpoints')
    .select('team_id')
    .where('team_id', '=', event.teamId)
    .executeTakeFirst();
  if (!endpoint) return null;
  const message = await platformOutbox(trx as unknown as PlatformDb).enqueue(
    trx,
    { endpointKey: endpointKey(event.teamId), subject: event.subject, type: event.type, data: event.data },
    at,
  );
  return message.id;
}

/** The team that owns a domain, for events about it. */
export async function teamOfDomain(trx: Transaction<PlatformTables>, domainId: number) {
  return trx
    .selectFrom('domains')
    .innerJoin('projects', 'projects.id', 'domains.project_id')
    .select(['projects.team_id', 'projects.slug', 'domains.hostname'])
    .where('domains.id', '=', domainId)
    .executeTakeFirstOrThrow();
}
