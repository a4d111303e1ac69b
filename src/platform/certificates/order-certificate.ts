import type { Transaction } from 'kysely';
import { backoffDelay } from '../../lib/backoff.ts';
import { transact } from '../../storage/index.ts';
import type { PlatformContext, PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { isServedState, recordEvent } from '../domain-rows.ts';
import {
  domainSubject,
  emitEvent,
  type PlatformEventType,
  teamOfDomain,
} from '../webhooks/webhook-events.ts';
import type { CertificateDeps } from './certificate-deps.ts';
import { obtainCertificate } from './certificate-request.ts';
import {
  CERTIFICATE_BACKOFF,
  type CertificateEvent,
  certificateTransition,
  REFUSED_RENEWAL_RETRY_MS,
} from './certificate-states.ts';
import type { CertificateState } from './certificate-status.ts';
import { type IssuedCertificate, IssuerError } from './issuer.ts';
import { planRenewal } from './renewal.ts';

/**
 * Ordering one certificate (CertMagic `obtainCert`), once claim-orders.ts has leased its job:
 * the issuer's pre-check (CAA), a key and CSR, the issuer's signature, and the job settled through
 * the state table — stored only if the domain still wants it and the lease is still this
 * process's. A failure the issuer calls retryable (or any other error) backs off, or waits the
 * CA's Retry-After; a refusal (`retryable: false`, CAA forbidding the CA) stops a first order,
 * and a renewal so refused is tried once a day: the domain is still served, its certificate will
 * expire, and its owner may not be looking.
 */

export interface ClaimedJob {
  readonly domain_id: number;
  readonly hostname: string;
  readonly attempts: number;
  /** The state before the claim (`ordering` once claimed). */
  readonly state: CertificateState;
}

/**
 * Why an order's result is not stored: the domain was removed (or moved, or stopped being
 * served) while the order ran, or its lease went to another node.
 */
type Discard = 'domain_not_served' | 'lease_lost';

/**
 * Under the locks a remove or a Verify takes (the domain's row, then its job's; PostgreSQL locks
 * them, SQLite has one writer): is the order's result still wanted by this lease holder?
 */
async function stillWanted(
  ctx: PlatformContext,
  trx: Transaction<PlatformTables>,
  job: { domain_id: number; hostname: string },
  projectId: number,
  nodeId: string,
  instance: string,
): Promise<Discard | null> {
  let domainQuery = trx
    .selectFrom('domains')
    .select(['state', 'hostname', 'project_id'])
    .where('id', '=', job.domain_id);
  if (ctx.dialect === 'postgres') domainQuery = domainQuery.forUpdate();
  const domain = await domainQuery.executeTakeFirst();
  if (
    !domain ||
    domain.hostname !== job.hostname ||
    Number(domain.project_id) !== Number(projectId) ||
    !isServedState(domain.state)
  ) {
    return 'domain_not_served';
  }
  let jobQuery = trx
    .selectFrom('certificate_jobs')
    .select(['lease_owner', 'lease_instance'])
    .where('domain_id', '=', job.domain_id);
  if (ctx.dialect === 'postgres') jobQuery = jobQuery.forUpdate();
  const lease = await jobQuery.executeTakeFirst();
  if (!lease || lease.lease_owner !== nodeId || lease.lease_instance !== instance) return 'lease_lost';
  return null;
}

/** Orders one claimed job's certificate and settles the job; the hostname when one was stored. */
export async function orderCertificate(
  ctx: PlatformContext,
  deps: CertificateDeps,
  job: ClaimedJob,
  domainState: string,
  projectId: number,
  instance: string,
): Promise<string | null> {
  type Db = PlatformDb | Transaction<PlatformTables>;
  /** Settles the job by `event` if this process still holds its lease; false when it does not. */
  const settle = async (
    event: CertificateEvent,
    set: { reason: string | null; attempts: number; next: Date | null; renewalInfoAt?: Date | null },
    db: Db = ctx.db,
  ) => {
    const result = await db
      .updateTable('certificate_jobs')
      .set({
        state: certificateTransition('ordering', event).to,
        reason: set.reason,
        attempts: set.attempts,
        next_attempt_at: set.next?.toISOString() ?? null,
        renewal_info_at: set.renewalInfoAt?.toISOString() ?? null,
        lease_owner: null,
        lease_instance: null,
        lease_until: null,
        updated_at: ctx.clock.now().toISOString(),
      })
      .where('domain_id', '=', job.domain_id)
      .where('lease_owner', '=', deps.nodeId)
      .where('lease_instance', '=', instance)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  };
  /**
   * The domain's history entry and the team's webhook event, in the transaction that changes
   * the certificate or the job: both exist exactly when the change does.
   */
  const announce = async (
    trx: Transaction<PlatformTables>,
    action: string,
    type: PlatformEventType,
    data: Record<string, unknown>,
  ) => {
    const at = ctx.clock.now();
    const owner = await teamOfDomain(trx, job.domain_id);
    const webhook = await emitEvent(trx, at, {
      teamId: owner.team_id,
      type,
      subject: domainSubject(job.domain_id),
      data: { hostname: job.hostname, project: owner.slug, ...data },
    });
    await recordEvent(trx, at, job.domain_id, 'system', action, domainState, {
      ...data,
      ...(webhook ? { webhook } : {}),
    });
  };
  /** Settles a failure and announces it when the order starts failing (if the lease is ours). */
  const fail = async (event: 'failed' | 'refused', reason: string, attempts: number, next: Date | null) => {
    const startsFailing = job.state !== 'failed';
    const announced = await transact(ctx.db, async (trx) => {
      if (!(await settle(event, { reason, attempts, next }, trx))) return false;
      // Sent when an order starts failing, not for every retry: the status shows the retries.
      if (startsFailing) {
        await announce(trx, 'certificate_failed', 'certificate.failed', {
          reason,
          nextAttemptAt: next?.toISOString() ?? null,
        });
      }
      return startsFailing;
    });
    if (announced) ctx.webhooks?.wake();
  };
  /**
   * When a refusal comes next: never for a first order — the owner's Verify or Re-verify starts
   * one — but in a day for a renewal, whose domain is still served with a certificate that will
   * expire and whose owner may not be looking.
   */
  const afterRefusal = async (): Promise<Date | null> => {
    const served = await ctx.db
      .selectFrom('certificates')
      .select('domain_id')
      .where('domain_id', '=', job.domain_id)
      .executeTakeFirst();
    return served ? new Date(ctx.clock.now().getTime() + REFUSED_RENEWAL_RETRY_MS) : null;
  };

  let certificate: IssuedCertificate;
  try {
    // Checked before every order (Pebble does not check CAA at all): an order the records forbid
    // never reaches the CA, and the reason says which record is in the way.
    await deps.issuer.preCheck?.(job.hostname, ctx.resolver);
    certificate = await obtainCertificate(deps.issuer, job.hostname, deps.challenges);
  } catch (error) {
    const attempts = job.attempts + 1;
    if (error instanceof IssuerError && !error.retryable) {
      const reason = error.reason ?? error.message.slice(0, 500);
      await fail('refused', reason, attempts, await afterRefusal());
      return null;
    }
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    const retryAfter = error instanceof IssuerError ? (error.retryAfterMs ?? 0) : 0;
    const delay = Math.max(retryAfter, backoffDelay(attempts, CERTIFICATE_BACKOFF));
    await fail('failed', message, attempts, new Date(ctx.clock.now().getTime() + delay));
    return null;
  }
  // Asked before the transaction: the CA's renewal window is a request over the network.
  const renewal = await planRenewal(deps.issuer, certificate, ctx.clock.now(), deps.random ?? Math.random);
  // Stored and served only if, under the lock a remove takes, the domain still wants it: a
  // remove (or a takeover) that landed while the CA worked discards the order's result.
  const discarded = await transact(ctx.db, async (trx) => {
    const discard = await stillWanted(ctx, trx, job, projectId, deps.nodeId, instance);
    if (discard) return discard;
    const previous = await trx
      .selectFrom('certificates')
      .select('not_after')
      .where('domain_id', '=', job.domain_id)
      .executeTakeFirst();
    await deps.store.save(job.hostname, certificate, ctx.clock.now(), trx, job.domain_id);
    await settle(
      'issued',
      { reason: null, attempts: 0, next: renewal.renewAt, renewalInfoAt: renewal.askAgainAt },
      trx,
    );
    await announce(
      trx,
      previous ? 'certificate_renewed' : 'certificate_issued',
      previous ? 'certificate.renewed' : 'certificate.issued',
      {
        issuer: certificate.issuer,
        notBefore: certificate.notBefore.toISOString(),
        notAfter: certificate.notAfter.toISOString(),
        ...(previous ? { previousNotAfter: previous.not_after } : {}),
      },
    );
    return null;
  });
  if (discarded) {
    const now = await ctx.db
      .selectFrom('domains')
      .select('state')
      .where('id', '=', job.domain_id)
      .executeTakeFirst();
    if (now) {
      await recordEvent(
        ctx.db,
        ctx.clock.now(),
        job.domain_id,
        'system',
        'certificate_discarded',
        now.state,
        {
          reason: discarded,
        },
      );
    }
    return null;
  }
  ctx.webhooks?.wake();
  ctx.changes.publish({ kind: 'certificates', projectId: 0 });
  return job.hostname;
}
