/**
 * The certificate job, beside each custom domain (CertMagic's certificate manager): what the
 * domain side calls (request-certificate.ts), one pass over due orders (claim-orders.ts: leases,
 * heartbeats), one order (order-certificate.ts: pre-check, key and CSR, the issuer's signature,
 * renewal planned from the CA's ARI window or a third of the lifetime), and the states as a table
 * (certificate-states.ts). This module is the door the rest of the platform imports.
 */

export { type CertificateDeps, PROCESS_INSTANCE } from './certificate-deps.ts';
export {
  CERTIFICATE_BACKOFF,
  CERTIFICATE_TRANSITIONS,
  certificateTransition,
  REFUSED_RENEWAL_RETRY_MS,
} from './certificate-states.ts';
export { type CertificateState, type CertificateStatus, certificateStatuses } from './certificate-status.ts';
export { obtainDueCertificates } from './claim-orders.ts';
export {
  certificateNeedsAttempt,
  dropCertificate,
  reclaimOwnLeases,
  requestCertificate,
} from './request-certificate.ts';
