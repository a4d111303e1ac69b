import type { CertificateStatus } from '../certificates/certificate-status.ts';
import { DNS_CHECK_REASONS, type DnsCheckReason } from '../dns/dns-check.ts';
import type { DomainState } from './lifecycle.ts';

/**
 * The one word the dashboard (and the CLI) shows for a domain (issue 6: unverified, verified,
 * certificate being issued, live, failed), derived from the lifecycle state, the last check's
 * reason and the certificate. The lifecycle keeps its own, finer states; this is what a person
 * needs to know: wait, act, or nothing to do. docs/decisions/dashboard.md has the same table.
 */
export type DomainStatus = 'unverified' | 'verified' | 'issuing' | 'live' | 'failed';

/** How a person reads each status (the dashboard's badge text). */
export const DOMAIN_STATUS_LABELS: Record<DomainStatus, string> = {
  unverified: 'Unverified',
  verified: 'Verified',
  issuing: 'Certificate being issued',
  live: 'Live',
  failed: 'Failed',
};

/** What the last check or certificate attempt found, when it needs the owner to act. */
export interface DomainFailure {
  /** Machine-readable: a DNS check reason, a domain reason, or `certificate_failed`. */
  reason: string;
  /** What was found, in words. */
  message: string | null;
  remedy: string;
}

type CertificateCase = 'none' | 'pending' | 'served' | 'failed';
type ReasonCase = 'none' | 'waiting' | 'blocking';

interface StatusRow {
  readonly state: DomainState;
  /** `any` matches every case of the column. */
  readonly reason: ReasonCase | 'any';
  readonly certificate: CertificateCase | 'any';
  readonly status: DomainStatus;
}

/**
 * First matching row wins. `waiting` reasons are the ones the platform re-checks on its own (the
 * record has not propagated yet, a resolver did not answer): the domain is still unverified, not
 * failed. `blocking` reasons need the owner to change something.
 */
export const DOMAIN_STATUS_TABLE: readonly StatusRow[] = [
  { state: 'unverified', reason: 'none', certificate: 'any', status: 'unverified' },
  { state: 'unverified', reason: 'waiting', certificate: 'any', status: 'unverified' },
  { state: 'unverified', reason: 'blocking', certificate: 'any', status: 'failed' },
  { state: 'verified', reason: 'any', certificate: 'served', status: 'live' },
  { state: 'verified', reason: 'any', certificate: 'pending', status: 'issuing' },
  { state: 'verified', reason: 'any', certificate: 'failed', status: 'failed' },
  { state: 'verified', reason: 'any', certificate: 'none', status: 'verified' },
  // Still served, but DNS no longer points here: certificates would fail to renew.
  { state: 'misconfigured', reason: 'any', certificate: 'any', status: 'failed' },
  { state: 'removed', reason: 'any', certificate: 'any', status: 'unverified' },
];

function certificateCase(certificate: CertificateStatus | null): CertificateCase {
  if (certificate === null || certificate.state === 'none') return 'none';
  // A certificate being served keeps the domain live while a renewal is ordered or retried.
  if (certificate.notAfter !== null) return 'served';
  if (certificate.state === 'failed') return 'failed';
  return 'pending';
}

function reasonCase(reason: string | null): ReasonCase {
  if (reason === null) return 'none';
  const dns = DNS_CHECK_REASONS[reason as DnsCheckReason] as { ok: boolean; retryable: boolean } | undefined;
  if (dns?.ok) return 'none';
  return dns?.retryable ? 'waiting' : 'blocking';
}

export function domainStatus(
  state: DomainState,
  reason: string | null,
  certificate: CertificateStatus | null,
): DomainStatus {
  const r = reasonCase(reason);
  const c = certificateCase(certificate);
  const row = DOMAIN_STATUS_TABLE.find(
    (s) =>
      s.state === state &&
      (s.reason === 'any' || s.reason === r) &&
      (s.certificate === 'any' || s.certificate === c),
  );
  return row?.status ?? 'unverified';
}

export const CERTIFICATE_FAILED_REMEDY =
  'The certificate authority did not issue the certificate; the platform retries automatically at the next attempt shown. To retry sooner, confirm the domain still points here and its CAA records allow the certificate authority, then verify again (a wait the certificate authority asked for is kept).';

/**
 * A refusal the certificate job does not retry on its own (no next attempt: the CA refused the
 * name, and would refuse it again until something about the domain changes). Seed 001's remedy
 * for a certificate not provisioned after 30 minutes, with what the platform does meanwhile.
 */
export const CERTIFICATE_REFUSED_REMEDY =
  'The certificate authority refused to issue the certificate, and the platform does not retry a refusal on its own. Confirm the domain still verifies and its CAA records allow the certificate authority, fix what the message names, then click Re-verify (or verify again) to start a fresh attempt.';

/** The failure to show with a `failed` status: the DNS reason, or the certificate's. */
export function domainFailure(
  status: DomainStatus,
  reason: string | null,
  message: string | null,
  remedy: string | null,
  certificate: CertificateStatus | null,
): DomainFailure | null {
  if (status !== 'failed') return null;
  if (reason !== null && remedy !== null && reasonCase(reason) === 'blocking') {
    return { reason, message, remedy };
  }
  if (certificate?.state === 'failed') {
    if (certificate.reason === 'caa_forbids') {
      return {
        reason: 'caa_forbids',
        message: 'A CAA record does not allow the certificate authority to issue for this domain.',
        remedy: DNS_CHECK_REASONS.caa_forbids.remedy,
      };
    }
    return {
      reason: 'certificate_failed',
      message: certificate.reason,
      remedy: certificate.nextAttemptAt === null ? CERTIFICATE_REFUSED_REMEDY : CERTIFICATE_FAILED_REMEDY,
    };
  }
  return reason !== null && remedy !== null ? { reason, message, remedy } : null;
}
