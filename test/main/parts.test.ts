import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Parts } from '../../src/main/parts.ts';

/** The assembly's cleanup list (src/main/parts.ts): stop is the start read backwards. */
describe('Parts', () => {
  it('stops the parts in the reverse order of their start, each awaited before the next', async () => {
    const events: string[] = [];
    const parts = new Parts({ onStopError: () => assert.fail('no stop fails') });
    for (const name of ['database', 'app', 'edge']) {
      await parts.add(
        name,
        () => {
          events.push(`start ${name}`);
          return name;
        },
        async (part) => {
          await new Promise((done) => setTimeout(done, 5));
          events.push(`stop ${part}`);
        },
      );
    }
    await parts.add('banner', () => events.push('start banner'));
    assert.deepEqual(parts.stopOrder, ['edge', 'app', 'database']);
    await parts.stop();
    assert.deepEqual(events, [
      'start database',
      'start app',
      'start edge',
      'start banner',
      'stop edge',
      'stop app',
      'stop database',
    ]);
  });

  it('reports a failed stop, still stops the others, then rejects with every failure', async () => {
    const stopped: string[] = [];
    const reported: string[] = [];
    const parts = new Parts({
      onStopError: (name, error) => reported.push(`${name}: ${(error as Error).message}`),
    });
    await parts.add(
      'database',
      () => {},
      () => stopped.push('database'),
    );
    await parts.add(
      'relay',
      () => {},
      () => Promise.reject(new Error('connection reset')),
    );
    await parts.add(
      'edge',
      () => {},
      () => stopped.push('edge'),
    );
    await assert.rejects(parts.stop(), (error: AggregateError) => {
      assert.equal(error.message, '1 part(s) failed to stop');
      assert.deepEqual(
        error.errors.map((e: Error) => e.message),
        ['connection reset'],
      );
      return true;
    });
    assert.deepEqual(stopped, ['edge', 'database']);
    assert.deepEqual(reported, ['relay: connection reset']);
  });

  it('a part that fails to start stops those already started, then throws its error', async () => {
    const stopped: string[] = [];
    const parts = new Parts({ onStopError: () => assert.fail('no stop fails') });
    await parts.add(
      'database',
      () => 1,
      () => stopped.push('database'),
    );
    await parts.add(
      'app',
      () => 2,
      () => stopped.push('app'),
    );
    await assert.rejects(
      parts.add(
        'edge',
        () => Promise.reject(new Error('port 80 in use')),
        () => stopped.push('edge'),
      ),
      /port 80 in use/,
    );
    assert.deepEqual(stopped, ['app', 'database']);
    await assert.rejects(
      parts.add('late', () => 3),
      /cannot start late: the node is stopping/,
    );
  });

  it('stops once: a second stop gets the same promise and stops nothing again', async () => {
    let stops = 0;
    const parts = new Parts({ onStopError: () => {} });
    await parts.add(
      'app',
      () => {},
      () => {
        stops++;
      },
    );
    const first = parts.stop();
    assert.equal(parts.stop(), first);
    await first;
    assert.equal(stops, 1);
  });
});
