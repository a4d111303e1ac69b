import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHandshakeOutput } from './tls-load.ts';

test('reads the handshake client report, after its "primed" line', () => {
  assert.deepEqual(
    parseHandshakeOutput('primed\nfull 0 resumed 1637 unresumed 2 failed 1 seconds 2.000144\n'),
    { full: 0, resumed: 1637, unresumed: 2, failed: 1, seconds: 2.000144 },
  );
  assert.deepEqual(parseHandshakeOutput('primed\nfull 1687 resumed 0 unresumed 0 failed 0 seconds 2\n'), {
    full: 1687,
    resumed: 0,
    unresumed: 0,
    failed: 0,
    seconds: 2,
  });
});

test('a report cut short or from another program is no report', () => {
  assert.equal(parseHandshakeOutput('primed\n'), null);
  assert.equal(parseHandshakeOutput('full 12 resumed 0 unresumed 0 failed 0\n'), null);
  assert.equal(parseHandshakeOutput('usage: tls-handshakes <port> <seconds> …\n'), null);
  assert.equal(parseHandshakeOutput('full -1 resumed 0 unresumed 0 failed 0 seconds 1\n'), null);
});
