import type { PlatformDb } from '../context.ts';
import type { CertificateState } from '../db-schema.ts';

/**
 * A domain's certificate as the domain pages show it. A leaf module: the domain modules read it
 * and the certificate job writes the rows, without either importing the other for it.
 */
export type { CertificateState } from '../db-schema.ts';

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
    .leftJoin('certificates', 'certificates.domain_id', 'certificate_jobs.domain_id')
    // The job as it stands, and the expiry of the certificate it last stored.
    .selectAll('certificate_jobs')
    .select('certificates.not_after')
    .where('certificate_jobs.domain_id', 'in', [...domainIds])
    .execute();
  for (const row of rows) {
    result.set(row.domain_id, {
      state: row.state,
      reason: row.reason,
      notAfter: row.not_after ?? null,
      nextAttemptAt: row.next_attempt_at,
    });
  }
  return result;
}
