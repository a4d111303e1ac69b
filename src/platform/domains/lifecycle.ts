import { type DomainState, SERVED_STATES } from '../domain-rows.ts';
import { RefusedTransition, type TransitionRow, transitionIn } from '../state-machine.ts';

export { type DomainState, SERVED_STATES } from '../domain-rows.ts';

/**
 * The custom-domain lifecycle as one table (seed 001, "States and transitions"; names decided in
 * docs/decisions/domains.md). Every change of a domain's state goes through `transition()`, and
 * test/platform/domain-lifecycle.test.ts walks the table row by row.
 *
 * States:
 * - `unverified`: added; DNS does not (yet) show the records. Background checks retry with
 *   back-off until the propagation window (48 h by default) closes.
 * - `verified`: DNS shows the records and no other project serves the hostname; the domain is
 *   served and a certificate is ordered.
 * - `misconfigured`: was verified, but a periodic re-check found DNS no longer pointing here. It
 *   keeps serving (DNS blips happen) but certificates would fail to renew, so it is flagged.
 * - `removed`: terminal; serving stops at once.
 *
 * The type and the served states live in ../domain-rows.ts, where the certificate job reads them.
 */

export type DomainEvent =
  /** Verify (the button, the CLI, the API) or a background check of an unverified domain. */
  | 'check_passed'
  | 'check_failed'
  /** The check passed but another project has the hostname verified and no ownership proof. */
  | 'check_passed_taken'
  /** Periodic re-check of a verified or misconfigured domain. */
  | 'recheck_passed'
  | 'recheck_failed'
  /** Another project proved ownership of the hostname and took it. */
  | 'taken_over'
  | 'remove';

export type Transition = TransitionRow<DomainState, DomainEvent>;

export const DOMAIN_TRANSITIONS: readonly Transition[] = [
  { from: 'unverified', event: 'check_passed', to: 'verified', effect: 'served; certificate ordered' },
  {
    from: 'unverified',
    event: 'check_failed',
    to: 'unverified',
    effect: 'reason and remedy recorded; next check scheduled with back-off',
  },
  {
    from: 'unverified',
    event: 'check_passed_taken',
    to: 'unverified',
    effect: 'reason hostname_taken: add the TXT ownership record to take it over',
  },
  { from: 'unverified', event: 'remove', to: 'removed', effect: 'forgotten by every edge node' },
  {
    from: 'verified',
    event: 'check_passed',
    to: 'verified',
    effect: 'nothing changes (Verify on a verified domain)',
  },
  { from: 'verified', event: 'recheck_passed', to: 'verified', effect: 'last check time recorded' },
  {
    from: 'verified',
    event: 'recheck_failed',
    to: 'misconfigured',
    effect: 'flagged: certificates would fail to renew; owner notified',
  },
  // A misconfigured domain takes Verify and the periodic re-check alike.
  ...(['check_passed', 'recheck_passed'] as const).map(
    (event): Transition => ({ from: 'misconfigured', event, to: 'verified', effect: 'flag cleared' }),
  ),
  ...(['check_failed', 'recheck_failed'] as const).map(
    (event): Transition => ({ from: 'misconfigured', event, to: 'misconfigured', effect: 'reason updated' }),
  ),
  // Every served state can be taken over or removed, with the same effect.
  ...SERVED_STATES.flatMap((from): Transition[] => [
    { from, event: 'taken_over', to: 'unverified', effect: 'no longer served by this project' },
    { from, event: 'remove', to: 'removed', effect: 'serving stops at once on every edge node' },
  ]),
];

export class IllegalTransition extends RefusedTransition<DomainState, DomainEvent> {
  constructor(from: DomainState, event: DomainEvent) {
    super(from, event, `a ${from} domain cannot take the event ${event}`);
  }
}

export function transition(from: DomainState, event: DomainEvent): Transition {
  return transitionIn(DOMAIN_TRANSITIONS, from, event, IllegalTransition);
}
