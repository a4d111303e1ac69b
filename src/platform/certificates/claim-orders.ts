import type { PlatformContext } from '../context.ts';
import { isServedState } from '../domain-rows.ts';
import { type CertificateDeps, PROCESS_INSTANCE } from './certificate-deps.ts';
import { certificateTransition } from './certificate-states.ts';
import { orderCertificate } from './order-certificate.ts';
import { planRenewal, RENEWAL_INFO_FAILED_RECHECK_MS } from './renewal.ts';

/**
 * Claiming orders: which jobs are due, one lease per job across nodes, and the heartbeat that keeps
 * a lease while its order runs (ordering itself is order-certificate.ts).
 */

/**
 * One pass of the certificate job: renewal windows the CA asked to be looked at again are
 * refreshed (RFC 9773), then every due order (new, to retry, to renew, or abandoned by a node whose
 * lease ran out) is claimed with a lease, re-checked (still served?), ordered while a heartbeat
 * keeps the lease, and settled. Returns the hostnames issued.
 */
export async function obtainDueCertificates(ctx: PlatformContext, deps: CertificateDeps): Promise<string[]> {
  await refreshRenewalWindows(ctx, deps);
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
  for (const row of due) {
    const job = { ...row, state: row.state };
    const claimed = await ctx.db
      .updateTable('certificate_jobs')
      .set({
        state: certificateTransition(job.state, 'claimed').to,
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
    if (!domain || !isServedState(domain.state)) {
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
      const result = await orderCertificate(ctx, deps, job, domain.state, domain.project_id, instance);
      if (result) issued.push(result);
    } finally {
      clearInterval(heartbeat);
      await beat;
    }
  }
  return issued;
}

/**
 * Issued certificates whose CA asked to be asked again (its Retry-After passed): the window is
 * fetched anew and the renewal moved when the chosen time left it — a revocation moves the window
 * into the past, and the renewal becomes due at once. One node looks at a job at a time: the look
 * is claimed by moving `renewal_info_at` forward first.
 */
async function refreshRenewalWindows(ctx: PlatformContext, deps: CertificateDeps): Promise<void> {
  if (deps.issuer.renewalWindow === undefined) return;
  const now = ctx.clock.now();
  const nowIso = now.toISOString();
  const rows = await ctx.db
    .selectFrom('certificate_jobs')
    .innerJoin('certificates', 'certificates.domain_id', 'certificate_jobs.domain_id')
    .select([
      'certificate_jobs.domain_id',
      'certificate_jobs.next_attempt_at',
      'certificate_jobs.renewal_info_at',
      'certificates.certificate_pem',
      'certificates.not_before',
      'certificates.not_after',
    ])
    .where('certificate_jobs.state', '=', 'issued')
    .where('certificate_jobs.renewal_info_at', '<=', nowIso)
    .orderBy('certificate_jobs.renewal_info_at')
    .limit(50)
    .execute();
  for (const row of rows) {
    const claimed = await ctx.db
      .updateTable('certificate_jobs')
      .set({ renewal_info_at: new Date(now.getTime() + RENEWAL_INFO_FAILED_RECHECK_MS).toISOString() })
      .where('domain_id', '=', row.domain_id)
      .where('state', '=', 'issued')
      .where('renewal_info_at', '=', row.renewal_info_at)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n) continue;
    const plan = await planRenewal(
      deps.issuer,
      {
        certificatePem: row.certificate_pem,
        notBefore: new Date(row.not_before),
        notAfter: new Date(row.not_after),
      },
      now,
      deps.random ?? Math.random,
      row.next_attempt_at === null ? undefined : new Date(row.next_attempt_at),
    );
    await ctx.db
      .updateTable('certificate_jobs')
      .set({
        next_attempt_at: plan.renewAt.toISOString(),
        renewal_info_at: plan.askAgainAt?.toISOString() ?? null,
      })
      .where('domain_id', '=', row.domain_id)
      .where('state', '=', 'issued')
      .execute();
  }
}
