import type { Transaction } from 'kysely';
import type { Actor, PlatformDb } from './context.ts';
import type { DomainState, PlatformTables } from './db-schema.ts';

/**
 * What a module below domains/ (the certificate job) may know of a domain's rows: the states in
 * which the edge serves it, and the history every change appends to. domains/ owns the lifecycle
 * (domains/lifecycle.ts) and re-exports these; certificates/ imports them from here, so the arrows
 * point one way: domains/ → certificates/ → here.
 */

export type { DomainState } from './db-schema.ts';

/** States in which the edge serves the hostname for its project. */
export const SERVED_STATES: readonly DomainState[] = ['verified', 'misconfigured'];

export function isServedState(state: string): boolean {
  return (SERVED_STATES as readonly string[]).includes(state);
}

export function actorName(actor: Actor | 'system'): string {
  return actor === 'system' ? 'system' : `user:${actor.email}`;
}

/** Appends to a domain's history: who, what, when, outcome. */
export async function recordEvent(
  db: PlatformDb | Transaction<PlatformTables>,
  at: Date,
  domainId: number,
  actor: Actor | 'system',
  action: string,
  outcome: string,
  detail?: Record<string, unknown>,
): Promise<void> {
  await db
    .insertInto('domain_events')
    .values({
      domain_id: domainId,
      actor: actorName(actor),
      action,
      outcome,
      detail: detail ? JSON.stringify(detail) : null,
      at: at.toISOString(),
    })
    .execute();
}
