import type { Transaction } from 'kysely';
import { backoffDelay } from '../../lib/backoff.ts';
import { transact } from '../../storage/index.ts';
import type { PlatformContext, PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { checkCaa } from '../domains/dns-check.ts';
import { recordEvent } from '../domains/domain-store.ts';
import { SERVED_STATES } from '../domains/lifecycle.ts';
import {
  domainSubject,
  emitEvent,
  type PlatformEventType,
  teamOfDomain,
} from '../webhooks/webhook-events.ts';
import type { CertificateStore } from './certificate-store.ts';
import { type ChallengeStore, type Issuer, IssuerError } from './issuer.ts';

/**
 * A certificate's life beside its domain: `pending` (verified, not yet ordered), `ordering`
 * (leased by one node), `issued` (renewal due when a third of the lifetime remains), `failed`
 * (retried with back-off; the reason says why). Re-verify resets it to `pending`.
 */
export type CertificateState = 'pending' | 'ordering' | 'issued' | 'failed';

export interface CertificateDeps {
  readonly issuer: Issuer;
  readonly store: CertificateStore;
  readonly challenges: ChallengeStore;
  /** This process, for leases: one order per domain at a time across nodes. */
  readonly nodeId: string;
  /** How long an order may run before another node may take it over. */
  readonly leaseMs: number;
}

export const CERTIFICATE_BACKOFF = { baseMs: 30_000, maxMs: 3_600_000 };

type Db = PlatformDb | Transaction<PlatformTables>;

/** Asks for a certificate now (a domain just verified, or Re-verify): a fresh attempt. */
export async function requestCertificate(
  db: Db,
  domainId: number,
  hostname: string,
  now: Date,
): Promise<void> {
  const values = {
    domain_id: domainId,
    hostname,
    state: 'pending',
    reason: null,
    attempts: 0,
    next_attempt_at: now.toISOString(),
    lease_owner: null,
    lease_until: null,
    updated_at: now.toISOString(),
  };
  await db
    .insertInto('certificate_jobs')
    .values(values)
    .onConflict((oc) =>
      oc.column('domain_id').doUpdateSet({
        state: 'pending',
        reason: null,
        attempts: 0,
        next_attempt_at: values.next_attempt_at,
        updated_at: values.updated_at,
      }),
    )
    .execute();
}

/** Forgets a removed domain's certificate and job. */
export async function dropCertificate(db: Db, domainId: number, hostname: string): Promise<void> {
  await db.deleteFrom('certificate_jobs').where('domain_id', '=', domainId).execute();
  await db.deleteFrom('certificates').where('hostname', '=', hostname).execute();
}

export interface CertificateStatus {
  state: CertificateState | 'none';
  reason: string | null;
  notAfter: string | null;
  nextAttemptAt: string | null;
}

export async function certificateStatuses(
  db: PlatformDb,
  domainIds: readonly number[],
): Promise<Map<number, CertificateStatus>> {
  const result = new Map<number, CertificateStatus>();
  if (domainIds.length === 0) return result;
  const rows = await db
    .selectFrom('certificate_jobs')
    .leftJoin('certificates', 'certificates.hostname', 'certificate_jobs.hostname')
    .select([
      'certificate_jobs.domain_id',
      'certificate_jobs.state',
      'certificate_jobs.reason',
      'certificate_jobs.next_attempt_at',
      'certificates.not_after',
    ])
    .where('certificate_jobs.domain_id', 'in', [...domainIds])
    .execute();
  for (const row of rows) {
    result.set(row.domain_id, {
      state: row.state as CertificateState,
      reason: row.reason,
      notAfter: row.not_after ?? null,
      nextAttemptAt: row.next_attempt_at,
    });
  }
  return result;
}

/**
 * One pass of the certificate job: every due order (new, to retry, to renew, or abandoned by a
 * node whose lease ran out) is claimed with a lease, re-checked (still verified? CAA allows the
 * CA?), ordered, and stored. Returns the hostnames issued.
 */
export async function obtainDueCertificates(ctx: PlatformContext, deps: CertificateDeps): Promise<string[]> {
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const due = await ctx.db
    .selectFrom('certificate_jobs')
    .select(['domain_id', 'hostname', 'attempts', 'state'])
    .where('next_attempt_at', '<=', nowIso)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso)]))
    .orderBy('next_attempt_at')
    .limit(50)
    .execute();
  const issued: string[] = [];
  for (const job of due) {
    const claimed = await ctx.db
      .updateTable('certificate_jobs')
      .set({
        state: 'ordering',
        lease_owner: deps.nodeId,
        lease_until: new Date(now.getTime() + deps.leaseMs).toISOString(),
        updated_at: nowIso,
      })
      .where('domain_id', '=', job.domain_id)
      .where('next_attempt_at', '<=', nowIso)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso)]))
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) continue; // another node took it
    const domain = await ctx.db
      .selectFrom('domains')
      .select(['state'])
      .where('id', '=', job.domain_id)
      .executeTakeFirst();
    if (!domain || !(SERVED_STATES as readonly string[]).includes(domain.state)) {
      await ctx.db.deleteFrom('certificate_jobs').where('domain_id', '=', job.domain_id).execute();
      continue;
    }
    const settle = async (
      set: {
        state: CertificateState;
        reason: string | null;
        attempts: number;
        next: Date | null;
      },
      db: Db = ctx.db,
    ) => {
      await db
        .updateTable('certificate_jobs')
        .set({
          state: set.state,
          reason: set.reason,
          attempts: set.attempts,
          next_attempt_at: set.next?.toISOString() ?? null,
          lease_owner: null,
          lease_until: null,
          updated_at: ctx.clock.now().toISOString(),
        })
        .where('domain_id', '=', job.domain_id)
        .where('lease_owner', '=', deps.nodeId)
        .execute();
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
      await recordEvent(trx, at, job.domain_id, 'system', action, domain.state, {
        ...data,
        ...(webhook ? { webhook } : {}),
      });
    };
    // Sent when an order starts failing, not for every retry: the status shows the retries.
    const failed = (trx: Transaction<PlatformTables>, reason: string, nextAttemptAt: Date | null) =>
      announce(trx, 'certificate_failed', 'certificate.failed', {
        reason,
        nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
      });
    if (deps.issuer.name !== 'internal') {
      // Checked before every order (Pebble does not check CAA at all): an order the records
      // forbid never reaches the CA, and the reason says which record is in the way.
      const caa = await checkCaa(ctx.resolver, job.hostname, ctx.config.caaIdentifier);
      if (!caa.ok) {
        await transact(ctx.db, async (trx) => {
          await settle(
            { state: 'failed', reason: 'caa_forbids', attempts: job.attempts + 1, next: null },
            trx,
          );
          if (job.state !== 'failed') await failed(trx, 'caa_forbids', null);
        });
        if (job.state !== 'failed') ctx.webhooks?.wake();
        continue;
      }
    }
    try {
      const certificate = await deps.issuer.issue(job.hostname, deps.challenges);
      const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
      await transact(ctx.db, async (trx) => {
        const previous = await trx
          .selectFrom('certificates')
          .select('not_after')
          .where('hostname', '=', job.hostname)
          .executeTakeFirst();
        await deps.store.save(job.hostname, certificate, ctx.clock.now(), trx);
        await settle(
          {
            state: 'issued',
            reason: null,
            attempts: 0,
            next: new Date(certificate.notAfter.getTime() - lifetime / 3),
          },
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
      });
      ctx.webhooks?.wake();
      issued.push(job.hostname);
      ctx.changes.publish({ kind: 'certificates', projectId: 0 });
    } catch (error) {
      const attempts = job.attempts + 1;
      const retryAfter = error instanceof IssuerError ? (error.retryAfterMs ?? 0) : 0;
      const delay = Math.max(retryAfter, backoffDelay(attempts, CERTIFICATE_BACKOFF));
      const message = error instanceof Error ? error.message : String(error);
      const next = new Date(ctx.clock.now().getTime() + delay);
      await transact(ctx.db, async (trx) => {
        await settle({ state: 'failed', reason: message.slice(0, 500), attempts, next }, trx);
        if (job.state !== 'failed') await failed(trx, message.slice(0, 500), next);
      });
      if (job.state !== 'failed') ctx.webhooks?.wake();
    }
  }
  return issued;
}
