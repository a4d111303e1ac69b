import type { Transaction } from 'kysely';
import { backoffDelay } from '../../lib/backoff.ts';
import type { PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { CERTIFICATE_BACKOFF, certificateTransition } from './certificate-states.ts';

/** How the domain side asks for, re-asks for and drops a domain's certificate. */

type Db = PlatformDb | Transaction<PlatformTables>;

/** Asks for a certificate now (a domain just verified, or Re-verify): a fresh attempt. */
export async function requestCertificate(
  db: Db,
  domainId: number,
  hostname: string,
  now: Date,
): Promise<void> {
  // Any state → pending (CERTIFICATE_TRANSITIONS, `requested`).
  const values = {
    domain_id: domainId,
    hostname,
    state: certificateTransition('pending', 'requested').to,
    reason: null,
    attempts: 0,
    next_attempt_at: now.toISOString(),
    lease_owner: null,
    lease_until: null,
    renewal_info_at: null,
    updated_at: now.toISOString(),
  };
  await db
    .insertInto('certificate_jobs')
    .values(values)
    .onConflict((oc) =>
      oc.column('domain_id').doUpdateSet({
        state: values.state,
        reason: null,
        attempts: 0,
        next_attempt_at: values.next_attempt_at,
        renewal_info_at: null,
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
