import { type Selectable, sql, type Transaction } from 'kysely';
import { displayHostname, parseHostname } from '../../lib/hostname.ts';
import type { MessageState } from '../../storage/index.ts';
import type { CertificateStatus } from '../certificates/certificate-status.ts';
import type { PlatformContext, PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { DNS_CHECK_REASONS, type DnsCheckReason } from '../dns/dns-check.ts';
import { platformErrors } from '../errors.ts';
import { PLANS } from '../plans.ts';
import type { Project } from '../projects/projects.ts';
import { platformOutbox } from '../webhooks/webhook-events.ts';
import { type DomainFailure, type DomainStatus, domainFailure, domainStatus } from './domain-status.ts';
import { type DomainState, SERVED_STATES } from './lifecycle.ts';
import { type DnsRecordToCreate, recordsToCreate } from './records.ts';

export type DomainRow = Selectable<PlatformTables['domains']>;

/**
 * The served states as SQL literals, for `where('state', 'in', servedStates)`: bound parameters
 * would keep SQLite from using the partial index `domains_served_hostname`, whose WHERE clause
 * names the same literals.
 */
export const servedStates = SERVED_STATES.map((state) => sql.lit(state));

/** Reasons besides DNS outcomes that a domain can carry. */
export const DOMAIN_REASONS = {
  hostname_taken: {
    remedy:
      'Another project serves this hostname. To move it here, add the TXT ownership record listed for this domain, then verify again.',
  },
  taken_over: {
    remedy:
      'Another project proved ownership of this hostname and now serves it. Remove it here, or prove ownership again.',
  },
  checks_stopped: {
    remedy:
      'DNS did not show the records within the propagation window, so the platform stopped checking on its own. Create or fix the records listed for this domain, then verify again: it checks at once and restarts the automatic checks.',
  },
} as const;

export type DomainReason = DnsCheckReason | keyof typeof DOMAIN_REASONS;

export function remedyFor(reason: string | null): string | null {
  if (reason === null) return null;
  if (reason in DNS_CHECK_REASONS) return DNS_CHECK_REASONS[reason as DnsCheckReason].remedy;
  if (reason in DOMAIN_REASONS) return DOMAIN_REASONS[reason as keyof typeof DOMAIN_REASONS].remedy;
  return null;
}

/** A domain as the API, the CLI and the dashboard show it. */
export interface DomainView {
  hostname: string;
  unicode: string;
  project: string;
  kind: 'apex' | 'subdomain';
  state: DomainState;
  /** Why the domain is not (or no longer) verified, machine-readable; null when all is well. */
  reason: string | null;
  /** What DNS showed at the last check, in words. */
  message: string | null;
  remedy: string | null;
  records: DnsRecordToCreate[];
  verifiedAt: string | null;
  lastCheckedAt: string | null;
  nextCheckAt: string | null;
  checksUntil: string | null;
  createdAt: string;
  /** Re-verify is offered once no certificate has come this long after verification. */
  reverifyAvailableAt: string | null;
  /** Whether Re-verify is offered now (by the platform's clock, not the browser's). */
  reverifyAvailable: boolean;
  /** The certificate: being ordered, issued (with its expiry) or failed (with the reason). */
  certificate: CertificateStatus | null;
  /** The one word to show: unverified, verified, issuing, live, failed (domain-status.ts). */
  status: DomainStatus;
  /** With `failed`: the machine-readable reason, what was found, and the remedy. */
  failure: DomainFailure | null;
}

/**
 * The reason to show: once the propagation window closed with DNS still not showing the records
 * (no next check), a reason whose remedy promises automatic retries would mislead, so the domain
 * shows `checks_stopped` and its remedy (Verify to check again) instead.
 */
function shownReason(row: DomainRow): string | null {
  if (row.state !== 'unverified' || row.next_check_at !== null || row.reason === null) return row.reason;
  const dns = DNS_CHECK_REASONS[row.reason as DnsCheckReason] as { retryable: boolean } | undefined;
  return dns?.retryable ? 'checks_stopped' : row.reason;
}

export function toView(
  ctx: PlatformContext,
  project: Project,
  row: DomainRow,
  needsOwnershipProof = false,
  certificate: CertificateStatus | null = null,
): DomainView {
  const parsed = parseHostname(row.hostname);
  const apex = parsed.ok ? parsed.apex : row.hostname;
  const kind = row.is_apex ? 'apex' : 'subdomain';
  const detail = row.reason_detail ? (JSON.parse(row.reason_detail) as { message?: string }) : {};
  const verifiedMs = row.verified_at ? Date.parse(row.verified_at) : null;
  const reverifyAvailableAt =
    row.state === 'verified' && verifiedMs !== null && certificate?.notAfter == null
      ? new Date(verifiedMs + ctx.config.reverifyAfterMs).toISOString()
      : null;
  const message = detail.message ?? null;
  const reason = shownReason(row);
  const remedy = remedyFor(reason);
  const status = domainStatus(row.state, reason, certificate);
  return {
    hostname: row.hostname,
    unicode: displayHostname(row.hostname),
    project: project.slug,
    kind,
    state: row.state,
    reason,
    message,
    remedy,
    records: recordsToCreate(
      { hostname: row.hostname, kind, apex },
      project.defaultHost,
      row.ownership_token,
      ctx.config,
      needsOwnershipProof || row.reason === 'hostname_taken',
    ),
    verifiedAt: row.verified_at,
    lastCheckedAt: row.last_checked_at,
    // The checker skips unverified claims of a team whose plan has no custom domains
    // (check-due-domains.ts): no automatic check is coming, whatever the row says.
    nextCheckAt: row.state === 'unverified' && !PLANS[project.plan].customDomains ? null : row.next_check_at,
    checksUntil: row.checks_until,
    createdAt: row.created_at,
    reverifyAvailableAt,
    reverifyAvailable:
      reverifyAvailableAt !== null && ctx.clock.now().getTime() >= Date.parse(reverifyAvailableAt),
    certificate,
    status,
    failure: domainFailure(status, reason, message, remedy, certificate),
  };
}

/**
 * Which of the project's unverified claims name a hostname another project serves: those must
 * prove ownership (the TXT record), so it stays among the records to create until the claim is
 * proved or removed.
 */
export async function hostnamesServedElsewhere(
  db: PlatformDb,
  project: Project,
  rows: readonly Pick<DomainRow, 'hostname' | 'state'>[],
): Promise<Set<string>> {
  const claims = rows.filter((r) => r.state === 'unverified').map((r) => r.hostname);
  if (claims.length === 0) return new Set();
  const served = await db
    .selectFrom('domains')
    .select('hostname')
    .where('hostname', 'in', claims)
    .where('project_id', '<>', project.id)
    .where('state', 'in', servedStates)
    .execute();
  return new Set(served.map((r) => r.hostname));
}

/** The project's live (not removed) domain with this hostname, or 404. */
export async function liveDomain(
  db: PlatformDb | Transaction<PlatformTables>,
  project: Project,
  hostname: string,
): Promise<DomainRow> {
  const row = await db
    .selectFrom('domains')
    .selectAll()
    .where('project_id', '=', project.id)
    .where('hostname', '=', hostname)
    .where('state', '<>', 'removed')
    .executeTakeFirst();
  if (!row) {
    throw platformErrors.error(
      'domain_not_found',
      `Project ${project.slug} has no domain ${hostname}: check the hostname against the project's list of domains.`,
    );
  }
  return row as DomainRow;
}

export { actorName, recordEvent } from '../domain-rows.ts';

export interface DomainEventView {
  at: string;
  actor: string;
  action: string;
  outcome: string;
  detail: Record<string, unknown> | null;
  /** The webhook event this entry sent to the team's endpoint, and whether it was delivered. */
  webhook: {
    id: string;
    type: string;
    state: MessageState;
    attempts: number;
    deliveredAt: string | null;
  } | null;
}

export async function domainHistory(db: PlatformDb, domainId: number): Promise<DomainEventView[]> {
  const rows = await db
    .selectFrom('domain_events')
    .select(['at', 'actor', 'action', 'outcome', 'detail'])
    .where('domain_id', '=', domainId)
    .orderBy('id')
    .execute();
  const details = rows.map((r) => (r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null));
  const ids = details.flatMap((d) => (typeof d?.webhook === 'string' ? [d.webhook] : []));
  const messages = new Map((await platformOutbox(db).list({ ids, limit: ids.length })).map((m) => [m.id, m]));
  return rows.map((r, i) => {
    const message = messages.get(details[i]?.webhook as string);
    return {
      at: r.at,
      actor: r.actor,
      action: r.action,
      outcome: r.outcome,
      detail: details[i] ?? null,
      webhook: message
        ? {
            id: message.id,
            type: message.type,
            state: message.state,
            attempts: message.attempts,
            deliveredAt: message.deliveredAt,
          }
        : null,
    };
  });
}
