import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DOMAIN_TRANSITIONS,
  type DomainEvent,
  type DomainState,
  IllegalTransition,
  SERVED_STATES,
  transition,
} from '../../src/platform/domains/lifecycle.ts';

const STATES: DomainState[] = ['unverified', 'verified', 'misconfigured', 'removed'];
const EVENTS: DomainEvent[] = [
  'check_passed',
  'check_failed',
  'check_passed_taken',
  'recheck_passed',
  'recheck_failed',
  'taken_over',
  'remove',
];

/** The table as docs/decisions/domains.md states it: from × event → to; anything else is refused. */
const EXPECTED: Record<string, DomainState> = {
  'unverified check_passed': 'verified',
  'unverified check_failed': 'unverified',
  'unverified check_passed_taken': 'unverified',
  'unverified remove': 'removed',
  'verified check_passed': 'verified',
  'verified recheck_passed': 'verified',
  'verified recheck_failed': 'misconfigured',
  'verified taken_over': 'unverified',
  'verified remove': 'removed',
  'misconfigured check_passed': 'verified',
  'misconfigured recheck_passed': 'verified',
  'misconfigured check_failed': 'misconfigured',
  'misconfigured recheck_failed': 'misconfigured',
  'misconfigured taken_over': 'unverified',
  'misconfigured remove': 'removed',
};

describe('the domain lifecycle table', () => {
  for (const from of STATES) {
    for (const event of EVENTS) {
      const expected = EXPECTED[`${from} ${event}`];
      it(`${from} + ${event} → ${expected ?? 'refused'}`, () => {
        if (expected) assert.equal(transition(from, event).to, expected);
        else assert.throws(() => transition(from, event), IllegalTransition);
      });
    }
  }

  it('has exactly the rows above, each once', () => {
    const keys = DOMAIN_TRANSITIONS.map((t) => `${t.from} ${t.event}`);
    assert.equal(new Set(keys).size, keys.length);
    assert.deepEqual(keys.sort(), Object.keys(EXPECTED).sort());
  });

  it('never leaves removed, and serves only verified and misconfigured domains', () => {
    assert.ok(DOMAIN_TRANSITIONS.every((t) => t.from !== 'removed'));
    assert.deepEqual([...SERVED_STATES], ['verified', 'misconfigured']);
  });
});
