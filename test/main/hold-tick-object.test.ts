import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

const MODULE = new URL('../../src/main/hold-tick-object.ts', import.meta.url).href;

/**
 * A process that calls nextTick enough for V8 to record feedback, runs a full collection while
 * no tick object is alive, then prints the state of nextTick's tick-object literal slots (V8's
 * own %DebugPrint, hence the flags).
 */
function literalSlotStates(hold: boolean): string[] {
  const script = `
    ${hold ? `await import(${JSON.stringify(MODULE)});` : ''}
    for (let i = 0; i < 50; i++) process.nextTick(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    globalThis.gc();
    process.nextTick(() => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    new Function('f', '%DebugPrint(f)')(process.nextTick);
  `;
  const run = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '--eval', script],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  return [...run.stdout.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1] as string);
}

describe('hold-tick-object', () => {
  it('keeps nextTick off the megamorphic path after a full collection with no tick alive', () => {
    // Without it, this Node's V8 turns the literal's slots megamorphic: the reason the module exists.
    const without = literalSlotStates(false);
    assert.ok(
      without.includes('MEGAMORPHIC'),
      `nextTick stays fast without the held tick object on this Node (${without.join(', ')}): the module may no longer be needed`,
    );
    const held = literalSlotStates(true);
    assert.ok(held.length > 0, 'no feedback printed for nextTick');
    assert.deepEqual(
      held.filter((state) => state === 'MEGAMORPHIC'),
      [],
      `slots: ${held.join(', ')}`,
    );
  });
});
