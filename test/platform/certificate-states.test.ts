import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CERTIFICATE_TRANSITIONS,
  type CertificateEvent,
  certificateTransition,
  IllegalCertificateTransition,
} from '../../src/platform/certificates/certificate-states.ts';
import type { CertificateState } from '../../src/platform/certificates/certificate-status.ts';

const STATES: CertificateState[] = ['pending', 'ordering', 'issued', 'failed'];
const EVENTS: CertificateEvent[] = ['requested', 'claimed', 'issued', 'failed', 'refused'];

/** The table as the decision states it: from × event → to; anything else is refused. */
const EXPECTED: Record<string, CertificateState> = {
  'pending requested': 'pending',
  'ordering requested': 'pending',
  'issued requested': 'pending',
  'failed requested': 'pending',
  'pending claimed': 'ordering',
  'failed claimed': 'ordering',
  'issued claimed': 'ordering',
  'ordering claimed': 'ordering',
  'ordering issued': 'issued',
  'ordering failed': 'failed',
  'ordering refused': 'failed',
};

describe('the certificate job table', () => {
  for (const from of STATES) {
    for (const event of EVENTS) {
      const expected = EXPECTED[`${from} ${event}`];
      it(`${from} + ${event} → ${expected ?? 'refused'}`, () => {
        if (expected) assert.equal(certificateTransition(from, event).to, expected);
        else assert.throws(() => certificateTransition(from, event), IllegalCertificateTransition);
      });
    }
  }

  it('has exactly the rows above, each once, each with its effect', () => {
    const keys = CERTIFICATE_TRANSITIONS.map((t) => `${t.from} ${t.event}`);
    assert.equal(new Set(keys).size, keys.length);
    assert.deepEqual(keys.sort(), Object.keys(EXPECTED).sort());
    assert.ok(CERTIFICATE_TRANSITIONS.every((t) => t.effect.length > 0));
  });

  it('settles an order only from ordering: a CA answer reaches no job that was not claimed', () => {
    for (const event of ['issued', 'failed', 'refused'] as const) {
      assert.deepEqual(
        CERTIFICATE_TRANSITIONS.filter((t) => t.event === event).map((t) => t.from),
        ['ordering'],
      );
    }
  });

  it('names the state and event in a refusal', () => {
    assert.throws(() => certificateTransition('issued', 'issued'), {
      name: 'IllegalCertificateTransition',
      message: 'a certificate job in state issued cannot take the event issued',
    });
  });
});
