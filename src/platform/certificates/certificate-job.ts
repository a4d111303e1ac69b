import { randomUUID } from 'node:crypto';
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
import type { CertificateState } from './certificate-status.ts';
import type { CertificateStore } from './certificate-store.ts';
import { type ChallengeStore, type Issuer, IssuerError } from './issuer.ts';

/**
 * A certificate's life beside its domain: `pending` (verified, not yet ordered), `ordering`
 * (leased by one node), `issued` (renewal due when a third of the lifetime remains), `failed`
 * (the reason says why). A failure the issuer calls retryable (`IssuerError.retryable`, or any
 * other error) is retried with back-off, or later when the CA sent Retry-After; a refusal it
 * calls not retryable, and CAA forbidding the CA, stop a first order (no next attempt): the CA
 * would refuse again until the domain changes, and each refusal counts against its
 * failed-validation limits. A renewal so refused is tried once a day instead: the domain is still
 * served, its certificate will expire, and its owner may not be looking. Verify or Re-verify
 * resets it to `pending` (a fresh attempt).
 */

export { type CertificateState, type CertificateStatus, certificateStatuses } from './certificate-status.ts';

export interface CertificateDeps {
  readonly issuer: Issuer;
  readonly store: CertificateStore;
  readonly challenges: ChallengeStore;
  /**
   * This node, for leases (one order per domain at a time across nodes): stable across restarts,
   * so a restarted node recognises the leases its dead process held.
   */
  readonly nodeId: string;
  /** This process on the node (default: one id per process); stored with the lease. */
  readonly instanceId?: string;
  /** How long a lease lasts after its last heartbeat; then another node may take the order. */
  readonly leaseMs: number;
  /** How often a running order renews its lease (default: a third of `leaseMs`). */
  readonly heartbeatMs?: number;
}

/** This process's lease instance when the caller names none. */
export const PROCESS_INSTANCE = randomUUID();

export const CERTIFICATE_BACKOFF = { baseMs: 30_000, maxMs: 3_600_000 };
/** A renewal the CA refused (or CAA forbids) is tried again a day later, not stopped. */
export const REFUSED_RENEWAL_RETRY_MS = 24 * 3_600_000;

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
  // A lease whose holder stopped its heartbeat is a dead node's: the fresh attempt takes it.
  await db
    .updateTable('certificate_jobs')
    .set({ lease_owner: null, lease_instance: null, lease_until: null })
    .where('domain_id', '=', domainId)
    .where('lease_until', '<', now.toISOString())
    .execute();
}

/**
 * Whether Verify on a verified domain should start a fresh certificate attempt: the last one
 * failed (CAA, the CA — unless the CA asked to wait), its order's node died, or no certificate
 * is stored while the job does not order one.
 */
export async function certificateNeedsAttempt(db: Db, domainId: number, now: Date): Promise<boolean> {
  const job = await db
    .selectFrom('certificate_jobs')
    .select(['state', 'lease_until', 'attempts', 'next_attempt_at', 'updated_at'])
    .where('domain_id', '=', domainId)
    .executeTakeFirst();
  if (job?.state === 'failed') {
    if (job.next_attempt_at === null) return true; // stopped (CAA, a refusal): only a person restarts it
    // A wait the CA asked for (Retry-After, beyond the back-off) is kept: a click must not cost
    // the domain a rate limit.
    const wait = Date.parse(job.next_attempt_at) - Date.parse(job.updated_at);
    return wait <= backoffDelay(job.attempts, CERTIFICATE_BACKOFF) + 1_000;
  }
  if (!job || job.state === 'issued') {
    // Neither a job nor a certificate, or a job that says issued with no certificate stored.
    const certificate = await db
      .selectFrom('certificates')
      .select('hostname')
      .where('domain_id', '=', domainId)
      .executeTakeFirst();
    return certificate === undefined;
  }
  return job.lease_until !== null && job.lease_until < now.toISOString();
}

/**
 * Forgets a removed (or taken over) domain's job and the certificate it ordered. Only this
 * domain's: another project's claim on the same hostname keeps its own.
 */
export async function dropCertificate(db: Db, domainId: number): Promise<void> {
  await db.deleteFrom('certificate_jobs').where('domain_id', '=', domainId).execute();
  await db.deleteFrom('certificates').where('domain_id', '=', domainId).execute();
}

/**
 * At a node's start: the leases its earlier process held (same node id, another instance) are
 * released, so the orders that process was running start again at once instead of waiting for
 * the lease to run out. Returns how many.
 */
export async function reclaimOwnLeases(db: PlatformDb, nodeId: string, instanceId: string): Promise<number> {
  const released = await db
    .updateTable('certificate_jobs')
    .set({ lease_owner: null, lease_instance: null, lease_until: null })
    .where('lease_owner', '=', nodeId)
    .where((eb) => eb.or([eb('lease_instance', 'is', null), eb('lease_instance', '<>', instanceId)]))
    .executeTakeFirst();
  return Number(released.numUpdatedRows);
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
    !(SERVED_STATES as readonly string[]).includes(domain.state)
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

/**
 * One pass of the certificate job: every due order (new, to retry, to renew, or abandoned by a
 * node whose lease ran out) is claimed with a lease, re-checked (still verified? CAA allows the
 * CA?), ordered while a heartbeat keeps the lease, and stored only if the domain still wants it
 * and the lease is still this process's. Returns the hostnames issued.
 */
export async function obtainDueCertificates(ctx: PlatformContext, deps: CertificateDeps): Promise<string[]> {
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const instance = deps.instanceId ?? PROCESS_INSTANCE;
  const heartbeatMs = deps.heartbeatMs ?? Math.max(1, Math.floor(deps.leaseMs / 3));
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
        lease_instance: instance,
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
      .select(['state', 'project_id'])
      .where('id', '=', job.domain_id)
      .executeTakeFirst();
    if (!domain || !(SERVED_STATES as readonly string[]).includes(domain.state)) {
      await ctx.db.deleteFrom('certificate_jobs').where('domain_id', '=', job.domain_id).execute();
      continue;
    }
    // The heartbeat: while this process works on the order, its lease does not run out; when the
    // process dies, it does within `leaseMs` and another node (or this one restarted) takes over.
    let beat: Promise<unknown> = Promise.resolve();
    const heartbeat = setInterval(() => {
      beat = ctx.db
        .updateTable('certificate_jobs')
        .set({ lease_until: new Date(ctx.clock.now().getTime() + deps.leaseMs).toISOString() })
        .where('domain_id', '=', job.domain_id)
        .where('lease_owner', '=', deps.nodeId)
        .where('lease_instance', '=', instance)
        .execute()
        .catch(() => {}); // a missed beat only shortens the lease; the next one renews it
    }, heartbeatMs);
    heartbeat.unref();
    try {
      const result = await orderOne(ctx, deps, job, domain.state, domain.project_id, instance);
      if (result) issued.push(result);
    } finally {
      clearInterval(heartbeat);
      await beat;
    }
  }
  return issued;
}

/** Orders one claimed job's certificate and settles the job; the hostname when one was stored. */
async function orderOne(
  ctx: PlatformContext,
  deps: CertificateDeps,
  job: { domain_id: number; hostname: string; attempts: number; state: string },
  domainState: string,
  projectId: number,
  instance: string,
): Promise<string | null> {
  /** Settles the job if this process still holds its lease; false when it does not. */
  const settle = async (
    set: {
      state: CertificateState;
      reason: string | null;
      attempts: number;
      next: Date | null;
    },
    db: Db = ctx.db,
  ) => {
    const result = await db
      .updateTable('certificate_jobs')
      .set({
        state: set.state,
        reason: set.reason,
        attempts: set.attempts,
        next_attempt_at: set.next?.toISOString() ?? null,
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
  // Sent when an order starts failing, not for every retry: the status shows the retries.
  const failed = (trx: Transaction<PlatformTables>, reason: string, nextAttemptAt: Date | null) =>
    announce(trx, 'certificate_failed', 'certificate.failed', {
      reason,
      nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
    });
  /** Settles a failure and announces it when the order starts failing (if the lease is ours). */
  const fail = async (reason: string, attempts: number, next: Date | null) => {
    const announced = await transact(ctx.db, async (trx) => {
      if (!(await settle({ state: 'failed', reason, attempts, next }, trx))) return false;
      if (job.state !== 'failed') await failed(trx, reason, next);
      return job.state !== 'failed';
    });
    if (announced) ctx.webhooks?.wake();
  };
  /**
   * When a refusal (CAA, or the CA's "do not retry") comes next: never for a first order — the
   * owner's Verify or Re-verify starts one — but in a day for a renewal, whose domain is still
   * served with a certificate that will expire and whose owner may not be looking.
   */
  const afterRefusal = async (): Promise<Date | null> => {
    const served = await ctx.db
      .selectFrom('certificates')
      .select('domain_id')
      .where('domain_id', '=', job.domain_id)
      .executeTakeFirst();
    return served ? new Date(ctx.clock.now().getTime() + REFUSED_RENEWAL_RETRY_MS) : null;
  };
  if (deps.issuer.name !== 'internal') {
    // Checked before every order (Pebble does not check CAA at all): an order the records
    // forbid never reaches the CA, and the reason says which record is in the way.
    const caa = await checkCaa(ctx.resolver, job.hostname, ctx.config.caaIdentifier);
    if (!caa.ok) {
      await fail('caa_forbids', job.attempts + 1, await afterRefusal());
      return null;
    }
  }
  let certificate: Awaited<ReturnType<Issuer['issue']>>;
  try {
    certificate = await deps.issuer.issue(job.hostname, deps.challenges);
  } catch (error) {
    const attempts = job.attempts + 1;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
    // "Do not retry": no next attempt (a slow one for a renewal); Verify or Re-verify starts one.
    if (error instanceof IssuerError && !error.retryable) {
      await fail(message, attempts, await afterRefusal());
      return null;
    }
    const retryAfter = error instanceof IssuerError ? (error.retryAfterMs ?? 0) : 0;
    const delay = Math.max(retryAfter, backoffDelay(attempts, CERTIFICATE_BACKOFF));
    await fail(message, attempts, new Date(ctx.clock.now().getTime() + delay));
    return null;
  }
  const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
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
