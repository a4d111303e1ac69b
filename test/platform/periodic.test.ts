import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startPeriodic } from '../../src/platform/jobs/periodic.ts';

/** Lets the pass's promise chain settle (no timers involved). */
const unexpected = (error: unknown) => assert.fail(`a pass failed: ${String(error)}`);

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('periodic jobs', () => {
  it('runs a pass at once, then every period; wake() runs the next one now', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let passes = 0;
    const job = startPeriodic(60_000, async () => void passes++, unexpected);
    t.mock.timers.tick(0);
    await settle();
    assert.equal(passes, 1);
    t.mock.timers.tick(59_999);
    await settle();
    assert.equal(passes, 1, 'not before the period');
    job.wake();
    t.mock.timers.tick(0);
    await settle();
    assert.equal(passes, 2, 'woken: no wait for the period');
    t.mock.timers.tick(59_999);
    await settle();
    assert.equal(passes, 2, 'the period counts from the woken pass');
    t.mock.timers.tick(1);
    await settle();
    assert.equal(passes, 3);
    await job.stop();
  });

  it('a wake() during a pass runs another right after it, never two at once', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let running = 0;
    let passes = 0;
    let finish = () => {};
    const job = startPeriodic(
      60_000,
      () => {
        running++;
        passes++;
        assert.equal(running, 1, 'one pass at a time');
        return new Promise<void>((resolve) => {
          finish = () => {
            running--;
            resolve();
          };
        });
      },
      unexpected,
    );
    t.mock.timers.tick(0);
    await settle();
    assert.equal(passes, 1);
    job.wake();
    job.wake();
    t.mock.timers.tick(0);
    await settle();
    assert.equal(passes, 1, 'the running pass is not doubled');
    finish();
    await settle();
    t.mock.timers.tick(0);
    await settle();
    assert.equal(passes, 2, 'one more pass right after, for both wakes');
    finish();
    await settle();
    t.mock.timers.tick(59_999);
    await settle();
    assert.equal(passes, 2);
    const stopped = job.stop();
    job.wake();
    t.mock.timers.tick(60_000);
    await stopped;
    assert.equal(passes, 2, 'nothing after stop()');
  });
});
