import { RefusedTransition, type TransitionRow, transitionIn } from '../state-machine.ts';
import type { CertificateState } from './certificate-status.ts';

/**
 * A certificate job's states as one table (like the domain's, domains/lifecycle.ts): every change
 * of a job's state goes through `certificateTransition()`, and
 * test/platform/certificate-states.test.ts walks the table row by row.
 *
 * States (certificate-status.ts):
 * - `pending`: the domain verified (or Verify, Re-verify asked again); not yet ordered.
 * - `ordering`: one node holds the lease and talks to the CA; its heartbeat keeps the lease.
 * - `issued`: stored and served; the next attempt is the renewal (the CA's ARI window, else a
 *   third of the lifetime before expiry).
 * - `failed`: the reason says why; the next attempt is the back-off, the CA's Retry-After, a day
 *   for a refused renewal, or none for a refused first order.
 * A removed domain's job is deleted (dropCertificate), not moved to a state.
 */

export type CertificateEvent =
  /** The domain verified, or Verify / Re-verify on it: a fresh attempt, attempts reset. */
  | 'requested'
  /** A node takes a due job (new, to retry, to renew, or its holder's lease ran out). */
  | 'claimed'
  /** The CA signed; the certificate is stored in the transaction that settles the job. */
  | 'issued'
  /** The CA (or the way to it) failed in a way that passes on its own (`IssuerError.retryable`). */
  | 'failed'
  /** The CA refused, or CAA forbids it (`retryable: false`): the domain must change first. */
  | 'refused';

export type CertificateTransition = TransitionRow<CertificateState, CertificateEvent>;

const ALL: readonly CertificateState[] = ['pending', 'ordering', 'issued', 'failed'];

export const CERTIFICATE_TRANSITIONS: readonly CertificateTransition[] = [
  ...ALL.map((from) => ({
    from,
    event: 'requested' as const,
    to: 'pending' as const,
    effect:
      from === 'ordering'
        ? 'attempts reset; the running order keeps its lease and settles the job when it ends'
        : 'attempts reset; due now',
  })),
  { from: 'pending', event: 'claimed', to: 'ordering', effect: 'leased to one node; first order' },
  { from: 'failed', event: 'claimed', to: 'ordering', effect: 'leased to one node; retry' },
  { from: 'issued', event: 'claimed', to: 'ordering', effect: 'leased to one node; renewal' },
  {
    from: 'ordering',
    event: 'claimed',
    to: 'ordering',
    effect: "the holder's lease ran out (its node died): another node takes the order",
  },
  {
    from: 'ordering',
    event: 'issued',
    to: 'issued',
    effect:
      'stored and served if the domain still wants it; renewal scheduled (ARI window, else a third left)',
  },
  {
    from: 'ordering',
    event: 'failed',
    to: 'failed',
    effect: 'next attempt after the back-off or the CA’s Retry-After, whichever is later',
  },
  {
    from: 'ordering',
    event: 'refused',
    to: 'failed',
    effect: 'first order: no next attempt until Verify or Re-verify; renewal: tried again a day later',
  },
];

export class IllegalCertificateTransition extends RefusedTransition<CertificateState, CertificateEvent> {
  constructor(from: CertificateState, event: CertificateEvent) {
    super(from, event, `a certificate job in state ${from} cannot take the event ${event}`);
  }
}

export function certificateTransition(
  from: CertificateState,
  event: CertificateEvent,
): CertificateTransition {
  return transitionIn(CERTIFICATE_TRANSITIONS, from, event, IllegalCertificateTransition);
}

/** The retry table: back-off after a retryable failure (src/lib/backoff.ts). */
export const CERTIFICATE_BACKOFF = { baseMs: 30_000, maxMs: 3_600_000 };
/** A renewal the CA refused (or CAA forbids) is tried again a day later, not stopped. */
export const REFUSED_RENEWAL_RETRY_MS = 24 * 3_600_000;
